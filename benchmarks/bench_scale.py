"""The Dask engine: agreement with the local engine, and scaling on synthetic shards.

Two parts (``benchmarks/results/scale.md`` holds the results):

``python benchmarks/bench_scale.py agreement [classic4 ng20 ...]``
    Same data, same seed: NMF and the default SemanticNMF (document-level PPMI built from
    X, λ = 10 relative) fitted by the local engine (one CSR matrix) and by the Dask engine
    (X cut into 8 row blocks on a LocalCluster of 2 worker processes); the share of
    documents with the same label, the NMI of each against the classes, the relative
    difference of the final objectives and the times. ``--methods default`` compares the
    command line's default method (``semnmf cluster DIR -k K`` with and without
    ``--engine dask --workers 2``; ``--methods nmf snmf default`` is the default).

``python benchmarks/bench_scale.py blocks``
    One sweep's block tasks (KL and Frobenius) on one 100,000-document block, one core.

``python benchmarks/bench_scale.py scale --documents 100000 --workers 1 2 [--method M]``
    A synthetic corpus written as shards (:func:`generate`: 20 planted topics, 40 words per
    document, Zipf-ish vocabulary), then ``semnmf cluster SHARDS --method nmf --engine dask
    --workers N`` timed and its peak memory summed over the processes (client + workers,
    sampled every 0.2 s with psutil), and the NMI against the planted topics.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
sys.path.insert(0, HERE)
from _common import SPEED, data_root  # noqa: E402

TOPICS, WORDS_PER_DOC = 20, 40


def generate(folder, n_documents, shard_size=50_000, n_topics=TOPICS, words=WORDS_PER_DOC,
             vocabulary=20_000, topic_words=300, topic_share=0.6, seed=0):
    """Write ``n_documents`` synthetic documents as ``docs-NNNNN.jsonl`` shards.

    Each topic owns ``topic_words`` words of a ``vocabulary``-word vocabulary; a document
    of topic t draws ``topic_share`` of its ``words`` words from t's words (Zipf weights
    1/rank) and the rest from the whole vocabulary (Zipf weights 1/rank^1.1: a few very
    common words, a long tail). Words are "w" + a base-26 code (letters only, so that the
    default token pattern keeps them). Labels are the topics.
    """
    rng = np.random.default_rng(seed)

    def word(i):
        letters = []
        i += 26 * 26  # at least three letters
        while i:
            i, r = divmod(i, 26)
            letters.append(chr(97 + r))
        return "w" + "".join(reversed(letters))

    names = np.array([word(i) for i in range(vocabulary)])
    background = 1.0 / np.arange(1, vocabulary + 1) ** 1.1
    background /= background.sum()
    owned = rng.permutation(vocabulary)[:n_topics * topic_words].reshape(n_topics, topic_words)
    in_topic = 1.0 / np.arange(1, topic_words + 1)
    in_topic /= in_topic.sum()
    os.makedirs(folder, exist_ok=True)
    n_topic_words = int(round(words * topic_share))
    for number, start in enumerate(range(0, n_documents, shard_size)):
        n = min(shard_size, n_documents - start)
        topics = rng.integers(0, n_topics, n)
        picks = owned[topics[:, None], rng.choice(topic_words, size=(n, n_topic_words),
                                                  p=in_topic)]
        common = rng.choice(vocabulary, size=(n, words - n_topic_words), p=background)
        tokens = names[np.concatenate([picks, common], axis=1)]
        path = os.path.join(folder, f"docs-{number:05d}.jsonl")
        with open(path + ".tmp", "w") as f:
            for i in range(n):
                f.write(json.dumps({"text": " ".join(tokens[i]),
                                    "label": f"topic{topics[i]}"}) + "\n")
        os.replace(path + ".tmp", path)


class PeakMemory:
    """Peak of the resident memory summed over a process and its children."""

    def __init__(self, pid):
        import psutil

        self.process = psutil.Process(pid)
        self.peak = 0
        self.running = True
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self):
        import psutil

        while self.running:
            try:
                procs = [self.process] + self.process.children(recursive=True)
                total = 0
                for p in procs:
                    try:
                        total += p.memory_info().rss
                    except psutil.Error:
                        pass
                self.peak = max(self.peak, total)
            except psutil.Error:
                break
            time.sleep(0.2)

    def stop(self):
        self.running = False
        self.thread.join()
        return self.peak


def _cli_labels(argv):
    """Run ``semnmf cluster`` in this process; (labels, run.json) of the run."""
    import csv
    import tempfile

    from semnmf.cli import main as cli

    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "run")
        assert cli([*argv, "--out", out, "-q"]) == 0
        with open(os.path.join(out, "assignments.csv"), newline="") as handle:
            labels = np.array([int(row["cluster"]) for row in csv.DictReader(handle)])
        with open(os.path.join(out, "run.json")) as handle:
            record = json.load(handle)
    return labels, record


def cli_default_agreement(name, path, k, workers=2):
    """The command line's default method (``semnmf cluster PATH -k K``, no --method) on the
    local engine and with ``--engine dask --workers 2``: the same options, so the same
    word-context matrix (built on the client for a single-folder corpus)."""
    t = time.perf_counter()
    local, record = _cli_labels(["cluster", path, "-k", str(k)])
    local_time = time.perf_counter() - t
    t = time.perf_counter()
    dask, dask_record = _cli_labels(["cluster", path, "-k", str(k), "--engine", "dask",
                                     "--workers", str(workers)])
    dask_time = time.perf_counter() - t
    return {"corpus": name, "method": f"CLI default ({record['method']})",
            "documents": int(local.size), "k": k,
            "same_labels": float(np.mean(local == dask)),
            "nmi_local": record["scores"]["nmi"], "nmi_dask": dask_record["scores"]["nmi"],
            "iterations": [record.get("n_iter"), dask_record.get("n_iter")],
            "time_local_s": round(local_time, 1), "time_dask_s": round(dask_time, 1)}


def agreement(names, n_blocks=8, workers=2, methods=("nmf", "snmf", "default")):
    from semnmf import NMF, BlockedMatrix, SemanticNMF, load_dataset
    from semnmf._utils.blocks import start_client
    from semnmf.metrics import clustering_scores

    client = start_client(workers, processes=True)
    rows = []
    for name in names:
        path = os.path.join(data_root(), name)
        corpus = load_dataset(path)
        X = corpus.tfidf()
        k = corpus.n_classes
        estimators = [cls(k, random_state=0) for key, cls in (("nmf", NMF),
                                                               ("snmf", SemanticNMF))
                      if key in methods]
        for estimator in estimators:
            t = time.perf_counter()
            estimator.fit(X)
            local_time = time.perf_counter() - t
            local = estimator.labels_.copy()
            local_objective, local_iter = estimator.objective_, estimator.n_iter_
            t = time.perf_counter()
            blocks = BlockedMatrix.from_csr(X, n_blocks=n_blocks, client=client)
            estimator.fit(blocks)
            dask_time = time.perf_counter() - t
            row = {"corpus": name, "method": type(estimator).__name__, "documents": X.shape[0],
                   "terms": X.shape[1], "k": k,
                   "same_labels": float(np.mean(local == estimator.labels_)),
                   "nmi_local": clustering_scores(corpus.labels, local)["nmi"],
                   "nmi_dask": clustering_scores(corpus.labels, estimator.labels_)["nmi"],
                   "objective_rel_diff": abs(local_objective - estimator.objective_)
                   / abs(local_objective),
                   "iterations": [int(local_iter), int(estimator.n_iter_)],
                   "time_local_s": round(local_time, 1), "time_dask_s": round(dask_time, 1)}
            print(json.dumps(row), flush=True)
            rows.append(row)
        if "default" in methods:
            row = cli_default_agreement(name, path, k, workers)
            print(json.dumps(row), flush=True)
            rows.append(row)
    client.close()
    return rows


def scale(n_documents, workers_list, folder, max_iter=50, shard_size=50_000, method="nmf"):
    if not os.path.isdir(folder) or not any(f.startswith("docs-") for f in os.listdir(folder)):
        t = time.perf_counter()
        generate(folder, n_documents, shard_size=shard_size)
        print(f"generated {n_documents} documents in {time.perf_counter() - t:.0f} s",
              flush=True)
    rows = []
    for workers in workers_list:
        out = os.path.join(folder + "_out", f"{method}_w{workers}")
        command = [sys.executable, "-m", "semnmf", "cluster", folder, "-k", str(TOPICS),
                   *(["--method", method] if method != "default" else []),
                   "--engine", "dask", "--workers", str(workers),
                   "--max-iter", str(max_iter), "--out", out, "--overwrite", "--quiet"]
        env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "..", "src"))
        t = time.perf_counter()
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
        memory = PeakMemory(process.pid)
        code = process.wait()
        peak = memory.stop()
        elapsed = time.perf_counter() - t
        record = json.load(open(os.path.join(out, "run.json"))) if code == 0 else {}
        row = {"documents": n_documents, "workers": workers, "method": method, "exit": code,
               "time_s": round(elapsed, 1), "peak_memory_gb": round(peak / 1e9, 2),
               "nmi": (record.get("scores") or {}).get("nmi"),
               "timings": record.get("timings_seconds"), "n_iter": record.get("n_iter")}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def block_tasks(n=100_000, d=20_000, per_row=38, k=20, repeat=3):
    """Seconds of one sweep's block tasks on one CSR block of ``n`` random documents, one
    core, best of ``repeat``: the KL tasks (data pass; Z update and W's numerator) and the
    Frobenius ones (Z update; XᵀZ and ZᵀZ)."""
    import scipy.sparse as sp

    from semnmf.models._solvers import distributed as fro
    from semnmf.models._solvers import distributed_kl as kl

    rng = np.random.default_rng(0)
    rows = np.repeat(np.arange(n), per_row)
    X = sp.csr_matrix((rng.random(n * per_row), (rows, rng.integers(0, d, n * per_row))),
                      shape=(n, d))
    X.sum_duplicates()
    Z, W = rng.random((n, k)) + 0.1, rng.random((d, k)) + 0.1

    def best(func):
        times = []
        for _ in range(repeat + 1):  # the first call compiles or loads the kernels
            t = time.perf_counter()
            func()
            times.append(time.perf_counter() - t)
        return min(times[1:])

    state = kl.block_data_pass(X, Z, (W, 1e-9))
    row = {"documents": n, "terms": d, "nnz": int(X.nnz), "k": k,
           "kl_data_pass_s": best(lambda: kl.block_data_pass(X, Z, (W, 1e-9))),
           "kl_z_and_numerator_s": best(lambda: kl.block_z_and_numerator(
               X, state, (W, W.sum(axis=0), 1e-9))),
           "frobenius_s": best(lambda: fro.block_statistics(X, fro.block_z_update(X, Z, (W, W.T @ W))))}
    print(json.dumps(row), flush=True)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="part", required=True)
    a = sub.add_parser("agreement")
    a.add_argument("names", nargs="*", default=list(SPEED))
    a.add_argument("--methods", nargs="+", choices=("nmf", "snmf", "default"),
                   default=["nmf", "snmf", "default"],
                   help="nmf, snmf: the estimators' defaults on X in 8 blocks; default: the "
                        "command line's default method, semnmf cluster with and without "
                        "--engine dask")
    s = sub.add_parser("scale")
    s.add_argument("--documents", type=int, default=100_000)
    s.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    s.add_argument("--folder", default=None)
    s.add_argument("--max-iter", type=int, default=50)
    s.add_argument("--shard-size", type=int, default=50_000)
    s.add_argument("--method", default="nmf",
                   help="the --method of semnmf cluster (default nmf; 'default': none given, "
                        "the command line's default method)")
    sub.add_parser("blocks", help="one sweep's block tasks (KL and Frobenius), one core")
    args = parser.parse_args()
    if args.part == "blocks":
        block_tasks()
    elif args.part == "agreement":
        agreement(args.names, methods=args.methods)
    else:
        folder = args.folder or f"/tmp/semnmf_scale_{args.documents}"
        scale(args.documents, args.workers, folder, args.max_iter, args.shard_size,
              args.method)


if __name__ == "__main__":
    main()
