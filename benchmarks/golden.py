"""The golden set: labels, objective and iterations of every method on a few corpora.

Run before and after a restructuring; the two files must be identical (or the differences
explained). Only positional ``n_components`` and ``random_state`` are passed, so the script
reads the same across renames of other parameters.

    python benchmarks/golden.py record  [--out benchmarks/results/golden.json]
    python benchmarks/golden.py check   [--against benchmarks/results/golden.json]

``check`` also runs as a test: ``python -m pytest -m golden`` (``tests/test_golden.py``).
"""

import argparse
import hashlib
import json
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import GOLDEN_CORPORA, RESULTS, atomic_write, data_path, data_root  # noqa: E402

SEEDS = [0, 1]
GOLDEN = os.path.join(RESULTS, "golden.json")


def _digest(labels):
    return hashlib.sha1(np.asarray(labels, dtype=np.int64).tobytes()).hexdigest()[:16]


def _entry(model, labels=None):
    labels = model.labels_ if labels is None else labels
    objective = getattr(model, "objective_", None)
    if objective is not None:
        objective = float(objective)
        if type(model).__name__ == "SphericalKMeans" and objective > 0:
            # objective_ became lower-is-better (negated cosine sum): compare magnitudes
            objective = -objective
        objective = abs(objective)
    n_iter = getattr(model, "n_iter_", None)
    return {"labels": _digest(labels), "objective": None if objective is None else
            float(f"{objective:.10g}"), "n_iter": None if n_iter is None else int(n_iter)}


def _run_corpus(name, corpus):
    import semnmf
    from semnmf import ensemble

    X = corpus.tfidf()
    k = corpus.n_classes
    context = corpus.default_context()
    M = corpus.word_context(context=context)
    S = corpus.word_context(context=context, association="sppmi", shift=2)
    out = {}
    flat = {
        "skmeans": (lambda s: semnmf.SphericalKMeans(k, random_state=s), {}),
        "nmf": (lambda s: semnmf.NMF(k, random_state=s), {}),
        "onmf": (lambda s: semnmf.NMF(k, orthogonal=True, random_state=s), {}),
        "nmf-kl": (lambda s: semnmf.NMF(k, loss="kl", random_state=s), {}),
        "pnmf": (lambda s: semnmf.ProjectiveNMF(k, random_state=s), {}),
        "gnmf": (lambda s: semnmf.GNMF(k, random_state=s), {}),
        "snmf": (lambda s: semnmf.SemanticNMF(k, random_state=s), {"M": M}),
        "snmf-doc": (lambda s: semnmf.SemanticNMF(k, random_state=s), {}),
        "snmf-kl": (lambda s: semnmf.SemanticNMF(k, loss="kl", random_state=s), {"M": M}),
        "senmf": (lambda s: semnmf.SeNMF(k, random_state=s), {"M": S}),
        "sgnmf": (lambda s: semnmf.SemanticGNMF(k, random_state=s), {"M": M}),
        "nmfs": (lambda s: semnmf.NMFS(k, random_state=s), {}),
        "symnmf": (lambda s: semnmf.SymNMF(k, random_state=s), {}),
    }
    for method, (build, fit_params) in flat.items():
        for seed in SEEDS:
            print(f"{name} {method} seed {seed}", flush=True)
            model = build(seed).fit(X, **fit_params)
            out[f"{method}/{seed}"] = _entry(model)
            if method == "nmf":
                Z = model.transform(X)
                gt = semnmf.GTNMF().fit(X, memberships=Z)
                out[f"gtnmf(nmf)/{seed}"] = _entry(gt)
    for seed in SEEDS:
        tree = semnmf.HierarchicalNMF(k + 2, random_state=seed).fit(X)
        out[f"hiernmf2/{seed}"] = _entry(tree, tree.partition())   # the tree's own partition
        out[f"hiernmf2-topics/{seed}"] = _entry(tree)              # labels_: best leaf topic
    parts = np.column_stack([semnmf.NMF(k, random_state=s).fit(X).labels_ for s in range(4)])
    parts = parts[(parts >= 0).any(axis=1)]  # documents without any term have no label
    for method in ("cspa", "hgpa", "mcla", "anmi"):
        result = ensemble.consensus(parts, k, method=method, random_state=0)
        out[f"consensus-{method}/0"] = {"labels": _digest(result.labels), "objective": None,
                                        "n_iter": None}
    mmm = ensemble.mixture_consensus(parts, k, random_state=0)
    out["consensus-mmm/0"] = {"labels": _digest(mmm), "objective": None, "n_iter": None}
    # the consensus of runs (the KL consensus, --consensus mmm): MMM_STARTS EM starts
    runs = ensemble.combine(parts, k, "mmm", random_state=0)[0]
    out["combine-mmm/0"] = {"labels": _digest(runs), "objective": None, "n_iter": None}
    return out


def _same(before, after):
    """Equal entries; an objective the reference did not record (None: the estimator had
    no ``objective_`` then) may be recorded now."""
    if before is None or after is None:
        return before == after
    if before.get("objective") is None:
        after = {**after, "objective": None}
    return before == after


def record(root=None):
    """The golden set measured now: {corpus: {entry: {labels, objective, n_iter}}}."""
    from semnmf import load_dataset

    root = data_root() if root is None else root
    golden = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in GOLDEN_CORPORA:
            golden[name] = _run_corpus(name, load_dataset(os.path.join(root, name)))
    return golden


def differences(reference, golden):
    """``(corpus, entry, before, after)`` for every entry of either set that differs (None:
    the entry is missing from that set)."""
    keys = [(c, key) for c in golden for key in golden[c]]
    keys += [(c, key) for c in reference for key in reference[c]
             if key not in golden.get(c, {})]
    return [(c, key, reference.get(c, {}).get(key), golden.get(c, {}).get(key))
            for c, key in keys
            if not _same(reference.get(c, {}).get(key), golden.get(c, {}).get(key))]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("record", "check"))
    parser.add_argument("--out", default=GOLDEN)
    parser.add_argument("--against", default=GOLDEN)
    args = parser.parse_args(argv)
    golden = record()
    if args.action == "record":
        atomic_write(args.out, lambda f: json.dump(golden, f, indent=1, sort_keys=True))
        print(f"wrote {args.out}")
        return 0
    with open(args.against) as f:
        reference = json.load(f)
    differ = differences(reference, golden)
    for corpus, key, before, after in differ:
        print(f"DIFFERS {corpus} {key}: {before} -> {after}")
    print(f"{len(differ)} of {sum(map(len, golden.values()))} entries differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
