"""kNN graphs of embedding vectors: words (:func:`word_graph`) and documents
(:func:`semantic_document_graph`), both sparse with cosine weights."""

import numpy as np
import scipy.sparse as sp

from .._utils.validation import check_positive_int
from .knn import knn_graph

__all__ = ["word_graph", "semantic_document_graph"]


def word_graph(V, found=None, n_neighbors=10, device="cpu"):
    """Sparse kNN word-similarity graph S (d x d) of term vectors, cosine weights.

    Each found term keeps its ``n_neighbors`` most similar found terms (positive cosine
    only), symmetrized by the union rule; terms without a vector have empty rows.
    ``device``: where the search runs (:func:`~semnmf.graphs.knn.knn_graph`).
    """
    V = np.asarray(V, dtype=np.float32)  # the search in single precision: BLAS sgemm
    d = V.shape[0]
    found = np.ones(d, dtype=bool) if found is None else np.asarray(found, dtype=bool)
    n_neighbors = check_positive_int(n_neighbors, "n_neighbors")
    idx = np.flatnonzero(found & (np.abs(V).sum(axis=1) > 0))
    if idx.size < 2:
        raise ValueError(f"only {idx.size} term(s) have a vector: no word graph can be built.")
    S = knn_graph(V[idx], min(n_neighbors, idx.size - 1), metric="cosine", weight="cosine",
                  device=device)
    S = S.tocoo()
    return sp.csr_matrix((S.data, (idx[S.row], idx[S.col])), shape=(d, d))


def semantic_document_graph(E, n_neighbors=10, device="cpu"):
    """Symmetric kNN graph of document vectors, cosine weights (no self loops); ``device``:
    where the search runs (:func:`~semnmf.graphs.knn.knn_graph`)."""
    n_neighbors = check_positive_int(n_neighbors, "n_neighbors")
    E = np.asarray(E, dtype=np.float64)
    if E.shape[0] < 2:
        raise ValueError("a document graph needs at least 2 documents.")
    return knn_graph(E, min(n_neighbors, E.shape[0] - 1), metric="cosine", weight="cosine",
                     device=device)
