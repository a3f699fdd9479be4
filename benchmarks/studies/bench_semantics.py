"""Pretrained semantics: sentence-embedding k-means against our pipelines.

    python benchmarks/studies/bench_semantics.py [--datasets classic4,ng5,bbc,ng20,cstr]
                                         [--seeds 3] [--methods ...] [--report-only]
                                         [--recost] [--ratio]

Side by side, on each corpus (k = number of classes, TF-IDF + L2 rows):

- ``minilm-kmeans``: all-MiniLM-L6-v2 embeddings as a user gets them
  (``SentenceTransformer.encode``: truncated at 256 word pieces, which is exactly the first
  chunk of ``embed_documents(pooling="first")``), k-means with 10 restarts;
- ``minilm-kmeans-full``: the same on our chunked, length-weighted mean embeddings;
- ``snmf``: Semantic-NMF with the corpus window PPMI only (``--semantics corpus``);
- ``words-glove`` / ``words-minilm``: word semantics only, no document embedded
  (``PretrainedSemanticNMF(embed="words")``: the kNN word graph of the pretrained term
  vectors expands the documents);
- ``documents``: document semantics only (``embed="documents"``: k-means of the chunked
  document vectors as the start, their kNN graph in Semantic-GNMF);
- ``both``: ``embed="both"``, the default of ``semnmf cluster --semantics minilm``.

Scores: NMI / ARI / accuracy (mean ± sd over seeds), topic coherence (Kuang & Park eq. 18,
top 20 terms of the word topics W, on the corpus's own documents; k-means has no word
topics). Time per run = the pipeline's own time (embeddings read from the cache) plus the
embedding time it needs, measured once per corpus on a quiet machine:
term embeddings in full (cache off), document embeddings from a timed sample of 256 chunks
scaled to all chunks (chunked) or to one chunk per document (truncated); ``--ratio`` also
times the words-only pipeline against MiniLM + k-means interleaved, under the same load
(the fairer number for the "a fifth of MiniLM's time" target). The cells are
cached in benchmarks/cache/semantics.json; writes benchmarks/results/semantics.md.
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/: _common
from _common import (CACHE_ROOT, SEMANTICS, load, load_cache, machine_line, mean_sd,  # noqa: E402
                     save_cache, table, write_markdown)
from semnmf import SemanticNMF, clustering_scores, topic_coherence
from semnmf.pipelines import PretrainedSemanticNMF
from semnmf.text.pretrained import term_forms
from semnmf.text import encoders

CACHE = os.path.join(CACHE_ROOT, "semantics.json")
METHODS = ["minilm-kmeans", "minilm-kmeans-full", "snmf", "words-glove", "words-minilm",
           "documents", "both"]
LABELS = {"minilm-kmeans": "MiniLM + k-means (truncated, as shipped)",
          "minilm-kmeans-full": "MiniLM + k-means (chunked, full documents)",
          "snmf": "Semantic-NMF (corpus PPMI only)",
          "words-glove": "words only: GloVe 6B word graph",
          "words-minilm": "words only: MiniLM word graph",
          "documents": "documents: MiniLM document graph + start",
          "both": "both (`--semantics minilm`)"}
NEEDS_TEXT = {"minilm-kmeans", "minilm-kmeans-full", "documents", "both"}
# MiniLM + k-means NMI as first reported, for the targets
ISSUE_MINILM = {"classic4": 0.82, "ng5": 0.85, "bbc": 0.87}


def embedding_costs(corpus, cache):
    """Seconds to embed the terms (measured in full) and the documents (sampled), once."""
    if "costs" in cache:
        return cache["costs"]
    encoder = encoders.load_encoder("minilm")
    t = time.perf_counter()
    encoders.embed_terms(term_forms(corpus), encoder, cache_dir=False)
    terms = time.perf_counter() - t
    costs = {"terms": terms}
    if corpus.texts is not None:
        pieces, owner, weight = encoder.chunks(corpus.texts)
        rng = np.random.default_rng(0)
        sample = rng.choice(len(pieces), size=min(256, len(pieces)), replace=False)
        t = time.perf_counter()
        encoder.encode([pieces[i] for i in sample])
        per_chunk = (time.perf_counter() - t) / sample.size
        first = encoders.first_chunks(owner)
        firsts = rng.choice(first, size=min(256, first.size), replace=False)
        t = time.perf_counter()
        encoder.encode([pieces[i] for i in firsts])
        per_first = (time.perf_counter() - t) / firsts.size
        costs.update(chunks=len(pieces), documents=len(corpus.texts),
                     full=per_chunk * len(pieces), truncated=per_first * first.size)
    cache["costs"] = costs
    return costs


# What we saw (2026-11-22); kept here so that --report-only rewrites the whole file.
NOTES = """\
- **Document semantics beat MiniLM + k-means on every corpus run**, with word topics: the
  k-means partition of the chunked document vectors is the start and their 10-NN cosine
  graph the document graph of Semantic-GNMF (graph weight 1). The graph weight was chosen
  on BBC and CLASSIC4 (0.5 / 1 / 2 / 3 → BBC 0.896 / 0.896 / 0.873 / 0.863, CLASSIC4
  0.825 / 0.838 / 0.849 / 0.851); NG5 and NG20 were held out (0.883 vs 0.850, 0.655-0.658
  vs 0.629). The
  start matters: from the spherical k-means start of X with the same graph, CLASSIC4 is at
  0.80. The document pipeline is deterministic given the embeddings (k-means with 10
  restarts finds the same partition for every seed), hence the zero deviations.
- **Words only**: the kNN graph of the MiniLM term vectors (10 neighbours) expands each
  document by the terms similar to its own. NG5 0.785 → 0.848 (MiniLM + k-means 0.850),
  BBC 0.874 → 0.876, CSTR 0.758 → 0.764, CLASSIC4 unchanged (0.768 → 0.766), NG20 worse
  (0.593 → 0.579, 2 seeds). Tried on
  CLASSIC4 without success: the word graph as a second block of M beside the PPMI (weight
  1: 0.668, 0.3: 0.760), the term vectors themselves as M (0.55-0.64), a word-graph
  Laplacian on W (GNMF on Xᵀ from an NNDSVDa start: 0.48), GloVe 6B in every form (0.68-0.76), document vectors averaged from
  term vectors (k-means 0.625), other expansion strengths and neighbour counts
  (0.766-0.778).
- **Time of words only against MiniLM + k-means** (interleaved, same load): CLASSIC4 0.04x,
  NG5 0.23x, BBC 0.27x, NG20 0.42x: the "a fifth" target holds on CLASSIC4 only. On NG20
  the expanded documents (about 13x the non-zeros) make the fit itself slow (about 300 s). The cost is the term
  embeddings (27k NG5 terms: about 60 s at the load of the run) and the exact kNN search
  over the term vectors, O(d²) (14 s for NG5). An approximate neighbour search is the
  lever left.
- The seconds columns add embedding costs measured once per corpus while other benchmarks
  ran (load 3-6), so they are inflated; compare the interleaved ratios.
"""


def interleaved_ratio(corpus, k, rounds=2):
    """Words-only pipeline against MiniLM + k-means under the same load: samples of 1,024
    terms and of 64 truncated documents are encoded alternately (cache off), their per-item
    costs scaled to the whole vocabulary and corpus, plus each side's own fit (k-means on
    the cached truncated embeddings; PretrainedSemanticNMF(embed="words") with cached term
    vectors)."""
    import os
    from sklearn.cluster import KMeans

    encoder = encoders.load_encoder("minilm")
    rng = np.random.default_rng(0)
    forms = term_forms(corpus)
    pieces, owner, _ = encoder.chunks(corpus.texts)
    first = encoders.first_chunks(owner)
    per_term, per_doc = [], []
    for _ in range(rounds):
        sample = [forms[i] for i in rng.choice(len(forms), min(1024, len(forms)), replace=False)]
        t = time.perf_counter()
        encoder.encode(sample, batch_size=512)
        per_term.append((time.perf_counter() - t) / len(sample))
        docs = [pieces[i] for i in rng.choice(first, min(64, first.size), replace=False)]
        t = time.perf_counter()
        encoder.encode(docs)
        per_doc.append((time.perf_counter() - t) / len(docs))
    E = encoders.embed_documents(corpus.texts, encoder, pooling="first")
    t = time.perf_counter()
    KMeans(k, n_init=10, random_state=0).fit(E)
    kmeans = time.perf_counter() - t
    t = time.perf_counter()
    PretrainedSemanticNMF(k, semantics="minilm", embed="words", random_state=0).fit(corpus)
    pipeline = time.perf_counter() - t
    terms = float(np.mean(per_term)) * len(forms)
    documents = float(np.mean(per_doc)) * first.size
    return {"terms": terms, "pipeline": pipeline, "documents": documents, "kmeans": kmeans,
            "ratio": (terms + pipeline) / (documents + kmeans), "load": os.getloadavg()[0]}


def run_cell(method, corpus, X, k, seed):
    from sklearn.cluster import KMeans

    t = time.perf_counter()
    components = None
    if method in ("minilm-kmeans", "minilm-kmeans-full"):
        pooling = "first" if method == "minilm-kmeans" else "mean"
        E = encoders.embed_documents(corpus.texts, "minilm", pooling=pooling)
        labels = KMeans(k, n_init=10, random_state=seed).fit(E).labels_
    elif method == "snmf":
        context = corpus.default_context()
        model = SemanticNMF(k, random_state=seed).fit(X, M=corpus.word_context(context=context))
        labels, components = model.labels_, model.components_
    else:
        semantics, embed = {"words-glove": ("glove", "words"), "words-minilm": ("minilm", "words"),
                            "documents": ("minilm", "documents"),
                            "both": ("minilm", "both")}[method]
        model = PretrainedSemanticNMF(k, semantics=semantics, embed=embed,
                                      random_state=seed).fit(corpus)
        labels, components = model.labels_, model.components_
    seconds = time.perf_counter() - t
    cell = {"seconds": seconds, **clustering_scores(corpus.labels, labels)}
    if components is not None:
        cell["coherence"] = float(topic_coherence(components, X))
    return cell


def embedding_seconds(method, costs):
    if method == "minilm-kmeans":
        return costs.get("truncated", 0.0)
    if method in ("minilm-kmeans-full", "documents"):
        return costs.get("full", 0.0)
    if method == "words-minilm":
        return costs["terms"]
    if method == "both":
        return costs["terms"] + costs.get("full", 0.0)
    return 0.0


def report(cache, datasets, methods):
    sections = [(None, f"Machine: {machine_line()}. Produced by `benchmarks/studies/bench_semantics.py`; "
                       "see its docstring for the protocol.")]
    summary = []
    for name in datasets:
        entry = cache.get(name)
        if not entry:
            continue
        costs = entry.get("costs", {})
        rows = []
        means, times = {}, {}
        for method in methods:
            cells = [entry[key] for key in sorted(entry) if key.startswith(method + "/")]
            if not cells:
                continue
            nmis = [c["nmi"] for c in cells]
            means[method] = np.mean(nmis)
            total = np.mean([c["seconds"] for c in cells]) + embedding_seconds(method, costs)
            times[method] = total
            coherence = ("–" if "coherence" not in cells[0]
                         else f"{np.mean([c['coherence'] for c in cells]):.1f}")
            rows.append([LABELS[method], mean_sd(nmis), mean_sd([c["ari"] for c in cells]),
                         mean_sd([c["accuracy"] for c in cells]), coherence,
                         f"{total:.1f}", len(cells)])
        text = table(["pipeline", "NMI", "ARI", "accuracy", "coherence", "seconds", "seeds"],
                     rows)
        if "ratio" in entry:
            r = entry["ratio"]
            text += (f"\n\nWords only against MiniLM + k-means, timed interleaved under the same "
                     f"load (average {r['load']:.1f}): term embeddings {r['terms']:.1f} s + "
                     f"pipeline {r['pipeline']:.1f} s against truncated document embeddings "
                     f"{r['documents']:.1f} s + k-means {r['kmeans']:.1f} s: "
                     f"**{r['ratio']:.2f}x**.")
        if costs:
            parts = [f"terms {costs['terms']:.1f} s"]
            if "full" in costs:
                parts.append(f"documents {costs['full']:.0f} s chunked ({costs['chunks']} chunks "
                             f"for {costs['documents']} documents), {costs['truncated']:.0f} s "
                             "truncated")
            text += ("\n\nEmbedding cost with all-MiniLM-L6-v2 on this machine (2 threads): "
                     + "; ".join(parts) + ". It is included in the seconds column.")
        sections.append((name.upper(), text))
        summary.append((name, means, times))
    lines = []
    for name, means, times in summary:
        ref = means.get("minilm-kmeans")
        if ref is None:
            continue
        plain = means.get("snmf")
        best_doc = max((means[m] for m in ("documents", "both") if m in means), default=None)
        words = max(((means[m], m) for m in ("words-minilm", "words-glove") if m in means),
                    default=None)
        line = f"- **{name}**: MiniLM + k-means {ref:.3f}"
        if best_doc is not None:
            line += (f"; with document semantics {best_doc:.3f} "
                     f"({'met' if best_doc >= ref else 'NOT met'})")
        if words is not None and plain is not None:
            halfway = plain + (ref - plain) / 2
            ratio = times[words[1]] / times["minilm-kmeans"]
            if "ratio" in cache.get(name, {}) and words[1] == "words-minilm":
                ratio = cache[name]["ratio"]["ratio"]  # measured interleaved: preferred
            line += (f"; words only ({words[1]}) {words[0]:.3f} against the halfway mark "
                     f"{halfway:.3f} ({'met' if words[0] >= halfway else 'NOT met'}), in "
                     f"{ratio:.2f}x MiniLM + k-means's time "
                     f"({'met' if ratio <= 0.2 else 'NOT met'}: at most 0.2x)")
        lines.append(line)
    if lines:
        sections.insert(1, ("Targets", "\n".join(lines)))
        sections.insert(2, ("What we see", NOTES))
    write_markdown("semantics.md", "Pretrained semantics: sentence-embedding k-means against "
                   "Semantic-NMF with word and document semantics", sections)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(SEMANTICS))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--ratio", action="store_true",
                        help="time words only against MiniLM + k-means, interleaved")
    parser.add_argument("--recost", action="store_true",
                        help="measure the embedding costs again (run it on a quiet machine)")
    args = parser.parse_args()
    datasets = args.datasets.split(",")
    methods = args.methods.split(",")
    cache = load_cache(CACHE)
    if not args.report_only:
        warnings.simplefilter("ignore")
        for name in datasets:
            corpus, X, k = load(name)
            entry = cache.setdefault(name, {})
            if args.recost:
                entry.pop("costs", None)
            embedding_costs(corpus, entry)
            save_cache(CACHE, {name: entry})
            if args.ratio and corpus.texts is not None:
                entry["ratio"] = interleaved_ratio(corpus, k)
                save_cache(CACHE, {name: entry})
                print(name, "ratio", entry["ratio"], flush=True)
            for method in methods:
                if method in NEEDS_TEXT and corpus.texts is None:
                    continue
                for seed in range(args.seeds):
                    key = f"{method}/{seed}"
                    if key in entry:
                        continue
                    entry[key] = run_cell(method, corpus, X, k, seed)
                    save_cache(CACHE, {name: entry})
                    print(name, key, {m: round(v, 3) for m, v in entry[key].items()},
                          flush=True)
    cache = load_cache(CACHE)
    order = list(SEMANTICS)
    report(cache, [d for d in order if d in cache] + [d for d in cache if d not in order],
           METHODS)


if __name__ == "__main__":
    main()
