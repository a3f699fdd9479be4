from .hierarchical import HierarchicalNMF
from .nmf import NMF
from .semantic import SemanticNMF
from .skmeans import SphericalKMeans

__all__ = ["HierarchicalNMF", "NMF", "SemanticNMF", "SphericalKMeans"]
