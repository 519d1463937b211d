#!/usr/bin/env python3
"""Writes engine/src/index/cedict/wordfreq_zh.tsv.gz: the frequency of each
CC-CEDICT headword of two or more characters (simplified) that wordfreq
knows, in wordfreq's centibels below 1 (300: one word in a thousand; its
`large_zh` list: subtitles, Wikipedia, web text, books, Jieba's word list).
build.rs orders an English sense's Chinese words by it (docs/SEMANTICS.md).

    python3 scripts/dictionary/wordfreq_zh.py

Needs pip (PyPI only): downloads the pinned wordfreq wheel and msgpack.
wordfreq data: CC BY-SA 4.0 (see the README's third-party data).
"""
import gzip
import hashlib
import io
import pathlib
import subprocess
import sys
import tempfile
import zipfile

WHEEL = "wordfreq-3.1.1-py3-none-any.whl"
SHA256 = "4b1c6ecffc6198be3396d5cf871c4423ca71c907c231348d352dd54d62b97473"
ROOT = pathlib.Path(__file__).resolve().parents[2]
CEDICT = ROOT / "engine/src/index/cedict/cedict_1_0_ts_utf-8_mdbg.txt.gz"
OUT = ROOT / "engine/src/index/cedict/wordfreq_zh.tsv.gz"


def main() -> None:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "msgpack"], check=True)
    import msgpack

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "wordfreq==3.1.1", "-d", tmp], check=True)
        wheel = pathlib.Path(tmp) / WHEEL
        if hashlib.sha256(wheel.read_bytes()).hexdigest() != SHA256:
            sys.exit(f"{WHEEL}: unexpected SHA-256")
        with zipfile.ZipFile(wheel) as z:
            packed = z.read("wordfreq/data/large_zh.msgpack.gz")
    buckets = msgpack.load(gzip.GzipFile(fileobj=io.BytesIO(packed)), raw=False)
    # buckets[0] is a header; buckets[1 + i] holds the words at i centibels.
    centibels = {}
    for i, words in enumerate(buckets[1:]):
        for word in words:
            centibels.setdefault(word, i)
    heads = set()
    with gzip.open(CEDICT, "rt", encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            parts = line.split(" [", 1)[0].split(" ")
            if len(parts) >= 2 and len(parts[1]) >= 2:
                heads.add(parts[1].lower())
    rows = sorted((w, c) for w, c in centibels.items() if w in heads)
    text = "".join(f"{w}\t{c}\n" for w, c in rows)
    with open(OUT, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as out:
            out.write(text.encode("utf-8"))
    print(f"{OUT}: {len(rows)} of {len(heads)} headwords")


if __name__ == "__main__":
    main()
