#!/usr/bin/env python3
"""Builds the ONNX graphs quarry's onnxruntime embedder runs, from the installed
all-MiniLM-L6-v2 weights (model.safetensors, config.json):

    build-onnx-model.py MODEL_DIR OUT_DIR

writes OUT_DIR/model_fp32.onnx (the same weights, so the same vectors as candle's BERT) and
OUT_DIR/model_int8.onnx (weights quantised per output channel, activations per batch at run
time: real int8 matrix products). scripts/install-model.sh runs it with pinned onnx, numpy and
onnxruntime and checks the outputs against scripts/onnx.sha256; the build is deterministic.

Why a hand-written graph and not an export: quarry installs no torch, and onnxruntime's fused
transformer operators (EmbedLayerNormalization, Attention, SkipLayerNormalization, BiasGelu)
run faster on a CPU than the plain-operator graph an exporter writes (measured with
XX
BertModel does: every token type is 0, so type 0's row is added to the position table; padding
is on the right, so the mask becomes per-row lengths.

The int8 graph quantises every weight matrix but the feed-forward outputs of the first two
layers (`l0_out`, `l1_out`), whose inputs have the widest range. Measured on 1,000 sympy chunk
texts (bench/embed.sh): all quantised, 2.06x fp32's speed but a worst cosine to fp32 of 0.9875;
these two kept, 1.84x and a worst cosine of 0.9915; all feed-forward outputs kept, 1.53x, 0.9937.
"""
import json
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# Weight matrices left in fp32 by the int8 build (see the module doc).
KEEP_FP32 = {"l0_out", "l1_out"}


def build(model_dir):
    cfg = json.load(open(f"{model_dir}/config.json"))
    H, heads, layers, eps = (cfg["hidden_size"], cfg["num_attention_heads"],
                             cfg["num_hidden_layers"], cfg["layer_norm_eps"])

    w = load_safetensors(f"{model_dir}/model.safetensors")
    w = {k.removeprefix("bert."): v for k, v in w.items()}
    inits, nodes = [], []

    def init(name, array):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array.astype(np.float32)), name))
        return name

    e = "embeddings."
    nodes.append(helper.make_node(
        "EmbedLayerNormalization",
        ["input_ids", "", init("word_embeddings", w[e + "word_embeddings.weight"]),
         # Every token type is 0: type 0's row is folded into the position table.
         init("position_embeddings", w[e + "position_embeddings.weight"] + w[e + "token_type_embeddings.weight"][0]),
         "", init("embeddings_ln_gamma", w[e + "LayerNorm.weight"]), init("embeddings_ln_beta", w[e + "LayerNorm.bias"]),
         "attention_mask"],
        ["hidden_0", "mask_index"], domain="com.microsoft", epsilon=eps, name="embeddings"))

    x = "hidden_0"
    for i in range(layers):
        p = f"encoder.layer.{i}."
        a = p + "attention."
        qkv_w = np.concatenate([w[a + f"self.{m}.weight"].T for m in ("query", "key", "value")], axis=1)
        qkv_b = np.concatenate([w[a + f"self.{m}.bias"] for m in ("query", "key", "value")])
        nodes.append(helper.make_node(
            "Attention", [x, init(f"l{i}_qkv_w", qkv_w), init(f"l{i}_qkv_b", qkv_b), "mask_index"],
            [f"l{i}_attn"], domain="com.microsoft", num_heads=heads, name=f"l{i}_attention"))
        nodes.append(helper.make_node("MatMul", [f"l{i}_attn", init(f"l{i}_attn_out_w", w[a + "output.dense.weight"].T)],
                                      [f"l{i}_attn_proj"], name=f"l{i}_attn_out"))
        nodes.append(helper.make_node(
            "SkipLayerNormalization",
            [f"l{i}_attn_proj", x, init(f"l{i}_ln1_g", w[a + "output.LayerNorm.weight"]),
             init(f"l{i}_ln1_b", w[a + "output.LayerNorm.bias"]), init(f"l{i}_attn_out_b", w[a + "output.dense.bias"])],
            [f"l{i}_x1"], domain="com.microsoft", epsilon=eps, name=f"l{i}_ln1"))
        nodes.append(helper.make_node("MatMul", [f"l{i}_x1", init(f"l{i}_inter_w", w[p + "intermediate.dense.weight"].T)],
                                      [f"l{i}_inter"], name=f"l{i}_inter"))
        nodes.append(helper.make_node("BiasGelu", [f"l{i}_inter", init(f"l{i}_inter_b", w[p + "intermediate.dense.bias"])],
                                      [f"l{i}_gelu"], domain="com.microsoft", name=f"l{i}_gelu"))
        nodes.append(helper.make_node("MatMul", [f"l{i}_gelu", init(f"l{i}_out_w", w[p + "output.dense.weight"].T)],
                                      [f"l{i}_ffn"], name=f"l{i}_out"))
        y = "last_hidden_state" if i == layers - 1 else f"hidden_{i + 1}"
        nodes.append(helper.make_node(
            "SkipLayerNormalization",
            [f"l{i}_ffn", f"l{i}_x1", init(f"l{i}_ln2_g", w[p + "output.LayerNorm.weight"]),
             init(f"l{i}_ln2_b", w[p + "output.LayerNorm.bias"]), init(f"l{i}_out_b", w[p + "output.dense.bias"])],
            [y], domain="com.microsoft", epsilon=eps, name=f"l{i}_ln2"))
        x = y

    graph = helper.make_graph(
        nodes, "all-MiniLM-L6-v2",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT32, ["batch", "sequence"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT32, ["batch", "sequence"])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", H])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="quarry")
    model.ir_version = 8
    return model


def load_safetensors(path):
    """The tensors of a safetensors file as numpy arrays (the format is 8 bytes of header
    length, a JSON header, then raw little-endian data): no safetensors package needed."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    body = memoryview(raw)[8 + n:]
    kinds = {"F32": np.float32, "I64": np.int64}
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        out[name] = np.frombuffer(body[a:b], dtype=kinds[meta["dtype"]]).reshape(meta["shape"])
    return out


def quantize(fp32_path, int8_path):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(fp32_path)
    nodes = [n.name for n in model.graph.node
             if n.op_type in ("MatMul", "Attention") and n.name not in KEEP_FP32]
    quantize_dynamic(fp32_path, int8_path, weight_type=QuantType.QInt8, per_channel=True,
                     nodes_to_quantize=nodes, op_types_to_quantize=["MatMul", "Attention"],
                     extra_options={"DefaultTensorType": TensorProto.FLOAT})


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: build-onnx-model.py MODEL_DIR OUT_DIR")
    model_dir, out_dir = sys.argv[1:]
    fp32 = f"{out_dir}/model_fp32.onnx"
    onnx.save(build(model_dir), fp32)
    quantize(fp32, f"{out_dir}/model_int8.onnx")


if __name__ == "__main__":
    main()
