#!/usr/bin/env python3
"""Makes tests/fixtures/tiny-gemma: a Gemma 3 sentence encoder of EmbeddingGemma's shape at toy
size (random weights, a word-level vocabulary of 80 words), built into ONNX graphs by
scripts/build-onnx-gemma.py exactly as the real model is, and prints the reference vectors
tests/gemma.rs checks the graphs against:

    PYTHONPATH=<onnx, numpy, onnxruntime> tiny_gemma.py OUT_DIR

Why: the real model is a 1.15 GB download CI does not make; this fixture runs the same code
path (tokenizer, prompts, padding, the graph's inputs and output, the 768-d projection) in a
second, and the reference below is an independent float64 numpy forward pass, one sentence at a
time, so the graph builder's attention, rotary positions, norms and pooling are checked too.
The weights come from a fixed seed: running this again writes the same files.
"""
import json
import os
import re
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "scripts"))
build_onnx_gemma = __import__("build-onnx-gemma")

# Keep in sync with SENTENCES in tests/gemma.rs.
SENTENCES = [
    "where do we retry failed uploads",
    "retry the upload with exponential backoff",
    "parse the config file",
    "read settings from a toml configuration file where the parser lives",
]
QUERY_PROMPT = "task: code retrieval | query: "
DOCUMENT_PROMPT = "title: none | text: "

SPECIAL = ["<pad>", "<eos>", "<bos>", "<unk>"]
WORDS = sorted(set(re.findall(r"\w+|[^\w\s]+", " ".join(SENTENCES + [QUERY_PROMPT, DOCUMENT_PROMPT]).lower()))
               | {"def", "class", "return", "self", "import", "error", "value", "list", "dict", "string"})
VOCAB = SPECIAL + WORDS

H, HEADS, HEAD_DIM, LAYERS, FF, DENSE = 32, 3, 16, 2, 64, 48
OUT = 768
CONFIG = {
    "architectures": ["Gemma3TextModel"],
    "model_type": "gemma3_text",
    "hidden_size": H,
    "intermediate_size": FF,
    "num_attention_heads": HEADS,
    "num_key_value_heads": 1,
    "head_dim": HEAD_DIM,
    "num_hidden_layers": LAYERS,
    "layer_types": ["sliding_attention", "full_attention"],
    "rms_norm_eps": 1e-6,
    "rope_local_base_freq": 10000.0,
    "rope_theta": 1000000.0,
    "query_pre_attn_scalar": HEAD_DIM,
    "sliding_window": 512,
    "use_bidirectional_attention": True,
    "vocab_size": len(VOCAB),
}


def weights(seed=21):
    rng = np.random.default_rng(seed)
    n = lambda *shape, s=0.2: (rng.standard_normal(shape) * s).astype(np.float32)
    w = {"embed_tokens.weight": n(len(VOCAB), H, s=0.5), "norm.weight": n(H, s=0.1)}
    for i in range(LAYERS):
        p = f"layers.{i}."
        w.update({
            p + "input_layernorm.weight": n(H, s=0.1),
            p + "post_attention_layernorm.weight": n(H, s=0.1),
            p + "pre_feedforward_layernorm.weight": n(H, s=0.1),
            p + "post_feedforward_layernorm.weight": n(H, s=0.1),
            p + "self_attn.q_proj.weight": n(HEADS * HEAD_DIM, H),
            p + "self_attn.k_proj.weight": n(HEAD_DIM, H),
            p + "self_attn.v_proj.weight": n(HEAD_DIM, H),
            p + "self_attn.o_proj.weight": n(H, HEADS * HEAD_DIM),
            p + "self_attn.q_norm.weight": n(HEAD_DIM, s=0.1),
            p + "self_attn.k_norm.weight": n(HEAD_DIM, s=0.1),
            p + "mlp.gate_proj.weight": n(FF, H),
            p + "mlp.up_proj.weight": n(FF, H),
            p + "mlp.down_proj.weight": n(H, FF),
        })
    dense = [n(DENSE, H), n(OUT, DENSE)]
    return w, dense


def save_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, a in tensors.items():
        raw = np.ascontiguousarray(a, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    head = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head + b"".join(blobs))


def tokenizer_json():
    ids = {t: i for i, t in enumerate(VOCAB)}
    special = lambda t: {"id": t, "ids": [ids[t]], "tokens": [t]}
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": ids[t], "content": t, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True} for t in SPECIAL],
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<bos>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "<eos>", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<bos>": special("<bos>"), "<eos>": special("<eos>")},
        },
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": ids, "unk_token": "<unk>"},
    }


def tokenize(text):
    ids = {t: i for i, t in enumerate(VOCAB)}
    return [ids["<bos>"]] + [ids.get(t, ids["<unk>"]) for t in re.findall(r"\w+|[^\w\s]+", text.lower())] + [ids["<eos>"]]


def reference(w, dense, text):
    """EmbeddingGemma's forward pass for one unpadded sentence, float64, written from the
    model's definition (not from the graph builder)."""
    d = {k: v.astype(np.float64) for k, v in w.items()}
    ids = tokenize(text)
    s = len(ids)

    def rms(x, weight):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + CONFIG["rms_norm_eps"]) * (1 + weight)

    def rope(x, base):  # x [heads, s, hd]
        inv = 1.0 / base ** (np.arange(0, HEAD_DIM, 2) / HEAD_DIM)
        ang = np.outer(np.arange(s), inv)
        cos, sin = np.cos(ang), np.sin(ang)
        a, b = x[..., :HEAD_DIM // 2], x[..., HEAD_DIM // 2:]
        return np.concatenate([a * cos - b * sin, b * cos + a * sin], -1)

    gelu = lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    x = d["embed_tokens.weight"][ids] * np.sqrt(H)
    for i in range(LAYERS):
        p, a = f"layers.{i}.", f"layers.{i}.self_attn."
        base = CONFIG["rope_theta"] if CONFIG["layer_types"][i] == "full_attention" else CONFIG["rope_local_base_freq"]
        h = rms(x, d[p + "input_layernorm.weight"])
        q = (h @ d[a + "q_proj.weight"].T).reshape(s, HEADS, HEAD_DIM).transpose(1, 0, 2)
        k = (h @ d[a + "k_proj.weight"].T).reshape(s, 1, HEAD_DIM).transpose(1, 0, 2)
        v = (h @ d[a + "v_proj.weight"].T).reshape(s, 1, HEAD_DIM).transpose(1, 0, 2)
        q = rope(rms(q, d[a + "q_norm.weight"]), base)
        k = rope(rms(k, d[a + "k_norm.weight"]), base)
        scores = q @ k.transpose(0, 2, 1) * CONFIG["query_pre_attn_scalar"] ** -0.5
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(s, HEADS * HEAD_DIM)
        x = x + rms(ctx @ d[a + "o_proj.weight"].T, d[p + "post_attention_layernorm.weight"])
        h = rms(x, d[p + "pre_feedforward_layernorm.weight"])
        ff = (gelu(h @ d[p + "mlp.gate_proj.weight"].T) * (h @ d[p + "mlp.up_proj.weight"].T)) @ d[p + "mlp.down_proj.weight"].T
        x = x + rms(ff, d[p + "post_feedforward_layernorm.weight"])
    x = rms(x, d["norm.weight"])
    y = x.mean(0) @ dense[0].astype(np.float64).T @ dense[1].astype(np.float64).T
    return y / np.linalg.norm(y)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "fixtures", "tiny-gemma")
    src = os.path.join(out, ".weights")
    os.makedirs(os.path.join(src, "2_Dense"), exist_ok=True)
    os.makedirs(os.path.join(src, "3_Dense"), exist_ok=True)
    w, dense = weights()
    save_safetensors(os.path.join(src, "model.safetensors"), w)
    save_safetensors(os.path.join(src, "2_Dense", "model.safetensors"), {"linear.weight": dense[0]})
    save_safetensors(os.path.join(src, "3_Dense", "model.safetensors"), {"linear.weight": dense[1]})
    for folder in (src, out):
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(CONFIG, f, indent=1)
    with open(os.path.join(out, "tokenizer.json"), "w") as f:
        json.dump(tokenizer_json(), f, indent=1)
    sys.argv = ["build-onnx-gemma.py", src, out]
    build_onnx_gemma.main()
    for root, dirs, files in os.walk(src, topdown=False):
        for name in files:
            os.remove(os.path.join(root, name))
        for name in dirs:
            os.rmdir(os.path.join(root, name))
    os.rmdir(src)
    # The reference: each sentence as a document and as a query, the first 6 components of
    # each vector and the cosine of every document to every query.
    docs = [reference(w, dense, DOCUMENT_PROMPT + t) for t in SENTENCES]
    queries = [reference(w, dense, QUERY_PROMPT + t) for t in SENTENCES]
    fmt = lambda v: "[" + ", ".join(f"{x:.6f}" for x in v) + "]"
    print("const DOCUMENT_HEADS: [[f32; 6]; %d] = [" % len(docs))
    for v in docs:
        print(f"    {fmt(v[:6])},")
    print("];\nconst QUERY_HEADS: [[f32; 6]; %d] = [" % len(queries))
    for v in queries:
        print(f"    {fmt(v[:6])},")
    print("];\n/// cos(query i, document j).\nconst QUERY_DOCUMENT_COSINES: [[f32; %d]; %d] = [" % (len(docs), len(queries)))
    for q in queries:
        print(f"    {fmt([float(q @ d) for d in docs])},")
    print("];")


if __name__ == "__main__":
    main()
