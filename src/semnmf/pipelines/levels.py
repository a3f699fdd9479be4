"""Levels: the clusters of one fitted run at several resolutions, without refitting.

``semnmf cluster -k auto`` fits one model at the recommended k and derives from it a
partition at every k of a range (:func:`build_levels`; ``docs/guide/choosing-k.md``):

- **coarser levels** merge, one step at a time, the two clusters whose merge costs the
  spherical k-means objective ``sum_c ||s_c||`` least (``s_c`` the sum of cluster ``c``'s
  unit rows; Dhillon & Modha 2001): merging ``a`` and ``b`` lowers it by
  ``||s_a|| + ||s_b|| - ||s_a + s_b|| >= 0``. Coarser levels nest.
- **finer levels** split, one step at a time, the cluster of largest spherical loss
  ``n_c - ||s_c||`` by a rank-2 NMF of its documents (HierNMF2's split, Kuang & Park 2013).

Every step is an edit of the saved model (:mod:`semnmf.pipelines.edit`), so a level's
labels are exactly what the edited model assigns, and ``semnmf edit RUN --level K``
applies the level's recorded steps (:func:`apply_level`). ``min_cluster_size`` holds at
every level: smaller clusters are merged first (down to 2 clusters), and a split that
would make one is not made.
"""

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .._utils.renamed import renamed
from .._utils.labels import cluster_means
from .._utils.validation import unit_rows
from .edit import Edits, apply_edits, edit_model, model_columns, top_words

__all__ = ["Level", "Levels", "k_range", "build_levels", "apply_level", "RANGE_FACTOR"]

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
        return {"k": int(self.k), "sizes": _sizes(self.labels, self.k).tolist(), "words": self.words,
                "cohesion": round(float(self.cohesion), 6),
                "steps": [{key: step[key] for key in ("merge", "split") if step.get(key)}
                          for step in self.steps]}


def _sizes(labels, k):
    return np.bincount(labels[labels >= 0], minlength=k)


def _level(model, steps, labels, Xn, n_words=10):
    sums = _sums(Xn, labels, model.n_clusters)
    cohesion = float(np.linalg.norm(sums, axis=1).sum()) / max(int((labels >= 0).sum()), 1)
    return Level(model.n_clusters, list(steps), labels,
                 top_words(model.topics, model.vectorizer.vocabulary, n_words), cohesion)


def _sums(Xn, labels, k):
    """(k x terms) sums of the unit rows of each cluster (dense: one row per cluster)."""
    return cluster_means(Xn, labels, k) * _sizes(labels, k)[:, None]


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


def _merge(model, labels, Xn, min_cluster_size):
    k = model.n_clusters
    a, b = _merge_pair(_sums(Xn, labels, k), _sizes(labels, k), min_cluster_size)
    new = edit_model(model, Edits(merge=[[a, b]]))
    return new, _merged_labels(labels, model_columns(model), model_columns(new))


def _split(model, labels, assigned, X, Xn, min_cluster_size, random_state):
    """The model and labels after splitting the cluster of largest spherical loss (in
    ``labels``) that gives two clusters of at least ``max(1, min_cluster_size)``
    documents; None when no cluster can be split. The split divides the cluster's
    documents of ``assigned``, the model's own assignment, as :func:`apply_level` does."""
    k = model.n_clusters
    sizes = _sizes(labels, k)
    loss = sizes - np.linalg.norm(_sums(Xn, labels, k), axis=1)
    smallest = max(1, min_cluster_size or 0)
    for c in np.argsort(-loss, kind="stable"):
        if sizes[c] < 2 * smallest:
            continue
        new = edit_model(model, Edits(split=[int(c)]), X=X, labels=assigned,
                         random_state=random_state)
        new_labels = new.assign_matrix(X)[0]
        if _sizes(new_labels, new.n_clusters).min() >= smallest:
            return new, new_labels
    return None


@dataclass
class Levels:
    """What :func:`build_levels` returns: the ``model`` of the starting level (the fit,
    its clusters under the minimum size merged by ``merged``, edit records), that level
    (``start``) and every level (``levels``, coarsest first, ``start`` among them), each
    level's steps made from ``model``."""

    model: object
    merged: list
    start: Level
    levels: list


def build_levels(model, X, low, high, *, labels=None, min_cluster_size=None,
                 random_state=0):
    """The levels of a fitted saved ``model`` from ``low`` to ``high`` clusters.

    Parameters
    ----------
    model : SavedModel
        The run's model (its clusters are the starting level).
    X : sparse matrix
        The run's documents weighted over the model's vocabulary
        (:meth:`SavedModel.vectorize`).
    low, high : int or None
        The coarsest and finest level wanted (None: the starting level's k).
    labels : array or None
        The run's clusters of the documents (default: the model's assignment), kept at
        the starting level and, through the merges, at the coarser ones (a consensus's
        model does not reproduce all of them).
    min_cluster_size : int or None
        No cluster of any level has fewer documents (module docstring).
    random_state : int
        The seed of the splits' rank-2 NMF.

    Returns
    -------
    Levels
        The starting model and level, and every level from the coarsest to the finest
        reached.
    """
    X = sp.csr_matrix(X, dtype=np.float64)
    Xn = unit_rows(X)
    assigned = model.assign_matrix(X)[0]
    labels = assigned if labels is None else np.asarray(labels)
    merged = []
    while model.n_clusters > 2 and min_cluster_size and \
            _sizes(labels, model.n_clusters).min() < min_cluster_size:
        before = model_columns(model)
        model, labels = _merge(model, labels, Xn, min_cluster_size)
        assigned = _merged_labels(assigned, before, model_columns(model))
        merged.append(model.edits[-1])
    start = _level(model, [], labels, Xn)
    low = start.k if low is None else low
    high = start.k if high is None else high
    levels = [start]
    current, current_labels, path = model, labels, []
    while current.n_clusters > max(2, low):
        current, current_labels = _merge(current, current_labels, Xn, min_cluster_size)
        path = path + [current.edits[-1]]
        levels.insert(0, _level(current, path, current_labels, Xn))
    current, current_labels, path = model, labels, []
    while current.n_clusters < high:
        split = _split(current, current_labels, assigned, X, Xn, min_cluster_size,
                       random_state)
        if split is None:
            break
        current, current_labels = split
        assigned = current_labels  # a split level is the model's assignment
        path = path + [current.edits[-1]]
        levels.append(_level(current, path, current_labels, Xn))
    return Levels(model, merged, start, levels)


def apply_level(model, steps, X, random_state=0):
    """``model`` with a level's recorded ``steps`` applied in order (the merges and splits
    :func:`build_levels` made), numbers as recorded: the level's model."""
    X = sp.csr_matrix(X, dtype=np.float64)
    for step in steps:
        edits = Edits(merge=[list(map(int, g)) for g in step.get("merge", [])],
                      split=list(map(int, step.get("split", []))))
        model = apply_edits(model, edits, X=X, random_state=random_state)
    return model
