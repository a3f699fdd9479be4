"""The one registry of clustering methods, shared by ``semnmf cluster``, ``semnmf bench``,
the papers' protocols (:mod:`semnmf.experiments.protocol`) and the benchmark scripts.

Each :class:`Method` knows its estimator (imported only when the method is built), its
parameters, its word-context matrix and which command-line options apply to it. This
module imports nothing heavy: the command line builds its parser from it.
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
        Its one name, everywhere ("snmf").
    label : str
        Label in the tables ("SNMF (PPMI)").
    estimator : str
        "module:Class" of the estimator, imported lazily.
    params : dict
        Constructor parameters besides n_components / random_state / the start.
    association : {None, "ppmi", "sppmi", "pglove"}
        How the word-context matrix passed as ``fit(X, M=...)`` weighs co-occurrences;
        None for a method without a word-context term.
    graph : bool
        Whether the method has a document-graph term (``fit(..., A=...)``).
    shared_start : bool
        Whether the paper protocol starts it from the shared spherical k-means solution.
    extra : str or None
        The pip extra it needs, for the skip message.
    cli : bool
        Whether ``semnmf cluster --method`` offers it (under its name).
    description : str
        What it is, in a few words, for the command line's help.
    variants : bool
        Whether ``loss`` and ``orthogonal`` apply (NMF and Semantic-NMF).
    takes_init : bool
        Whether the estimator takes ``init`` (every NMF-like method; not spherical k-means).
    counts_context : dict or None
        For a corpus without raw text: the default ``association`` and ``top_k`` of M
        (None: as with raw text, unpruned).
    dtype : {"float64", "float32"}
        The floating-point type the command line fits X and M in by default.
    """

    name: str
    label: str
    estimator: str
    params: dict = field(default_factory=dict)
    association: str | None = None
    graph: bool = False
    shared_start: bool = True
    extra: str | None = None
    cli: bool = False
    description: str = ""
    variants: bool = False
    takes_init: bool = True
    counts_context: dict | None = None
    dtype: str = "float64"

    @property
    def word_context(self):
        """Whether the method has a word-context term (``lam`` applies)."""
        return self.association is not None

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
           shared_start=False, cli=True, description="spherical k-means",
           takes_init=False),
    Method("nmf", "NMF", f"{_M}.nmf:NMF", cli=True, description="plain NMF", variants=True),
    Method("onmf", "ONMF", f"{_M}.nmf:NMF", {"orthogonal": True}),
    Method("pnmf", "PNMF", f"{_M}.pnmf:ProjectiveNMF", cli=True,
           description="projective NMF"),
    Method("gnmf", "GNMF", f"{_M}.gnmf:GNMF", graph=True, cli=True,
           description="graph-regularized NMF"),
    Method("dcn", "DCN", f"{_M}.deep:DCN", shared_start=False, extra="deep"),
    # A dense embedding M wants a smaller relative λ than sparse PPMI
    # (benchmarks/results/design_notes.md; the paper: λ = 0.1 for PGLOVE, §5.5, Figure 2).
    Method("snmf-pglove", "SNMF (PGLOVE)", f"{_M}.semantic:SemanticNMF", {"lam": 1.0},
           association="pglove"),
    # The papers' Semantic-NMF (SN §3, SIGIR §3): PPMI, Frobenius, λ = 10.
    Method("snmf", "SNMF (PPMI)", f"{_M}.semantic:SemanticNMF", association="ppmi",
           cli=True, description="Semantic-NMF, the papers' settings (Frobenius, lam 10)",
           variants=True),
    # The command line's default, chosen by leave-one-corpus-out over the shared corpora
    # (benchmarks/results/defaults.md): five screened starts, each the best of 2 spherical
    # k-means restarts (benchmarks/results/defaults_10seeds.md), in float32
    # (benchmarks/results/default_cost.md).
    Method("snmf-robust", "SNMF-robust (KL, λ = 1)", f"{_M}.semantic:SemanticNMF",
           {"loss": "kl", "lam": 1.0, "n_init": 5, "screen_iter": 1}, association="ppmi",
           cli=True,
           description="Semantic-NMF with the KL loss, lam 1, 5 screened starts; window PPMI "
                       "with raw text, else document SPPMI pruned to 50 contexts per word "
                       "(default)",
           counts_context={"association": "sppmi", "top_k": 50}, dtype="float32"),
    # The default for corpora without raw text (semnmf.ensemble.portfolio).
    Method("kl-consensus", "KL consensus", f"{_M}.nmf:NMF", {"loss": "kl"}, cli=True,
           shared_start=False, takes_init=False, dtype="float32",
           description="MMM consensus of NMF-KL (5 screened starts), NMF-KL and spherical "
                       "k-means (the default without raw text)"),
    Method("nmf-kl", "NMF-KL", f"{_M}.nmf:NMF", {"loss": "kl"}),
    # The slides' SNMF-KL: Semantic-NMF with the KL loss, λ = 10, one start (the command
    # line's ``--method snmf --loss kl``, under its own name).
    Method("snmf-kl", "SNMF-KL", f"{_M}.semantic:SemanticNMF", {"loss": "kl"},
           association="ppmi", cli=True,
           description="the slides' SNMF-KL: Semantic-NMF with the KL loss, lam 10, one start"),
    Method("senmf", "SeNMF", f"{_M}.senmf:SeNMF", association="sppmi", cli=True,
           description="SeNMF (SIGIR tri-factor, shifted PPMI)"),
    Method("sgnmf", "Semantic-GNMF", f"{_M}.gnmf:SemanticGNMF", association="ppmi", graph=True,
           cli=True, description="Semantic-GNMF"),
]}

# Table 2's order, then the other members of the family.
TABLE2_ORDER = ["skmeans", "nmf", "onmf", "pnmf", "gnmf", "dcn", "snmf-pglove", "snmf",
                "nmf-kl", "snmf-kl", "senmf", "sgnmf"]

# ``semnmf cluster --method``: the methods marked ``cli``, in the help's order.
CLI_ORDER = ["snmf-robust", "kl-consensus", "snmf", "snmf-kl", "nmf", "skmeans", "senmf", "gnmf",
             "sgnmf", "pnmf"]
CLI_METHODS = {name: METHODS[name] for name in CLI_ORDER}
DEFAULT_CLI_METHOD = "snmf-robust"
# The default for a corpus without raw text (counts only): chosen per corpus, before reading.
DEFAULT_COUNTS_METHOD = "kl-consensus"

# Ways of combining the partitions of many runs (semnmf.ensemble.ClusterEnsemble's
# ``consensus``; held here too so that the parser loads no numpy: a test checks they agree).
CONSENSUS_METHODS = ("anmi", "cspa", "hgpa", "mcla", "mmm", "medoid")


def get_method(name):
    """The method called ``name`` (its one name, as ``semnmf bench --methods`` and
    ``semnmf cluster --method`` take it)."""
    if name in METHODS:
        return METHODS[name]
    raise ValueError(f"unknown method {name!r}; choose from {', '.join(METHODS)}.")
