"""The one registry of clustering methods, shared by ``semnmf cluster``, ``semnmf bench``,
the papers' protocols (:mod:`.protocol`) and the benchmark scripts.

Each :class:`Method` knows its estimator (imported only when the method is built), its
parameters, which word-context matrix it needs (none, PPMI, shifted PPMI or PGLOVE),
whether it uses a document graph, whether the paper protocol starts it from the shared
spherical k-means solution (Neurocomputing §5.4), and which command-line options apply
to it. ``semnmf cluster --method`` offers the methods that have a ``cli`` name.

This module imports nothing heavy (no numpy, no estimator), so the command line can build
its parser from it in a few milliseconds.
"""

import importlib
import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Method:
    """One clustering method (a row of Table 2, a choice of ``semnmf cluster --method``).

    Attributes
    ----------
    name : str
        Name used by ``semnmf bench`` and in caches ("snmf-ppmi").
    label : str
        Label in the tables ("SNMF (PPMI)").
    estimator : str
        "module:Class" of the estimator, imported lazily.
    params : dict
        Constructor parameters besides n_components / random_state / the start.
    context : {None, "ppmi", "sppmi", "pglove"}
        Word-context matrix passed as ``fit(X, M=...)``; None for a method without a
        word-context term (``lam`` does not apply to it).
    graph : bool
        Whether the method has a document-graph term (``graph_lam`` applies; the
        protocol passes the graph as ``fit(..., A=...)``).
    shared_start : bool
        Whether the paper protocol starts it from the shared spherical k-means solution.
    extra : str or None
        The pip extra it needs, for the skip message.
    cli : str or None
        Its name on ``semnmf cluster --method`` (None: not offered there).
    description : str
        What it is, in a few words, for the command line's help.
    variants : bool
        Whether ``loss`` and ``orthogonal`` apply (NMF and Semantic-NMF).
    takes_init : bool
        Whether the estimator takes ``init`` (every NMF-like method; not spherical k-means).
    counts_context : dict or None
        For a corpus without raw text (document contexts only): the ``association`` and
        ``top_k`` of M used when the command line does not set them (None: the same
        association as with raw text, unpruned).
    dtype : {"float64", "float32"}
        The floating-point type the command line fits in (X and M are cast to it), when
        ``--dtype`` does not say.
    """

    name: str
    label: str
    estimator: str
    params: dict = field(default_factory=dict)
    context: str | None = None
    graph: bool = False
    shared_start: bool = True
    extra: str | None = None
    cli: str | None = None
    description: str = ""
    variants: bool = False
    takes_init: bool = True
    counts_context: dict | None = None
    dtype: str = "float64"

    @property
    def word_context(self):
        """Whether the method has a word-context term (``lam`` applies)."""
        return self.context is not None

    def estimator_class(self):
        module, _, cls = self.estimator.partition(":")
        return getattr(importlib.import_module(module), cls)

    def options(self, **candidates):
        """The constructor parameters among ``candidates`` that apply to this method,
        None values left out: ``init``, ``n_init``, ``max_iter``, ``tol``, ``verbose``,
        ``lam``, ``lam_scale`` (word-context term), ``graph_lam`` (graph term), ``loss``,
        ``orthogonal`` (variants); anything else is passed as given."""
        drop = set()
        if not self.takes_init:
            drop.add("init")
        if not self.word_context:
            drop |= {"lam", "lam_scale"}
        if not self.graph:
            drop.add("graph_lam")
        if not self.variants:
            drop |= {"loss", "orthogonal"}
        return {k: v for k, v in candidates.items() if k not in drop and v is not None}

    def build(self, n_components, random_state, start=None, **overrides):
        """The estimator for one run; ``start`` = (Z0, W0) from the shared k-means."""
        cls = self.estimator_class()
        params = {**self.params, **overrides}
        names = cls().get_params() if start is not None else {}
        if start is not None and "init" in names:
            params["init"] = tuple(start)        # init=(Z, W): the start itself
        return cls(n_components, random_state=random_state, **params)

    def objective(self, model):
        """The criterion that ranks runs (smaller is better for every estimator), or NaN if
        it has none."""
        value = getattr(model, "objective_", None)
        return math.nan if value is None else float(value)


_M = "semnmf.models"
METHODS = {m.name: m for m in [
    Method("skmeans", "Skmeans", f"{_M}.skmeans:SphericalKMeans", {"n_init": 1},
           shared_start=False, cli="skmeans", description="spherical k-means",
           takes_init=False),
    Method("nmf", "NMF", f"{_M}.nmf:NMF", cli="nmf", description="plain NMF", variants=True),
    Method("onmf", "ONMF", f"{_M}.nmf:NMF", {"orthogonal": True}),
    Method("pnmf", "PNMF", f"{_M}.pnmf:ProjectiveNMF", cli="pnmf",
           description="projective NMF"),
    Method("gnmf", "GNMF", f"{_M}.gnmf:GNMF", graph=True, cli="gnmf",
           description="graph-regularized NMF"),
    Method("dcn", "DCN", f"{_M}.deep:DCN", shared_start=False, extra="deep"),
    # A dense embedding M wants a smaller relative λ than sparse PPMI: λ = 1 has the best
    # mean NMI over CSTR, CLASSIC4 and BBC among 0.1 / 1 / 10 (0.703 / 0.683 / 0.664,
    # one seed); the paper recommends its λ = 0.1 for PGLOVE (§5.5, Figure 2). No λ suits
    # every corpus (CSTR and NG5 are best as λ → 0, CLASSIC4 at absolute λ ≈ 1): PGLOVE's
    # rank-k structure is weakly topical (see TABLE2_NOTES in tables.py).
    Method("snmf-pglove", "SNMF (PGLOVE)", f"{_M}.semantic:SemanticNMF", {"lam": 1.0},
           context="pglove"),
    Method("snmf-ppmi", "SNMF (PPMI)", f"{_M}.semantic:SemanticNMF", context="ppmi",
           cli="snmf", description="Semantic-NMF, the papers' settings (Frobenius, lam 10)",
           variants=True),
    # The command line's default, chosen by leave-one-corpus-out over the 10 shared corpora
    # and their counts-only versions (benchmarks/results/defaults.md): the only candidate
    # at or above the best classical baseline (NMF-KL) on 9 of 10 held-out corpora.
    # Five screened starts (each the best of 2 spherical k-means restarts; one sweep each,
    # the lowest objective continues): at the cost of about one start and four sweeps,
    # the mean margin over the best baseline goes from +0.018 to +0.03
    # (benchmarks/results/defaults_10seeds.md). It fits in float32: the labels of float64
    # on 9 of 10 shared corpora and 99.97 % of them on ng20_cai; half the memory of X, M
    # and the factors; as fast or faster (NG20 9-15 %; benchmarks/results/default_cost.md).
    Method("snmf-robust", "SNMF-KL (λ = 1)", f"{_M}.semantic:SemanticNMF",
           {"loss": "kl", "lam": 1.0, "n_init": 5, "screen_iter": 1}, context="ppmi",
           cli="snmf-kl",
           description="Semantic-NMF with the KL loss, lam 1, 5 screened starts; window PPMI "
                       "with raw text, else document SPPMI pruned to 50 contexts per word "
                       "(default)",
           counts_context={"association": "sppmi", "top_k": 50}, dtype="float32"),
    Method("nmf-kl", "NMF-KL", f"{_M}.nmf:NMF", {"loss": "kl"}),
    Method("snmf-kl", "SNMF-KL", f"{_M}.semantic:SemanticNMF", {"loss": "kl"}, context="ppmi"),
    Method("senmf", "SeNMF", f"{_M}.senmf:SeNMF", context="sppmi", cli="senmf",
           description="SeNMF (SIGIR tri-factor, shifted PPMI)"),
    Method("sgnmf", "Semantic-GNMF", f"{_M}.gnmf:SemanticGNMF", context="ppmi", graph=True,
           cli="sgnmf", description="Semantic-GNMF"),
]}

# Table 2's order, then the other members of the family.
TABLE2_ORDER = ["skmeans", "nmf", "onmf", "pnmf", "gnmf", "dcn", "snmf-pglove", "snmf-ppmi",
                "nmf-kl", "snmf-kl", "senmf", "sgnmf"]

# ``semnmf cluster --method``: the methods with a command-line name, in the help's order.
CLI_ORDER = ["snmf-kl", "snmf", "nmf", "skmeans", "senmf", "gnmf", "sgnmf", "pnmf"]
CLI_METHODS = {m.cli: m for m in sorted((m for m in METHODS.values() if m.cli),
                                        key=lambda m: CLI_ORDER.index(m.cli))}
DEFAULT_CLI_METHOD = "snmf-kl"

# Ways of combining the partitions of many runs (semnmf.ensemble.ClusterEnsemble's
# ``consensus``; held here too so that the parser loads no numpy: a test checks they agree).
CONSENSUS_METHODS = ("anmi", "cspa", "hgpa", "mcla", "mmm")


def get_method(name):
    """The method called ``name`` (a ``semnmf bench`` name, or a ``--method`` name)."""
    if name in METHODS:
        return METHODS[name]
    if name in CLI_METHODS:
        return CLI_METHODS[name]
    raise ValueError(f"unknown method {name!r}; choose from {', '.join(METHODS)}.")
