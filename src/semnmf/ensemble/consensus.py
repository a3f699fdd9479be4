"""Cluster ensembles: the consensus functions of Strehl & Ghosh (2002).

A *cluster ensemble* is a set of ``r`` partitions of the same ``n`` documents (for
instance the best runs of an NMF, SN §5.6), given as an ``n x r`` label matrix with one
column per partition. A *consensus function* turns it into one partition without looking
at the documents' features. All three work on the *hypergraph* representation (SN §5.6):
``H = [H^(1) ... H^(r)]``, the binary indicators of every partition's clusters
(:func:`hypergraph_incidence`):

* :func:`cspa` partitions the co-association graph ``S = H Hᵀ / r``;
* :func:`hgpa` cuts the fewest hyperedges;
* :func:`mcla` groups the hyperedges themselves, then gives each document to the group
  it belongs to most.

:func:`anmi` is the average NMI (SN eq. 12) of a candidate with the ensemble, the
objective of the optimal consensus (SN eq. 11); :func:`consensus` keeps the candidate of
largest ANMI (Strehl & Ghosh's "supra-consensus"). :func:`pairwise_agreement` measures the
ensemble's diversity (SN Figure 7).

Labels are integers of any value, only names within a column; ``-1`` (or ``NaN``) marks
a document that a partition leaves unlabelled. Clusters are renumbered in order of first
appearance, so every function gives the same result when a column's clusters are renamed.
Graph partitioning uses METIS through :mod:`pymetis`.

References
----------
A. Strehl and J. Ghosh, "Cluster ensembles - a knowledge reuse framework for combining
multiple partitions", Journal of Machine Learning Research 3, 583-617, 2002.

M. Febrissy, A. Salah, M. Ailem, M. Nadif, "Improving NMF clustering by leveraging
contextual relationships among words", Neurocomputing 495, 105-117, 2022 ("SN"), §5.6.
"""

import numbers
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from .._utils.progress import log
from .._utils.renamed import renamed
from .._utils.validation import check_n_components
from ..metrics import ari, nmi

from ._labels import MISSING, check_label_matrix, incidence, n_categories, relabel

__all__ = [
    "MISSING", "ConsensusResult", "hypergraph_incidence", "cspa", "hgpa", "mcla",
    "anmi", "consensus", "pairwise_agreement", "medoid",
]


#: Methods that :func:`consensus` knows, in the order ``method="anmi"`` tries them.
_METHODS = ("cspa", "hgpa", "mcla")

# Bytes per stored document pair of the co-association graph in cspa: int32 column
# index + int32 count in scipy, then int64 adjacency + int64 weight for METIS.
_CSPA_BYTES_PER_PAIR = 24


# ----------------------------------------------------------------------------- input
def hypergraph_incidence(labels, *, return_offsets=False):
    """Binary hypergraph incidence matrix ``H`` of a cluster ensemble (SN §5.6).

    Partition ``λ^(q)`` with ``m_q`` clusters becomes the ``n x m_q`` one-hot matrix
    ``H^(q)``; the ensemble is ``H = [H^(1) ... H^(r)]`` (Strehl & Ghosh, 2002), each
    column a hyperedge (also the disjunctive matrix ``M`` of SN eq. 13).

    Parameters
    ----------
    labels : array-like of shape (n_documents, n_partitions)
        One column of integer cluster labels per partition; missing labels (``-1`` or
        ``NaN``) have no 1 in their block.
    return_offsets : bool, default=False
        Also return where each partition's block starts.

    Returns
    -------
    H : scipy.sparse.csr_matrix of shape (n_documents, sum_q m_q), dtype float64
        Block ``q`` is ``H[:, offsets[q]:offsets[q + 1]]``; inside a block the clusters
        are in order of first appearance in the column.
    offsets : ndarray of shape (n_partitions + 1,)
        Returned when ``return_offsets`` is true.
    """
    codes, _ = check_label_matrix(labels)
    H, offsets = incidence(codes, n_categories(codes))
    return (H, offsets) if return_offsets else H


def _check_candidate(labels_candidate, n):
    """A complete 1-D label vector of length n, coded 0..g-1 (first appearance)."""
    if labels_candidate is None:
        raise ValueError("labels_candidate is None: pass one cluster label per document.")
    arr = np.asarray(labels_candidate)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(
            "labels_candidate must be 1-D with one label per document; got an array of "
            f"shape {arr.shape}.")
    if arr.shape[0] != n:
        raise ValueError(
            f"labels_candidate has {arr.shape[0]} labels but labels has {n} documents "
            "(rows); they must match.")
    codes, _ = check_label_matrix(arr.reshape(-1, 1), name="labels_candidate",
                                   require_labelled_rows=False)
    if np.any(codes < 0):
        raise ValueError(
            "labels_candidate has missing labels (-1 or NaN); a candidate consensus must "
            "label every document.")
    return codes[:, 0]


def _seed(rng):
    """An int seed for METIS drawn from a numpy RandomState."""
    return int(rng.randint(np.iinfo(np.int32).max))


def _metis(adjacency, n_parts, *, vertex_weights=None, seed=0):
    """Partition a weighted undirected graph with METIS (pymetis).

    ``adjacency`` is a symmetric CSR matrix with positive integer weights and an empty
    diagonal. Returns the part of every vertex.
    """
    n_vertices = adjacency.shape[0]
    if n_parts == 1:
        return np.zeros(n_vertices, dtype=np.int64)
    try:
        import pymetis
    except ImportError:  # pragma: no cover - pymetis is a dependency
        raise ImportError(
            "the consensus functions partition graphs with METIS: install it with "
            "`pip install pymetis`."
        ) from None
    graph = pymetis.CSRAdjacency(adjacency.indptr.astype(np.int64),
                                 adjacency.indices.astype(np.int64))
    weights = np.ascontiguousarray(adjacency.data, dtype=np.int64)
    if vertex_weights is not None:
        vertex_weights = np.ascontiguousarray(vertex_weights, dtype=np.int64)
    result = pymetis.part_graph(
        int(n_parts), graph, eweights=weights if weights.size else None,
        vweights=vertex_weights, options=pymetis.Options(seed=int(seed)))
    return np.asarray(result.vertex_part, dtype=np.int64)


# ------------------------------------------------------------------------- CSPA
@renamed("n_clusters", "n_components")
def cspa(labels, n_components, *, max_samples=10000, random_state=None):
    """Cluster-based similarity partitioning (CSPA, Strehl & Ghosh 2002).

    The co-association similarity of two documents is the fraction of the ``r``
    partitions that put them in the same cluster,

    .. math:: S = \\frac{1}{r} H H^\\top,

    with ``H`` the hypergraph incidence matrix (:func:`hypergraph_incidence`), cut into
    ``n_components`` balanced parts of least total edge weight by METIS, as Strehl &
    Ghosh do. With missing labels, a partition counts for a pair only when it labels both
    documents and puts them together (the denominator stays ``r``).

    Parameters
    ----------
    labels : array-like of shape (n_documents, n_partitions)
        One column of integer labels per partition; missing labels as ``-1`` or ``NaN``.
    n_components : int
        Number of parts asked from METIS (at most ``n_documents``).
    max_samples : int, default=10000
        Largest number of documents accepted (up to ``24 n²`` bytes are needed: 2.4 GB
        for ``n = 10000``); above it use :func:`mcla` or :func:`hgpa`, linear in ``n``.
    random_state : int, RandomState instance or None, default=None
        Seeds METIS.

    Returns
    -------
    labels : ndarray of int64 of shape (n_documents,)
        Consensus clusters numbered ``0..g-1`` (``g <= n_components``; METIS may leave a
        part empty).

    See Also
    --------
    hgpa, mcla, consensus
    """
    codes, _ = check_label_matrix(labels)
    n, r = codes.shape
    k = check_n_components(n_components, n, "n_components")
    if isinstance(max_samples, bool) or not isinstance(max_samples, numbers.Integral) \
            or max_samples < 1:
        raise ValueError(f"max_samples must be a positive integer, got {max_samples!r}.")
    if n > max_samples:
        gigabytes = _CSPA_BYTES_PER_PAIR * float(n) * n / 1e9
        raise ValueError(
            f"cspa builds the n x n co-association matrix, O(n^2) memory (up to about "
            f"{gigabytes:.1f} GB for n={n} documents), and refuses more than "
            f"max_samples={max_samples} documents. Use mcla or hgpa, whose cost is linear "
            "in n, or raise max_samples if you have the memory (the command line: --consensus "
            "mcla, hgpa, anmi or mmm).")
    rng = check_random_state(random_state)
    H, _ = incidence(codes, n_categories(codes), dtype=np.int32)
    S = (H @ H.T).tocsr()  # integer co-association counts, 0..r
    S.setdiag(0)
    S.eliminate_zeros()
    return relabel(_metis(S, k, seed=_seed(rng)))


# ------------------------------------------------------------------------- HGPA
@renamed("n_clusters", "n_components")
def hgpa(labels, n_components, *, random_state=None):
    """Hypergraph partitioning (HGPA, Strehl & Ghosh 2002), by star expansion.

    HGPA cuts the hypergraph of the documents and the clusters of all partitions (the
    columns of ``H``) into ``n_components`` balanced parts, cutting as few hyperedges as
    possible. Strehl & Ghosh use hMETIS; METIS has no hypergraph mode, so this cuts the
    *star expansion*: the bipartite graph of the documents (vertex weight 1) and the
    hyperedges (weight 0), an edge where ``H[i, e] = 1``; a split hyperedge then costs
    the number of its documents outside the majority part, instead of 1. Like the
    original, HGPA favours balanced clusters.

    Parameters
    ----------
    labels : array-like of shape (n_documents, n_partitions)
        One column of integer labels per partition; missing labels as ``-1`` or ``NaN``.
    n_components : int
        Number of parts asked from METIS (at most ``n_documents``).
    random_state : int, RandomState instance or None, default=None
        Seeds METIS.

    Returns
    -------
    labels : ndarray of int64 of shape (n_documents,)
        Consensus clusters numbered ``0..g-1`` (``g <= n_components``).

    See Also
    --------
    cspa, mcla, consensus
    """
    codes, _ = check_label_matrix(labels)
    n = codes.shape[0]
    k = check_n_components(n_components, n, "n_components")
    rng = check_random_state(random_state)
    H, _ = incidence(codes, n_categories(codes), dtype=np.int64)
    n_edges = H.shape[1]
    graph = sp.bmat([[None, H], [H.T, None]], format="csr",
                    dtype=np.int64)  # (n + E) x (n + E), symmetric, empty diagonal
    vertex_weights = np.concatenate([np.ones(n, np.int64), np.zeros(n_edges, np.int64)])
    part = _metis(graph, k, vertex_weights=vertex_weights, seed=_seed(rng))
    return relabel(part[:n])


# ------------------------------------------------------------------------- MCLA
@renamed("n_clusters", "n_components")
def mcla(labels, n_components, *, random_state=None):
    """Meta-clustering (MCLA, Strehl & Ghosh 2002).

    1. *Meta-graph*: one vertex per hyperedge (column of ``H``), edges weighted by the
       Jaccard similarity of the clusters (from the sparse ``Hᵀ H``), as the integers
       ``max(1, round(1000 J))`` METIS needs.
    2. *Meta-clusters*: METIS cuts it into ``n_components`` balanced parts.
    3. *Collapse*: document ``i``'s association with meta-cluster ``c`` is the fraction of
       ``c``'s clusters that contain ``i``.
    4. *Compete*: each document goes to the meta-cluster of highest association; ties
       are broken at random (``random_state``). A meta-cluster that wins no document
       disappears, so fewer than ``n_components`` clusters can come back.

    Parameters
    ----------
    labels : array-like of shape (n_documents, n_partitions)
        One column of integer labels per partition; missing labels as ``-1`` or ``NaN``.
    n_components : int
        Number of meta-clusters (at most ``n_documents`` and, for METIS, at most the
        number of hyperedges: more are capped to it).
    random_state : int, RandomState instance or None, default=None
        Seeds METIS and the tie-breaking.

    Returns
    -------
    labels : ndarray of int64 of shape (n_documents,)
        Consensus clusters numbered ``0..g-1`` (``g <= n_components``).

    See Also
    --------
    cspa, hgpa, consensus
    """
    codes, _ = check_label_matrix(labels)
    n = codes.shape[0]
    k = check_n_components(n_components, n, "n_components")
    rng = check_random_state(random_state)
    H, _ = incidence(codes, n_categories(codes), dtype=np.float64)
    n_edges = H.shape[1]
    k_meta = min(k, n_edges)

    G = (H.T @ H).tocoo()  # intersections |h_a ∩ h_b|, E x E
    size = np.asarray(H.sum(axis=0)).ravel()
    off = G.row != G.col
    a, b, inter = G.row[off], G.col[off], G.data[off]
    jaccard = inter / (size[a] + size[b] - inter)
    weights = np.maximum(1, np.rint(1000 * jaccard)).astype(np.int64)
    meta_graph = sp.csr_matrix((weights, (a, b)), shape=(n_edges, n_edges))
    meta = _metis(meta_graph, k_meta, seed=_seed(rng))

    members = sp.csr_matrix((np.ones(n_edges), (np.arange(n_edges), meta)),
                            shape=(n_edges, k_meta))
    n_members = np.asarray(members.sum(axis=0)).ravel()
    association = np.asarray((H @ members).todense())  # n x k_meta
    association /= np.maximum(n_members, 1)
    best = association.max(axis=1, keepdims=True)
    ties = association == best
    # random tie-breaking: the largest random key among the tied meta-clusters wins
    keys = rng.random_sample(association.shape) * ties
    return relabel(np.argmax(keys, axis=1))


# ------------------------------------------------------------------------- ANMI
def anmi(labels_candidate, labels, *, weighted=False):
    """Average normalized mutual information of a partition with an ensemble (SN eq. 12).

    .. math:: \\mathrm{ANMI}(\\Lambda, \\tilde\\lambda) = \\frac{1}{r} \\sum_{q=1}^r
              \\mathrm{NMI}(\\tilde\\lambda, \\lambda^{(q)}),
              \\qquad \\mathrm{NMI}(a, b) = \\frac{I(a; b)}{\\sqrt{H(a) H(b)}},

    with Strehl & Ghosh's geometric-mean normalization. The optimal consensus is the
    partition of largest ANMI (SN eq. 11). With missing labels, the NMI with ``λ^(q)`` is
    computed over the documents that ``λ^(q)`` labels only.

    Parameters
    ----------
    labels_candidate : array-like of shape (n_documents,)
        Candidate consensus partition; every document labelled.
    labels : array-like of shape (n_documents, n_partitions)
        The ensemble, one column per partition; missing labels as ``-1`` or ``NaN``.
    weighted : bool, default=False
        Weight partition ``q`` by the number of documents it labels instead of equally
        (Strehl & Ghosh's generalization to partially labelled ensembles). Both agree
        when no label is missing.

    Returns
    -------
    score : float
        In ``[0, 1]``, 1 when the candidate equals every partition (up to renaming).
    """
    codes, _ = check_label_matrix(labels, require_labelled_rows=False)
    candidate = _check_candidate(labels_candidate, codes.shape[0])
    return _anmi_coded(candidate, codes, weighted=weighted)


def _anmi_coded(candidate, codes, weighted=False):
    scores = np.empty(codes.shape[1])
    counts = np.empty(codes.shape[1])
    for q in range(codes.shape[1]):
        keep = codes[:, q] >= 0
        counts[q] = keep.sum()
        scores[q] = nmi(codes[keep, q], candidate[keep], average_method="geometric")
    if weighted:
        return float(np.dot(scores, counts) / counts.sum())
    return float(scores.mean())


# -------------------------------------------------------------------- consensus
@dataclass
class ConsensusResult:
    """What :func:`consensus` returns.

    Attributes
    ----------
    labels : ndarray of int64 of shape (n_documents,)
        The consensus partition, clusters numbered ``0..g-1``.
    method : str
        The consensus function that produced it (``"cspa"``, ``"hgpa"`` or ``"mcla"``).
    anmi : float
        Its ANMI with the ensemble (SN eq. 12).
    scores : dict of str to float
        ANMI of every candidate that was computed.
    candidates : dict of str to ndarray
        The partition of every candidate that was computed.
    skipped : dict of str to str
        Candidates left out and why (cspa above its ``max_samples``).
    """

    labels: np.ndarray
    method: str
    anmi: float
    scores: dict = field(default_factory=dict)
    candidates: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)


@renamed("n_clusters", "n_components")
def consensus(labels, n_components, method="anmi", *, max_samples=10000, random_state=None,
              verbose=0):
    """Consensus partition of a cluster ensemble (Strehl & Ghosh, 2002; SN §5.6).

    Parameters
    ----------
    labels : array-like of shape (n_documents, n_partitions)
        One column of integer labels per partition; missing labels as ``-1`` or ``NaN``.
    n_components : int
        Number of consensus clusters.
    method : {"anmi", "cspa", "hgpa", "mcla"}, default="anmi"
        ``"anmi"`` runs :func:`cspa` (unless above ``max_samples`` documents), :func:`hgpa`
        and :func:`mcla` and keeps the partition of largest ANMI (SN eq. 11-12; ties go to
        the first). Any other value runs that function only.
    max_samples : int, default=10000
        Size limit of :func:`cspa`.
    random_state : int, RandomState instance or None, default=None
        Seeds all the runs (one generator, seeds drawn in a fixed order).
    verbose : int, default=0
        Print each candidate's ANMI on stderr when > 0.

    Returns
    -------
    result : ConsensusResult
        ``result.labels`` (``0..g-1``), ``result.method``, ``result.anmi``, and the
        ANMI and partition of every candidate in ``result.scores`` and
        ``result.candidates``.

    See Also
    --------
    semnmf.ensemble.mixture_consensus : the latent-class (multinomial mixture) consensus.
    """
    valid = ("anmi",) + _METHODS
    if not isinstance(method, str) or method not in valid:
        raise ValueError(f"method must be one of {valid}, got {method!r}.")
    codes, _ = check_label_matrix(labels)
    n = codes.shape[0]
    k = check_n_components(n_components, n, "n_components")
    rng = check_random_state(random_state)
    methods = _METHODS if method == "anmi" else (method,)
    functions = {"cspa": lambda s: cspa(codes, k, max_samples=max_samples, random_state=s),
                 "hgpa": lambda s: hgpa(codes, k, random_state=s),
                 "mcla": lambda s: mcla(codes, k, random_state=s)}
    result = ConsensusResult(labels=None, method="", anmi=-np.inf)
    for name in methods:
        seed = _seed(rng)  # drawn even when skipped, so seeds do not depend on n
        if method == "anmi" and name == "cspa" and n > max_samples:
            result.skipped[name] = (f"n_documents={n} > max_samples={max_samples} "
                                    "(O(n^2) memory)")
            log(f"consensus: cspa skipped ({result.skipped[name]})", enabled=verbose > 0)
            continue
        candidate = functions[name](seed)
        score = _anmi_coded(candidate, codes)
        result.candidates[name] = candidate
        result.scores[name] = score
        log(f"consensus: {name} ANMI={score:.4f} "
            f"({np.unique(candidate).size} clusters)", enabled=verbose > 0)
        if score > result.anmi:
            result.labels, result.method, result.anmi = candidate, name, score
    return result


# ----------------------------------------------------------------- diversity
def pairwise_agreement(labels, metric="nmi", *, average_method="geometric"):
    """Agreement between every two partitions of an ensemble (SN Figure 7).

    High agreement means little diversity: a consensus cannot improve much on
    partitions that already agree (SN §5.6.1).

    Parameters
    ----------
    labels : array-like of shape (n_documents, n_partitions)
        One column of integer labels per partition; missing labels as ``-1`` or ``NaN``.
        Each pair is compared over the documents that both partitions label.
    metric : {"nmi", "ari"}, default="nmi"
        :func:`semnmf.metrics.nmi` or :func:`semnmf.metrics.ari`.
    average_method : {"geometric", "arithmetic", "min", "max"}, default="geometric"
        Normalization of the NMI (geometric: Strehl & Ghosh's, as in :func:`anmi`).

    Returns
    -------
    agreement : ndarray of shape (n_partitions, n_partitions)
        Symmetric, with 1 on the diagonal; ``NaN`` for a pair of partitions that label
        no document in common. ``agreement[np.triu_indices(r, 1)].mean()`` is the
        average pairwise agreement of SN Figure 7.
    """
    if metric not in ("nmi", "ari"):
        raise ValueError(f"metric must be 'nmi' or 'ari', got {metric!r}.")
    codes, _ = check_label_matrix(labels, require_labelled_rows=False)
    r = codes.shape[1]
    out = np.eye(r)
    for a in range(r):
        for b in range(a + 1, r):
            keep = (codes[:, a] >= 0) & (codes[:, b] >= 0)
            if not keep.any():
                value = np.nan
            elif metric == "nmi":
                value = nmi(codes[keep, a], codes[keep, b], average_method=average_method)
            else:
                value = ari(codes[keep, a], codes[keep, b])
            out[a, b] = out[b, a] = value
    return out


def medoid(labels):
    """The partition of an ensemble that agrees most with the others: the largest ANMI
    (SN eq. 12) with the other partitions, i.e. SN's consensus criterion with the
    candidates restricted to the ensemble's own partitions.

    A run that fell into a poor local optimum agrees little with the others, so the
    medoid of a few runs avoids it without any label (``benchmarks/results/
    default_medoid.md``).

    Parameters
    ----------
    labels : array-like of shape (n_documents, n_partitions)
        At least two partitions; missing labels as ``-1`` or ``NaN``.

    Returns
    -------
    index : int
        The column of the medoid (the first of equals).
    agreement : ndarray of shape (n_partitions,)
        Each partition's mean NMI with the others (pairs labelling no document in common
        left out).
    """
    pairs = pairwise_agreement(labels, metric="nmi")
    r = pairs.shape[0]
    if r < 2:
        raise ValueError(f"a medoid needs at least 2 partitions, got {r}.")
    off = np.where(np.eye(r, dtype=bool), np.nan, pairs)
    with warnings.catch_warnings():  # a partition sharing no document with any other
        warnings.simplefilter("ignore", RuntimeWarning)
        agreement = np.nanmean(off, axis=1)
    agreement = np.where(np.isnan(agreement), -np.inf, agreement)
    return int(np.argmax(agreement)), agreement
