"""Clustering quality measures and topic inspection helpers.

Against the known classes of a labelled corpus, the papers' three measures: :func:`nmi`,
:func:`ari` and :func:`accuracy` (all three at once: :func:`clustering_scores`); documents
without a reference label (None, an empty string or NaN) are left out. Without labels:
:func:`topic_coherence` (UMass), :func:`npmi_coherence` and :func:`topic_diversity`.
:func:`top_terms` lists the heaviest terms of each topic of a factor matrix.
"""

import numbers
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix

from ._utils.validation import check_positive_int, is_missing_label

__all__ = ["nmi", "ari", "accuracy", "clustering_scores", "top_terms", "topic_coherence",
           "npmi_coherence", "topic_diversity", "topic_quality"]

_AVERAGE_METHODS = ("min", "geometric", "arithmetic", "max")


def _check_labelings(labels_true, labels_pred):
    """Return both labelings as 1-D integer codes of equal, non-zero length: each value's
    rank among its labeling's distinct values (``np.unique``'s inverse), the codes
    scikit-learn's scores compute on their own. The scores are the same as on the values
    themselves, and on strings or objects several times faster
    (``benchmarks/results/design_notes.md``)."""
    out = []
    for name, labels in (("labels_true", labels_true), ("labels_pred", labels_pred)):
        if labels is None:
            raise ValueError(f"{name} is None: pass one label per document.")
        arr = np.asarray(labels)
        if arr.ndim == 2 and 1 in arr.shape:
            arr = arr.ravel()
        if arr.ndim != 1:
            raise ValueError(
                f"{name} must be a 1-D sequence with one label per document; "
                f"got an array of shape {arr.shape}.")
        if arr.size == 0:
            raise ValueError(f"{name} is empty: at least one labelled document is needed.")
        out.append(arr)
    labels_true, labels_pred = out
    if labels_true.shape[0] != labels_pred.shape[0]:
        raise ValueError(
            "labels_true and labels_pred must have the same length (one label per "
            f"document); got {labels_true.shape[0]} and {labels_pred.shape[0]}.")
    if labels_true.dtype.kind in "OUSf":  # unlabelled documents are left out
        known = np.fromiter((not is_missing_label(y) for y in labels_true.tolist()),
                            dtype=bool, count=labels_true.shape[0])
        if not known.all():
            if not known.any():
                raise ValueError("labels_true has no label (all are missing): at least one "
                                 "labelled document is needed.")
            labels_true, labels_pred = labels_true[known], labels_pred[known]
            if labels_true.dtype.kind == "O":  # e.g. str labels once the Nones are gone
                labels_true = np.asarray(labels_true.tolist())
    if labels_pred.dtype.kind in "Of":  # a clustering gives every document a cluster
        missing = np.fromiter((is_missing_label(y) for y in labels_pred.tolist()),
                              dtype=bool, count=labels_pred.shape[0])
        if missing.any():
            raise ValueError(
                f"labels_pred has {int(missing.sum())} missing value(s) (None or NaN, the "
                f"first at position {int(np.argmax(missing))}): give every document a "
                "cluster, e.g. -1 for the documents left out.")
    for name, labels in (("labels_true", labels_true), ("labels_pred", labels_pred)):
        if labels.dtype.kind == "f" and not np.isfinite(labels).all():
            raise ValueError(f"{name} contains infinity: give every document a finite "
                             "label (or NaN for no label in labels_true).")
    return (np.unique(labels_true, return_inverse=True)[1].ravel(),
            np.unique(labels_pred, return_inverse=True)[1].ravel())


def nmi(labels_true, labels_pred, average_method="arithmetic"):
    """Normalized mutual information between two labelings.

    A thin wrapper around :func:`sklearn.metrics.normalized_mutual_info_score`:
    ``NMI = I(Y; C) / mean(H(Y), H(C))``, 1 for identical partitions (up to a renaming
    of the labels), close to 0 for independent ones.

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n_documents,)
        Reference classes and predicted clusters.
    average_method : {"arithmetic", "geometric", "min", "max"}, default="arithmetic"
        How the two entropies are averaged in the denominator (scikit-learn's default).
        Strehl & Ghosh (2002), the definition cited by the NMF document-clustering
        papers, use the geometric mean, ``I(Y; C) / sqrt(H(Y) H(C))``.

    Returns
    -------
    score : float
        Between 0 and 1, higher is better.

    See Also
    --------
    ari, accuracy, clustering_scores
    """
    labels_true, labels_pred = _check_labelings(labels_true, labels_pred)
    if average_method not in _AVERAGE_METHODS:
        raise ValueError(
            f"average_method must be one of {_AVERAGE_METHODS}, got {average_method!r}.")
    return _nmi(labels_true, labels_pred, average_method)


def _nmi(codes_true, codes_pred, average_method="arithmetic"):
    return float(
        normalized_mutual_info_score(codes_true, codes_pred, average_method=average_method))


def ari(labels_true, labels_pred):
    """Adjusted Rand index between two labelings.

    A thin wrapper around :func:`sklearn.metrics.adjusted_rand_score`: the Rand index
    (fraction of document pairs on which both labelings agree, same group or not)
    corrected for chance.

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n_documents,)
        Reference classes and predicted clusters.

    Returns
    -------
    score : float
        1 for identical partitions, about 0 for random ones, can be negative.
    """
    return float(adjusted_rand_score(*_check_labelings(labels_true, labels_pred)))


def accuracy(labels_true, labels_pred):
    """Clustering accuracy under the best one-to-one matching of clusters to classes.

    The Hungarian algorithm on the contingency matrix; documents of clusters or classes
    left unmatched count as errors. Every distinct label value is a label of its own,
    ``-1`` included.

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n_documents,)
        Reference classes and predicted clusters.

    Returns
    -------
    score : float
        Fraction of documents in ``[0, 1]``, higher is better.
    """
    return _accuracy(*_check_labelings(labels_true, labels_pred))


def _accuracy(codes_true, codes_pred):
    table = contingency_matrix(codes_true, codes_pred)  # rows = classes, columns = clusters
    rows, cols = linear_sum_assignment(table, maximize=True)
    return float(table[rows, cols].sum() / codes_true.shape[0])


def clustering_scores(labels_true, labels_pred):
    """NMI, ARI and accuracy of a clustering at once.

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n_documents,)
        Reference classes and predicted clusters.

    Returns
    -------
    scores : dict
        ``{"nmi": float, "ari": float, "accuracy": float}``, with NMI in scikit-learn's
        default (arithmetic) normalization; call :func:`nmi` with
        ``average_method="geometric"`` for Strehl & Ghosh's.
    """
    codes_true, codes_pred = _check_labelings(labels_true, labels_pred)
    return {
        "nmi": _nmi(codes_true, codes_pred),
        "ari": float(adjusted_rand_score(codes_true, codes_pred)),
        "accuracy": _accuracy(codes_true, codes_pred),
    }


def top_terms(components, vocabulary, n_terms=10):
    """The heaviest terms of each topic.

    Parameters
    ----------
    components : array-like or sparse matrix of shape (n_topics, n_features)
        One row per topic (``NMF.components_``, ``SphericalKMeans.cluster_centers_``...).
    vocabulary : sequence of str of length n_features, mapping, or None
        The term of each column: a list or array (``vectorizer.get_feature_names_out()``)
        or a ``{term: column}`` mapping (``vectorizer.vocabulary_``). None names
        column ``j`` ``"t{j}"``.
    n_terms : int, default=10
        How many terms per topic; capped at ``n_features``.

    Returns
    -------
    terms : list of n_topics lists of (str, float) tuples
        For each topic, its ``n_terms`` heaviest terms with their weights, by decreasing
        weight (ties by column order).
    """
    if components is None:
        raise ValueError("components is None: pass an array of shape (n_topics, n_terms).")
    if sp.issparse(components):
        components = components.toarray()
    components = np.asarray(components)
    if components.ndim != 2:
        raise ValueError(
            "components must be 2-D with one row per topic (n_topics, n_terms); got an "
            f"array of shape {components.shape}.")
    if components.shape[0] == 0 or components.shape[1] == 0:
        raise ValueError(f"components is empty (shape {components.shape}).")
    if not np.issubdtype(components.dtype, np.number) or np.iscomplexobj(components):
        raise ValueError(f"components must hold real numbers, got dtype {components.dtype}.")
    check_positive_int(n_terms, "n_terms", 1)
    n_features = components.shape[1]

    if vocabulary is None:
        names = [f"t{j}" for j in range(n_features)]
    elif isinstance(vocabulary, Mapping):
        names = [None] * n_features
        for term, j in vocabulary.items():
            if not (0 <= j < n_features):
                raise ValueError(
                    f"vocabulary maps {term!r} to column {j}, outside the {n_features} "
                    "columns of components.")
            names[j] = str(term)
        missing = [j for j, name in enumerate(names) if name is None]
        if missing:
            raise ValueError(
                f"vocabulary names {n_features - len(missing)} of the {n_features} columns "
                f"of components; column(s) {missing[:5]} have no term.")
    else:
        if isinstance(vocabulary, str):
            raise ValueError("vocabulary must be a sequence of terms, not a single string.")
        names = [str(term) for term in vocabulary]
        if len(names) != n_features:
            raise ValueError(
                f"vocabulary has {len(names)} terms but components has {n_features} "
                "columns; they must match (one term per column).")

    n = min(int(n_terms), n_features)
    weights = components.astype(np.float64, copy=False)
    order = np.argsort(-weights, axis=1, kind="stable")[:, :n]
    return [
        [(names[j], float(weights[i, j])) for j in order[i]]
        for i in range(weights.shape[0])
    ]


def topic_coherence(components, X, n_terms=20, mu=1.0, average=True):
    """Topic coherence from document co-occurrence (Kuang & Park 2013, eq. 18).

    For the top words f₁..f_K of a topic (by decreasing weight)::

        coherence = Σ_{i<j} log((D(f_i, f_j) + μ) / D(f_i))                (18)

    where D(f) is the number of documents of X containing f and D(f, f') the number
    containing both: the UMass coherence of Mimno et al. (2011). Higher (closer to 0) is
    more coherent.

    Parameters
    ----------
    components : array-like of shape (n_topics, n_terms_total)
        Topic-term weights (``components_``); only terms with a positive weight are ranked.
    X : sparse matrix or array of shape (n_documents, n_terms_total)
        Reference documents (any weighting: only the non-zero pattern is used).
    n_terms : int, default=20
        K, the paper's value.
    mu : float, default=1.0
        The smoothing μ, the paper's value.
    average : bool, default=True
        Return the mean over topics (what the paper reports) or one value per topic.

    Returns
    -------
    float or ndarray of shape (n_topics,)
    """
    components = np.asarray(components.toarray() if sp.issparse(components) else components,
                            dtype=np.float64)
    if components.ndim != 2 or components.size == 0:
        raise ValueError("components must be a non-empty 2-D array (n_topics, n_terms).")
    if X is None:
        raise ValueError("X is None: pass the documents (n_documents, n_terms) to count co-occurrences in.")
    B = _occurrences(X)
    if B.shape[1] != components.shape[1]:
        raise ValueError(
            f"X has {B.shape[1]} terms (columns) but components has {components.shape[1]}; "
            "both must use the same vocabulary.")
    check_positive_int(n_terms, "n_terms", 2)
    if not (isinstance(mu, numbers.Real) and np.isfinite(mu) and mu > 0):
        raise ValueError(f"mu must be a positive number, got {mu!r}.")
    df = np.asarray(B.sum(axis=0)).ravel()
    scores = np.empty(components.shape[0])
    for t, row in enumerate(components):
        order = np.argsort(-row, kind="stable")[:n_terms]
        order = order[row[order] > 0]
        if order.size < 2:
            raise ValueError(f"topic {t} has fewer than 2 terms with a positive weight; "
                             "coherence needs at least 2.")
        if np.any(df[order] == 0):
            raise ValueError(f"topic {t} has top terms that occur in no document of X; "
                             "pass the documents the topics were learned from.")
        Bt = B[:, order]
        together = (Bt.T @ Bt).toarray()
        i, j = np.triu_indices(order.size, k=1)
        scores[t] = np.sum(np.log((together[i, j] + mu) / df[order][i]))
    return float(scores.mean()) if average else scores


def _top_word_lists(topics, n_terms, vocabulary=None):
    """The top words of each topic as lists: of column indices (``topics`` an array of
    weights, positive weights only, or lists of indices) or of terms (lists of str)."""
    if hasattr(topics, "shape") and len(getattr(topics, "shape", ())) == 2:
        weights = np.asarray(topics.toarray() if sp.issparse(topics) else topics,
                             dtype=np.float64)
        if weights.size == 0:
            raise ValueError(f"topics is empty (shape {weights.shape}).")
        order = np.argsort(-weights, axis=1, kind="stable")[:, :n_terms]
        return [[int(j) for j in row[weights[t, row] > 0]] for t, row in enumerate(order)]
    if isinstance(topics, str) or not hasattr(topics, "__iter__"):
        raise ValueError("topics must be a 2-D array of term weights (one row per topic) or "
                         "a list of lists of terms or column indices.")
    lists = [[_word(w) for w in words if not _is_pair(w) or w[1] > 0][:n_terms]
             for words in topics]
    if not lists:
        raise ValueError("topics is empty: give at least one topic.")
    return lists


def _is_pair(word):
    """A ``(term, weight)`` pair, as :func:`top_terms` gives (a bare pair counted every
    pair as a distinct word, and crashed the NPMI's term lookup)."""
    return (isinstance(word, tuple) and len(word) == 2 and isinstance(word[1], numbers.Real)
            and not isinstance(word[1], bool))


def _word(word):
    return word[0] if _is_pair(word) else word


def _occurrences(X):
    """X's non-zero pattern as a CSC matrix of float 1s (documents x terms)."""
    B = sp.csc_matrix(X, dtype=np.float64, copy=True)
    B.data = (B.data != 0).astype(np.float64)
    B.eliminate_zeros()
    return B


def npmi_coherence(topics, X, n_terms=10, *, vocabulary=None, average=True):
    """NPMI coherence of each topic's top words (Bouma 2009; Lau et al. 2014).

    For two words w, w' with document probabilities P(w) (fraction of the documents of X
    that contain w) and P(w, w') (fraction containing both)::

        NPMI(w, w') = log(P(w, w') / (P(w) P(w'))) / -log P(w, w')

    in [-1, 1]: -1 for words that never occur together (or do not occur), 0 for
    independent words, 1 for words that always occur together. A topic's coherence is the
    mean NPMI over the pairs of its ``n_terms`` top words; higher is better.

    Parameters
    ----------
    topics : array-like of shape (n_topics, n_features), or list of lists
        Topic-term weights (``components_``, cluster centres; the ``n_terms`` heaviest
        terms with a positive weight are taken), or each topic's top words as lists of
        column indices of X, or of terms (then ``vocabulary`` must be given), or the
        ``(term, weight)`` pairs of :func:`top_terms` (positive weights only).
    X : sparse matrix, array or Corpus
        The documents whose co-occurrences are counted (only the non-zero pattern is
        used): the corpus the topics were learned from, or a reference corpus with the
        same columns, or a :class:`~semnmf.Corpus`, whose terms are matched by name when
        ``vocabulary`` is given.
    n_terms : int, default=10
        Top words per topic (N, at least 2).
    vocabulary : sequence of str, optional
        The terms of the columns of ``topics``: top words are then matched to the columns
        of X by name (X being a Corpus or ``topics`` lists of terms). A word the reference
        does not contain counts as occurring in no document.
    average : bool, default=True
        The mean over topics (ignoring NaN) or one value per topic.

    Returns
    -------
    float or ndarray of shape (n_topics,)
        NaN for a topic with fewer than two top words (e.g. an empty cluster).
    """
    check_positive_int(n_terms, "n_terms", 2)
    if X is None:
        raise ValueError("X is None: pass the documents (n_documents, n_terms) to count "
                         "co-occurrences in.")
    reference_terms = None
    if hasattr(X, "counts") and callable(X.counts) and hasattr(X, "vocabulary"):
        reference_terms = [str(t) for t in X.vocabulary]
        X = X.counts()
    B = _occurrences(X)
    if B.shape[0] == 0:
        raise ValueError("X has no documents.")
    lists = _top_word_lists(topics, n_terms)
    n_columns = B.shape[1]
    if (reference_terms is None or vocabulary is None) and hasattr(topics, "shape") \
            and topics.shape[1] != n_columns:
        raise ValueError(f"X has {n_columns} terms (columns) but topics has "
                         f"{topics.shape[1]}; both must use the same vocabulary (or pass a "
                         "Corpus and vocabulary to match terms by name).")

    # every top word as a column of X, or -1 when X does not contain it
    names = None if vocabulary is None else [str(t) for t in vocabulary]
    lookup = None
    if reference_terms is not None and names is not None:
        lookup = {t: j for j, t in enumerate(reference_terms)}
    elif any(isinstance(w, str) for words in lists for w in words):
        if names is None and reference_terms is None:
            raise ValueError("topics are given as terms: pass vocabulary (the terms of the "
                             "columns of X) to find them in X.")
        lookup = {t: j for j, t in enumerate(reference_terms or names)}
    columns = []
    for t, words in enumerate(lists):
        cols = []
        for w in words:
            if isinstance(w, str):
                cols.append(lookup.get(w, -1))
            elif lookup is not None:  # a column of topics, matched to X by its term
                if names is None or not 0 <= int(w) < len(names):
                    raise ValueError(f"topic {t} names column {w}, which vocabulary lacks.")
                cols.append(lookup.get(names[int(w)], -1))
            else:
                if not 0 <= int(w) < n_columns:
                    raise ValueError(f"topic {t} names column {w} but X has {n_columns} "
                                     "columns; topics and X must share the vocabulary.")
                cols.append(int(w))
        columns.append(cols)

    # co-occurrence counts of all top words at once: one small |U| x |U| product
    used = sorted({c for cols in columns for c in cols if c >= 0})
    position = {c: i for i, c in enumerate(used)}
    sub = B[:, used] if used else sp.csc_matrix((B.shape[0], 0))
    together = np.asarray((sub.T @ sub).toarray()) if used else np.zeros((0, 0))
    n_docs = float(B.shape[0])
    scores = np.full(len(columns), np.nan)
    for t, cols in enumerate(columns):
        if len(cols) < 2:
            continue
        idx = np.array([position.get(c, -1) for c in cols])
        i, j = np.triu_indices(len(cols), k=1)
        known = (idx[i] >= 0) & (idx[j] >= 0)
        pij = np.zeros(i.size)
        pi = np.zeros(i.size)
        pj = np.zeros(i.size)
        a, b = idx[i][known], idx[j][known]
        pij[known] = together[a, b] / n_docs
        pi[known] = together[a, a] / n_docs
        pj[known] = together[b, b] / n_docs
        values = np.full(i.size, -1.0)  # never together (or absent): -1
        seen = pij > 0
        always = seen & (pij >= 1.0)
        values[always] = 1.0  # in every document: P(w, w') = P(w) = P(w') = 1
        rest = seen & ~always
        values[rest] = (np.log(pij[rest] / (pi[rest] * pj[rest]))
                        / -np.log(pij[rest]))
        scores[t] = float(values.mean())
    if not average:
        return scores
    return float(np.nanmean(scores)) if np.any(~np.isnan(scores)) else float("nan")


def topic_diversity(topics, n_terms=25):
    """Topic diversity (Dieng, Ruiz & Blei 2020): the fraction of unique words among the
    ``n_terms`` top words of all topics.

    1 when no two topics share a top word, ``1 / n_topics`` when all list the same words.

    Parameters
    ----------
    topics : array-like of shape (n_topics, n_features), or list of lists
        Topic-term weights (the ``n_terms`` heaviest terms with a positive weight are
        taken), or each topic's top words (terms or column indices, or the
        ``(term, weight)`` pairs of :func:`top_terms`, positive weights only).
    n_terms : int, default=25
        Top words per topic, 25 in the paper.

    Returns
    -------
    float
        Unique words / listed words (a topic with fewer than ``n_terms`` words lists
        fewer); NaN when no topic has a word.
    """
    check_positive_int(n_terms, "n_terms", 1)
    lists = _top_word_lists(topics, n_terms)
    listed = [w for words in lists for w in words]
    if not listed:
        return float("nan")
    return len(set(listed)) / len(listed)


def topic_quality(topics, X, n_npmi=10, n_diversity=25, vocabulary=None):
    """NPMI coherence (per topic and mean, top ``n_npmi`` words, co-occurrences in X) and
    topic diversity (top ``n_diversity`` words) as one record, the ``topic_quality`` entry
    of a ``run.json``: ``{"npmi": mean, "npmi_per_topic": [...], "npmi_top_n": n_npmi,
    "diversity": ..., "diversity_top_n": n_diversity}`` (NaN for an empty topic)."""
    per_topic = npmi_coherence(topics, X, n_npmi, vocabulary=vocabulary, average=False)
    valid = per_topic[~np.isnan(per_topic)]
    return {"npmi": float(valid.mean()) if valid.size else float("nan"),
            "npmi_per_topic": [float(v) for v in per_topic], "npmi_top_n": int(n_npmi),
            "diversity": topic_diversity(topics, n_diversity),
            "diversity_top_n": int(n_diversity)}
