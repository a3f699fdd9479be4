"""The kNN graphs of ``--semantics minilm`` on one GPU: the search there against the CPU's.

    python benchmarks/studies/gpu_knn.py --data DIR --model FOLDER [--corpus ng20] [--device cuda]
                                 [--synthetic 200000] [--out DIR] [--quick]

On NG20 the word graph (a kNN search among the vocabulary's 55,850 term vectors) took
16.7 s of the 35 s of a run from the embedding cache on one H200's machine, on its CPU
(``results/gpu_semantics.md``). ``knn_graph(..., device="cuda")`` runs that search on the
GPU (:func:`semnmf.graphs.cosine_kneighbors` with ``device="cuda"``). This script, run once on a
machine with one GPU, measures on ``--corpus`` (a folder under ``--data`` with
``docs.jsonl`` and ``labels.txt``), k = its number of classes, seed 0:

1. **End to end** through :func:`semnmf.cluster` with ``semantics=FOLDER,
   device=DEVICE``: a first run (fresh embedding cache), then from the cache with the
   graphs on the device, then from the cache with the graphs' searches forced to the CPU
   (the library before this change). Wall seconds, NMI, the run's timings.
2. **The searches alone**, on the run's term vectors and document vectors and on
   ``--synthetic`` random unit vectors of the same width (device only: the CPU would take
   minutes): the CPU search (:func:`~semnmf.graphs.cosine_kneighbors`, the host's
   threads) against the device's, median seconds of three, and how far their neighbours
   agree (the share of each point's neighbours both find; the largest distance gap).
3. **Where encoding spends its time** on the device: cutting the documents into chunks
   (one tokenization), tokenizing the chunks again into padded batches (what
   ``model.encode`` does first), and the model's forward pass on those batches alone;
   then the whole encoding of the chunks (:meth:`SentenceEncoder.encode`, batches of 256)
   reading their word pieces as found while cutting (the library's way) and reading
   their texts (``model.encode``, tokenizing again), with the cosine between the two.

Writes ``gpu_knn.md`` and ``gpu_knn.json`` to ``--out`` (default: $OUT when set, else
benchmarks/results/) after every section; ``--from-json JSON`` rewrites the markdown from
a saved run. ``--quick`` takes the first 400 documents and
a 3,000-row synthetic matrix (a check of the script on PyTorch's CPU build, where the
"device" search is the same torch code on the CPU). The model and the corpus travel to
the device machine as for ``gpu_semantics.py`` (``gpu_carry.py``). Hand notes in
``results/gpu_knn_notes.md`` come first, after the machine line.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/: _common
from _common import RESULTS, atomic_write, neighbour_agreement, table, timed, write_page
from gpu_semantics import machine, quick_copy, say


def sync(device):
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def end_to_end(folder, k, model, device):
    import semnmf
    from semnmf.pipelines import pretrained

    runs, corpus = [], None
    cache = tempfile.mkdtemp(prefix="semnmf-gpu-cache-")
    real = {name: getattr(pretrained, name) for name in ("word_graph", "semantic_document_graph")}

    def on_cpu(name):
        return lambda *args, device="cpu", **kw: real[name](*args, device="cpu", **kw)

    plan = [("first run, graphs on the device", False),
            ("from the cache, graphs on the device", False),
            ("from the cache, graphs on the CPU", True)]
    try:
        for name, cpu_graphs in plan:
            if cpu_graphs:
                for attr in real:
                    setattr(pretrained, attr, on_cpu(attr))
            try:
                t = time.perf_counter()
                result = semnmf.cluster(folder, k, random_state=0, semantics=model,
                                        device=device, cache_dir=cache)
                wall = time.perf_counter() - t
            finally:
                for attr, fn in real.items():
                    setattr(pretrained, attr, fn)
            corpus = result.corpus
            runs.append({"run": name, "wall_s": wall, "nmi": result.scores["nmi"],
                         "graph_device": ("cpu (forced)" if cpu_graphs else
                                          result.extra["semantics"].get("graph_device")),
                         "timings": {key: round(float(v), 3)
                                     for key, v in result.timings.items()}})
            say(f"  {name}: {wall:.2f} s, NMI {result.scores['nmi']:.4f}, "
                f"timings {runs[-1]['timings']}")
        from semnmf.text.pretrained import document_vectors, word_vectors

        V, found = word_vectors(corpus, model, cache_dir=cache, device=device)
        E = document_vectors(corpus, model, cache_dir=cache, device=device)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return runs, corpus, V, found, E


def search(name, X, device, cpu=True, k=10):
    from semnmf.graphs import cosine_kneighbors

    Xn = np.asarray(X, dtype=np.float32)
    row = {"matrix": name, "rows": int(Xn.shape[0]), "width": int(Xn.shape[1]), "k": k}

    def on_device():
        out = cosine_kneighbors(Xn, k, device=device)
        sync(device)
        return out

    on_device()  # warm up: CUDA context, kernels
    row["device_s"], (dist_d, ind_d) = timed(on_device, 3)
    if cpu:
        row["cpu_s"], (dist_c, ind_c) = timed(lambda: cosine_kneighbors(Xn, k), 2)
        row["agree_mean"], row["agree_min"] = neighbour_agreement(ind_c, ind_d)
        row["max_distance_gap"] = float(np.abs(dist_c - dist_d).max())
    say(f"  search {name} {Xn.shape}: device {row['device_s']:.3f} s"
        + (f", cpu {row['cpu_s']:.3f} s ({row['cpu_s'] / row['device_s']:.1f}x), neighbours "
           f"shared {row['agree_mean']:.5f} (min {row['agree_min']:.2f}), distance gap "
           f"{row['max_distance_gap']:.1e}" if cpu else ""))
    return row


def graph_agreement(V, found, device):
    from semnmf.graphs.semantic import word_graph

    t = time.perf_counter()
    A = word_graph(V, found, 10, device="cpu")
    cpu_s = time.perf_counter() - t
    t = time.perf_counter()
    B = word_graph(V, found, 10, device=device)
    device_s = time.perf_counter() - t
    both = A.multiply(B > 0).nnz
    row = {"cpu_s": cpu_s, "device_s": device_s, "edges_cpu": int(A.nnz),
           "edges_device": int(B.nnz), "edges_shared": int(both),
           "max_weight_gap": float(abs(A - B).max())}
    say(f"  word graph: cpu {cpu_s:.2f} s, device {device_s:.2f} s, edges {A.nnz:,} / "
        f"{B.nnz:,}, shared {both:,}")
    return row


def encoding_profile(texts, model, device):
    """Seconds to chunk, to tokenize the chunks into padded batches, and of the forward
    pass alone, as ``SentenceEncoder.encode`` batches them (longest first, 256)."""
    import torch
    from semnmf.text.encoders import load_encoder

    encoder = load_encoder(model, device)
    st = encoder.model
    st.encode(["warm up"] * 8)
    t = time.perf_counter()
    pieces, _, _ = encoder.chunks(texts)
    chunk_s = time.perf_counter() - t
    order = np.argsort([-len(p) for p in pieces], kind="stable")
    batch = 256
    t = time.perf_counter()
    tokenize = getattr(st, "preprocess", None) or st.tokenize  # renamed in s-t 6.1
    batches = [tokenize([pieces[i] for i in order[lo:lo + batch]])
               for lo in range(0, len(pieces), batch)]
    tokenize_s = time.perf_counter() - t
    tokens = int(sum(int(b["attention_mask"].sum()) for b in batches))
    t = time.perf_counter()
    with torch.no_grad():
        for b in batches:
            st({key: v.to(st.device) if hasattr(v, "to") else v
                for key, v in b.items()})["sentence_embedding"].cpu()
    sync(device)
    forward_s = time.perf_counter() - t
    row = {"chunks": len(pieces), "tokens": tokens, "chunk_s": chunk_s,
           "tokenize_s": tokenize_s, "forward_s": forward_s}
    say(f"  encoding: {len(pieces):,} chunks, {tokens:,} tokens; chunking {chunk_s:.2f} s, "
        f"tokenizing {tokenize_s:.2f} s, forward {forward_s:.2f} s")
    del batches
    _, _, _, ids = encoder.chunks(texts, ids=True)
    row["encode_ids_s"], (by_ids, _) = timed(lambda: encoder.encode(pieces, 256, ids=ids), 1)
    row["encode_text_s"], (by_text, _) = timed(lambda: encoder.encode(pieces, 256), 1)
    cos = np.einsum("ij,ij->i", by_ids, by_text)
    row["cos_min"], row["cos_median"] = float(cos.min()), float(np.median(cos))
    say(f"  encode the chunks: reading their word pieces {row['encode_ids_s']:.2f} s, "
        f"reading their texts {row['encode_text_s']:.2f} s, cosine min {cos.min():.7f}")
    return row


def write(out, info, record):
    os.makedirs(out, exist_ok=True)
    when = record.setdefault("when", time.strftime("%Y-%m-%d %H:%M"))
    atomic_write(os.path.join(out, "gpu_knn.json"),
                 lambda f: json.dump({"machine": info, **record}, f, indent=1))
    lines = ["# The kNN graphs of `--semantics minilm` on one GPU", "",
             f"`benchmarks/studies/gpu_knn.py`, {when}; corpus {record.get('corpus')}; machine: "
             + ", ".join(f"{k} {v}" for k, v in info.items()), ""]
    if record.get("runs"):
        lines += ["## End to end: `semnmf.cluster(FOLDER, k, semantics=MODEL, device=DEVICE)`",
                  "", table(["run", "wall s", "NMI", "graph device", "the run's timings (s)"],
                            [[r["run"], f"{r['wall_s']:.2f}", f"{r['nmi']:.4f}",
                              r["graph_device"] or "",
                              ", ".join(f"{k} {v:.2f}" for k, v in r["timings"].items())]
                             for r in record["runs"]]), ""]
    if record.get("searches"):
        rows = []
        for r in record["searches"]:
            cpu = "cpu_s" in r
            rows.append([r["matrix"], f"{r['rows']:,} x {r['width']}", r["k"],
                         f"{r['cpu_s']:.3f}" if cpu else "not run", f"{r['device_s']:.3f}",
                         f"{r['cpu_s'] / r['device_s']:.1f}x" if cpu else "",
                         f"{r['agree_mean']:.5f} (min {r['agree_min']:.2f})" if cpu else "",
                         f"{r['max_distance_gap']:.1e}" if cpu else ""])
        lines += ["## The searches alone (median of 3 on the device, of 2 on the CPU)", "",
                  table(["vectors", "size", "k", "CPU s", "device s", "CPU / device",
                         "neighbours shared, mean", "largest distance gap"], rows), ""]
    g = record.get("word_graph")
    if g:
        lines += ["## The word graph, whole (`word_graph`, 10 neighbours)", "",
                  table(["CPU s", "device s", "edges, CPU", "edges, device", "shared",
                         "largest weight gap"],
                        [[f"{g['cpu_s']:.2f}", f"{g['device_s']:.2f}", f"{g['edges_cpu']:,}",
                          f"{g['edges_device']:,}", f"{g['edges_shared']:,}",
                          f"{g['max_weight_gap']:.1e}"]]), ""]
    p = record.get("encoding")
    if p:
        lines += ["## Where encoding spends its time (batches of 256, longest first)", "",
                  table(["chunks", "tokens", "chunking s", "tokenizing again s",
                         "forward pass s", "encode, word pieces s", "encode, texts s",
                         "cosine min / median"],
                        [[f"{p['chunks']:,}", f"{p['tokens']:,}", f"{p['chunk_s']:.2f}",
                          f"{p['tokenize_s']:.2f}", f"{p['forward_s']:.2f}",
                          f"{p['encode_ids_s']:.2f}", f"{p['encode_text_s']:.2f}",
                          f"{p['cos_min']:.7f} / {p['cos_median']:.7f}"]]), ""]
    write_page(out, "gpu_knn", lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data")
    parser.add_argument("--model", help="a sentence-transformers folder")
    parser.add_argument("--corpus", default="ng20")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--synthetic", type=int, default=200_000)
    parser.add_argument("--out", default=os.environ.get("OUT") or RESULTS)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--from-json", metavar="JSON",
                        help="rewrite the markdown from a saved run (with the notes)")
    args = parser.parse_args(argv)
    if args.from_json:
        with open(args.from_json, encoding="utf-8") as f:
            record = json.load(f)
        write(args.out, record.pop("machine"), record)
        return
    if not args.data or not args.model:
        parser.error("--data and --model are needed (or --from-json)")
    folder = os.path.join(args.data, args.corpus)
    tmp = tempfile.mkdtemp(prefix="semnmf-gpu-knn-")
    try:
        if args.quick:
            folder = quick_copy(folder, 400, tmp)
            args.synthetic = min(args.synthetic, 3000)
        with open(os.path.join(folder, "labels.txt"), encoding="utf-8") as f:
            k = len({line.strip() for line in f if line.strip()})
        info = machine(args.device)
        record = {"corpus": args.corpus, "k": k}
        say(f"{args.corpus}: k = {k}")
        runs, corpus, V, found, E = end_to_end(folder, k, args.model, args.device)
        record["runs"] = runs
        write(args.out, info, record)
        keep = found & (np.abs(V).sum(axis=1) > 0)
        rng = np.random.default_rng(0)
        record["searches"] = [search("term vectors", V[keep], args.device),
                              search("document vectors", E[np.abs(E).sum(axis=1) > 0],
                                     args.device),
                              search("random", rng.standard_normal((args.synthetic, V.shape[1])),
                                     args.device, cpu=args.quick)]
        write(args.out, info, record)
        record["word_graph"] = graph_agreement(V, found, args.device)
        write(args.out, info, record)
        record["encoding"] = encoding_profile(corpus.texts, args.model, args.device)
        write(args.out, info, record)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
