"""Refinement of a clustering after the fact.

:class:`GTNMF` (function form :func:`refine`) re-assigns documents by replicator dynamics
on a kNN similarity graph so that similar documents agree (Tripodi, Vascon & Pelillo
2016). :func:`centroid_refine` moves every document to its most cosine-similar cluster
centroid: one assignment step of spherical k-means from a fitted partition (the default
run's last step). The graph builders (:func:`knn_graph`, :func:`normalized_cut_scaling` and the
neighbour-count rules :func:`log2_neighbors`, :func:`cluster_log2_neighbors`) are general
and shared with the graph-based estimators.
"""

from ..graphs.knn import cluster_log2_neighbors, knn_graph, log2_neighbors, normalized_cut_scaling
from .centroid import centroid_refine
from .gtnmf import GTNMF, refine, replicator_dynamics

__all__ = [
    "GTNMF", "refine", "replicator_dynamics", "centroid_refine",
    "knn_graph", "normalized_cut_scaling", "log2_neighbors", "cluster_log2_neighbors",
]
