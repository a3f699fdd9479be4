"""Document graphs of the graph-based models: the kNN document graph of GNMF (Cai et al.),
GT §V-B's ncut-scaled similarity graph of SymNMF / NMFS, and the check of a user's graph."""

import numpy as np
import scipy.sparse as sp

from .._utils.validation import check_square_nonnegative
from .knn import knn_graph, log2_neighbors, normalized_cut_scaling

__all__ = ["check_affinity", "document_graph", "similarity_graph"]


def check_affinity(A, n_samples, name="A", dtype=np.float64):
    """Validate a user's document graph: sparse or dense (n, n), finite, non-negative,
    symmetric. Returned as CSR of ``dtype`` (dense input is converted; it is the caller's
    already, so this costs no n x n beyond it)."""
    A = check_square_nonnegative(A, name, square_as="a square (n_documents, n_documents) graph",
                                 nonnegative_as="hold non-negative similarities")
    if A.shape[0] != n_samples:
        raise ValueError(
            f"{name} has shape {A.shape} but X has {n_samples} documents: the graph must be "
            f"({n_samples}, {n_samples}), one row and column per document of X, in X's order.")
    A = sp.csr_matrix(A, dtype=dtype)
    asym = A - A.T
    if asym.nnz and np.abs(asym.data).max() > 1e-10 * max(np.abs(A.data).max(), 1e-300):
        raise ValueError(
            f"{name} must be symmetric (an undirected graph); symmetrize it first, e.g. "
            f"{name}.maximum({name}.T) or ({name} + {name}.T) / 2.")
    A.sort_indices()
    return A


def document_graph(X, n_neighbors, *, weight="binary", metric="cosine", bandwidth=None):
    """Symmetric kNN graph of the documents (rows of X): :func:`knn_graph` with
    ``symmetrize="max"`` (an edge when either document is among the other's neighbours,
    as Cai et al.'s graph and their ``constructW`` do), no self loops."""
    return knn_graph(X, n_neighbors, metric=metric, weight=weight, symmetrize="max",
                     self_loops=False, bandwidth=bandwidth)


def similarity_graph(X, n_neighbors=None, *, metric="cosine", weight="auto", scaling="ncut"):
    """GT §V-B's similarity matrix of the rows of X, sparse (n, n).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    n_neighbors : int or None, default=None
        q; None uses GT eq. 8, ``q = ⌊log₂ n⌋ + 1``.
    metric, weight
        As in :func:`~semnmf.refine.knn_graph` ("auto": cosine weights for metric="cosine",
        the self-tuning kernel for "euclidean", GT's two choices).
    scaling : {"ncut", None}, default="ncut"
        "ncut": ``D^{-1/2} Ŝ D^{-1/2}`` (GT §V-B); None keeps Ŝ.

    Returns
    -------
    A : scipy.sparse.csr_matrix (n_samples, n_samples), symmetric, float64
    q : int
        The number of neighbours used.
    """
    n = X.shape[0]
    q = log2_neighbors(n) if n_neighbors is None else n_neighbors
    A = knn_graph(X, q, metric=metric, weight=weight, symmetrize="max", self_loops=False)
    if scaling == "ncut":
        A = normalized_cut_scaling(A)
    return A, q
