"""Levels: the clusters of one fitted run at several resolutions, without refitting.

``semnmf cluster -k auto`` fits one model at the recommended k and derives from it a
partition at every k of a range (:func:`build_levels`):

- **coarser levels** merge, one step at a time, the two clusters whose merge costs the
  spherical k-means objective least. With ``s_c`` the sum of cluster ``c``'s L2-normalized
  document rows, the objective is ``sum_c ||s_c||``: the sum over the documents of the
  cosine to their cluster's mean direction, the objective of spherical k-means (Dhillon &
  Modha 2001, the Semantic-NMF paper's S_kmeans baseline [14]), and merging ``a`` and
  ``b`` lowers it by ``||s_a|| + ||s_b|| - ||s_a + s_b|| >= 0`` (the triangle inequality),
  0 only for parallel clusters. The papers are silent on merging; this is the objective's
  own cost. Coarser levels nest: each merges whole clusters of the next finer one.
- **finer levels** split, one step at a time, the cluster of largest spherical loss
  ``n_c - ||s_c||`` by a rank-2 NMF of its documents (HierNMF2's split, Kuang & Park
  2013; :func:`semnmf.pipelines.edit.edit_model`). The split cluster's two word vectors
  join the model's columns, so a document of another cluster may move to one of them.

Every step is an edit of the saved model (:mod:`semnmf.pipelines.edit`): a merge maps
columns, a split adds one. So a level's labels are exactly what the edited model assigns
(``semnmf assign``), and ``semnmf edit RUN --level K`` turns level K into the run's
clusters by applying the level's recorded steps (:func:`apply_level`).

``min_cluster_size`` (documents) is honoured at every level: clusters smaller than it are
merged first (the smallest into its cheapest partner), and a split whose smaller half
would be smaller than it is not made (the next cluster is tried).
"""

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .._utils.renamed import renamed
from .edit import Edits, edit_model, top_words

__all__ = ["Level", "k_range", "build_levels", "apply_level", "RANGE_FACTOR"]

#: The two ends of the recommended range of k are at most this factor apart, the
#: recommended k at their geometric middle.
RANGE_FACTOR = 3.0


@renamed("k", "n_components")
def k_range(n_components, n_documents, factor=RANGE_FACTOR):
    """``(low, high)``: the integers within ``sqrt(factor)`` of ``k = n_components`` on
    either side (``ceil(k / sqrt(factor))``, ``floor(k * sqrt(factor))``), at least 2 and
    below ``n_documents``."""
    k = n_components
    root = float(np.sqrt(factor))
    low = max(2, int(np.ceil(k / root - 1e-9)))
    high = max(low, min(int(np.floor(k * root + 1e-9)), int(n_documents) - 1))
    return min(low, k), max(high, k)


@dataclass
class Level:
    """One level: ``k`` clusters, the ``steps`` (edit records of
    :func:`semnmf.pipelines.edit.edit_model`, in order) that make it from the fitted
    model, the documents' ``labels``, each cluster's top ``words`` and the ``cohesion``
    of the partition: the spherical k-means objective per document, the mean cosine of a
    document to its cluster's mean direction (``sum_c ||s_c|| / n``; a label-free curve
    over the levels)."""

    k: int
    steps: list
    labels: np.ndarray = field(repr=False)
    words: list = field(default_factory=list, repr=False)
    cohesion: float = float("nan")

    def record(self):
        """The ``levels`` entry of run.json (the labels go to levels.csv)."""
        sizes = np.bincount(self.labels[self.labels >= 0], minlength=self.k)
        return {"k": int(self.k), "sizes": sizes.tolist(), "words": self.words,
                "cohesion": round(float(self.cohesion), 6),
                "steps": [{key: step[key] for key in ("merge", "split") if step.get(key)}
                          for step in self.steps]}


def _level(model, steps, labels, Xn, n_words=10):
    sums = _sums(Xn, labels, model.n_clusters)
    cohesion = float(np.linalg.norm(sums, axis=1).sum()) / max(int((labels >= 0).sum()), 1)
    return Level(model.n_clusters, list(steps), labels,
                 top_words(model.topics, model.vectorizer.vocabulary, n_words), cohesion)


def _sums(Xn, labels, k):
    """(k x terms) sums of the unit rows of each cluster (dense: one row per cluster)."""
    keep = labels >= 0
    onehot = sp.csr_matrix((np.ones(int(keep.sum())), (labels[keep], np.flatnonzero(keep))),
                           shape=(k, Xn.shape[0]))
    return np.asarray((onehot @ Xn).todense())


def _unit_rows(X):
    X = sp.csr_matrix(X, dtype=np.float64)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sp.csr_matrix(sp.diags(1.0 / norms) @ X)


def _merge_pair(S, sizes, min_cluster_size):
    """The two clusters to merge: the smallest cluster below ``min_cluster_size`` with its
    cheapest partner, else the cheapest pair (lowest numbers on ties)."""
    cost = _pair_costs(S, np.linalg.norm(S, axis=1))
    np.fill_diagonal(cost, np.inf)
    small = np.flatnonzero(sizes < (min_cluster_size or 0))
    if small.size:
        a = int(small[np.argmin(sizes[small])])
        return tuple(sorted((a, int(np.argmin(cost[a])))))
    a, b = np.unravel_index(int(np.argmin(cost)), cost.shape)
    return tuple(sorted((int(a), int(b))))


def _pair_costs(S, norms):
    k = S.shape[0]
    cost = np.empty((k, k))
    for a in range(k):
        cost[a] = norms[a] + norms - np.linalg.norm(S[a] + S, axis=1)
    return cost


def _merged_labels(labels, before, after):
    """Labels after a merge: each document's cluster mapped through the columns (a merge
    keeps every column, so the model's assignment maps exactly)."""
    mapping = np.full(int(before.max()) + 1, -1, dtype=np.int64)
    mapping[before[before >= 0]] = after[before >= 0]
    return np.where(labels >= 0, mapping[np.maximum(labels, 0)], -1)


def _columns(model):
    return (np.arange(model.topics.shape[0]) if model.columns is None
            else np.asarray(model.columns))


def _merge(model, labels, Xn, min_cluster_size):
    k = model.n_clusters
    S = _sums(Xn, labels, k)
    sizes = np.bincount(labels[labels >= 0], minlength=k)
    a, b = _merge_pair(S, sizes, min_cluster_size)
    new = edit_model(model, Edits(merge=[[a, b]]))
    return new, _merged_labels(labels, _columns(model), _columns(new))


def _split(model, labels, X, Xn, min_cluster_size, random_state, tried):
    """The model and labels after splitting the cluster of largest spherical loss that
    gives two clusters of at least ``max(1, min_cluster_size)`` documents; None when no
    cluster can be split."""
    k = model.n_clusters
    S = _sums(Xn, labels, k)
    sizes = np.bincount(labels[labels >= 0], minlength=k)
    loss = sizes - np.linalg.norm(S, axis=1)
    smallest = max(1, min_cluster_size or 0)
    for c in np.argsort(-loss, kind="stable"):
        c = int(c)
        if sizes[c] < 2 * smallest or (k, c) in tried:
            continue
        tried.add((k, c))
        new = edit_model(model, Edits(split=[c]), X=X, labels=labels,
                         random_state=random_state)
        new_labels = new.assign_matrix(X)[0]
        new_sizes = np.bincount(new_labels[new_labels >= 0], minlength=new.n_clusters)
        if new_sizes.min() >= smallest:
            return new, new_labels
    return None


def build_levels(model, X, low, high, *, min_cluster_size=None, random_state=0):
    """The levels of a fitted saved ``model`` from ``low`` to ``high`` clusters.

    Parameters
    ----------
    model : SavedModel
        The run's model (its clusters are the starting level).
    X : sparse matrix
        The run's documents weighted over the model's vocabulary
        (:meth:`SavedModel.vectorize`).
    low, high : int
        The coarsest and finest level wanted.
    min_cluster_size : int or None
        No cluster of any level has fewer documents (small clusters of the fit are merged
        first; the starting level is then the model with them merged).
    random_state : int
        The seed of the splits' rank-2 NMF.

    Returns
    -------
    start : Level
        The starting level (the fit, small clusters merged).
    levels : list of Level
        Every level from the coarsest to the finest reached (``high`` may not be reached
        when no cluster can be split into two of ``min_cluster_size``), ``start`` among
        them.
    """
    X = sp.csr_matrix(X, dtype=np.float64)
    Xn = _unit_rows(X)
    labels = model.assign_matrix(X)[0]
    steps = []
    while model.n_clusters > 2 and min_cluster_size and \
            np.bincount(labels[labels >= 0], minlength=model.n_clusters).min() \
            < min_cluster_size:
        model, labels = _merge(model, labels, Xn, min_cluster_size)
        steps.append(model.edits[-1])
    start = _level(model, steps, labels, Xn)
    levels = [start]
    current, current_labels, path = model, labels, list(steps)
    while current.n_clusters > max(2, low):
        current, current_labels = _merge(current, current_labels, Xn, min_cluster_size)
        path = path + [current.edits[-1]]
        levels.insert(0, _level(current, path, current_labels, Xn))
    current, current_labels, path, tried = model, labels, list(steps), set()
    while current.n_clusters < high:
        split = _split(current, current_labels, X, Xn, min_cluster_size, random_state, tried)
        if split is None:
            break
        current, current_labels = split
        path = path + [current.edits[-1]]
        levels.append(_level(current, path, current_labels, Xn))
    return start, levels


def apply_level(model, steps, X, random_state=0):
    """``model`` with a level's recorded ``steps`` applied in order (the merges and splits
    :func:`build_levels` made), numbers as recorded: the level's model."""
    X = sp.csr_matrix(X, dtype=np.float64)
    for step in steps:
        edits = Edits(merge=[list(map(int, g)) for g in step.get("merge", [])],
                      split=list(map(int, step.get("split", []))))
        labels = model.assign_matrix(X)[0] if edits.split else None
        model = edit_model(model, edits, X=X, labels=labels, random_state=random_state)
    return model
