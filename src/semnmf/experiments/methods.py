"""The methods of the Neurocomputing paper's Table 2 (and the family around it), by name.

Each :class:`Method` knows how to build its estimator for k clusters, whether it starts
from the shared spherical k-means solution (the papers start every NMF-like method from
it, Neurocomputing §5.4), which word-context matrix it needs, and how to read the
objective used to keep the best runs. Estimators of optional extras (DCN needs PyTorch)
are imported only when their method is run.
"""

import importlib
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Method:
    """One row of Table 2.

    Attributes
    ----------
    name : str
        Short name used on the command line and in caches ("snmf-ppmi").
    label : str
        Column label in the tables ("SNMF (PPMI)").
    estimator : str
        "module:Class" of the estimator, imported lazily.
    params : dict
        Constructor parameters besides n_components / random_state / the start.
    context : {None, "ppmi", "sppmi", "pglove"}
        Word-context matrix passed as ``fit(X, M=...)``.
    graph : bool
        Whether ``fit`` builds a document graph (reported, not needed here).
    shared_start : bool
        Whether the paper protocol starts it from the shared spherical k-means solution.
    extra : str or None
        The pip extra it needs, for the skip message.
    """

    name: str
    label: str
    estimator: str
    params: dict = field(default_factory=dict)
    context: str | None = None
    graph: bool = False
    shared_start: bool = True
    extra: str | None = None

    def estimator_class(self):
        module, _, cls = self.estimator.partition(":")
        return getattr(importlib.import_module(module), cls)

    def build(self, n_components, random_state, start=None, **overrides):
        """The estimator for one run; ``start`` = (Z0, W0) from the shared k-means."""
        cls = self.estimator_class()
        params = {**self.params, **overrides}
        names = cls().get_params() if start is not None else {}
        if start is not None and "init" in names:
            params["init"] = tuple(start)        # init=(Z, W): the start itself
        return cls(n_components, random_state=random_state, **params)

    def objective(self, model):
        """The criterion that ranks runs (``objective_``: smaller is better), or NaN."""
        value = getattr(model, "objective_", np.nan)
        return float(value) if value is not None else np.nan


_M = "semnmf.models"
METHODS = {m.name: m for m in [
    Method("skmeans", "Skmeans", "semnmf.models.skmeans:SphericalKMeans", {"n_init": 1},
           shared_start=False),
    Method("nmf", "NMF", f"{_M}.nmf:NMF"),
    Method("onmf", "ONMF", f"{_M}.nmf:NMF", {"orthogonal": True}),
    Method("pnmf", "PNMF", f"{_M}.pnmf:ProjectiveNMF"),
    Method("gnmf", "GNMF", f"{_M}.gnmf:GNMF", graph=True),
    Method("dcn", "DCN", f"{_M}.deep:DCN", shared_start=False, extra="deep"),
    # A dense embedding M wants a smaller relative λ than sparse PPMI: λ = 1 has the best
    # mean NMI over CSTR, CLASSIC4 and BBC among 0.1 / 1 / 10 (0.703 / 0.683 / 0.664,
    # one seed); the paper recommends its λ = 0.1 for PGLOVE (§5.5, Figure 2). No λ suits
    # every corpus (CSTR and NG5 are best as λ → 0, CLASSIC4 at absolute λ ≈ 1): PGLOVE's
    # rank-k structure is weakly topical (see TABLE2_NOTES in tables.py).
    Method("snmf-pglove", "SNMF (PGLOVE)", f"{_M}.semantic:SemanticNMF", {"lam": 1.0},
           context="pglove"),
    Method("snmf-ppmi", "SNMF (PPMI)", f"{_M}.semantic:SemanticNMF", context="ppmi"),
    Method("nmf-kl", "NMF-KL", f"{_M}.nmf:NMF", {"loss": "kl"}),
    Method("snmf-kl", "SNMF-KL", f"{_M}.semantic:SemanticNMF", {"loss": "kl"}, context="ppmi"),
    Method("senmf", "SeNMF", f"{_M}.senmf:SeNMF", context="sppmi"),
    Method("sgnmf", "Semantic-GNMF", f"{_M}.gnmf:SemanticGNMF", context="ppmi", graph=True),
]}

# Table 2's order, then the other members of the family.
TABLE2_ORDER = ["skmeans", "nmf", "onmf", "pnmf", "gnmf", "dcn", "snmf-pglove", "snmf-ppmi",
                "nmf-kl", "snmf-kl", "senmf", "sgnmf"]


def get_method(name):
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; choose from {', '.join(METHODS)}.") from None
