"""The layouts of the report's map: 2-D positions of (a sample of) the documents.

- :func:`anchor_layout`: each cluster an anchor on the unit circle, each document at the
  average of the anchors weighted by its similarities to the cluster means;
- :func:`tsne_layout`: t-SNE fitted on at most ``n_fit`` documents, the others placed among
  their nearest fitted neighbours of the same cluster; of each document's cosine
  similarities to the cluster means (``features="clusters"``, the default, ``"tsne"``), or
  of its TF-IDF row reduced by a truncated SVD (``features="tfidf"``, ``"tsne-text"``).

The default was chosen in ``benchmarks/results/report_map.md``. Both return
``(coords, anchors)``: an ``n x 2`` array in [-1, 1] for the rows asked, and
``{cluster: (x, y)}``, where the layout puts each cluster's name.
"""

import numpy as np
import scipy.sparse as sp

__all__ = ["LAYOUTS", "layout", "anchor_layout", "tsne_layout", "normalized_rows",
           "unit_cluster_means"]


def normalized_rows(X):
    """The rows of X scaled to unit length (empty rows stay zero)."""
    X = sp.csr_matrix(X, dtype=np.float64)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sp.diags(1.0 / norms) @ X


def unit_cluster_means(Xn, clusters, ids):
    """The unit-length mean row of each cluster of ``ids`` (rows of ``Xn``; the clusters
    are any ids, -1 and ids not listed count nowhere): the directions of
    :func:`semnmf._utils.labels.cluster_means`."""
    from .._utils.labels import cluster_means

    index = {c: i for i, c in enumerate(ids)}
    positions = np.array([index.get(c, -1) for c in np.asarray(clusters).tolist()],
                         dtype=np.int64)
    means = cluster_means(Xn, positions, len(ids))
    return means / np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-300)


def anchor_layout(X, clusters, rows, *, seed=0, sharpness=4.0):
    """Anchors on a circle (in the angular order of a classical MDS of the cluster means);
    each document at the mean of the anchors weighted by its cosine similarities to the
    cluster means raised to ``sharpness``, with a little jitter."""
    rng = np.random.default_rng(seed)
    ids = np.unique(clusters[clusters >= 0])
    Xn = normalized_rows(X)
    means = unit_cluster_means(Xn, clusters, ids)
    gram = means @ means.T
    centred = gram - gram.mean(axis=0) - gram.mean(axis=1, keepdims=True) + gram.mean()
    values, vectors = np.linalg.eigh(centred)
    plane = vectors[:, -2:] * np.sqrt(np.maximum(values[-2:], 0))
    order = np.argsort(np.arctan2(plane[:, 1], plane[:, 0]), kind="stable")
    angles = np.empty(ids.size)
    angles[order] = 2 * np.pi * np.arange(ids.size) / ids.size + np.pi / 2
    anchors = np.column_stack([np.cos(angles), np.sin(angles)])
    S = np.maximum(np.asarray(Xn[rows] @ means.T), 0.0) ** sharpness
    total = S.sum(axis=1, keepdims=True)
    W = np.where(total > 0, S / np.maximum(total, 1e-300), 0.0)
    coords = W @ anchors + rng.normal(scale=0.035, size=(len(rows), 2))
    coords /= max(np.abs(coords).max(), 1e-300)
    return coords, {int(c): (float(x), float(y)) for c, (x, y) in zip(ids, anchors)}


def _features(Xn, rows, fit, n_components, seed):
    """The rows' TF-IDF reduced by a truncated SVD fitted on the ``fit`` rows, unit length."""
    from sklearn.decomposition import TruncatedSVD

    n_components = max(2, min(n_components, len(fit) - 1, Xn.shape[1] - 1))
    svd = TruncatedSVD(n_components, algorithm="randomized", n_iter=4, random_state=seed)
    svd.fit(Xn[rows[fit]])
    F = np.asarray(Xn[rows] @ svd.components_.T)
    F /= np.maximum(np.linalg.norm(F, axis=1, keepdims=True), 1e-12)
    return F


def tsne_layout(X, clusters, rows, *, seed=0, n_fit=500, n_components=30, n_neighbors=5,
                max_iter=500, features="clusters"):
    """t-SNE of the rows' features, fitted on at most ``n_fit`` of the rows (a sample
    stratified by cluster); each other row sits at the similarity-weighted mean of its
    ``n_neighbors`` nearest fitted rows of its cluster (all fitted rows when its cluster
    has none), plus a little jitter. Features: ``"clusters"``, the row's cosine
    similarities to the cluster means (unit length); ``"tfidf"``, its TF-IDF reduced by
    a truncated SVD to ``n_components`` (fitted on the fitted rows); ``"both"``, the two
    side by side."""
    from sklearn.manifold import TSNE

    rng = np.random.default_rng(seed)
    rows = np.asarray(rows)
    m = len(rows)
    own = clusters[rows]
    if m > n_fit:  # stratified: every cluster keeps its share, at least a few points
        keys = rng.random(m)
        fit = []
        for c in np.unique(own):
            members = np.flatnonzero(own == c)
            take = max(min(5, members.size), int(round(n_fit * members.size / m)))
            fit.append(members[np.argsort(keys[members])[:take]])
        fit = np.sort(np.concatenate(fit))
    else:
        fit = np.arange(m)
    Xn = normalized_rows(X)
    F = _features(Xn, rows, fit, n_components, seed) if features != "clusters" else None
    if features in ("clusters", "both"):
        ids = np.unique(clusters[clusters >= 0])
        S = np.maximum(np.asarray(Xn[rows] @ unit_cluster_means(Xn, clusters, ids).T), 0.0)
        S /= np.maximum(np.linalg.norm(S, axis=1, keepdims=True), 1e-12)
        F = S if F is None else np.hstack([F, S]) / np.sqrt(2.0)
    perplexity = float(min(30.0, max(2.0, (len(fit) - 1) / 3.5)))
    tsne = TSNE(2, perplexity=perplexity, init="pca", random_state=seed, max_iter=max_iter,
                learning_rate="auto", metric="euclidean")
    # one OpenMP thread: on a busy machine the gradient's threads wait on each other and
    # are slower than one (benchmarks/results/design_notes.md)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="openmp"):
        fitted = tsne.fit_transform(F[fit]) if len(fit) > 3 else rng.normal(size=(len(fit), 2))
    coords = np.empty((m, 2))
    coords[fit] = fitted
    rest = np.setdiff1d(np.arange(m), fit)
    if rest.size:
        spread = np.median(np.abs(fitted - np.median(fitted, axis=0))) + 1e-12
        fit_clusters = own[fit]
        for start in range(0, rest.size, 2048):  # bounded memory for large samples
            block = rest[start:start + 2048]
            S = F[block] @ F[fit].T
            same = fit_clusters[None, :] == own[block][:, None]
            has_same = same.any(axis=1)
            S = np.where(same | ~has_same[:, None], S, -np.inf)
            k = min(n_neighbors, len(fit))
            nearest = np.argpartition(-S, k - 1, axis=1)[:, :k]
            weights = np.maximum(np.take_along_axis(S, nearest, axis=1), 0.0) + 1e-6
            weights /= weights.sum(axis=1, keepdims=True)
            coords[block] = np.einsum("bk,bkd->bd", weights, fitted[nearest])
        coords[rest] += rng.normal(scale=0.03 * spread, size=(rest.size, 2))
    centre = (coords.max(axis=0) + coords.min(axis=0)) / 2
    coords = (coords - centre) / max(np.abs(coords - centre).max(), 1e-300)
    anchors = {}
    for c in np.unique(own[own >= 0]):
        anchors[int(c)] = tuple(float(v) for v in np.median(coords[own == c], axis=0))
    return coords, anchors


def _tsne_text(X, clusters, rows, seed=0):
    return tsne_layout(X, clusters, rows, seed=seed, n_fit=1000, features="tfidf")


LAYOUTS = {"tsne": tsne_layout, "tsne-text": _tsne_text, "anchors": anchor_layout}


def layout(X, clusters, rows, name="tsne", seed=0):
    """``(coords, anchors)`` of the documents ``rows`` by the layout ``name``
    (:data:`LAYOUTS`)."""
    return LAYOUTS[name](X, clusters, rows, seed=seed)
