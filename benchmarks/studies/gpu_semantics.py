"""Pretrained semantics on one GPU: what ``--semantics minilm --device cuda`` costs.

    python benchmarks/studies/gpu_semantics.py --data DIR --model FOLDER [--device cuda] [--out DIR]
                                       [--corpora a,b,...] [--cpu-chunks N] [--quick]

What do sentence semantics cost on a CPU and on a GPU? On two CPU cores the
first run encodes every document in 69-471 s (38 minutes for NG20; ``results/minilm.md``).
This script, run once on a machine with one GPU, measures for every raw-text corpus under
``--data`` (dataset folders with ``docs.jsonl`` and ``labels.txt``, smallest first):

1. **Encoding** the documents' chunks (:func:`semnmf.text.encoders.embed_documents`, cache
   off) on ``--device``: float32 in batches of 64 (the library's setting), float32 in
   batches of 256, and float16 weights (``model.half()``) in batches of 256; seconds,
   chunks per second, and the cosine of each document's vector to the first variant's
   (minimum and median). On the host's CPU cores too (float32, batches of 64) for corpora of
   at most ``--cpu-chunks`` chunks: the time ratio and the GPU-CPU cosine.
2. **End to end** through :func:`semnmf.cluster` (what ``semnmf cluster FOLDER -k K``
   runs), k = the number of classes, seed 0: the default (no semantics) on the CPU and with
   ``device=DEVICE``; ``semantics=FOLDER`` with ``device=DEVICE`` and a fresh embedding
   cache (the first run: every document and term encoded), then again from that cache
   (a second run). Wall seconds, NMI, the run's own timings.

``--model`` is a sentence-transformers folder (all-MiniLM-L6-v2; on the device machine,
which reaches no registry, a copy carried with the call: ``gpu_carry.py`` packs it and the
corpora here and unpacks them there). The run of ``results/gpu_semantics.md``: ``python
benchmarks/studies/gpu_carry.py pack .gpu`` (the model and PyStemmer's wheel), ``... pack .gpu_ng20
--corpora ng20 --no-model`` and ``... pack .gpu_rest --corpora <the other ten> --no-model``;
then two calls on one machine, each ``python3 benchmarks/studies/gpu_carry.py unpack .gpu
.gpu_ng20`` (or ``.gpu_rest``) and ``python3 benchmarks/studies/gpu_semantics.py --data /tmp/data
--model /tmp/minilm --corpora ... --out $OUT``; then ``--from-json`` on the two JSON files.

Writes ``gpu_semantics.md`` and ``gpu_semantics.json`` to ``--out`` (default: $OUT when
set, else benchmarks/results/) after every corpus, so a run stopped at its time limit
keeps what it finished.
``--quick`` takes the first 300 documents of each corpus (a check of the script on
PyTorch's CPU build); ``--from-json A.json B.json`` rewrites the markdown from saved runs
(``results/gpu_semantics.json`` merges the two calls that made ``results/gpu_semantics.md``).
Hand notes in ``results/gpu_semantics_notes.md`` come first, after the machine line.
"""

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/: _common
from _common import RESULTS, atomic_write, raw_text_corpora, table, write_page  # noqa: E402

VARIANTS = (("float32", 64), ("float32", 256), ("float16", 256))


def say(text=""):
    print(text, flush=True)


def quick_copy(folder, n, dest):
    """The first ``n`` documents of a dataset folder, as a folder under ``dest``."""
    out = os.path.join(dest, os.path.basename(folder))
    os.makedirs(out, exist_ok=True)
    for name in ("docs.jsonl", "labels.txt"):
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            lines = [line for _, line in zip(range(n), f)]
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.writelines(lines)
    return out


def cosines(A, B):
    """Each document's cosine between two unit-norm embeddings (documents with a vector)."""
    keep = (np.linalg.norm(A, axis=1) > 0) & (np.linalg.norm(B, axis=1) > 0)
    return np.einsum("ij,ij->i", A[keep], B[keep])


def encoder(model, device, dtype):
    from semnmf.text.encoders import SentenceEncoder

    enc = SentenceEncoder(model, device=device)
    if dtype == "float16":
        enc.model.half()
    enc.model.encode(["warm up"] * 8)  # load, move to the device, first kernels
    return enc


def encode_section(texts, model, device, cpu_chunks, encoders):
    from semnmf.text.encoders import embed_documents

    rows, first = [], None
    n_chunks = len(encoders[(device, "float32")].chunks(texts)[0])
    variants = [(device, dtype, batch) for dtype, batch in VARIANTS]
    if device != "cpu" and n_chunks <= cpu_chunks:
        variants.append(("cpu", "float32", 64))
    for dev, dtype, batch in variants:
        key = (dev, dtype)
        if key not in encoders:
            encoders[key] = encoder(model, dev, dtype)
        t = time.perf_counter()
        E = embed_documents(texts, encoders[key], batch_size=batch, cache_dir=False)
        seconds = time.perf_counter() - t
        if first is None:
            first = E
        cos = cosines(first, E)
        rows.append({"device": dev, "dtype": dtype, "batch": batch, "seconds": seconds,
                     "chunks": n_chunks, "chunks_per_s": n_chunks / max(seconds, 1e-9),
                     "cos_min": float(cos.min()) if cos.size else None,
                     "cos_median": float(np.median(cos)) if cos.size else None})
        say(f"  encode {dev} {dtype} batch {batch}: {seconds:.2f} s, "
            f"{n_chunks / max(seconds, 1e-9):,.0f} chunks/s, cosine to the first "
            f"min {rows[-1]['cos_min']}")
    return rows


def end_to_end(folder, k, model, device):
    import semnmf

    runs = []
    cache = tempfile.mkdtemp(prefix="semnmf-gpu-cache-")
    plan = [("default, cpu", {})]
    if device != "cpu":
        plan.append((f"default, {device}", {"device": device}))
    plan += [(f"minilm, {device}, first run", {"semantics": model, "device": device,
                                               "cache_dir": cache}),
             (f"minilm, {device}, from the cache", {"semantics": model, "device": device,
                                                    "cache_dir": cache})]
    try:
        for name, params in plan:
            t = time.perf_counter()
            result = semnmf.cluster(folder, k, random_state=0, **params)
            wall = time.perf_counter() - t
            runs.append({"run": name, "wall_s": wall, "nmi": result.scores["nmi"],
                         "method": result.method,
                         "timings": {key: round(float(v), 3)
                                     for key, v in result.timings.items()},
                         "partition": (result.choices.get("partition") or {}).get("value")})
            say(f"  {name}: {wall:.2f} s, NMI {result.scores['nmi']:.4f} "
                f"({result.method})")
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return runs


def machine(device):
    import torch

    info = {"host": platform.platform(), "python": platform.python_version(),
            "cores": os.cpu_count(), "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(), "device": device}
    if device != "cpu":
        props = torch.cuda.get_device_properties(torch.device(device))
        info["card"] = f"{props.name}, {props.total_memory / 2**30:.1f} GiB"
    try:
        import sentence_transformers
        info["sentence_transformers"] = sentence_transformers.__version__
    except ImportError:
        pass
    return info


def write(out, info, corpora, when=None):
    os.makedirs(out, exist_ok=True)
    when = when or time.strftime("%Y-%m-%d %H:%M")
    atomic_write(os.path.join(out, "gpu_semantics.json"), lambda f: json.dump(
        {"machine": info, "when": when, "corpora": corpora}, f, indent=1))
    lines = ["# `--semantics minilm` on one GPU", "",
             f"`benchmarks/studies/gpu_semantics.py`, {when}; "
             "machine: "
             + ", ".join(f"{k} {v}" for k, v in info.items()), "",
             "## Encoding the documents' chunks (cache off)", ""]
    rows = []
    for name, c in corpora.items():
        base = c["encode"][0]["seconds"] if c.get("encode") else None
        for r in c.get("encode", []):
            rows.append([name, f"{c['documents']:,}", f"{r['chunks']:,}", r["device"],
                         r["dtype"], r["batch"], f"{r['seconds']:.2f}",
                         f"{r['chunks_per_s']:,.0f}", f"{r['seconds'] / base:.2f}x",
                         f"{r['cos_min']:.6f}", f"{r['cos_median']:.7f}"])
    lines += [table(["corpus", "documents", "chunks", "device", "weights", "batch", "s",
                     "chunks/s", "time / first row's", "cosine to first row, min",
                     "median"], rows), "", "## End to end: `semnmf.cluster(FOLDER, k)`", ""]
    rows = []
    for name, c in corpora.items():
        for r in c.get("runs", []):
            rows.append([name, c["k"], r["run"], r["method"], f"{r['wall_s']:.2f}",
                         f"{r['nmi']:.4f}", r["partition"] or "",
                         ", ".join(f"{k} {v:.2f}" for k, v in r["timings"].items())])
    lines += [table(["corpus", "k", "run", "method", "wall s", "NMI", "partition",
                     "the run's timings (s)"], rows), ""]
    write_page(out, "gpu_semantics", lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data")
    parser.add_argument("--model", help="a sentence-transformers folder")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--out", default=os.environ.get("OUT") or RESULTS)
    parser.add_argument("--corpora", default=None)
    parser.add_argument("--cpu-chunks", type=int, default=4200)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--from-json", nargs="+", metavar="JSON",
                        help="rewrite the markdown from saved gpu_semantics.json files (runs "
                             "of one machine: their corpora merged, largest last) and exit")
    args = parser.parse_args(argv)
    if args.from_json:
        runs = [json.load(open(path)) for path in args.from_json]
        corpora = {name: c for run in runs for name, c in run["corpora"].items()}
        corpora = dict(sorted(corpora.items(), key=lambda item: item[1]["encode"][0]["chunks"]))
        write(args.out, runs[0]["machine"], corpora, runs[0].get("when"))
        return 0
    if not (args.data and args.model):
        parser.error("--data and --model are needed (or --from-json)")
    from semnmf.datasets import load_dataset

    names = args.corpora.split(",") if args.corpora else raw_text_corpora(args.data)
    info = machine(args.device)
    say(json.dumps(info))
    corpora, encoders = {}, {}
    scratch = tempfile.mkdtemp(prefix="semnmf-gpu-data-")
    try:
        for name in names:
            folder = os.path.join(args.data, name)
            if args.quick:
                folder = quick_copy(folder, 300, scratch)
            corpus = load_dataset(folder)
            k = len(set(corpus.labels))
            say(f"{name}: {len(corpus.texts):,} documents, k = {k}")
            if (args.device, "float32") not in encoders:
                encoders[(args.device, "float32")] = encoder(args.model, args.device,
                                                             "float32")
            entry = corpora[name] = {"documents": len(corpus.texts), "k": k}
            entry["encode"] = encode_section(corpus.texts, args.model, args.device,
                                             args.cpu_chunks, encoders)
            write(args.out, info, corpora)
            entry["runs"] = end_to_end(folder, k, args.model, args.device)
            write(args.out, info, corpora)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    say(open(os.path.join(args.out, "gpu_semantics.md")).read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
