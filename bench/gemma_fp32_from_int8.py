#!/usr/bin/env python3
"""Turns EmbeddingGemma's int8 graph back into an fp32 graph of the same shape as
model_fp32.onnx, for bench/gpu_embed.sh:

    gemma_fp32_from_int8.py model_int8.onnx model_fp32.onnx

Why: a GPU machine lent here takes 64 MiB per call, so the 1.2 GB fp32 graph cannot travel
there; the 312 MB int8 graph can, in parts. onnxruntime's CUDA provider has no kernel for the
int8 graph's DynamicQuantizeLinear (it would run those on the CPU), so a GPU runs the fp32
graph: here every `DynamicQuantizeLinear → MatMulInteger → Cast → Mul(scale)` becomes one
`MatMul` of the float input with the dequantised weights ((w − zero point) × scale, per output
channel). The arithmetic per text is the fp32 graph's; the weights are the int8 grid's, so the
vectors are close to, not equal to, the real fp32 graph's (the script prints their cosine when
a reference graph is given as a third argument and onnxruntime is importable). The token table
stays int8 rows with a scale each (a Gather, as in the int8 graph).
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def dequantised(model):
    graph = model.graph
    init = {t.name: t for t in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    consumers = {}
    for n in graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)

    replaced = {}  # id(Mul node ending a chain) -> new MatMul node
    dropped = set()
    new_inits = []
    for n in graph.node:
        if n.op_type != "MatMulInteger":
            continue
        a_q, w_q, _a_zp, w_zp = n.input
        quantise = producer[a_q]
        assert quantise.op_type == "DynamicQuantizeLinear", quantise.op_type
        (cast,) = consumers[n.output[0]]
        assert cast.op_type == "Cast"
        (mul,) = consumers[cast.output[0]]
        assert mul.op_type == "Mul"
        scales = producer[[i for i in mul.input if i != cast.output[0]][0]]
        assert scales.op_type == "Mul"
        w_scale = [i for i in scales.input if i in init][0]
        w = numpy_helper.to_array(init[w_q]).astype(np.float32)
        zp = numpy_helper.to_array(init[w_zp]).astype(np.float32)
        scale = numpy_helper.to_array(init[w_scale]).astype(np.float32)
        name = w_q.replace("_quantized", "") + "_dequantised"
        new_inits.append(numpy_helper.from_array(((w - zp) * scale).astype(np.float32), name))
        replaced[id(mul)] = helper.make_node(
            "MatMul", [quantise.input[0], name], [mul.output[0]], name=n.name + "_fp32"
        )
        dropped.update({id(n), id(cast), id(mul)})

    nodes = []
    for n in graph.node:
        if id(n) in replaced:
            nodes.append(replaced[id(n)])
        elif id(n) not in dropped:
            nodes.append(n)
    # Drop what nothing reads any more (the quantisers, the scale products, their initializers).
    outputs = {o.name for o in graph.output}
    while True:
        read = {i for n in nodes for i in n.input} | outputs
        kept = [n for n in nodes if any(o in read for o in n.output)]
        if len(kept) == len(nodes):
            break
        nodes = kept
    read = {i for n in nodes for i in n.input}
    initializers = [t for t in list(graph.initializer) + new_inits if t.name in read]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    return model


def main():
    source, target = sys.argv[1], sys.argv[2]
    model = dequantised(onnx.load(source))
    onnx.save(model, target)
    ops = {}
    for n in model.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    print(f"{target}: {sum(ops.values())} nodes, MatMul {ops.get('MatMul', 0)}, "
          f"MatMulInteger {ops.get('MatMulInteger', 0)}")
    if len(sys.argv) > 3:
        import onnxruntime as ort

        rng = np.random.default_rng(7)
        ids = rng.integers(2, 200_000, size=(4, 96)).astype(np.int64)
        mask = np.ones_like(ids)
        mask[2:, 60:] = 0
        feed = {"input_ids": ids, "attention_mask": mask}
        ours = ort.InferenceSession(target).run(None, feed)[0]
        ref = ort.InferenceSession(sys.argv[3]).run(None, feed)[0]
        print("cosine to the reference graph:", np.round((ours * ref).sum(axis=1), 5))


if __name__ == "__main__":
    main()
