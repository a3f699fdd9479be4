"""Centroid refinement: every document moves to its most cosine-similar cluster centroid.

One assignment step of spherical k-means (Dhillon & Modha 2001) started from a fitted
partition: with the rows of X scaled to unit length, the centroid of cluster j is
c_j = Σ_{i∈j} x̂_i / ‖Σ_{i∈j} x̂_i‖, and document i goes to argmax_j x̂_iᵀ c_j, so the
spherical k-means objective (centroids fixed) cannot decrease. It helps where the
largest-factor rule of the NMF-KL family and the cosine geometry of TF-IDF disagree; the
default run makes the step with ``min_gain=0.05`` (``benchmarks/results/refine_centroid.md``).
One sparse product with the k centroids, O(nnz(X)·k).
"""

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize

from .._utils.labels import cluster_means
from .._utils.renamed import renamed
from .._utils.validation import check_nonnegative_float

__all__ = ["centroid_refine", "centroid_step"]


@renamed("n_clusters", "n_components")
def centroid_refine(X, labels, n_components=None, *, min_gain=0.0):
    """Move every document to its most cosine-similar cluster centroid (module docstring)
    when it is more similar to it than to its own by the relative margin ``min_gain``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_documents, n_features)
        The matrix the documents were clustered on (TF-IDF, document embeddings).
    labels : array-like of shape (n_documents,)
        The fitted partition; -1 marks a document left out (it stays -1, as does a
        document without any term).
    n_components : int or None
        The number of clusters (default: the largest label + 1).
    min_gain : float, default=0.0
        A document moves only when x̂ᵀc_new > (1 + min_gain)·x̂ᵀc_own; 0 is the plain
        step (a tie keeps the document where it is).

    Returns
    -------
    labels : ndarray of shape (n_documents,)
        The refined partition.
    centers : ndarray of shape (n_components, n_features)
        The unit centroids of the clusters of the given ``labels`` (a zero row for an
        empty cluster).
    similarity : ndarray of shape (n_documents,)
        The cosine between each document and its chosen centroid (0 for -1).
    """
    labels = np.asarray(labels)
    check_nonnegative_float(min_gain, "min_gain")
    if labels.ndim != 1 or labels.shape[0] != X.shape[0]:
        raise ValueError(f"labels must hold one cluster per row of X ({X.shape[0]}); "
                         f"got shape {labels.shape}.")
    if n_components is None:
        n_components = int(labels.max()) + 1 if labels.size else 0
    if labels.size and labels.max() >= n_components:
        raise ValueError(f"labels go up to {int(labels.max())} but n_components is "
                         f"{n_components}.")
    Xn = normalize(sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X)
                   else np.asarray(X, dtype=np.float64))
    centers = normalize(cluster_means(Xn, labels, n_components))
    sims = Xn @ centers.T
    sims = np.asarray(sims.toarray() if sp.issparse(sims) else sims)
    new, similarity = centroid_step(sims, np.where(sims.any(axis=1), labels, -1), min_gain)
    return new, centers, similarity


def centroid_step(sims, labels, min_gain=0.0):
    """The move of the centroid step, given each document's cosine to every centroid:
    ``(labels, similarity)``. A document moves to its most similar centroid when that
    cosine exceeds ``(1 + min_gain)`` times the one to its own cluster's; -1 stays -1
    (similarity 0). :func:`centroid_refine` makes it on the fitted partition, and a saved
    model (:class:`semnmf.pipelines.saved.SavedModel`) after its own rule."""
    rows = np.arange(len(labels))
    out = labels < 0
    best = np.argmax(sims, axis=1)
    own = sims[rows, np.maximum(labels, 0)]
    new = np.where(sims[rows, best] > (1.0 + min_gain) * own, best, labels)
    new[out] = -1
    return new, np.where(out, 0.0, sims[rows, np.maximum(new, 0)])
