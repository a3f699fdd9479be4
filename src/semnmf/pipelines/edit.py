"""Topic editing: merge, split, drop and rename clusters, remove stop words from the topics,
recorded and replayable on a saved model (``docs/guide/editing.md``).

An edit never refits the model. The saved model keeps its factors (one *column* per
original cluster) and gains a column map (:attr:`SavedModel.columns`, -1 for a dropped
column): a document goes to the cluster of its best kept column, so a merged cluster is
the union of its columns and a dropped cluster's documents go to their next best. A split
replaces the cluster's columns by the two word vectors of a rank-2 NMF of its documents
(HierNMF2's split), scaled to the cluster's column norm; stop words are zeroed in every
column; a centroid step is kept when no cluster is split. The edited run's labels are the
edited model's assignment, which ``semnmf assign`` reproduces.

Edits are applied in a fixed order: stop words, splits, merges, drops, renames; clusters
are then numbered 0..K-1 in the order of their first column. Each recorded edit keeps the
top words of the clusters it names, so that :func:`replay_edits` can apply it to another
run of the same corpus by matching clusters on their words.
"""

from dataclasses import dataclass, field
import copy

import numpy as np
import scipy.sparse as sp

from .saved import SavedModel

N_MATCH_WORDS = 20


@dataclass
class Edits:
    """The edits of one ``semnmf edit`` command (cluster numbers of the input run)."""

    merge: list = field(default_factory=list)      # lists of clusters to merge into one
    split: list = field(default_factory=list)      # clusters split in two
    drop: list = field(default_factory=list)       # clusters removed
    rename: dict = field(default_factory=dict)     # cluster -> name
    stop_words: list = field(default_factory=list)  # terms removed from every topic

    def clusters(self):
        """Every cluster number the edits name."""
        named = {c for group in self.merge for c in group} | set(self.split) | set(self.drop)
        return sorted(named | set(self.rename))


def _columns_of(model):
    """The column factors (k' x n_terms) the model assigns with, and a writable copy of
    its estimator (None for a consensus)."""
    if model.kind == "consensus":
        return np.array(model.centers, dtype=np.float64), None
    est = model.estimator
    name = type(est).__name__
    if name == "HierarchicalNMF":
        raise ValueError("a topic tree is edited through its leaves' parent splits; edit a "
                         "flat run (semnmf cluster) instead.")
    est = copy.deepcopy(est)
    attr = "cluster_centers_" if name == "SphericalKMeans" else "components_"
    return np.array(getattr(est, attr), dtype=np.float64), est


def model_columns(model):
    """The cluster of each column of ``model``'s factors (the identity when unedited)."""
    return (np.arange(model.topics.shape[0]) if model.columns is None
            else np.asarray(model.columns))


def _set_columns(est, W):
    attr = "cluster_centers_" if type(est).__name__ == "SphericalKMeans" else "components_"
    setattr(est, attr, np.ascontiguousarray(W, dtype=getattr(est, attr).dtype))
    if hasattr(est, "n_components_"):
        est.n_components_ = W.shape[0]
    for extra in ("context_components_", "context_core_"):  # per column, not needed to assign
        est.__dict__.pop(extra, None)


def _split_columns(X, members, norm, random_state):
    """Two word vectors of a rank-2 NMF of the member documents, scaled to ``norm``."""
    from ..models.nmf import NMF

    if members.size < 2:
        raise ValueError("a cluster of fewer than 2 documents cannot be split.")
    model = NMF(2, init="nndsvda" if min(members.size, X.shape[1]) >= 2 else "random",
                max_iter=200, random_state=random_state).fit(X[members])
    W = model.components_.astype(np.float64)
    W *= norm / np.maximum(np.linalg.norm(W, axis=1, keepdims=True), 1e-300)
    return W


def _topics(W, columns, n_clusters):
    topics = np.zeros((n_clusters, W.shape[1]))
    for j, c in enumerate(columns):
        if c >= 0:
            topics[c] += W[j]
    return topics


def _check(edits, n_clusters):
    for c in edits.clusters():
        if not 0 <= int(c) < n_clusters:
            raise ValueError(f"cluster {c} does not exist: the run has clusters 0.."
                             f"{n_clusters - 1}.")
    if edits.merge and any(len(group) < 2 for group in edits.merge):
        raise ValueError("a merge names at least two clusters, e.g. --merge 3,7.")
    seen = [c for group in edits.merge for c in group] + list(edits.split) + list(edits.drop)
    if len(seen) != len(set(seen)):
        raise ValueError("a cluster is named by two edits (merge, split or drop) in one "
                         "command; run semnmf edit twice.")


def _term_columns(model, words):
    """The model's term columns of ``words``: a term itself, or what the model's analyzer
    makes of the word (its stem, for a stemmed vocabulary)."""
    index = {t: i for i, t in enumerate(model.vectorizer.vocabulary)}
    columns = set()
    for word in words:
        if word in index:
            columns.add(index[word])
        else:
            try:  # a model of counts only has no analyzer: the term itself or nothing
                columns |= set(model.vectorizer.transform_texts([word]).indices.tolist())
            except ValueError:
                pass
    if not columns:
        raise ValueError(f"none of the stop words is a term of the model "
                         f"({', '.join(list(words)[:3])}, ...).")
    return sorted(columns)


def top_words(topics, vocabulary, n=N_MATCH_WORDS):
    """The ``n`` heaviest terms of each row of ``topics``."""
    order = np.argsort(-np.asarray(topics), axis=1)[:, :n]
    return [[str(vocabulary[t]) for t in row] for row in order]


def edit_model(model, edits, X=None, labels=None, random_state=0):
    """A new :class:`SavedModel`: ``model`` with ``edits`` (:class:`Edits`) applied.

    ``X`` (the training documents, weighted over the model's vocabulary) and ``labels``
    (their clusters) are needed for splits only. Returns the edited model; its ``edits``
    record lists what was done, with the top words of each named cluster."""
    old_columns = model_columns(model)
    n_clusters = int(old_columns.max()) + 1
    _check(edits, n_clusters)
    W, est = _columns_of(model)
    vocabulary = model.vectorizer.vocabulary
    before = top_words(model.topics, vocabulary)
    columns = old_columns.copy()
    if edits.stop_words:
        W[:, _term_columns(model, edits.stop_words)] = 0.0
    if edits.split:
        if X is None or labels is None:
            raise ValueError("a split needs the run's documents (X) and labels.")
        X = sp.csr_matrix(X)
        labels = np.asarray(labels)
        for c in edits.split:
            own = np.flatnonzero(columns == c)
            norm = float(np.mean(np.linalg.norm(W[own], axis=1)))
            pair = _split_columns(X, np.flatnonzero(labels == c), norm, random_state)
            W[own[0]] = pair[0]              # the first half keeps the cluster's place
            columns[own[1:]] = -1
            W = np.vstack([W, pair[1:]])
            columns = np.concatenate([columns, [n_clusters]])
            n_clusters += 1
    for group in edits.merge:
        columns[np.isin(columns, group)] = min(group)
    columns[np.isin(columns, list(edits.drop))] = -1
    # number the kept clusters again, in the order of their first column
    kept = [c for c in dict.fromkeys(columns.tolist()) if c >= 0]
    if not kept:
        raise ValueError("the edits drop every cluster.")
    renumber = {c: i for i, c in enumerate(kept)}
    columns = np.array([renumber.get(c, -1) for c in columns], dtype=np.int64)
    names = list(model.names or [])  # of the input run's clusters (a split's new one has none)
    new_names = [None] * len(kept)
    for c, i in renumber.items():
        if c < len(names):
            new_names[i] = names[c]
    for c, name in edits.rename.items():
        if int(c) in renumber:
            new_names[renumber[int(c)]] = str(name)
    return _edited(model, est, W, columns, new_names, edits, before)


def apply_edits(model, edits, X=None, random_state=0):
    """:func:`edit_model` with what a split needs: the documents ``X`` and their clusters,
    the model's own assignment of them (so that the split is the same whoever applies
    it: ``semnmf edit``, a replay, a level)."""
    labels = model.assign_matrix(X)[0] if edits.split and X is not None else None
    return edit_model(model, edits, X=X, labels=labels, random_state=random_state)


def _edited(model, est, W, columns, names, edits, before):
    n_clusters = int(columns.max()) + 1
    topics = _topics(W, columns, n_clusters)
    # the run's centroid step stays when the columns are still the run's clusters (no
    # split): its documents keep their clusters of the run, mapped by the edit
    step = model.step if model.step is not None and W.shape[0] == len(
        model.columns if model.columns is not None else model.topics) and not edits.split \
        else None
    if est is not None:
        _set_columns(est, W)
        new = SavedModel(model.vectorizer, estimator=est, topics=topics,
                         method=model.info.get("method"), n_components=n_clusters,
                         refine=model.info.get("refine"))
    else:
        new = SavedModel(model.vectorizer, centers=W, topics=topics,
                         method=model.info.get("method"), n_components=n_clusters,
                         consensus=model.info.get("consensus"))
    new.columns = columns
    new.step = step
    new.names = names if any(names) else None
    record = {"merge": [list(map(int, g)) for g in edits.merge],
              "split": list(map(int, edits.split)), "drop": list(map(int, edits.drop)),
              "rename": {str(int(c)): n for c, n in edits.rename.items()},
              "stop_words": list(edits.stop_words),
              "words": {str(c): before[c] for c in edits.clusters()}}
    new.edits = list(model.edits or []) + [record]
    return new


def match_clusters(source_words, target_words):
    """The target cluster of each source cluster, matched on their top words (the
    assignment of largest total overlap, Hungarian method); ``{source: target}``."""
    from scipy.optimize import linear_sum_assignment

    overlap = np.array([[len(set(a) & set(b)) for b in target_words] for a in source_words])
    rows, cols = linear_sum_assignment(-overlap)
    return {int(r): int(c) for r, c in zip(rows, cols) if overlap[r, c] > 0}


def replay_edits(model, records, X=None, random_state=0):
    """Apply recorded edits (an edited model's ``edits``, e.g. read from its run.json) to
    another ``model`` of the same corpus: each cluster an edit names is found in
    ``model`` by its top words (:func:`match_clusters`). Raises a one-line error when a
    named cluster has no match. ``X`` (the documents, weighted over the model's
    vocabulary) is needed to replay splits."""
    for record in records:
        words = record.get("words") or {}
        source = sorted(words, key=int)
        here = top_words(model.topics, model.vectorizer.vocabulary)
        match = match_clusters([words[c] for c in source], here)
        lookup = {int(c): match.get(i) for i, c in enumerate(source)}
        missing = [c for c, m in lookup.items() if m is None]
        if missing:
            raise ValueError(f"cluster {missing[0]} of the recorded edits matches no cluster of "
                             "this run by its words; replay on a run of the same corpus.")
        edits = Edits(merge=[[lookup[int(c)] for c in g] for g in record.get("merge", [])],
                      split=[lookup[int(c)] for c in record.get("split", [])],
                      drop=[lookup[int(c)] for c in record.get("drop", [])],
                      rename={lookup[int(c)]: n for c, n in record.get("rename", {}).items()},
                      stop_words=list(record.get("stop_words", [])))
        model = apply_edits(model, edits, X=X, random_state=random_state)
    return model
