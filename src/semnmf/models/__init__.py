from .gnmf import GNMF, SemanticGNMF
from .hierarchical import HierarchicalNMF
from .nmf import NMF
from .pnmf import ProjectiveNMF
from .semantic import SemanticNMF
from .senmf import SeNMF
from .skmeans import SphericalKMeans

# Imported on first use: SymNMF / NMFS compile numba kernels, DCN needs PyTorch.
_LAZY = {"SymNMF": ".symnmf", "NMFS": ".symnmf", "DCN": ".deep"}

__all__ = ["GNMF", "SemanticGNMF", "HierarchicalNMF", "NMF", "ProjectiveNMF", "SemanticNMF",
           "SeNMF", "SphericalKMeans", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
