"""How many vocabulary terms the default embeds on raw text: every term, or a budget of
the terms in the most documents (``pretrained_inputs(max_word_terms=...)``): a fixed
number, or ``"auto"`` (``WORD_TERMS_PER_DOCUMENT`` per document of the corpus).

The default on raw text (``semnmf.cluster(path, k)``, which chose sentence semantics on
every corpus below) embeds each vocabulary term with all-MiniLM-L6-v2 for its word graph.
On a German corpus (2.2 word pieces a word) that is a quarter of the run. For every shared
raw-text corpus with more terms than the smallest budget, each budget: the NMI over the
seeds at k = number of classes, and the seconds of the words step (terms embedded, their
kNN search, the expansion) with no term in the embedding cache. The documents' vectors
come from one cache folder for all budgets (``--embedding-cache``; the first run of a
corpus encodes them), so the budgets differ only in their word graphs.

    PYTHONPATH=src python benchmarks/studies/term_budget.py [--seeds 5] [--corpora bbc,ng20]
        [--budgets all,12000,8000,5000] [--embedding-cache DIR]
    # -> benchmarks/results/term_budget.md (cells: benchmarks/cache/term_budget.json)
"""

import argparse
import functools
import glob
import os
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from _common import (CACHE_ROOT, RESULTS, atomic_write, data_root, load_cache,  # noqa: E402
                     machine_line, n_classes, raw_text_corpora, save_cache, table)

CACHE = os.path.join(CACHE_ROOT, "term_budget.json")
BUDGETS = ("all", "auto", "12000", "8000", "5000")
#: as semnmf.pipelines.pretrained.WORD_TERMS_PER_DOCUMENT (a study reads no private name)
PER_DOCUMENT = 6


def run_budget(folder, k, budget, seeds, cache_dir):
    """(NMI per seed, seconds of the words step on seed 0 with no term cached)."""
    import semnmf
    import semnmf.pipelines.pretrained as pretrained

    for path in glob.glob(os.path.join(cache_dir, "embeddings", "*", "terms-*.npz")):
        os.remove(path)  # the words step of seed 0 embeds its terms
    original = pretrained.pretrained_inputs
    pretrained.pretrained_inputs = functools.partial(
        original, max_word_terms=None if budget == "all" else budget if budget == "auto"
        else int(budget))
    try:
        nmis, seconds = [], None
        for seed in seeds:
            run = semnmf.cluster(folder, k, random_state=seed, cache_dir=cache_dir)
            if seconds is None:
                seconds = float(run.timings.get("words", float("nan")))
            nmis.append(float(run.scores["nmi"]))
    finally:
        pretrained.pretrained_inputs = original
    return nmis, seconds


def page(cache, names, budgets):
    """The results page, the corpora by their worst NMI change first."""
    rows, worst = [], {}
    for name in names:
        cell = cache.get(name)
        if not cell or "all" not in cell["budgets"]:
            continue
        base = np.mean(cell["budgets"]["all"]["nmi"])
        row = [name, cell["n_docs"], cell["n_terms"],
               min(cell["n_terms"], PER_DOCUMENT * cell["n_docs"]), f"{base:.3f}",
               f"{cell['budgets']['all']['words_s']:.1f}"]
        for b in budgets[1:]:
            got = cell["budgets"].get(b)
            if got is None:
                row += ["-", "-"]
                continue
            if got.get("same_as_all"):
                row += ["(every term)", "-"]
                continue
            delta = np.mean(got["nmi"]) - base
            worst[b] = min(worst.get(b, 0.0), delta)
            row += [f"{delta:+.3f}", f"{got['words_s']:.1f}"]
        changes = [float(v) for v in row[6::2] if v[:1] in ("+", "-") and len(v) > 1]
        rows.append((min(changes, default=0.0), row))
    rows = [row for _, row in sorted(rows, key=lambda pair: pair[0])]
    header = ["corpus", "documents", "terms", "auto keeps", "NMI, every term",
              "words step (s)"]
    for b in budgets[1:]:
        header += [f"NMI change, {b} terms", f"words step (s), {b}"]
    lines = ["# Terms embedded by the default on raw text", "",
             f"{machine_line()} Produced by `benchmarks/studies/term_budget.py` (its "
             "docstring gives the protocol). NMI: mean over the seeds at k = number of "
             "classes; the words step: seed 0, its terms embedded anew (ONNX Runtime, 2 "
             "threads); the documents' vectors read from one cache for every budget.", "",
             "Worst NMI change against every term: " + ", ".join(
                 f"{b} terms {worst[b]:+.3f}" for b in budgets[1:] if b in worst) + ".", "",
             table(header, rows), ""]
    atomic_write(os.path.join(RESULTS, "term_budget.md"), lambda f: f.write("\n".join(lines)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--corpora", help="comma-separated names (default: every raw-text "
                        "corpus of the shared datasets)")
    parser.add_argument("--budgets", default=",".join(BUDGETS))
    parser.add_argument("--embedding-cache", default=os.path.join(CACHE_ROOT, "embeddings"))
    parser.add_argument("--page-only", action="store_true")
    args = parser.parse_args(argv)
    root = data_root()
    names = args.corpora.split(",") if args.corpora else raw_text_corpora(root)
    budgets = args.budgets.split(",")
    cache = load_cache(CACHE)
    if not args.page_only:
        import torch

        torch.set_num_threads(2)
        seeds = list(range(args.seeds))
        for name in names:
            folder = os.path.join(root, name)
            k = n_classes(folder)
            cell = cache.get(name, {"k": k, "budgets": {}})
            cell.update(corpus_size(folder))
            for budget in budgets:
                if budget in cell["budgets"] and len(cell["budgets"][budget]["nmi"]) == len(seeds):
                    continue
                if budget == "auto" and PER_DOCUMENT * cell["n_docs"] >= cell["n_terms"]:
                    cell["budgets"]["auto"] = dict(cell["budgets"]["all"], same_as_all=True)
                    continue  # every term: the run of "all"
                nmis, seconds = run_budget(folder, k, budget, seeds, args.embedding_cache)
                cell["budgets"][budget] = {"nmi": nmis, "words_s": seconds}
                print(f"{name} {budget}: NMI {np.mean(nmis):.3f}, words step {seconds:.1f} s",
                      flush=True)
                cache[name] = cell
                save_cache(CACHE, {name: cell})
    page(cache, names, budgets)


def corpus_size(folder):
    """{"n_docs", "n_terms"} of the corpus as the default reads it."""
    import semnmf

    counts = semnmf.load_dataset(folder).counts()
    return {"n_docs": int(counts.shape[0]), "n_terms": int(counts.shape[1])}


if __name__ == "__main__":
    main()
