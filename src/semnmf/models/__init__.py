"""The public estimators (each loads on first use, PEP 562) over the private solver layer
:mod:`semnmf.models._solvers` (problem objects, update rules, compiled kernels, restarts)."""

import importlib

_NAMES = {
    "NMF": ".nmf", "SemanticNMF": ".semantic", "SeNMF": ".senmf", "GNMF": ".gnmf",
    "SemanticGNMF": ".gnmf", "ProjectiveNMF": ".pnmf", "SymNMF": ".symnmf", "NMFS": ".symnmf",
    "SphericalKMeans": ".skmeans", "HierarchicalNMF": ".hierarchical", "DCN": ".deep",
}

__all__ = list(_NAMES)


def __getattr__(name):
    if name in _NAMES:
        return getattr(importlib.import_module(_NAMES[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_NAMES))
