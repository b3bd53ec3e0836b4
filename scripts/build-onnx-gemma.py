#!/usr/bin/env python3
"""Builds the ONNX graphs quarry's onnxruntime embedder runs for EmbeddingGemma-300m, from the
installed sentence-transformers folder (model.safetensors, config.json, 2_Dense/, 3_Dense/):

    build-onnx-gemma.py MODEL_DIR OUT_DIR

writes OUT_DIR/model_fp32.onnx (the model's own weights) and OUT_DIR/model_int8.onnx. Both
take int64 `input_ids` and `attention_mask` ([batch, sequence], padding on the right) and
answer `sentence_embedding` ([batch, 768]): the whole sentence-transformers pipeline (Gemma 3
encoder with bidirectional attention, mean pooling over the mask, the two Dense layers, L2
normalisation), so the runtime only tokenises. scripts/install-model.sh runs it with pinned
onnx, numpy and onnxruntime and checks the outputs against scripts/gemma-onnx.sha256; the build
is deterministic.

Why a hand-written graph and not an export: quarry installs no torch (an export needs torch
and transformers, gigabytes), and the encoder is small enough to write down. What it follows
(transformers' Gemma3TextModel with use_bidirectional_attention):
- token embeddings scaled by sqrt(hidden_size);
- per layer: RMSNorm (weight applied as 1 + w) → attention → RMSNorm → residual add;
  RMSNorm → gate/up projections, GELU (tanh) gate × up, down projection → RMSNorm → residual;
- attention: 3 query heads sharing 1 key/value head (head_dim 256), RMSNorm on each query and
  key head, rotary positions (base 10,000 on the sliding-window layers, 1,000,000 on every
  sixth, the global ones), scores scaled by query_pre_attn_scalar^-0.5, padding masked, no
  causal mask. The sliding window (512) never applies: quarry reads at most 512 tokens
  (positions are capped there), so every token sees every other in both kinds of layer.

The int8 graph quantises every projection's weights per output channel (activations per batch
at run time) and stores the 262,144 × 768 token table as int8 rows with one scale each (a
Gather of the row and its scale, then a multiply): 805 MB of fp32 table become 202 MB.
"""
import json
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# Positions the graph holds rotary tables for: the longest input quarry lets this model read.
MAX_POSITIONS = 512


def load_safetensors(path):
    """The tensors of a safetensors file as numpy arrays (8 bytes of header length, a JSON
    header, then raw little-endian data): no safetensors package needed."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    body = memoryview(raw)[8 + n:]
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        if meta["dtype"] != "F32":
            raise SystemExit(f"{path}: {name} is {meta['dtype']}, this builder reads F32 weights")
        a, b = meta["data_offsets"]
        out[name] = np.frombuffer(body[a:b], dtype=np.float32).reshape(meta["shape"])
    return out


class Graph:
    """Nodes and initialisers, named in order: a small helper so the model reads like code."""

    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(self, op_type, inputs, name=None, outputs=1, **attrs):
        self.count += 1
        base = name or f"{op_type.lower()}_{self.count}"
        outs = [base] if outputs == 1 else [f"{base}_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=base, **attrs))
        return outs[0] if outputs == 1 else outs


def rope_tables(base, dim):
    inv = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    freqs = np.outer(np.arange(MAX_POSITIONS, dtype=np.float64), inv)
    emb = np.concatenate([freqs, freqs], axis=1)
    return np.cos(emb).astype(np.float32), np.sin(emb).astype(np.float32)


def build(model_dir, int8_table):
    cfg = json.load(open(f"{model_dir}/config.json"))
    H, heads, kv_heads, hd = (cfg["hidden_size"], cfg["num_attention_heads"],
                              cfg["num_key_value_heads"], cfg["head_dim"])
    eps, layers = cfg["rms_norm_eps"], cfg["num_hidden_layers"]
    if kv_heads != 1:
        raise SystemExit("this builder shares one key/value head across the query heads")
    w = load_safetensors(f"{model_dir}/model.safetensors")
    dense = [load_safetensors(f"{model_dir}/{d}/model.safetensors")["linear.weight"]
             for d in ("2_Dense", "3_Dense")]
    g = Graph()
    f32 = lambda x: np.asarray(x, dtype=np.float32)
    i64 = lambda x: np.asarray(x, dtype=np.int64)
    eps_c = g.const("eps", f32(eps))
    one = g.const("one", f32(1.0))
    two = g.const("two", f32(2.0))

    def rms(x, weight, name):
        # x * rsqrt(mean(x²) + eps) * (1 + w): Gemma's RMSNorm (onnxruntime fuses the pattern).
        sq = g.op("Pow", [x, two], f"{name}_sq")
        mean = g.op("ReduceMean", [sq, g.const(f"{name}_axes", i64([-1]))], f"{name}_mean")
        root = g.op("Sqrt", [g.op("Add", [mean, eps_c], f"{name}_eps")], f"{name}_root")
        normed = g.op("Div", [x, root], f"{name}_div")
        return g.op("Mul", [normed, g.const(f"{name}_w", f32(1.0 + weight))], name)

    def linear(x, weight, name):
        return g.op("MatMul", [x, g.const(f"{name}_w", f32(weight.T))], name)

    # Token embeddings, scaled by sqrt(H) (the scale folded into the table or its row scales).
    table = w["embed_tokens.weight"] * np.float32(np.sqrt(H))
    if int8_table:
        scale = np.abs(table).max(axis=1) / 127.0
        scale[scale == 0] = 1.0
        q = np.clip(np.round(table / scale[:, None]), -127, 127).astype(np.int8)
        rows = g.op("Gather", [g.const("embed_int8", q), "input_ids"], "embed_rows")
        scales = g.op("Gather", [g.const("embed_scale", f32(scale[:, None])), "input_ids"], "embed_scales")
        x = g.op("Mul", [g.op("Cast", [rows], "embed_cast", to=TensorProto.FLOAT), scales], "embed")
    else:
        x = g.op("Gather", [g.const("embed_fp32", f32(table)), "input_ids"], "embed")

    # Shapes and the mask, once.
    seq1 = g.op("Shape", ["input_ids"], "seq_len", start=1, end=2)
    mask_f = g.op("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    # Additive bias [batch, 1, 1, seq]: 0 for a token, a large negative number for padding.
    bias = g.op("Mul", [g.op("Sub", [mask_f, one], "mask_inv"), g.const("neg", f32(1e9))], "mask_bias0")
    bias = g.op("Unsqueeze", [bias, g.const("axes12", i64([1, 2]))], "mask_bias")
    zero_1d = g.const("zero_1d", i64([0]))
    ropes = {}
    for kind, base in (("local", cfg["rope_local_base_freq"]), ("global", cfg["rope_theta"])):
        cos, sin = rope_tables(base, hd)
        ropes[kind] = tuple(
            g.op("Slice", [g.const(f"{kind}_{n}", t), zero_1d, seq1, zero_1d], f"{kind}_{n}_s")
            for n, t in (("cos", cos), ("sin", sin)))
    half = hd // 2
    split = g.const("split_half", i64([half, half]))
    scale_c = g.const("attn_scale", f32(cfg["query_pre_attn_scalar"] ** -0.5))

    def rotary(t, kind, name):
        cos, sin = ropes[kind]
        a, b = g.op("Split", [t, split], f"{name}_split", outputs=2, axis=-1)
        rotated = g.op("Concat", [g.op("Neg", [b], f"{name}_neg"), a], f"{name}_rot", axis=-1)
        return g.op("Add", [g.op("Mul", [t, cos], f"{name}_c"), g.op("Mul", [rotated, sin], f"{name}_s")], name)

    heads_shape = g.const("heads_shape", i64([0, 0, heads, hd]))
    kv_shape = g.const("kv_shape", i64([0, 0, kv_heads, hd]))
    merged_shape = g.const("merged_shape", i64([0, 0, heads * hd]))
    for i in range(layers):
        p, n = f"layers.{i}.", f"l{i}"
        kind = "global" if cfg["layer_types"][i] == "full_attention" else "local"
        h = rms(x, w[p + "input_layernorm.weight"], f"{n}_ln_in")
        a = p + "self_attn."
        q = g.op("Reshape", [linear(h, w[a + "q_proj.weight"], f"{n}_q"), heads_shape], f"{n}_q4")
        k = g.op("Reshape", [linear(h, w[a + "k_proj.weight"], f"{n}_k"), kv_shape], f"{n}_k4")
        v = g.op("Reshape", [linear(h, w[a + "v_proj.weight"], f"{n}_v"), kv_shape], f"{n}_v4")
        q = g.op("Transpose", [rms(q, w[a + "q_norm.weight"], f"{n}_qn")], f"{n}_qt", perm=[0, 2, 1, 3])
        k = g.op("Transpose", [rms(k, w[a + "k_norm.weight"], f"{n}_kn")], f"{n}_kt", perm=[0, 2, 1, 3])
        v = g.op("Transpose", [v], f"{n}_vt", perm=[0, 2, 1, 3])
        q = rotary(q, kind, f"{n}_qr")
        k = rotary(k, kind, f"{n}_kr")
        # [b, 3, s, d] × [b, 1, d, s]: the one key head broadcasts over the query heads.
        kt = g.op("Transpose", [k], f"{n}_kT", perm=[0, 1, 3, 2])
        scores = g.op("Mul", [g.op("MatMul", [q, kt], f"{n}_qk"), scale_c], f"{n}_scaled")
        probs = g.op("Softmax", [g.op("Add", [scores, bias], f"{n}_masked")], f"{n}_probs", axis=-1)
        ctx = g.op("Transpose", [g.op("MatMul", [probs, v], f"{n}_ctx")], f"{n}_ctxt", perm=[0, 2, 1, 3])
        ctx = g.op("Reshape", [ctx, merged_shape], f"{n}_ctx3")
        attn = rms(linear(ctx, w[a + "o_proj.weight"], f"{n}_o"), w[p + "post_attention_layernorm.weight"], f"{n}_ln_post")
        x = g.op("Add", [x, attn], f"{n}_res1")
        h = rms(x, w[p + "pre_feedforward_layernorm.weight"], f"{n}_ln_pre_ff")
        gate = g.op("Gelu", [linear(h, w[p + "mlp.gate_proj.weight"], f"{n}_gate")], f"{n}_gelu", approximate="tanh")
        up = linear(h, w[p + "mlp.up_proj.weight"], f"{n}_up")
        ff = linear(g.op("Mul", [gate, up], f"{n}_gu"), w[p + "mlp.down_proj.weight"], f"{n}_down")
        x = g.op("Add", [x, rms(ff, w[p + "post_feedforward_layernorm.weight"], f"{n}_ln_post_ff")], f"{n}_res2")
    x = rms(x, w["norm.weight"], "final_norm")

    # Mean over the real tokens, the two Dense layers (no bias, no activation), unit length.
    m = g.op("Unsqueeze", [mask_f, g.const("axis2", i64([2]))], "mask_3d")
    summed = g.op("ReduceSum", [g.op("Mul", [x, m], "masked_hidden"), g.const("axis1", i64([1]))], "summed", keepdims=0)
    count = g.op("Max", [g.op("ReduceSum", [m, g.const("axis1b", i64([1]))], "count0", keepdims=0),
                         g.const("tiny", f32(1e-9))], "count")
    pooled = g.op("Div", [summed, count], "pooled")
    y = linear(linear(pooled, dense[0], "dense_up"), dense[1], "dense_down")
    norm = g.op("Sqrt", [g.op("Max", [g.op("ReduceSum", [g.op("Mul", [y, y], "y_sq"), g.const("axis_last", i64([-1]))],
                                           "y_ss", keepdims=1), g.const("tiny2", f32(1e-24))], "y_ss_floor")], "y_norm")
    g.op("Div", [y, norm], "sentence_embedding")

    graph = helper.make_graph(
        g.nodes, "embeddinggemma-300m",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"])],
        [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", dense[1].shape[0]])],
        g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], producer_name="quarry")
    model.ir_version = 9
    return model


def quantize(fp32_path, int8_path):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(fp32_path)
    # The projections: MatMuls whose second input is a weight (not the attention's products).
    weights = {i.name for i in model.graph.initializer}
    nodes = [n.name for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in weights]
    quantize_dynamic(fp32_path, int8_path, weight_type=QuantType.QInt8, per_channel=True,
                     nodes_to_quantize=nodes, op_types_to_quantize=["MatMul"],
                     use_external_data_format=False,
                     extra_options={"DefaultTensorType": TensorProto.FLOAT})


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: build-onnx-gemma.py MODEL_DIR OUT_DIR")
    model_dir, out_dir = sys.argv[1:]
    fp32 = f"{out_dir}/model_fp32.onnx"
    onnx.save(build(model_dir, int8_table=False), fp32, save_as_external_data=False)
    # The int8 graph starts from the graph with the int8 token table: the table never passes
    # through the dynamic quantiser (which would give the whole table one scale).
    table8 = f"{out_dir}/.model_table8.onnx"
    onnx.save(build(model_dir, int8_table=True), table8)
    quantize(table8, f"{out_dir}/model_int8.onnx")
    import os
    os.remove(table8)


if __name__ == "__main__":
    main()
