"""Graphs between documents or words, used by models (GNMF, SymNMF), refinement (GTNMF)
and pretrained semantics: exact kNN graphs with memory bounded by row chunks, GT §V-B's
normalized-cut scaling, neighbour-count rules, and checks of a user's graph."""

from .documents import check_affinity, document_graph, similarity_graph
from .knn import (cluster_log2_neighbors, cosine_kneighbors, knn_graph, log2_neighbors,
                  normalized_cut_scaling)
from .semantic import semantic_document_graph, word_graph

__all__ = ["knn_graph", "cosine_kneighbors", "normalized_cut_scaling", "log2_neighbors",
           "cluster_log2_neighbors", "check_affinity", "document_graph", "similarity_graph",
           "word_graph", "semantic_document_graph"]
