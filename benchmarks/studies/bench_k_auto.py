"""``-k auto`` on every shared corpus: the label-free rules judged by how far their k lands
from the number of classes and by the NMI at the k they pick, chosen by leave-one-corpus-out
with the worst held-out corpus first.

Measure (once per corpus and seed; cached, gzip-compressed, in
``results/k_auto_curves_s{seed}.json.gz`` (``_init3_`` with ``--n-init 3``), a rerun
resumes; one process per seed can run side by side):

    SEMNMF_NUM_THREADS=1 python benchmarks/studies/bench_k_auto.py measure --seed 0

For every corpus, :func:`semnmf.models.selection.measure_candidates` measures every
label-free curve over the geometric grid 2 .. min(100, n/10) (wider than the library's
default top of 50, so that a rule which extends the grid can be replayed) and, to score
only, the mean NMI of the runs' partitions against the classes at each k (``nmi``); beside
the clusterwise stabilities (``cluster_jaccard``), each cluster's share of the sample
(``cluster_share``, in the same order). Then the same curves of five planted corpora (3, 4,
5, 12 and 20 disjoint topics): a rule that misses one of them is not a candidate.

Report (``results/k_auto.md``):

    python benchmarks/studies/bench_k_auto.py report --seeds 0 1

Every rule is replayed on the cached curves. Per corpus and seed a rule's k has a **log
error** |log(k / classes)|, is a **hit** within ±30 % and **in range** within [classes/3,
3·classes]; its NMI at k is the runs' NMI there. LOCO: for each corpus, the rule whose
worst log error over the other corpora is smallest (mean second) is applied to it.
"""

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/: _common
from _common import all_corpora, atomic_write, load_cache, pending  # noqa: E402
from k_auto_report import cache_file  # noqa: E402

K_TOP = 100


def jsonable(curves):
    """The curves as JSON values (the lists of lists stay as they are)."""
    out = {key: (np.asarray(v, dtype=float).tolist() if isinstance(v, list) else v)
           for key, v in curves.items() if key != "cluster_jaccard"}
    if "cluster_jaccard" in curves:
        out["cluster_jaccard"] = [np.round(v, 4).tolist() for v in curves["cluster_jaccard"]]
    return out


def curves_of(X, grid, seed, n_init, counts=None, labels=None):
    """Every curve over ``grid`` as JSON values, with each run's cluster shares
    (``cluster_share``) and, given ``(labels, labelled)``, the runs' mean NMI at each k
    (``nmi``; to score only)."""
    from semnmf.models.selection import CURVES, measure_candidates
    from semnmf.metrics import nmi

    scores, shares = [], []

    def seen(k, rows, partitions):
        shares.append(np.concatenate([np.bincount(p, minlength=k) / p.size
                                      for p in partitions]).round(5).tolist())
        if labels is not None:
            truth, known = labels[0][rows], labels[1][rows]
            scores.append(float(np.mean([nmi(truth[known], p[known]) for p in partitions])))

    curves = jsonable(measure_candidates(X, grid, curves=CURVES, counts=counts, n_init=n_init,
                                         random_state=seed, on_partitions=seen))
    curves["cluster_share"] = shares
    if labels is not None:
        curves["nmi"] = scores
    return curves


def measure(names, seed, n_init=1):
    from semnmf.models.selection import candidate_grid

    path = cache_file(seed, n_init)
    cache = load_cache(path)
    for name, corpus, X, _ in pending(names, lambda n: [] if n in cache else [seed]):
        labels = (np.asarray(corpus.labels), np.asarray(corpus.labelled, bool))
        t = time.perf_counter()
        grid = candidate_grid(X.shape[0], k_max=max(2, min(K_TOP, X.shape[0] // 10)))
        curves = curves_of(X, grid, seed, n_init, corpus.counts(), labels)
        curves.update(seconds=time.perf_counter() - t, n_classes=int(corpus.n_classes),
                      n_documents=int(X.shape[0]))
        cache[name] = curves
        atomic_write(path, lambda f: json.dump(cache, f))
        print(f"  {name} seed {seed}: {curves['seconds']:.1f} s", flush=True)
    return cache


PLANTED = (3, 4, 5, 12, 20)


def planted_corpus(k, seed, n_per=40, d_per=12, noise=0.02):
    """k planted topics (:func:`semnmf.datasets.make_planted`): a structure every rule must
    find."""
    from semnmf.datasets import make_planted

    return make_planted(k, n_per_topic=n_per, n_words_per_topic=d_per, noise=noise,
                        random_state=seed)[0]


def measure_planted(seed, n_init=1):
    """The curves of the planted corpora (``planted_kK`` in the seed's cache)."""
    from semnmf.models.selection import candidate_grid

    path = cache_file(seed, n_init)
    cache = load_cache(path)
    for k in PLANTED:
        if f"planted_k{k}" in cache:
            continue
        X = planted_corpus(k, seed)
        curves = curves_of(X, candidate_grid(X.shape[0]), seed, n_init)
        curves.update(n_classes=k, n_documents=X.shape[0])
        cache[f"planted_k{k}"] = curves
        atomic_write(path, lambda f: json.dump(cache, f))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--datasets", nargs="*")
    m.add_argument("--n-init", type=int, default=1, help="k-means++ starts per run")
    r = sub.add_parser("report")
    r.add_argument("--seeds", nargs="*", type=int, default=[0, 1])
    r.add_argument("--n-init", type=int, default=1)
    args = parser.parse_args(argv)
    if args.command == "measure":
        measure(args.datasets or all_corpora(), args.seed, args.n_init)
        measure_planted(args.seed, args.n_init)
    else:
        from k_auto_report import report

        report(args.seeds, args.n_init)


if __name__ == "__main__":
    main()
