"""``--semantics minilm`` against all-MiniLM-L6-v2 + k-means on every shared raw-text corpus.

    python benchmarks/studies/bench_minilm.py [--datasets a,b,...] [--seeds 3]
                                      [--graph-lams 0.5,1,2,4,...,512] [--report-only]

For each shared corpus with raw text (a ``docs.jsonl``), smallest text first, k = number
of classes:

- the documents are encoded once with all-MiniLM-L6-v2 by the library's encoder
  (:func:`semnmf.text.encoders.embed_documents`: 256-word-piece chunks, length-weighted
  mean, cached on disk) and the vocabulary's surface forms once
  (:func:`~semnmf.text.encoders.embed_terms`); both are timed here, wall clock, on the
  machine as it is (CPU, 2 cores shared with other jobs);
- ``kmeans``: the chunked, L2-normalized document embeddings + scikit-learn
  ``KMeans(k, n_init=10, random_state=seed)`` (the baseline of the target);
  ``kmeans-first``: the same on the first chunk only, which is what
  ``SentenceTransformer.encode`` gives (it truncates at 256 word pieces), for reference;
- ``ours``: what ``semnmf cluster SOURCE -k K --semantics minilm --seed S`` computes: the
  command line's own option parsing (:func:`semnmf.cli.cluster_options.cluster_options`),
  loading (:func:`semnmf.cli._common.load_corpus`), word-context matrix
  (:func:`~semnmf.cli._common.word_context`), pretrained inputs and model
  (:func:`semnmf.pipelines.pretrained.pretrained_inputs`) and fit (the pipeline's model),
  i.e. ``run_local`` without writing: the document vectors' k-means partition where the
  run keeps it (:func:`semnmf.workflows.cluster.run_partition`: below 1,750 corpus tokens
  per cluster), else the fit; on BBC the labels are checked against the command line's
  ``assignments.csv`` for seed 0;
- ``ours-fit``: the Semantic-GNMF fit at the library's graph weight on every corpus (what
  ``ours`` was before the partition rule), from which the token threshold is chosen;
- ``ours-g{v}``: the same model with the document-graph weight ``graph_lam = v`` (the
  default, :func:`semnmf.pipelines.pretrained.document_graph_lam`, is a weight per corpus:
  128 below 150 documents per cluster, else 1), chosen afterwards by leave-one-corpus-out
  with :func:`_common.worst_then_mean` on the margin over ``kmeans``: one weight for all,
  then the rule "a weight below T documents per cluster, another above" (on the first
  ``--sweep-seeds`` seeds only, default 1).

Also shown: the default ``semnmf cluster`` NMI of ``results/portfolio.json`` (member
``default``, 5 seeds). Cells are cached in ``benchmarks/cache/minilm.json``; writes
``benchmarks/results/minilm.md``.
"""

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/: _common
from _common import (CACHE_ROOT, RESULTS, data_root, leave_one_out, load_cache, machine_line,
                     n_classes, raw_text_corpora, save_cache, table, worst_then_mean,
                     write_markdown)

CACHE = os.path.join(CACHE_ROOT, "minilm.json")

# What we saw (2026-11-27); kept here so that --report-only rewrites the whole file.
NOTES = """\
**Target "≥ all-MiniLM-L6-v2 + k-means on every shared raw-text corpus": met on 10 of
the 11, and missed on m10 by 0.001, within the noise of its seeds.** All 11 raw-text
corpora, 10 seeds (seeds 5-9 added in stop 48, on 2026-11-27; on seeds 0-4 m10 was
−0.003).
- **What the run does.** Below 1,750 corpus tokens per cluster (`semnmf.pipelines.pretrained.
  document_partition`; section "The document partition" below), `--semantics minilm` keeps
  the document vectors' k-means partition. Its topics are then the word factors
  Semantic-NMF gives that partition (eq. 5 with Z held, `partition_topics`). This applies to
  banking77 (164 tokens per cluster) and nyt_frontpage (506). On
  every other corpus it fits Semantic-GNMF, with the document-graph weight chosen per
  corpus: 128 below 150 documents per cluster, else 1 (`document_graph_lam`).
- **Result.** It is above MiniLM + k-means on eight corpora, from +0.013 (BBC) to +0.126
  (Chinese titles), and equal to it on banking77 and nyt_frontpage (the same partition,
  same seed).
- **m10: −0.001.** Its seeds give −0.000, −0.014, −0.001, −0.001, +0.000, −0.000, −0.000,
  +0.001, +0.001 and +0.000: one seed makes the loss.
- **Beyond NMI, where the partition is kept** (section "The document partition").
  - banking77: it is above the fit on every score, ARI 0.499 against 0.473 and accuracy
    0.613 against 0.568.
  - nyt_frontpage: it trades ARI (0.129 against 0.160) and accuracy (0.300 against 0.317)
    for NMI (+0.019). The target is NMI.
  - The topics are Semantic-NMF's word factors for the partition, at λ = 1 (see
    `partition_topics`).
    - banking77: NPMI −0.058, against the fit's −0.065.
    - The headlines: −0.112, against the fit's +0.018 and the mean rows' −0.49.
    - λ = 10 would reach +0.08 on the headlines, but its topics drift from their clusters:
      only 34 % of a cluster's headlines hold one of its top words, against 51 % at λ = 1.
- **Leave-one-corpus-out of the token threshold, 10 seeds:** held-out worst −0.019
  (nyt_frontpage), mean +0.038; ranked by the mean: worst −0.001 (m10), mean +0.028. With
  the fit everywhere: nyt_frontpage −0.019, banking77 −0.004, m10 −0.001 (mean +0.037).
  With weight 1 everywhere: banking77 −0.140, nyt_frontpage −0.097. On seeds 0-4 the
  library's rule was held out at worst −0.003 and mean +0.041: see "How the threshold was
  chosen".
- **Against the default `semnmf cluster`.** It is above the default (the portfolio's
  5-seed runs) on nine corpora. It is 0.002 below on NG20 and 0.016 below on the Chinese
  titles (0.003 on the same seeds 0-4: its seeds 5-9 are lower).
- **Why keep the document partition.** On banking77 and nyt_frontpage, every
  document-graph weight from 0.5 to 512 left the fit below its start (best: −0.006 at 64,
  −0.008 at 512). Each of their word topics would be estimated from a few hundred tokens.
  The next corpus up, thucnews_titles (5,980 tokens per cluster), gains +0.126 from the fit.
- **How the threshold was chosen.** Among thresholds with the same worst fold (losses
  within 0.005 count as none), the smallest one is taken, so that the fewest corpora leave
  the fit.
  - Ranking by the mean instead gives the same threshold on all 11 corpora.
  - Ranked by the mean, thucnews_titles held out would lose its +0.126: without it,
    m10's −0.001 pulls the threshold above both of them.
  - The tolerance and the tie-break were settled on seeds 0-4, after seeing those folds,
    and only two corpora lie below the threshold. On 10 seeds banking77's fit is −0.004,
    inside the tolerance, so with nyt_frontpage held out the smallest threshold is 0 (the
    fit everywhere) and nyt_frontpage gets its fit's −0.019. The threshold chosen on all
    11 corpora is unchanged (1,740; the library's 1,750), but its held-out estimate is
    worst −0.019, not −0.003. Neither number clears the target: the partition rule
    rests on two corpora.
  - Section below.
- **Cost.** Such a run skips the fit and the word vectors: seconds once the documents are
  encoded.

- **Why a weight per corpus** (the fit's numbers in these bullets are from the first 3
  seeds; the weight tables below have 5). The pipeline starts from exactly the baseline's partition
  (k-means of the same document vectors, 10 restarts, same seed), so every loss is the
  Semantic-GNMF fit drifting away from it. The graph term holds each document to its
  neighbours in embedding space.
  - The corpora with few documents per cluster gain from a heavy graph: banking77 (40
    documents per cluster) goes from −0.144 at weight 1 to −0.009 at 64, German news
    (114) from −0.002 to +0.044. With few documents each, a word topic is estimated from
    few documents.
  - Those with many documents per cluster lose: BBC (445) goes from +0.013 to −0.024,
    Chinese titles (1,000) from +0.155 to +0.013.
  - One weight for all, chosen by leave-one-corpus-out (LOCO): held-out worst −0.024,
    mean +0.023.
  - The rule by documents per cluster: held-out worst −0.024, mean +0.038. Held out,
    banking77 gets 512, which the other corpora choose. The rule chosen on all corpora is
    the library's.
  - The rules are ranked by their worst fold over MiniLM + k-means, then their worst fold
    over the default `semnmf cluster` (the pipeline should beat both), then the mean.
    Weight 2 above the threshold ties 1 on the first and has the higher mean (NG20 +0.061,
    M10 +0.016), but falls below the default on BBC (−0.009) and Chinese titles (−0.017).
- **Start and chunking.** The document k-means start is chosen on every LOCO fold over
  spherical k-means of X (the words); the words start loses up to 0.075 (Chinese titles).
  The library embeds every chunk of a document and takes their length-weighted mean. For
  MiniLM + k-means the first chunk alone (what `SentenceTransformer.encode` gives) is
  never better by more than noise (+0.003 at best, NG20); it loses 0.070 on German news, whose
  articles are long. The chunk length
  (256 word pieces, the model's limit) was not varied.
- **The centroid step in the embedding space: measured, not adopted** (section below, 5
  seeds). Moving the documents of the run to the nearest MiniLM centroid when they are
  `min_gain` more similar to it lifts m10 a little (+0.001 at min_gain 0.1, +0.006 at 0.2)
  and costs nearly every other corpus (banking77 and nyt_frontpage −0.002 to −0.006).
  Leave-one-corpus-out keeps no step on 10 of 11 folds (banking77's picks 0.2): held-out
  worst −0.006 against −0.003 without the step, mean +0.041 either way. The largest loss
  is on the corpus the English model reads worst: Chinese titles +0.144 → +0.111 at 0.1.
  The unseen corpora hold Turkish and French. So the run keeps its labels. (This was
  first measured before the run kept the document partition, on 3 seeds: 0.1 was then
  chosen on 9 folds, worst −0.009 against −0.013, mean +0.028 against +0.039.) (The word default's TF-IDF step is no help here either: banking77 −0.075 and
  m10 −0.083 against k-means when applied to these runs.)
- **MiniLM is an English model.** On Chinese titles MiniLM + k-means reaches only 0.178,
  and the pipeline's corpus words lift it to 0.304, below the default alone (0.320, its 5
  seeds; on the same seeds 0-4 the pipeline is 0.317, and seeds 5-9 average 0.290).
- **Same labels as the command line.** On BBC, seed 0, this script's path and `semnmf
  cluster bbc -k 5 --semantics minilm --seed 0` give identical labels.

**Should raw text get semantics by default when the `[embeddings]` extra is installed?**
Not on a CPU, and not with a GPU either; it stays opt-in.
- On quality it would, mostly: it is above the default `semnmf cluster` on 9 of the 11
  corpora, by up to +0.232, and below it on NG20 (0.002) and the Chinese titles (0.016;
  the default's 5 seeds against these 10: about 0.003 on the same seeds) (the
  `ours − default` column).
- The first run encodes every document: 69-471 s here for 1,028-12,340 documents (the
  earlier runs, on 2 shared cores), and 38 minutes for NG20's 18,846 (47,457 chunks). The
  whole default run takes 0.6-2.8 s, and 27 s on NG20.
- A second run reads the cache (the encoding columns show about 0 s when read from it) and
  takes 6-31 s for the inputs and fit, several times the default.
- With a GPU (`--device cuda`, `gpu_semantics.md`, one H200) the encoding takes 0.35-34 s
  and a first run 7-75 s: 3.7-22x the default run on that GPU (median 6.6x), 2.0-9.7x
  from the cache. And read from raw text instead of `counts.mtx`, NG20 is below the
  default: 0.682 against 0.692 (seed 0) and 0.654 against 0.678 (seed 1).
- The default run says this in one line when the extra is installed, and records it in
  run.json's `method_choice.semantics`.
"""
DEFAULT_LAM = 1.0
WORD_START = "xstart"   # the start measured beside the document k-means start


def cli_options(path, k, seed):
    """The settings ``semnmf cluster PATH -k K --semantics minilm --seed S`` runs with."""
    from semnmf.cli.cluster_options import cluster_options
    from semnmf.cli.main import build_parser

    args = build_parser().parse_args(["cluster", path, "-k", str(k), "--semantics", "minilm",
                                      "--seed", str(seed)])
    return cluster_options(args)[0]


def encode(corpus, entry):
    """Embed the documents and the terms once (timed; later calls read the cache)."""
    from semnmf.text import encoders
    from semnmf.text.pretrained import term_forms

    if "encode" in entry:
        return
    encoder = encoders.load_encoder("minilm")
    t = time.perf_counter()
    pieces, _, _ = encoder.chunks(corpus.texts)
    chunking = time.perf_counter() - t
    t = time.perf_counter()
    encoders.embed_documents(corpus.texts, encoder)
    documents = time.perf_counter() - t
    forms = term_forms(corpus)
    t = time.perf_counter()
    encoders.embed_terms(forms, encoder)
    terms = time.perf_counter() - t
    entry["encode"] = {"documents_s": documents, "terms_s": terms, "chunks": len(pieces),
                       "documents": len(corpus.texts), "terms": len(forms),
                       "chunking_s": chunking, "load": os.getloadavg()[0]}


def kmeans_cell(corpus, k, seed, pooling):
    from sklearn.cluster import KMeans
    from semnmf import clustering_scores
    from semnmf.text import encoders

    E = encoders.embed_documents(corpus.texts, "minilm", pooling=pooling).astype(np.float64)
    t = time.perf_counter()
    labels = KMeans(k, n_init=10, random_state=seed).fit(E).labels_
    return {"seconds": time.perf_counter() - t, **clustering_scores(corpus.labels, labels)}


# the key of the Semantic-GNMF fit at the library's document-graph weight in CliPath.run
# ("ours-fit" in the cache), whether or not the run keeps the document partition
FIT = "fit"


class CliPath:
    """``semnmf cluster --semantics minilm`` (:func:`semnmf.cluster`'s run) split so that
    the corpus and its word-context matrix are built once and each seed reuses them."""

    def __init__(self, path, k):
        from semnmf.workflows.inputs import build_word_context, read_corpus

        self.timings = {}
        options = cli_options(path, k, 0)
        t = time.perf_counter()
        self.corpus, self.X = read_corpus(options, self.timings, t)
        self.wc = build_word_context(options, self.corpus, self.timings,
                                     association=options.spec.association,
                                     counts_context=options.spec.counts_context)
        self.settings = dataclasses.replace(options, association=self.wc.association,
                                            top_k=self.wc.top_k)

    def run(self, seed, graph_lams=()):
        """{graph_lam: (labels, fit seconds)} for the CLI's run (key None: the document
        vectors' partition where :func:`semnmf.workflows.cluster.run_partition` keeps it,
        else the fit), the fit at the library's weight (:data:`FIT`) and the same inputs
        with other document-graph weights; plus the input seconds, the library's weight
        and the partition."""
        from sklearn.base import clone
        from semnmf.pipelines.pretrained import pretrained_inputs, semantic_model
        from semnmf.workflows.cluster import run_partition

        s = dataclasses.replace(self.settings, random_state=seed)
        partition, _ = run_partition(s, self.corpus)
        t = time.perf_counter()
        inputs = pretrained_inputs(self.corpus, self.X, self.wc.M, s.k, s.semantics, s.embed,
                                   random_state=seed, cache_dir=s.cache_dir)
        model = semantic_model(s.k, inputs, lam=s.lam, lam_scale=s.lam_scale,
                               n_init=s.n_init or 1, max_iter=s.max_iter, tol=s.tol,
                               random_state=seed)
        fit_params = ({"M": inputs.M} if inputs.A is None else {"M": inputs.M, "A": inputs.A})
        inputs_s = time.perf_counter() - t
        out = {}
        for lam in (FIT, *graph_lams):
            if lam == WORD_START:  # the default model from spherical k-means of X instead
                from semnmf import SphericalKMeans

                start = SphericalKMeans(s.k, random_state=seed).fit(inputs.X).labels_
                m = semantic_model(s.k, dataclasses.replace(inputs, start=start), lam=s.lam,
                                   lam_scale=s.lam_scale, n_init=s.n_init or 1,
                                   max_iter=s.max_iter, tol=s.tol, random_state=seed)
            else:
                m = model if lam == FIT else clone(model).set_params(graph_lam=lam)
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                labels = m.fit(inputs.X, **fit_params).labels_
            out[lam] = (np.asarray(labels), time.perf_counter() - t,
                        m.components_ if lam == FIT else None)
        if partition == "documents":  # as the library's run (workflows.cluster)
            from semnmf.models.semantic import partition_topics

            t = time.perf_counter()
            labels = np.asarray(inputs.start)
            topics, _ = partition_topics(self.X, labels, s.k, self.wc.M)
            out[None] = (labels, time.perf_counter() - t, topics)
        else:
            out[None] = out[FIT]
        return out, inputs_s, model.get_params().get("graph_lam"), partition


def check_cli(path, k, labels):
    """Run the command line itself (seed 0) and compare its labels with ``labels``."""
    import csv

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        semnmf = os.path.join(os.path.dirname(sys.executable), "semnmf")
        cmd = [semnmf, "cluster", path, "-k", str(k), "-q",
               "--semantics", "minilm", "--seed", "0", "--out", out]
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        seconds = time.perf_counter() - t
        with open(os.path.join(out, "assignments.csv"), encoding="utf-8") as f:
            cli = np.array([int(row["cluster"]) for row in csv.DictReader(f)])
    return {"equal": bool(np.array_equal(cli, labels)), "n": int(cli.size),
            "differ": int((cli != labels).sum()), "cli_seconds": seconds}


def step_cells(corpus, k, labels, gains):
    """``{gain: scores}`` of the centroid step (:func:`semnmf.refine.centroid_refine`)
    applied to ``labels`` in the space of the baseline's document embeddings."""
    from semnmf import clustering_scores
    from semnmf.refine import centroid_refine
    from semnmf.text import encoders

    E = encoders.embed_documents(corpus.texts, "minilm", pooling="mean").astype(np.float64)
    return {g: clustering_scores(corpus.labels, centroid_refine(E, labels, k, min_gain=g)[0])
            for g in gains}


def measure(name, root, entry, seeds, graph_lams, sweep_seeds, save, word_start=False,
            step_gains=()):
    from semnmf import clustering_scores

    path = os.path.join(root, name)
    t0 = time.perf_counter()
    cli = CliPath(path, n_classes(path))
    corpus, k = cli.corpus, cli.settings.k
    if corpus.n_classes != k:
        raise ValueError(f"{name}: labels.txt has {k} values, the corpus {corpus.n_classes}")
    entry.setdefault("k", k)
    entry.setdefault("n", corpus.n_documents)
    print(f"{name}: {corpus.n_documents} documents, k={k}, loaded in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)
    encode(corpus, entry)
    save()
    print(f"  encoded: {entry['encode']}", flush=True)
    for seed in seeds:
        for pooling, method in (("mean", "kmeans"), ("first", "kmeans-first")):
            key = f"{method}/{seed}"
            if key in entry:
                continue
            if method == "kmeans-first" and entry["encode"]["chunks"] == corpus.n_documents:
                entry[key] = entry[f"kmeans/{seed}"]  # one chunk per document: the same vectors
            else:
                entry[key] = kmeans_cell(corpus, k, seed, pooling)
        todo = [g for g in (graph_lams if seed < sweep_seeds else ())
                if f"ours-g{g:g}/{seed}" not in entry]
        if word_start and f"ours-xstart/{seed}" not in entry:
            todo.append(WORD_START)
        steps = [g for g in step_gains if f"ours-step{g:g}/{seed}" not in entry]
        if f"ours/{seed}" not in entry or f"ours-fit/{seed}" not in entry or todo or steps:
            runs, inputs_s, default_lam, entry["partition"] = cli.run(seed, todo)
            entry["tokens_per_cluster"] = float(corpus.counts().sum()) / k
            for g, scores in step_cells(corpus, k, runs[FIT][0], steps).items():
                entry[f"ours-step{g:g}/{seed}"] = scores
            entry["default_graph_lam"] = default_lam
            for lam, (labels, fit_s, topics) in runs.items():
                key = (f"ours/{seed}" if lam is None else f"ours-fit/{seed}" if lam == FIT
                       else f"ours-xstart/{seed}" if lam == WORD_START
                       else f"ours-g{lam:g}/{seed}")
                entry[key] = {"seconds": inputs_s + fit_s, "fit_seconds": fit_s,
                              **clustering_scores(corpus.labels, labels)}
                if topics is not None:  # NPMI (top 10) and diversity (top 25) of the topics
                    from semnmf.metrics import topic_quality

                    quality = topic_quality(topics, corpus.counts())
                    entry[key].update(npmi=quality["npmi"], diversity=quality["diversity"])
                if lam is None and seed == 0 and name == "bbc" and "cli_check" not in entry:
                    entry["cli_check"] = check_cli(path, k, labels)
                    print(f"  CLI check: {entry['cli_check']}", flush=True)
        save()
        print(f"  seed {seed}: " + ", ".join(
            f"{m} {entry[f'{m}/{seed}']['nmi']:.3f}"
            for m in ["kmeans", "kmeans-first", "ours"] + [f"ours-g{g:g}" for g in graph_lams]
            if f"{m}/{seed}" in entry),
            flush=True)
    entry["wall_s"] = entry.get("wall_s", 0) + time.perf_counter() - t0
    save()


# ------------------------------------------------------------------ report
def nmis(entry, method):
    return [entry[key]["nmi"] for key in sorted(entry) if key.startswith(method + "/")]


def mean(entry, method, seeds=None):
    values = [entry[f"{method}/{s}"]["nmi"] for s in seeds] if seeds else nmis(entry, method)
    return float(np.mean(values)) if values else None


def report(cache, order):
    portfolio = {}
    path = os.path.join(RESULTS, "portfolio.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            portfolio = json.load(f)
    default = portfolio.get("nmi", {}).get("default", {})
    default_s = portfolio.get("seconds", {}).get("default", {})
    done = [n for n in order if n in cache and nmis(cache[n], "ours") and nmis(cache[n], "kmeans")]
    rows = []
    for name in done:
        e = cache[name]
        seeds = sorted(int(key.split("/")[1]) for key in e if key.startswith("ours/"))
        seeds = [s for s in seeds if f"kmeans/{s}" in e]
        ours, km = mean(e, "ours", seeds), mean(e, "kmeans", seeds)
        first = mean(e, "kmeans-first", seeds)
        margins = [e[f"ours/{s}"]["nmi"] - e[f"kmeans/{s}"]["nmi"] for s in seeds]
        enc = e["encode"]
        fit = float(np.mean([e[f"ours/{s}"]["seconds"] for s in seeds]))
        d = default.get(name)
        rows.append((ours - km, name, [
            name, e["k"], e["n"], f"{km:.3f}", f"{first:.3f}", f"{ours:.3f}",
            e.get("partition", "–"),
            f"**{ours - km:+.3f}**", f"{min(margins):+.3f}",
            "–" if d is None else f"{d:.3f}", "–" if d is None else f"{ours - d:+.3f}",
            f"{enc['documents_s']:.0f}", f"{enc['chunks']:,}", f"{enc['terms_s']:.0f}",
            f"{fit:.1f}", "–" if default_s.get(name) is None else f"{default_s[name]:.1f}",
            len(seeds)]))
    rows.sort(key=lambda r: r[0])
    header = ["corpus", "k", "docs", "MiniLM + k-means", "(first chunk only)",
              "`--semantics minilm`", "its partition", "margin", "worst seed margin", "default `semnmf cluster`",
              "ours − default", "encode documents (s; about 0 when read from the cache)", "chunks", "encode terms (s)",
              "pipeline (s, cached vectors)", "default (s)", "seeds"]
    sections = [(None, f"Machine: {machine_line()} (CPU only, 2 cores shared with other "
                       "jobs: the seconds are inflated by their load). Produced by "
                       "`benchmarks/studies/bench_minilm.py`; see its docstring for the protocol. "
                       "NMI, k = number of classes, mean over the seeds.")]
    sections.append(("Every corpus, losses first", table(header, [r[2] for r in rows])))
    sections.append(("The document partition below 1,750 corpus tokens per cluster",
                     partition_text(cache, done)))
    sections.append(("Leave-one-corpus-out choice of the document-graph weight",
                     loco_text(cache, done, default)))
    sections.append(("Start and chunking", start_text(cache, done)))
    steps = step_text(cache, done)
    if steps:
        sections.append(("The centroid step in the embedding space (not adopted)", steps))
    check = cache.get("bbc", {}).get("cli_check")
    if check:
        sections.append(("Same labels as the command line", (
            f"BBC, seed 0: `semnmf cluster bbc -k 5 --semantics minilm --seed 0` and this "
            f"script's path give {'the same' if check['equal'] else 'DIFFERENT'} labels "
            f"({check['differ']} of {check['n']} differ); the command took "
            f"{check['cli_seconds']:.0f} s with the vectors cached.")))
    return sections, rows


def step_text(cache, done):
    """The centroid step of the default run's labels in the space of the baseline's
    embeddings, with each relative margin ``min_gain`` measured (``--step-gains``),
    against ``kmeans``; chosen by leave-one-corpus-out with the step-less run among the
    candidates."""
    gains = sorted({key.split("/")[0][len("ours-step"):] for n in done for key in cache[n]
                    if key.startswith("ours-step")}, key=float)
    folds = [n for n in done if all(nmis(cache[n], f"ours-step{g}") for g in gains)]
    if not gains or not folds:
        return None
    candidates = ["ours"] + [f"ours-step{g}" for g in gains]

    def margin(method, fold):
        e = cache[fold]
        seeds = [key.split("/")[1] for key in e if key.startswith(f"{candidates[-1]}/")]
        return float(np.mean([e[f"{method}/{s}"]["nmi"] - e[f"kmeans/{s}"]["nmi"]
                              for s in seeds]))

    def name(method):
        return "no step" if method == "ours" else f"min_gain {method[len('ours-step'):]}"

    chosen = leave_one_out(folds, candidates, worst_then_mean(margin))
    held = [margin(chosen[f], f) for f in folds]
    rows = [[name(m), f"{min(margin(m, f) for f in folds):+.3f}",
             f"{np.mean([margin(m, f) for f in folds]):+.3f}",
             f"{sum(margin(m, f) >= 0 for f in folds)} / {len(folds)}"] for m in candidates]
    rows.append(["**leave-one-corpus-out**", f"{min(held):+.3f}", f"{np.mean(held):+.3f}",
                 f"{sum(h >= 0 for h in held)} / {len(folds)}"])
    per = [[f] + [f"{margin(m, f):+.3f}" for m in candidates] + [name(chosen[f])]
           for f in sorted(folds, key=lambda f: margin("ours", f))]
    return ("Each document of the default `--semantics minilm` run moved to the cluster "
            "centroid it is most cosine-similar to *in the baseline's embedding space* "
            "(`semnmf.refine.centroid_refine(E, labels, min_gain=g)`), when g more than to "
            "its own; margin over MiniLM + k-means, mean over the seeds.\n\n"
            + table(["candidate", "worst margin", "mean margin", "corpora ≥ 0"], rows)
            + "\n\n" + table(["corpus"] + [name(m) for m in candidates]
                               + ["chosen without it"], per))


def loco_text(cache, done, default=None):
    lams = sorted({float(key.split("/")[0][len("ours-g"):]) for n in done for key in cache[n]
                   if key.startswith("ours-g")})
    folds = [n for n in done if all(mean(cache[n], _method(g)) is not None for g in lams)]
    if len(lams) < 2 or len(folds) < 2:
        return "Not measured."

    def margin(g, fold):  # on the seeds every weight was run on
        e = cache[fold]
        seeds = [s for s in range(100) if all(f"{_method(v)}/{s}" in e for v in lams)]
        return float(np.mean([e[f"{_method(g)}/{s}"]["nmi"] - e[f"kmeans/{s}"]["nmi"]
                              for s in seeds]))

    # ties to the default first, then the smaller weights
    candidates = [DEFAULT_LAM] + [g for g in lams if g != DEFAULT_LAM]
    chosen = leave_one_out(folds, candidates, worst_then_mean(margin))
    rows = []
    for fold in folds:
        g = chosen[fold]
        rows.append([fold] + [f"{margin(v, fold):+.3f}" for v in lams]
                    + [f"{g:g}", f"**{margin(g, fold):+.3f}**"])
    rows.append(["worst"] + [f"{min(margin(v, f) for f in folds):+.3f}" for v in lams]
                + ["", f"{min(margin(chosen[f], f) for f in folds):+.3f}"])
    rows.append(["mean"] + [f"{np.mean([margin(v, f) for f in folds]):+.3f}" for v in lams]
                + ["", f"{np.mean([margin(chosen[f], f) for f in folds]):+.3f}"])
    overall = max(candidates, key=lambda c: worst_then_mean(margin)(c, folds))
    text = ("Margin over MiniLM + k-means (mean over the seeds every weight was run on) of the pipeline with the document-"
            "graph weight `graph_lam` (1: the earlier default, still the default above 150 documents "
            "per cluster); for each held-out corpus the weight "
            "chosen on the others by its worst fold, then its mean "
            "(`_common.worst_then_mean`), and the held-out margin it gets.\n\n")
    text += table(["held out"] + [f"graph_lam {v:g}" for v in lams] + ["chosen", "held-out margin"],
                  rows)
    text += f"\n\nChosen on all {len(folds)} corpora: graph_lam = {overall:g}."
    return text + "\n\n" + rule_text(cache, folds, lams, margin, default or {})


def start_text(cache, done):
    """The default model from the document k-means start against the spherical k-means of
    X (``--word-start``), by leave-one-corpus-out; and the first chunk against the chunked
    mean for MiniLM + k-means."""
    folds = [n for n in done if all(f"ours-xstart/{s}" in cache[n] for s in range(3))
             and all(f"ours/{s}" in cache[n] for s in range(3))]
    if len(folds) < 2:
        return "Not measured."

    def margin(method, fold):
        e = cache[fold]
        return float(np.mean([e[f"{method}/{s}"]["nmi"] - e[f"kmeans/{s}"]["nmi"]
                              for s in range(3)]))

    candidates = ["ours", "ours-xstart"]
    chosen = leave_one_out(folds, candidates, worst_then_mean(margin))
    rows = [[f, f"{margin('ours', f):+.3f}", f"{margin('ours-xstart', f):+.3f}",
             "documents" if chosen[f] == "ours" else "words",
             f"{mean(cache[f], 'kmeans-first') - mean(cache[f], 'kmeans'):+.3f}"]
            for f in folds]
    picks = sorted({chosen[f] for f in folds})
    return ("Margin over MiniLM + k-means (3 seeds) of the default pipeline started from "
            "k-means of the document vectors (the default) and from spherical k-means of X "
            "(the words); the start chosen on the other corpora by its worst fold, then "
            f"its mean: {', '.join('documents' if p == 'ours' else 'words' for p in picks)}. "
            "Last column: MiniLM + k-means on the first 256-word-piece chunk of each "
            "document (what `SentenceTransformer.encode` gives) minus on the length-weighted "
            "mean of all its chunks (the library's encoding).\n\n"
            + table(["corpus", "document start", "word start", "start chosen on the others",
                     "first chunk − all chunks"], rows))


# a worst fold this close to 0 is a tie (within about one standard error of a 5-seed mean
# margin here: m10's fit is -0.003, its seeds -0.014 to +0.000)
NOISE = 0.005


def partition_text(cache, done):
    """The run's partition: the fit, or the document vectors' k-means partition (the
    baseline's, margin 0) below a threshold of corpus tokens per cluster; the threshold
    chosen by leave-one-corpus-out among the geometric midpoints between the training
    corpora's values (worst fold first, losses within :data:`NOISE` a tie, then the mean)."""
    folds = [n for n in done if nmis(cache[n], "ours-fit") and "tokens_per_cluster" in cache[n]]
    if len(folds) < 3:
        return "Not measured."
    tokens = {f: cache[f]["tokens_per_cluster"] for f in folds}

    def fit_margin(fold):
        e = cache[fold]
        seeds = [key.split("/")[1] for key in e if key.startswith("ours-fit/")]
        return float(np.mean([e[f"ours-fit/{s}"]["nmi"] - e[f"kmeans/{s}"]["nmi"]
                              for s in seeds]))

    def value(threshold, fold):
        return 0.0 if tokens[fold] < threshold else fit_margin(fold)

    def thresholds(train):
        values = sorted(tokens[f] for f in train)
        return [0.0] + [float(np.sqrt(a * b)) for a, b in zip(values, values[1:])] + [np.inf]

    worst = worst_then_mean(value, NOISE)
    scores = {  # the worst fold first; then the smallest T (the fewest corpora moved off
        # the fit: the start is the fallback), or the mean
        "smallest": lambda t, train: (worst(t, train)[0], -t),
        "mean": worst,
    }
    held = {how: {} for how in scores}
    for how, score in scores.items():
        for fold in folds:
            train = [f for f in folds if f != fold]
            held[how][fold] = max(thresholds(train), key=lambda t: score(t, train))
    overall = {how: max(thresholds(folds), key=lambda t: score(t, folds))
               for how, score in scores.items()}
    from semnmf.pipelines.pretrained import FEW_TOKENS_PER_CLUSTER

    rows = [[f, f"{tokens[f]:,.0f}", f"{fit_margin(f):+.3f}"]
            + sum(([f"{held[how][f]:,.0f}", "documents" if tokens[f] < held[how][f] else "fit",
                    f"**{value(held[how][f], f):+.3f}**"] for how in scores), [])
            + [cache[f].get("partition", "–")]
            for f in sorted(folds, key=lambda f: tokens[f])]
    margins = {how: [value(held[how][f], f) for f in folds] for how in scores}
    said = {how: f"worst **{min(m):+.3f}**, mean **{np.mean(m):+.3f}**, "
                 f"{sum(v >= 0 for v in m)} of {len(folds)} corpora ≥ 0"
            for how, m in margins.items()}
    return ("The run's clusters: the Semantic-GNMF fit's, or the document vectors' k-means "
            "partition (its start, which is MiniLM + k-means: margin 0) below T corpus "
            "tokens per cluster (the in-vocabulary word occurrences over k: the text each "
            "word topic is estimated from). For each held-out corpus, T is chosen on the "
            "others among the geometric midpoints between their values, by the worst fold "
            f"(a loss within {NOISE} counts as none: the seeds cannot tell it apart), then "
            "either the smallest T (the start is a fallback: move the fewest corpora off "
            "the fit) or the mean margin.\n\n"
            f"- Smallest T (the library's rule): held out {said['smallest']}; chosen on all "
            f"{len(folds)}: T = {overall['smallest']:,.0f} (the library's "
            f"`FEW_TOKENS_PER_CLUSTER` = {FEW_TOKENS_PER_CLUSTER:,}).\n"
            f"- Mean: held out {said['mean']}; chosen on all {len(folds)}: T = "
            f"{overall['mean']:,.0f}. Without thucnews_titles no training corpus lies "
            "between nyt_frontpage and m10, and moving m10 (a noise-level loss) to its "
            "start raises the mean a little, so the held-out Chinese titles lose their "
            "gain.\n"
            f"- The fit everywhere: worst {min(map(fit_margin, folds)):+.3f}, mean "
            f"{np.mean([fit_margin(f) for f in folds]):+.3f}.\n\n"
            + table(["held out", "tokens per cluster", "fit's margin",
                     "T (smallest)", "partition", "held-out margin",
                     "T (mean)", "partition", "held-out margin", "the library's run"], rows)
            + quality_text(cache, [f for f in folds if cache[f].get("partition") == "documents"]))


def quality_text(cache, kept):
    """Beside NMI, what the document partition changes where the library keeps it: ARI,
    accuracy and its topics' NPMI (top 10) and diversity (top 25), against the fit's."""
    if not kept:
        return ""
    keys = ("nmi", "ari", "accuracy", "npmi", "diversity")

    def avg(fold, method, key):
        values = [cache[fold][k].get(key) for k in cache[fold] if k.startswith(method + "/")]
        values = [v for v in values if v is not None]
        return f"{np.mean(values):.3f}" if values else "–"

    rows = [[f, which] + [avg(f, method, key) for key in keys]
            for f in kept for which, method in (("document partition (the run)", "ours"),
                                                ("the fit", "ours-fit"))]
    return ("\n\nWhere the run keeps the document partition, the other scores, mean over "
            "the seeds. The partition's topics are the word factors Semantic-NMF gives it "
            "(`semnmf.models.semantic.partition_topics`: eq. 5 with Z held at the partition, "
            "λ = 1); its clusters' mean TF-IDF rows had NPMI −0.49 on nyt_frontpage and "
            "−0.22 on banking77 (seed 0, scratch).\n\n"
            + table(["corpus", "clusters", "NMI", "ARI", "accuracy", "topics' NPMI",
                     "topics' diversity"], rows))


THRESHOLDS = (150, 200, 300, 400)


def rule_weight(rule, entry):
    """The weight a per-corpus rule (T, few, many) gives a corpus: ``few`` when it has
    fewer than T documents per cluster (n / k), else ``many``; T = 0 is ``many`` always."""
    threshold, few, many = rule
    return few if entry["n"] / entry["k"] < threshold else many


def rule_text(cache, folds, lams, margin, default):
    """Leave-one-corpus-out over the rules "weight ``few`` below T documents per cluster,
    ``many`` above" (the fixed weights are T = 0): the worst fold over MiniLM + k-means
    first, then the worst over the default ``semnmf cluster`` (``default``: its NMI per
    corpus), then the mean over MiniLM + k-means."""
    rules = [(0, g, g) for g in [DEFAULT_LAM] + [g for g in lams if g != DEFAULT_LAM]]
    rules += [(t, few, many) for t in THRESHOLDS for many in lams for few in lams if few > many]

    def value(rule, fold):
        return margin(rule_weight(rule, cache[fold]), fold)

    def over_default(rule, fold):
        if fold not in default:
            return np.inf
        g = rule_weight(rule, cache[fold])
        return mean(cache[fold], _method(g), [0, 1, 2]) - default[fold]

    def score(rule, train):
        values = [value(rule, f) for f in train]
        return min(values), min(over_default(rule, f) for f in train), float(np.mean(values))

    chosen = leave_one_out(folds, rules, score)
    name = lambda r: (f"{r[2]:g}" if r[0] == 0  # noqa: E731
                      else f"{r[1]:g} below {r[0]} documents per cluster, else {r[2]:g}")
    rows = [[f, f"{cache[f]['n'] / cache[f]['k']:.0f}", name(chosen[f]),
             f"{rule_weight(chosen[f], cache[f]):g}", f"**{value(chosen[f], f):+.3f}**"]
            for f in sorted(folds, key=lambda f: value(chosen[f], f))]
    held = [value(chosen[f], f) for f in folds]
    overall = max(rules, key=lambda r: score(r, folds))
    return ("**A weight per corpus, by its documents per cluster** (n / k: the documents "
            "each word topic is estimated from). For each held-out corpus, the rule (T, the "
            f"weight below T, the weight above; T in {list(THRESHOLDS)}, or one weight for "
            "all) best on the others by its worst fold over MiniLM + k-means, then its worst "
            "fold over the default `semnmf cluster` (the pipeline should beat both), then its "
            "mean over MiniLM + k-means; ties go to one weight for all, then to the smaller "
            "T. Held out: worst "
            f"**{min(held):+.3f}**, mean **{np.mean(held):+.3f}**. Chosen on all "
            f"{len(folds)}: {name(overall)}.\n\n"
            + table(["held out", "documents per cluster", "rule chosen on the others",
                     "its weight here", "held-out margin"], rows))


def _method(g):
    return f"ours-g{g:g}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=None, help="default: every raw-text corpus, "
                        "smallest first")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--graph-lams", default="0.5,1,2,4,8,16,32,64,128,256,512")
    parser.add_argument("--sweep-seeds", type=int, default=1,
                        help="seeds (the first ones) the other graph weights are run on")
    parser.add_argument("--word-start", action="store_true",
                        help="also the default model started from spherical k-means of X")
    parser.add_argument("--step-gains", default="",
                        help="also the centroid step of the default run's labels in the "
                             "embedding space, with these min_gain values (e.g. "
                             "0,0.02,0.05,0.1,0.2)")
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    root = data_root()
    names = args.datasets.split(",") if args.datasets else raw_text_corpora(root)
    graph_lams = [float(g) for g in args.graph_lams.split(",") if g.strip()]
    cache = load_cache(CACHE)
    if not args.report_only:
        warnings.simplefilter("ignore")
        for name in names:
            entry = cache.setdefault(name, {})
            measure(name, root, entry, range(args.seeds), graph_lams, args.sweep_seeds,
                    lambda: save_cache(CACHE, {name: entry}), args.word_start,
                    [float(g) for g in args.step_gains.split(",") if g.strip()])
    cache = load_cache(CACHE)
    order = raw_text_corpora(root)
    sections, _ = report(cache, order)
    sections.insert(1, ("Verdict", NOTES))
    write_markdown("minilm.md", "`--semantics minilm` against all-MiniLM-L6-v2 + k-means on "
                   "the shared raw-text corpora", sections)


if __name__ == "__main__":
    main()
