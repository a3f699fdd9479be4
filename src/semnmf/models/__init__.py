"""The public estimators (each loads on first use, PEP 562) over the private solver layer
:mod:`semnmf.models._solvers` (problem objects, update rules, compiled kernels, restarts)."""

from .._utils.lazy import lazy_names

_NAMES = {
    "NMF": ".nmf", "SemanticNMF": ".semantic", "SeNMF": ".senmf", "GNMF": ".gnmf",
    "SemanticGNMF": ".gnmf", "ProjectiveNMF": ".pnmf", "SymNMF": ".symnmf", "NMFS": ".symnmf",
    "SphericalKMeans": ".skmeans", "HierarchicalNMF": ".hierarchical", "DCN": ".deep",
}

__all__ = list(_NAMES)

__getattr__, __dir__ = lazy_names(__name__, _NAMES)
