"""Labels and strengths from document factors: the one argmax rule of every clusterer.

A document's cluster is the argmax of its row of the factors (NMF's Z, cosine similarities
to centroids); a document without any term gets -1. Its *strength* is that entry's share
of the row (or the similarity itself): what ``assignments.csv`` records per document.
"""

import numpy as np
import scipy.sparse as sp

from .renamed import renamed


def argmax_labels(factors, empty):
    """argmax of each row of ``factors``; the rows marked in ``empty`` (documents without
    any term, a boolean mask or indices) get -1."""
    labels = np.argmax(factors, axis=1).astype(np.int64)
    labels[empty] = -1
    return labels


def strengths_from_factors(factors, labels, *, cosine=False):
    """Strength of each document's cluster: ``factors[i, label]`` after normalizing the
    row to sum 1 (``cosine=False``: NMF document factors, a GTNMF strategy) or as it is
    (``cosine=True``: cosine similarities); 0 for label -1 or an all-zero row."""
    F = np.asarray(factors, dtype=np.float64)
    labels = np.asarray(labels)
    out = np.zeros(len(labels))
    ok = labels >= 0
    if not ok.any():
        return out
    picked = F[np.flatnonzero(ok), labels[ok]]
    if cosine:
        out[ok] = picked
    else:
        total = F[ok].sum(axis=1)
        out[ok] = np.divide(picked, total, out=np.zeros_like(picked), where=total > 0)
    return out


@renamed("n_clusters", "n_components")
def cluster_means(X, labels, n_components):
    """Mean row of X in each cluster (n_components x n_features): the topic of a cluster
    that has no factor (a consensus cluster). Documents labelled -1 count nowhere."""
    labels = np.asarray(labels)
    valid = labels >= 0
    indicator = sp.csr_matrix((np.ones(valid.sum()), (labels[valid], np.flatnonzero(valid))),
                              shape=(n_components, X.shape[0]))
    sizes = np.maximum(np.asarray(indicator.sum(axis=1)).ravel(), 1)
    means = indicator @ X
    return np.asarray(means.toarray() if sp.issparse(means) else means) / sizes[:, None]
