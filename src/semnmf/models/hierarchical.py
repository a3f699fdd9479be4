"""Hierarchical document clustering by rank-2 NMF (HierNMF2; Kuang & Park, KDD 2013).

A binary topic tree grown top-down (Algorithm 3): every new node is split tentatively by
rank-2 NMF (:func:`~semnmf.models._solvers.rank2.rank2_nmf`), the split is scored by the
modified NDCG of eq. (12)-(17) (:func:`node_score`), and the leaf with the highest score is
split next, until ``n_leaves`` leaves exist or no leaf scores above ``score_threshold``
(σ). Small, low-scoring children are set apart as outliers (β, T). Each split costs
O(nnz) of the node's documents per iteration. The flat labels are by default each
document's best leaf *topic* (``assign_labels``, see :class:`HierarchicalNMF`).
"""

import json
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._utils.progress import progress
from .._utils.validation import (check_documents, check_fit_target, check_positive_int,
                                 empty_rows, validate_estimator_input)
from ..metrics import top_terms as _top_terms
from ._solvers.rank2 import rank2_nmf
from ._solvers.rank2_kernels import mndcg_pair as _mndcg_pair

SPLITTERS = ("rank2", "semantic", "kmeans")

# Nodes with fewer documents are never split (the authors' code: "length(subset) <= 3").
MIN_SPLIT_SIZE = 4


# --------------------------------------------------------------------------- scoring


def _ranks(weights):
    """1-based position of every term in the list sorted by decreasing weight.

    Ties are broken by term index (stable sort), so the ranking is deterministic.
    """
    order = np.argsort(-np.asarray(weights, dtype=np.float64), kind="stable")
    ranks = np.empty(order.size, dtype=np.int64)
    ranks[order] = np.arange(1, order.size + 1)
    return order, ranks


def mndcg(w_parent, w_left, w_right):
    """Modified NDCG of the two potential children's term rankings (eq. 12-16, as released).

    Parameters
    ----------
    w_parent, w_left, w_right : arrays of shape (m,)
        Term weights over the whole vocabulary of the node N (the column of W that
        created it) and of its potential children L and R (the columns of W of its
        tentative split). Each is turned into a ranked list of the m terms (decreasing
        weight, ties by term index).

    Returns
    -------
    (mNDCG(f_L), mNDCG(f_R)) : tuple of float, each in [0, 1]
        (0, 0) when fewer than two terms have a positive parent weight.

    Notes
    -----
    With f₁..f_m the parent's ranking, m_N the number of terms with w_N > 0 and i₁, i₂
    the positions of f_i in f_L and f_R, the paper defines::

        p(f_i) = log(m − max{i₁, i₂} + 1)                       (12)
        g(f_i) = log(m − i + 1) / p(f_i)                         (13)
        mDCG(f_S) = g(f_s1) + Σ_{i≥2} g(f_si) / log₂(i)          (14)
        mIDCG = ĝ₁ + Σ_{i≥2} ĝ_i / log₂(i),  ĝ = g sorted descending   (15)
        mNDCG(f_S) = mDCG(f_S) / mIDCG                           (16)

    The printed equations leave terms with a zero parent weight undefined in effect: they
    tie at the bottom of f_N in an arbitrary order, yet eq. (13) gives them large gains
    when they are also at the bottom of a child (p → 0). We follow the authors'
    released code (``compute_priority`` / ``NDCG_part`` of hiernmf2):

    * the gain of the children's lists uses the parent's support: g(f_i) =
      log(m_N − i + 1) / p(f_i) for i ≤ m_N and 0 beyond;
    * the ideal uses h(f_i) = log(m − i + 1) / p(f_i) for i ≤ m_N and 1 / p(f_i)
      beyond, sorted descending;
    * p = log 2 where eq. (12) gives log 1 = 0 (a term ranked last in a child).

    When every parent weight is positive (m_N = m) this is exactly eq. (12)-(16)
    (tested). Since g ≤ h term by term and the position weights decrease, mDCG(f_S) ≤
    mIDCG (rearrangement inequality), so mNDCG stays in [0, 1].
    """
    w_parent = np.asarray(w_parent, dtype=np.float64).ravel()
    w_left = np.asarray(w_left, dtype=np.float64).ravel()
    w_right = np.asarray(w_right, dtype=np.float64).ravel()
    if min(w_parent.min(initial=0), w_left.min(initial=0), w_right.min(initial=0)) >= 0:
        # compiled (rank2_kernels.mndcg_pair): same formulas, one pass, sorting only the
        # positive weights; much faster than the numpy version below
        # (benchmarks/results/design_notes.md)
        left, right = _mndcg_pair(w_parent, w_left, w_right, *_mndcg_tables(w_parent.size))
        return float(left), float(right)
    return _mndcg_numpy(w_parent, w_left, w_right)


_TABLES = {}


def _mndcg_tables(m):
    """(log(k) for k = 0..m, 1 / log2(i + 1) for i = 0..m-1) for :func:`mndcg`, kept for
    the last few vocabulary sizes."""
    tables = _TABLES.get(m)
    if tables is None:
        k = np.arange(m + 1, dtype=np.float64)
        with np.errstate(divide="ignore"):
            logs = np.log(k)
            discount = 1.0 / np.log2(k[:m] + 1.0)
        discount[0] = 1.0
        if len(_TABLES) >= 4:
            _TABLES.clear()
        tables = _TABLES[m] = (logs, discount)
    return tables


def _mndcg_numpy(w_parent, w_left, w_right):
    """:func:`mndcg` in numpy (any sign of weights; the reference of the compiled one)."""
    w_parent = np.asarray(w_parent, dtype=np.float64).ravel()
    m = w_parent.size
    m_n = int(np.count_nonzero(w_parent > 0))
    if m_n < 2:
        return 0.0, 0.0
    order_n, _ = _ranks(w_parent)
    order_l, rank_l = _ranks(w_left)
    order_r, rank_r = _ranks(w_right)
    worst = np.maximum(rank_l[order_n], rank_r[order_n])  # max{i1, i2} of f_1..f_m
    p = np.log(m - worst + 1.0)
    p[p == 0] = np.log(2.0)
    positions = np.arange(1, m + 1, dtype=np.float64)
    gain = np.zeros(m)
    gain[:m_n] = np.log(m_n - positions[:m_n] + 1.0)
    ideal_gain = np.ones(m)
    ideal_gain[:m_n] = np.log(m - positions[:m_n] + 1.0)
    gain /= p
    ideal_gain /= p
    gain_of_term = np.empty(m)
    gain_of_term[order_n] = gain
    discount = np.ones(m)
    discount[1:] = 1.0 / np.log2(positions[1:])
    ideal = np.sort(ideal_gain)[::-1] @ discount
    return (float(gain_of_term[order_l] @ discount / ideal),
            float(gain_of_term[order_r] @ discount / ideal))


def node_score(w_parent, w_left, w_right):
    """score(N) = mNDCG(f_L) × mNDCG(f_R), eq. (17), in [0, 1] (see :func:`mndcg`)."""
    left, right = mndcg(w_parent, w_left, w_right)
    return left * right


# --------------------------------------------------------------------------- tree


def _warn_stopped(leaves, n_leaves, score_threshold):
    """Say why the tree has fewer leaves than asked: no leaf left that may be split."""
    small = sum(node.documents.size < MIN_SPLIT_SIZE for node in leaves)
    unsplit = sum(node.score == -1.0 for node in leaves) - small
    low = len(leaves) - small - unsplit
    reasons = [f"{count} {why}" for count, why in (
        (small, f"with fewer than {MIN_SPLIT_SIZE} documents"),
        (unsplit, "that no split divides (every document on one side, or outliers in "
                  "every trial)"),
        (low, f"whose split scores at most score_threshold={score_threshold:g}"))
        if count]
    warnings.warn(f"the tree stopped at {len(leaves)} leaves of the {n_leaves} asked: no leaf "
                  f"can be split further ({'; '.join(reasons)}).", UserWarning, stacklevel=4)


class Node:
    """A node of the topic tree.

    Attributes
    ----------
    id : int
        Position in ``HierarchicalNMF.nodes_`` (creation order; the root is 0).
    parent : int or None
    children : tuple of int
        Empty for a leaf, two ids after a split.
    depth : int
    documents : ndarray of int
        Row indices of the node's documents (outliers removed).
    outliers : ndarray of int
        Documents set apart as outliers when this node was created (Algorithm 3 lines
        8-12).
    term_weights : ndarray of shape (n_terms,)
        The node's term distribution w_N (unit norm; the root's: the mean document).
    score : float
        eq. (17) for the node's potential split; inf for the root (Algorithm 3, line 3);
        -1 for a permanent leaf (no split found in T trials, or too small to split).
    scale : float
        1, or for ``splitter="semantic"`` the norm the column of W had before it was
        normalized into ``term_weights`` (the split's memberships were in that scale).
    """

    __slots__ = ("id", "parent", "children", "depth", "documents", "outliers",
                 "term_weights", "score", "scale")

    def __init__(self, id, parent, depth, documents, term_weights):
        self.id, self.parent, self.depth = id, parent, depth
        self.children = ()
        self.documents = documents
        self.outliers = np.empty(0, dtype=np.int64)
        self.term_weights = term_weights
        self.score = -1.0
        self.scale = 1.0  # norm of the column before normalization (see predict)

    @property
    def is_leaf(self):
        return not self.children

    def __repr__(self):
        return (f"Node(id={self.id}, parent={self.parent}, children={self.children}, "
                f"n_documents={self.documents.size}, score={self.score:.4g})")


class _Split:
    """A tentative split of a node: the two children's documents and term columns,
    the larger child first."""

    __slots__ = ("documents", "W", "scale")

    def __init__(self, documents, W, scale=(1.0, 1.0)):
        self.documents, self.W, self.scale = documents, W, scale


def _present_terms(Xs):
    """Indices of the terms (columns) that occur in the documents (rows) of Xs."""
    if sp.issparse(Xs):
        return np.flatnonzero(np.bincount(Xs.indices, minlength=Xs.shape[1]))
    return np.flatnonzero(np.any(Xs != 0, axis=0))


class _Tree:
    """What :class:`_TreeBuilder` grows: every node (creation order), the final leaves
    (node ids, sorted), the split order, and the work it took."""

    __slots__ = ("nodes", "leaves", "splits", "n_factorizations", "n_iter")

    def __init__(self, nodes, leaves, splits, n_factorizations, n_iter):
        self.nodes, self.leaves, self.splits = nodes, leaves, splits
        self.n_factorizations, self.n_iter = n_factorizations, n_iter


class _TreeBuilder:
    """Grows one topic tree top-down (Algorithm 3) on the documents of X.

    One builder lives for one fit: X, M (``splitter="semantic"``), the random state, the
    nodes made so far and the tentative splits waiting for their node (``pending``, by
    node id); :meth:`grow` returns the finished :class:`_Tree`. The settings are the
    estimator's parameters of the same names (see :class:`HierarchicalNMF`).
    """

    def __init__(self, X, M, rng, *, splitter, lam, max_iter, tol, stop, partition_tol,
                 beta, n_trials, score_threshold):
        self.X, self.M, self.rng = X, M, rng
        self.splitter, self.lam = splitter, lam
        self.max_iter, self.tol, self.stop, self.partition_tol = (max_iter, tol, stop,
                                                                  partition_tol)
        self.beta, self.n_trials, self.score_threshold = beta, n_trials, score_threshold
        self.nodes = []
        self.pending = {}
        self.n_factorizations = 0
        self.n_iter = 0

    def grow(self, documents, n_leaves, verbose=False):
        """The tree of ``documents`` (row indices of X) with at most ``n_leaves`` leaves:
        the leaf with the highest score is split until ``n_leaves`` leaves exist or none
        scores above ``score_threshold`` (then with a warning saying why)."""
        centroid = np.asarray(self.X[documents].mean(axis=0)).ravel()
        root = Node(0, None, 0, documents, centroid / max(np.linalg.norm(centroid), 1e-300))
        self.nodes = [root]
        leaves, splits = [root], []
        with progress("HierarchicalNMF splits", total=n_leaves - 1, enabled=verbose) as bar:
            # the root is split as it is (no outlier trials), score inf (Algorithm 3, line 3)
            split = self._try_split(documents)
            if split is not None:
                root.score = np.inf
                self.pending[root.id] = split
            while len(leaves) < n_leaves:
                candidates = [node for node in leaves if node.score > self.score_threshold]
                if not candidates:
                    _warn_stopped(leaves, n_leaves, self.score_threshold)
                    break
                parent = max(candidates, key=lambda node: node.score)
                children = self._split(parent, leaves)
                leaves.remove(parent)
                leaves.extend(children)
                splits.append(parent.id)
                bar.advance(1, status=f"{len(leaves)} leaves")
        self.pending.clear()
        return _Tree(self.nodes, sorted(node.id for node in leaves), splits,
                     self.n_factorizations, self.n_iter)

    def _split(self, parent, leaves):
        """Split ``parent`` by its pending split: its two children, each prepared
        (:meth:`_prepare`) against the smallest positive score of the current ``leaves``."""
        # "smaller than every positive score of current leaf nodes" (line 10); the root's
        # children have no such score to compare with: +inf
        positive = [node.score for node in leaves if 0 < node.score < np.inf]
        floor = min(positive) if positive else np.inf
        split = self.pending.pop(parent.id)
        children = []
        for j in range(2):
            child = Node(len(self.nodes), parent.id, parent.depth + 1,
                         split.documents[j], split.W[:, j].copy())
            child.scale = split.scale[j]
            self.nodes.append(child)
            children.append(child)
            self._prepare(child, floor)
        parent.children = (children[0].id, children[1].id)
        return children

    def _factorize(self, rows):
        """Tentative split of the documents ``rows``: (labels 0/1, W (d, 2), the norms of W's
        columns before normalization or None)."""
        X = self.X
        Xs = X if rows.size == X.shape[0] else X[rows]
        self.n_factorizations += 1
        if self.splitter == "kmeans":
            from .skmeans import SphericalKMeans
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                km = SphericalKMeans(2, n_init=1, random_state=self.rng).fit(Xs)
            self.n_iter += km.n_iter_
            return km.labels_, km.cluster_centers_.T, None
        # rank-2 NMF on the node's own terms only (as the authors' code does): the other
        # rows of W are 0 anyway, and per-iteration cost becomes O(nnz + d_node)
        terms = _present_terms(Xs)
        result = rank2_nmf(Xs[:, terms] if terms.size < X.shape[1] else Xs,
                           max_iter=self.max_iter, tol=self.tol, random_state=self.rng,
                           stop=self.stop, partition_tol=self.partition_tol)
        self.n_iter += result.n_iter
        W = np.zeros((X.shape[1], 2), dtype=result.W.dtype)
        W[terms] = result.W
        if self.splitter == "rank2":
            return result.labels(), W, None
        # "semantic": rank-2 Semantic-NMF started from the rank-2 NMF split (a random start
        # stops within a few iterations, the word-context term dominating the objective)
        from .semantic import SemanticNMF
        W = np.maximum(W, np.finfo(W.dtype).eps)  # zeros never move under MU
        Z = np.maximum(result.Z, np.finfo(W.dtype).eps)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = SemanticNMF(2, lam=self.lam, init=(Z, W),
                                max_iter=self.max_iter, tol=self.tol).fit(Xs, M=self.M)
        self.n_iter += model.n_iter_
        labels = model.labels_
        labels[labels < 0] = 0
        W = model.components_.T
        norms = np.maximum(np.linalg.norm(W, axis=0), 1e-300)
        return labels, W / norms, norms

    def _try_split(self, rows):
        """A tentative split of ``rows`` as a _Split (larger child first), or None when
        the documents cannot be split in two non-empty parts (fewer than
        ``MIN_SPLIT_SIZE`` documents, or every document on one side)."""
        if rows.size < MIN_SPLIT_SIZE:
            return None
        labels, W, scale = self._factorize(rows)
        sizes = np.bincount(labels, minlength=2)
        if sizes.min() == 0 or not np.all(np.isfinite(W)):
            return None
        big = int(sizes[1] > sizes[0])
        order = [big, 1 - big]
        scale = (1.0, 1.0) if scale is None else (float(scale[order[0]]), float(scale[order[1]]))
        return _Split([rows[labels == j] for j in order], np.ascontiguousarray(W[:, order]),
                      scale)

    def _prepare(self, node, floor):
        """Tentative split, outlier detection and score of a new node (Algorithm 3, lines
        6-21), run when the node appears so that its score is known; the split found is
        kept for when the node is chosen.

        ``floor`` is the smallest positive score of the current leaves. When the smaller
        child N2 of a tentative split has |N1| ≥ β|N2| and N2's own split would score
        below ``floor``, N2 is set apart and the node is split again without it. After T
        such trials the outliers are recycled and the node becomes a permanent leaf; a
        node left with no possible split keeps its outliers apart (as in the authors'
        released code).
        """
        rows = node.documents
        removed = []
        for _ in range(self.n_trials):
            split = self._try_split(rows)
            if split is None:
                break
            n1, n2 = (part.size for part in split.documents)
            if n1 >= self.beta * n2:
                small = split.documents[1]
                small_split = self._try_split(small)
                small_score = -1.0 if small_split is None else node_score(
                    split.W[:, 1], small_split.W[:, 0], small_split.W[:, 1])
                if small_score < floor:
                    removed.append(small)
                    rows = split.documents[0]
                    continue
            node.score = node_score(node.term_weights, split.W[:, 0], split.W[:, 1])
            self.pending[node.id] = split
            break
        else:  # T trials used up by outliers: recycle them, permanent leaf (lines 18-20)
            node.score = -1.0
            return
        node.documents = rows
        if removed:
            node.outliers = np.sort(np.concatenate(removed))


class HierarchicalNMF(ClusterMixin, BaseEstimator):
    """Hierarchical clustering by rank-2 NMF with node scores and outliers (HierNMF2).

    Algorithm 3 of Kuang & Park (KDD 2013), from a root holding every non-empty document
    (module docstring). When a tentative split is very unbalanced (|N1| ≥ β|N2|) and the
    small child N2 would score below every positive score of the current leaves, N2's
    documents are set apart as outliers and the node is split again without them, up to T
    trials; a node without a balanced split gets its outliers back and becomes a
    permanent leaf (score -1).

    Parameters
    ----------
    n_components : int, default=10
        Stop when the tree has this many leaves (the paper's k; ``n_leaves`` before 0.2).
    score_threshold : float, default=0.0
        σ: stop also when no leaf scores above it (σ = 0 splits until every leaf is
        permanent or ``n_components`` is reached).
    beta : float, default=9.0
        β > 1 of the outlier rule (|N1| ≥ β|N2|); the paper's value.
    n_trials : int, default=3
        T, the number of tentative splits allowed per node; the paper's value.
    splitter : {"rank2", "semantic", "kmeans"}, default="rank2"
        "rank2": rank-2 NMF by alternating NNLS (paper §3). "semantic": rank-2
        :class:`~semnmf.SemanticNMF` (the word-context term; pass ``M`` to ``fit``, and
        ``lam``), an extension beyond the paper. "kmeans": spherical 2-means with the
        centroids as term distributions (the paper's kmeans-hier baseline).
    lam : float, default=10.0
        Relative weight of the word-context term for ``splitter="semantic"``.
    max_iter : int, default=500
        Iterations per rank-2 factorization.
    tol : float, default=1e-4
        Each rank-2 factorization stops when the norm of its projected gradient falls
        under ``tol`` times its first value (the paper's ε), with ``stop="pg"``.
    stop : {"pg", "partition"}, default="pg"
        Stopping rule of each rank-2 factorization. "pg": the paper's projected-gradient
        rule with ``tol``. "partition": once the split of the node's documents has settled
        (:func:`~semnmf.models._solvers.rank2.rank2_nmf`).
    partition_tol : float, default=3e-3
        Fraction of a node's documents allowed to change side per iteration under
        ``stop="partition"`` (``benchmarks/results/tree.md``).
    assign_labels : {"topics", "tree"}, default="topics"
        How ``labels_`` (and :meth:`predict`) give each document a leaf. "tree": the leaf
        the splits routed it to (Algorithm 3; outliers -1), the partition the paper
        evaluates. "topics": the leaf whose term vector weighs most in the document's
        non-negative least-squares fit against all the leaves' term vectors,
        ``g = argmin_{g ≥ 0} ‖x − Σ_l g_l w_l‖`` (``splitter="kmeans"``: the most
        cosine-similar leaf centroid), outliers included: an extension that repairs
        documents sent the wrong way by an early split
        (``benchmarks/results/tree_labels.md``).
    random_state : int, RandomState or None
    verbose : int, default=0
        Show a progress bar of the splits.

    Attributes
    ----------
    labels_ : ndarray of shape (n_documents,)
        Leaf of each document (0..n_leaves_-1, in the order of ``leaves_``), by
        ``assign_labels``; -1 for documents without any term, and with
        ``assign_labels="tree"`` for the outliers.
    nodes_ : list of Node
        Every node of the tree (leaves and internal nodes).
    leaves_ : list of int
        Node ids of the final leaves, in label order.
    splits_ : list of int
        Node ids in the order they were split; snapshot t of the tree (t leaves) is the
        root after the first t-1 splits (see :meth:`partition`).
    outliers_ : ndarray of int
        Documents set apart as outliers.
    components_ : ndarray of shape (n_leaves_, n_terms)
        Term distributions of the final leaves.
    n_leaves_, n_components_ : int
        Number of leaves of the final tree (at most ``n_components``).
    n_factorizations_ : int
        Rank-2 factorizations run (tentative splits included).
    n_iter_ : int
        Iterations of all those factorizations together.
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "score_threshold": [Interval(numbers.Real, None, None, closed="neither")],
        "beta": [Interval(numbers.Real, 1, None, closed="neither")],
        "n_trials": [Interval(numbers.Integral, 1, None, closed="left")],
        "splitter": [StrOptions(set(SPLITTERS))],
        "lam": [Interval(numbers.Real, 0, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "stop": [StrOptions({"pg", "partition"})],
        "partition_tol": [Interval(numbers.Real, 0, 1, closed="both")],
        "assign_labels": [StrOptions({"topics", "tree"})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, n_components=10, *, score_threshold=0.0, beta=9.0, n_trials=3,
                 splitter="rank2", lam=10.0, max_iter=500, tol=1e-4, stop="pg",
                 partition_tol=3e-3, assign_labels="topics", random_state=None, verbose=0):
        self.n_components = n_components
        self.score_threshold = score_threshold
        self.beta = beta
        self.n_trials = n_trials
        self.splitter = splitter
        self.lam = lam
        self.max_iter = max_iter
        self.tol = tol
        self.stop = stop
        self.partition_tol = partition_tol
        self.assign_labels = assign_labels
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ parameters
    def _check_params(self, n_documents):
        """The checks that need the data; the others are in ``_parameter_constraints``.
        Returns the number of leaves to grow."""
        n_leaves = self.n_components
        if n_leaves > n_documents:
            raise ValueError(
                f"n_components={n_leaves} is larger than the number of non-empty documents "
                f"({n_documents}); ask for at most {n_documents} leaves.")
        for name in ("beta", "score_threshold", "tol", "lam"):
            if not np.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number, got {getattr(self, name)!r}.")
        return n_leaves

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y=None, *, M=None):
        """Grow the tree on the document-term matrix X (rows: documents).

        Parameters
        ----------
        X : sparse matrix or array of shape (n_documents, n_terms), non-negative
            TF-IDF (the default of :meth:`Corpus.tfidf`) or the normalized-cut weighting
            the paper uses (``Corpus.vectorize(weighting="ncut")``).
        y : ignored
        M : sparse matrix of shape (n_terms, n_contexts), optional
            Word-context matrix for ``splitter="semantic"`` (default: the document-level
            PPMI that :class:`~semnmf.SemanticNMF` builds).
        """
        check_fit_target(self, y, accepts_M=True)
        self._validate_params()
        X = validate_estimator_input(self, X, reset=True)
        empty = check_documents(X)
        documents = np.flatnonzero(~empty).astype(np.int64)
        n_leaves = self._check_params(documents.size)
        if self.splitter == "semantic":
            from .context_term import prepare_context
            # validated (or the default document-level PPMI built) once, not per split
            M, _ = prepare_context(X, M, self.lam)
        elif M is not None:
            raise ValueError("M is only used with splitter='semantic'.")
        builder = _TreeBuilder(
            X, M, check_random_state(self.random_state), splitter=self.splitter,
            lam=self.lam, max_iter=self.max_iter, tol=self.tol, stop=self.stop,
            partition_tol=self.partition_tol, beta=self.beta, n_trials=self.n_trials,
            score_threshold=self.score_threshold)
        tree = builder.grow(documents, n_leaves, verbose=self.verbose > 0)

        self.nodes_, self.splits_ = tree.nodes, tree.splits
        self.n_factorizations_, self.n_iter_ = tree.n_factorizations, tree.n_iter
        self.leaves_ = tree.leaves
        self.n_leaves_ = len(self.leaves_)
        self.n_components_ = self.n_leaves_
        outliers = [node.outliers for node in self.nodes_ if node.outliers.size]
        self.outliers_ = np.sort(np.concatenate(outliers)) if outliers else np.empty(0, dtype=np.int64)
        self.components_ = np.vstack([self.nodes_[i].term_weights for i in self.leaves_])
        self.n_documents_ = X.shape[0]
        self.labels_ = self._labels_for(self.leaves_, X.shape[0])
        if self.assign_labels == "topics":
            # a document none of whose terms any leaf weighs keeps the leaf it was routed to
            labels = self._best_topics(X)[0]
            self.labels_ = np.where(labels >= 0, labels, self.labels_)
        return self

    def fit_predict(self, X, y=None, *, M=None):
        """Fit and return ``labels_``."""
        return self.fit(X, M=M).labels_

    def predict(self, X):
        """Leaf of each (new) document, numbered as in ``labels_``, by ``assign_labels``:
        its best leaf topic ("topics"; -1 for a document none of whose terms any leaf
        weighs), or the leaf reached by descending the tree by the rule that split the
        training documents ("tree"; -1 for a document without any term)."""
        return self.predict_membership(X)[0]

    def predict_membership(self, X):
        """``(labels, membership)``: :meth:`predict` and the strength of each document's
        leaf: its share g_l / Σ g of the NNLS coefficients over all leaves ("topics"), or
        the product along its path of the chosen child's share of the rank-2 coefficients
        ("tree"); 0 for a document without any term."""
        if self.assign_labels == "tree":
            return self._descend(X)
        check_is_fitted(self, "nodes_")
        X = validate_estimator_input(self, X, reset=False)
        return self._best_topics(X)

    # rows per block of the leaf-topic assignment (bounds its dense n x n_leaves arrays)
    _ASSIGN_BLOCK = 65_536

    def _best_topics(self, X):
        """``(labels, strength)`` by the leaves' topics (``assign_labels="topics"``).

        Row by row: ``g = argmin_{g ≥ 0} ‖x − g W‖`` with W the unit-norm leaf term
        vectors (block principal pivoting on the normal equations, ``WWᵀ g = W x``); the
        label is argmax g, the strength max g / Σ g. For ``splitter="kmeans"`` g is the
        clipped cosine ``max(W x, 0)``. A document with g = 0 (no term, or none that any
        leaf weighs) gets -1 and strength 0."""
        from ._solvers.symnmf import nnls_rows

        W = np.asarray(self.components_, dtype=np.float64)
        W = W / np.maximum(np.linalg.norm(W, axis=1, keepdims=True), 1e-300)
        gram = W @ W.T
        n = X.shape[0]
        labels = np.full(n, -1, dtype=np.int64)
        strength = np.zeros(n)
        for start in range(0, n, self._ASSIGN_BLOCK):
            rows = slice(start, min(start + self._ASSIGN_BLOCK, n))
            Y = np.asarray(X[rows] @ W.T, dtype=np.float64)
            G = np.maximum(Y, 0) if self.splitter == "kmeans" else nnls_rows(gram, Y)
            total = G.sum(axis=1)
            found = total > 0
            index = np.flatnonzero(found) + start
            labels[index] = np.argmax(G[found], axis=1)
            strength[index] = G[found].max(axis=1) / total[found]
        return labels, strength

    def _descend(self, X):
        from ._solvers.rank2 import nnls_rank2

        check_is_fitted(self, "nodes_")
        X = validate_estimator_input(self, X, reset=False)
        n = X.shape[0]
        node_of = np.zeros(n, dtype=np.int64)
        strength = np.ones(n)
        leaf_label = self._leaf_labels()
        # a node's children are created after it: ids in order visit parents first
        for node in self.nodes_:
            if not node.children or node.id in leaf_label:
                continue
            rows = np.flatnonzero(node_of == node.id)
            if rows.size == 0:
                continue
            W = np.column_stack([self.nodes_[c].term_weights for c in node.children])
            Y = np.asarray(X[rows] @ W, dtype=np.float64)
            if self.splitter == "kmeans":
                G = np.maximum(Y, 0)
            else:
                G = nnls_rank2(W.T @ W, Y)
            # memberships in the scale the split compared them (semantic splitter)
            G = G / np.array([self.nodes_[c].scale for c in node.children])
            second = G[:, 1] > G[:, 0]
            total = G.sum(axis=1)
            share = np.where(total > 0, G.max(axis=1) / np.where(total > 0, total, 1), 0.5)
            strength[rows] *= share
            node_of[rows] = np.where(second, node.children[1], node.children[0])
        labels = np.array([leaf_label.get(int(i), -1) for i in node_of], dtype=np.int64)
        empty = empty_rows(X)
        labels[empty] = -1
        strength[empty] = 0.0
        return labels, strength

    # ------------------------------------------------------------------ results
    def _leaf_labels(self):
        """``{node id: label}`` of the final leaves."""
        return {node_id: label for label, node_id in enumerate(self.leaves_)}

    def _labels_for(self, leaf_ids, n_documents):
        labels = np.full(n_documents, -1, dtype=np.int64)
        for label, node_id in enumerate(leaf_ids):
            labels[self.nodes_[node_id].documents] = label
        return labels

    def leaves_at(self, n_leaves):
        """Node ids of the leaves of snapshot ``n_leaves`` (the tree after n_leaves - 1 splits)."""
        check_is_fitted(self, "nodes_")
        check_positive_int(n_leaves, "n_leaves")
        if n_leaves > self.n_leaves_:
            raise ValueError(f"the tree has {self.n_leaves_} leaves; ask for at most that many.")
        leaves = {0}
        for node_id in self.splits_[:n_leaves - 1]:
            leaves.remove(node_id)
            leaves.update(self.nodes_[node_id].children)
        return sorted(leaves)

    def partition(self, n_leaves=None, outliers="noise"):
        """Flat partition of snapshot ``n_leaves`` (default: the final tree).

        Parameters
        ----------
        n_leaves : int or None
        outliers : {"noise", "cluster"}
            "noise": outliers (and empty documents) get -1, like ``labels_`` with
            ``assign_labels="tree"``.
            "cluster": they form one extra cluster numbered ``n_leaves``, as the paper
            evaluates (§6.3: "we treat all the outliers as one separate cluster").
        """
        check_is_fitted(self, "nodes_")
        if outliers not in ("noise", "cluster"):
            raise ValueError(f"outliers must be 'noise' or 'cluster', got {outliers!r}.")
        leaf_ids = self.leaves_at(self.n_leaves_ if n_leaves is None else n_leaves)
        labels = self._labels_for(leaf_ids, self.n_documents_)
        if outliers == "cluster":
            labels[labels < 0] = len(leaf_ids)
        return labels

    def top_terms(self, n_terms=10, vocabulary=None, nodes=None):
        """Heaviest terms of each node (default: each final leaf), as (term, weight) lists."""
        check_is_fitted(self, "nodes_")
        ids = self.leaves_ if nodes is None else list(nodes)
        weights = np.vstack([self.nodes_[i].term_weights for i in ids])
        return _top_terms(weights, vocabulary, n_terms)

    def to_dict(self, vocabulary=None, n_terms=10, document_ids=None):
        """The tree as plain JSON-ready data: parameters, leaves, split order and every
        node with its documents, top terms, score, parent, children and outliers."""
        check_is_fitted(self, "nodes_")
        all_terms = self.top_terms(n_terms, vocabulary, nodes=range(len(self.nodes_)))
        ids = (lambda idx: idx.tolist()) if document_ids is None else (
            lambda idx: [document_ids[i] for i in idx])
        label_of = self._leaf_labels()
        nodes = []
        for node, terms in zip(self.nodes_, all_terms):
            nodes.append({
                "id": node.id, "parent": node.parent, "children": list(node.children),
                "depth": node.depth, "leaf": node.id in label_of,
                "label": label_of.get(node.id),
                "score": None if not np.isfinite(node.score) else round(float(node.score), 6),
                "n_documents": int(node.documents.size),
                "top_terms": [{"term": str(t), "weight": round(float(w), 6)} for t, w in terms],
                "documents": ids(node.documents),
                "outliers": ids(node.outliers),
            })
        return {"params": self.get_params(), "n_documents": self.n_documents_,
                "n_leaves": self.n_leaves_, "leaves": list(self.leaves_),
                "splits": list(self.splits_), "n_outliers": int(self.outliers_.size),
                "nodes": nodes}

    def to_json(self, path, vocabulary=None, n_terms=10, document_ids=None):
        """Write :meth:`to_dict` to ``path`` as JSON."""
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(vocabulary, n_terms, document_ids), f, indent=1)

    def export_text(self, vocabulary=None, n_terms=6):
        """The tree as indented text: one line per node with its size and top terms.

        A node's size is the number of documents it received as the tree grew. With
        ``assign_labels="topics"`` a leaf whose label went to a different number of
        documents says so too ("218 docs routed, 231 labelled")."""
        check_is_fitted(self, "nodes_")
        terms = self.top_terms(n_terms, vocabulary, nodes=range(len(self.nodes_)))
        label_of = self._leaf_labels()
        labelled = None
        if self.assign_labels == "topics" and getattr(self, "labels_", None) is not None:
            labels = np.asarray(self.labels_)
            labelled = np.bincount(labels[labels >= 0], minlength=len(self.leaves_))
        lines = []

        def walk(node_id, prefix, last, root):
            node = self.nodes_[node_id]
            branch = "" if root else ("└── " if last else "├── ")
            tag = f"leaf {label_of[node_id]}" if node_id in label_of else f"node {node_id}"
            extra = f", {node.outliers.size} outliers" if node.outliers.size else ""
            words = " ".join(str(t) for t, _ in terms[node_id])
            size = f"{node.documents.size} docs"
            if (labelled is not None and node_id in label_of
                    and labelled[label_of[node_id]] != node.documents.size):
                size += f" routed, {labelled[label_of[node_id]]} labelled"
            lines.append(f"{prefix}{branch}[{tag}] {size}{extra}: {words}")
            child_prefix = prefix + ("" if root else ("    " if last else "│   "))
            for i, child in enumerate(node.children):
                walk(child, child_prefix, i == len(node.children) - 1, False)

        walk(0, "", True, True)
        return "\n".join(lines)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.input_tags.sparse = True
        return tags
