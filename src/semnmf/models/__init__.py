from .nmf import NMF
from .semantic import SemanticNMF
from .skmeans import SphericalKMeans

__all__ = ["NMF", "SemanticNMF", "SphericalKMeans"]
