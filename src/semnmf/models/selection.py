"""Label-free choice of the number of clusters k (``semnmf cluster -k auto``).

:func:`select_n_components` fits cheap clusterings (spherical k-means, a few Lloyd
iterations, on a subsample of at most ``sample_size`` documents) at every candidate k,
measures label-free curves over the candidates (:func:`measure_candidates`), and picks the k
that maximizes one criterion (:data:`CRITERIA`); it measures only the curves its criterion
reads (:data:`CRITERION_CURVES`). Labels are never read.

The curves measured at each k (``R = n_runs`` runs, each on a random ``subsample`` share of
the sample, its centroids then assigning every sampled document):

- ``stability``: mean pairwise ARI of the R partitions of the sample (Ben-Hur et al. 2002;
  Lange et al. 2004, prediction-based stability);
- ``stability_nmi``: the same with NMI;
- ``dispersion``: dispersion of the consensus (co-membership) matrix, Kim & Park 2007;
- ``silhouette``: mean cosine silhouette of the first run's partition;
- ``calinski``: Calinski-Harabasz index of the normalized documents;
- ``gap``: log dispersion of a null sample (every term's weights shuffled across the
  documents) minus that of the data, a gap statistic (Tibshirani et al. 2001);
- ``npmi``, ``npmi_diversity``: NPMI coherence of the centroids' top words, alone and
  times the topic diversity of their top 25;
- ``gain``: the relative drop of the within-cluster cosine dispersion per doubling of k
  (an "elbow"; the largest k whose gain is still at least ``param``).
- ``cluster_jaccard``: every run's clusters' clusterwise stability (the mean over the
  other runs of their best Jaccard match; Hennig 2007), read by ``stable_clusters``.

Every criterion but ``gain`` and ``stable_clusters`` takes a penalty ``param`` = a and a
``center`` c: the score of k is ``curve01(k) + a * |log(k / c)|``, the curve rescaled to
[0, 1] over the candidates. ``stable_clusters`` (``param``: a Jaccard threshold) counts
the clusters the runs reproduce (Hennig 2007). The default (``stability``, a = -0.7,
c = 8, each run the best of 3 k-means++ starts) was chosen by leave-one-corpus-out on the
shared corpora (``benchmarks/results/k_auto_init3.md``).
"""

import math
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .._utils.parallel import map_blocks, n_threads
from .._utils.progress import log

__all__ = ["CRITERIA", "CURVES", "CRITERION_CURVES", "DEFAULT_CRITERION", "DEFAULT_PARAM",
           "SelectionResult", "candidate_grid", "measure_candidates", "criterion_scores",
           "select_n_components"]

CRITERIA = ("stability", "stability_nmi", "dispersion", "silhouette", "calinski", "gap",
            "npmi", "npmi_diversity", "gain", "stable_clusters")

# every curve :func:`measure_candidates` can measure, and the ones each criterion reads
CURVES = ("stability", "stability_nmi", "dispersion", "silhouette", "calinski", "cosine",
          "cosine_std", "null_cosine", "npmi", "diversity", "cluster_jaccard")
CRITERION_CURVES = {
    "stability": ("stability",), "stability_nmi": ("stability_nmi",),
    "dispersion": ("dispersion",), "silhouette": ("silhouette",), "calinski": ("calinski",),
    "gap": ("cosine", "null_cosine"), "npmi": ("npmi",), "npmi_diversity": ("npmi", "diversity"),
    "gain": ("cosine",), "stable_clusters": ("cluster_jaccard",),
}

# Chosen by leave-one-corpus-out on the 25 shared corpora among the rules that find planted
# clusters (benchmarks/results/k_auto_init3.md).
DEFAULT_CRITERION = "stability"
DEFAULT_PARAM = -0.7
DEFAULT_CENTER = 8.0
DEFAULT_N_INIT = 3

# the clusterwise stability at which a cluster counts as reproduced, where no criterion
# parameter says otherwise (the log, run.json's curves); Hennig (2007) calls 0.75 stable
STABLE_JACCARD = 0.75


# the sample the clusterings are fitted on ("auto"): about SAMPLE_NNZ stored entries
SAMPLE_NNZ, SAMPLE_MIN, SAMPLE_MAX = 250_000, 2000, 8000


# the default grid's largest candidate: GRID_FACTOR times the penalty's center (further
# from it the penalty outweighs any curve: benchmarks/results/levels.md), and at most a
# tenth of the documents
GRID_FACTOR = 3


def candidate_grid(n_documents, k_min=2, k_max=None, ratio=1.25):
    """Geometric candidates from ``k_min`` to ``k_max`` (default ``min(3 * 8, n/10)``: three
    times the k the default score pulls towards; at least ``k_min``): every integer up to
    6, then steps of about ``ratio``."""
    if k_max is None:
        k_max = max(k_min, min(int(GRID_FACTOR * DEFAULT_CENTER), n_documents // 10))
    k_max = min(int(k_max), max(int(n_documents) - 1, k_min))
    grid, k = [], float(k_min)
    while int(round(k)) <= k_max:
        value = int(round(k))
        if not grid or value > grid[-1]:
            grid.append(value)
        k = max(k * ratio, k + 1) if k < 6 else k * ratio
    if grid[-1] != k_max:
        if len(grid) > 1 and k_max < grid[-1] * (1 + (ratio - 1) / 2):
            grid[-1] = k_max  # no near-duplicate last step
        else:
            grid.append(k_max)
    return grid


@dataclass
class SelectionResult:
    """What :func:`select_n_components` found: the ``best`` k, the ``candidates`` and the
    criterion's ``scores`` at each (higher is better), the ``criterion``, its ``param`` and
    ``center``, the ``curves`` it read (name -> list over the candidates), the
    ``n_sample`` documents the clusterings were fitted on, and the ``seconds`` it took."""

    best: int
    candidates: list
    scores: list
    criterion: str
    param: float
    curves: dict = field(default_factory=dict)
    n_sample: int = 0
    seconds: float = 0.0
    center: float = DEFAULT_CENTER

    @property
    def score_name(self):
        """What :attr:`scores` are, in words (the curve the choice is made on)."""
        if self.criterion == "gain":
            return f"gain (largest k with gain >= {self.param:g})"
        if self.criterion == "stable_clusters":
            return f"clusters reproduced with Jaccard >= {self.param:g}"
        if self.center == 1:
            return f"{self.criterion} rescaled to [0, 1] {self.param:+g}·log k"
        return (f"{self.criterion} rescaled to [0, 1] {self.param:+g}·|log(k/"
                f"{self.center:g})|")

    def _curves(self):
        """The curves as one number per candidate (clusterwise stabilities: the count of
        stable clusters at ``param``)."""
        out = dict(self.curves)
        if "cluster_jaccard" in out:
            jaccards = out.pop("cluster_jaccard")
            threshold = (self.param if self.criterion == "stable_clusters"
                         else STABLE_JACCARD)
            out["stable_clusters"] = [stable_count(v, k, threshold)
                                      for v, k in zip(jaccards, self.candidates)]
        return out

    def record(self):
        """The ``k_selection`` entry of run.json: the scores the choice is made on (named
        by ``name``), and the criterion's raw curves (``curves``)."""
        finite = lambda values: [None if v is None or not np.isfinite(v) else float(v)  # noqa: E731
                                 for v in values]
        return {"criterion": self.criterion, "param": self.param,
                "name": self.score_name,
                "candidates": list(self.candidates),
                "scores": finite(self.scores),
                "curves": {name: finite(values) for name, values in self._curves().items()},
                "center": self.center,
                "chosen": int(self.best), "n_sample": int(self.n_sample),
                "seconds": round(float(self.seconds), 3)}


def _normalize_rows(X):
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    keep = norms > 0
    X = sp.csr_matrix(X[keep])
    X = sp.csr_matrix(sp.diags(1.0 / norms[keep]) @ X)
    return X, keep


def _assign(X, centers):
    """argmax_j (X Cᵀ)_ij per row (the lowest j on ties): spherical k-means' assignment
    step, compiled for sparse X, bitwise the scipy expression's labels."""
    from .skmeans import _assign as assign_step

    return assign_step(X, np.zeros(X.shape[0], dtype=bool), centers)[0]


def _onehot(labels, k):
    n = labels.size
    return sp.csr_matrix((np.ones(n), (np.arange(n), labels)), shape=(n, k))


def _cosine_sum(X, labels, k):
    """Sum over documents of the cosine to their cluster's concept vector."""
    sums = np.asarray((_onehot(labels, k).T @ X).todense())
    return float(np.linalg.norm(sums, axis=1).sum()), sums


def _silhouette(X, labels, k, sums):
    """Mean cosine silhouette (1 - cosine as distance), exact, without the n x n matrix:
    the summed similarity of document i to cluster c is ``x_i . sum_c``."""
    n = labels.size
    sizes = np.bincount(labels, minlength=k).astype(float)
    total_sim = np.asarray(X @ sums.T)  # (n, k)
    own_size = sizes[labels]
    rows = np.arange(n)
    with np.errstate(invalid="ignore", divide="ignore"):
        a = 1.0 - (total_sim[rows, labels] - 1.0) / np.maximum(own_size - 1, 1)
        other = total_sim / np.where(sizes > 0, sizes, np.nan)
    other[rows, labels] = -np.inf
    other = np.where(np.isnan(other), -np.inf, other)
    b = 1.0 - other.max(axis=1)
    s = (b - a) / np.maximum(np.maximum(a, b), 1e-12)
    s[own_size <= 1] = 0.0
    return float(np.mean(s))


def _consensus_dispersion(partitions, k):
    """Dispersion ``mean (4 (C_ij - 1/2)^2)`` of the consensus matrix C (share of the runs
    putting i and j together; Kim & Park 2007), from contingency tables: no n x n matrix."""
    n, R = partitions[0].size, len(partitions)
    sum_c = 0.0  # sum_ij C_ij
    sum_c2 = 0.0  # sum_ij C_ij^2
    for r in range(R):
        sum_c += float(np.sum(np.bincount(partitions[r], minlength=k).astype(float) ** 2))
        for s in range(R):
            table = np.bincount(partitions[r] * k + partitions[s], minlength=k * k)
            sum_c2 += float(np.sum(table.astype(float) ** 2))
    sum_c /= R
    sum_c2 /= R * R
    return float((4 * sum_c2 - 4 * sum_c + n * n) / (n * n))


def _calinski(X, labels, k, sums):
    n = labels.size
    sizes = np.bincount(labels, minlength=k).astype(float)
    sq = np.einsum("ij,ij->i", sums, sums)  # |sum_c|^2 = n_c^2 |mu_c|^2
    within_fit = np.sum(sq[sizes > 0] / sizes[sizes > 0])  # sum_c n_c |mu_c|^2
    total = np.asarray(X.sum(axis=0)).ravel()
    between = within_fit - float(total @ total) / n
    within = n - within_fit
    if k < 2 or within <= 0:
        return np.nan
    return float((between / (k - 1)) / (within / (n - k)))


def _null_sample(X, rng):
    """Every column's stored weights shuffled across the documents (co-occurrence broken)."""
    C = sp.csc_matrix(X, copy=True)
    n = C.shape[0]
    for j in range(C.shape[1]):
        lo, hi = C.indptr[j], C.indptr[j + 1]
        if hi > lo:
            C.indices[lo:hi] = np.sort(rng.choice(n, hi - lo, replace=False))
    return _normalize_rows(C.tocsr())[0]


def _sample_size(X, sample_size):
    """Documents to sample: ``sample_size`` if an int; "auto": enough documents for about
    SAMPLE_NNZ stored entries (short texts need more documents to show their clusters),
    between SAMPLE_MIN and SAMPLE_MAX."""
    n = X.shape[0]
    if sample_size == "auto":
        per_doc = max(X.nnz / max(n, 1), 1.0)
        return int(min(n, max(SAMPLE_MIN, min(SAMPLE_MAX, SAMPLE_NNZ / per_doc))))
    return int(min(n, int(sample_size)))


def _skmeans(X, k, seed, max_iter, n_init=1):
    from .skmeans import SphericalKMeans

    model = SphericalKMeans(k, n_init=n_init, max_iter=max_iter, random_state=seed).fit(X)
    return np.asarray(model.cluster_centers_, dtype=np.float64)


def _partition_curves(partitions, k, wanted):
    """The curves of the runs' partitions: their pairwise agreement and consensus."""
    from ..metrics import ari, nmi

    pairs = [(a, b) for a in range(len(partitions)) for b in range(a + 1, len(partitions))]
    out = {}
    for name, score in (("stability", ari), ("stability_nmi", nmi)):
        if name in wanted:
            out[name] = float(np.mean([score(partitions[a], partitions[b])
                                       for a, b in pairs])) if pairs else np.nan
    if "dispersion" in wanted:
        out["dispersion"] = _consensus_dispersion(partitions, k)
    if "cluster_jaccard" in wanted:
        out["cluster_jaccard"] = _cluster_jaccards(partitions, k)
    return out


def _cluster_jaccards(partitions, k):
    """Clusterwise stability (Hennig 2007): for every cluster of every run, the mean over
    the other runs of its best Jaccard similarity with one of their clusters: R·k values,
    run by run, cluster by cluster (an empty cluster scores 0)."""
    R = len(partitions)
    sizes = [np.bincount(p, minlength=k).astype(float) for p in partitions]
    values = []
    for a in range(R):
        best = np.zeros(k)
        for b in range(R):
            if b == a:
                continue
            table = np.bincount(partitions[a] * k + partitions[b],
                                minlength=k * k).reshape(k, k).astype(float)
            union = sizes[a][:, None] + sizes[b][None, :] - table
            best += np.max(np.where(union > 0, table / np.maximum(union, 1), 0.0), axis=1)
        values.append(best / max(R - 1, 1))
    return [float(v) for v in np.concatenate(values)]


def _centroid_curves(Xs, partitions, k, wanted, reference):
    """The curves of the runs' concept vectors: their cosines, and the first run's
    silhouette, Calinski-Harabasz index and topics."""
    from ..metrics import npmi_coherence, topic_diversity

    out = {}
    if wanted & {"cosine", "cosine_std"}:
        cosines = [_cosine_sum(Xs, labels, k)[0] / Xs.shape[0] for labels in partitions]
        out["cosine"], out["cosine_std"] = float(np.mean(cosines)), float(np.std(cosines))
    if wanted & {"silhouette", "calinski", "npmi", "diversity"}:
        labels = partitions[0]
        sums = _cosine_sum(Xs, labels, k)[1]
        if "silhouette" in wanted:
            out["silhouette"] = _silhouette(Xs, labels, k, sums)
        if "calinski" in wanted:
            out["calinski"] = _calinski(Xs, labels, k, sums)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        topics = sums / np.where(norms > 0, norms, 1)
        if "npmi" in wanted:
            out["npmi"] = float(npmi_coherence(topics, reference, 10))
        if "diversity" in wanted:
            out["diversity"] = float(topic_diversity(topics, 25))
    return out


def measure_candidates(X, candidates, *, curves=None, n_runs=5, sample_size="auto",
                       subsample=0.8, max_iter=30, n_init=1, gap=True, counts=None,
                       random_state=0, on_partitions=None, verbose=False):
    """Label-free curves of cheap clusterings at every candidate k (see the module).

    Parameters
    ----------
    X : sparse matrix of shape (n_documents, n_terms)
        Documents (tf-idf or any non-negative weighting; rows are L2-normalized here).
    candidates : list of int
    curves : sequence of str, optional
        The curves to measure, among :data:`CURVES` (default: all of them); a curve's
        values do not depend on which others are measured, but ``null_cosine``'s.
    n_runs : int, default=5
        Spherical k-means runs per k (seeds and subsamples differ).
    sample_size : int or "auto", default="auto"
        Documents drawn at random once; every clustering is fitted on them. "auto": enough
        for about 250,000 stored entries, between 2,000 and 8,000 documents.
    subsample : float, default=0.8
        Share of the sample each run is fitted on.
    max_iter : int, default=30
        Lloyd iterations of a run.
    n_init : int, default=1
        k-means++ starts of a run (its best kept).
    gap : bool, default=True
        False leaves out ``null_cosine`` (one run per k on a null sample).
    counts : sparse matrix, optional
        Documents whose co-occurrences score the topics' NPMI (default: X).
    random_state : int
    on_partitions : callable, optional
        Called as ``on_partitions(k, rows, partitions)`` after the runs at each k (the
        sampled documents' rows of X and the runs' labels of them; for the benchmarks).

    Returns
    -------
    dict
        ``candidates``, one list per measured curve (``cluster_jaccard``: a list per k),
        and ``n_sample``.
    """
    wanted = set(CURVES if curves is None else curves)
    unknown = wanted - set(CURVES)
    if unknown:
        raise ValueError(f"Unknown curve {sorted(unknown)[0]!r}; choose among "
                         f"{', '.join(CURVES)}.")
    if not gap:
        wanted.discard("null_cosine")
    rng = np.random.default_rng(random_state)
    X = sp.csr_matrix(X)
    n = X.shape[0]
    sample = np.sort(rng.choice(n, _sample_size(X, sample_size), replace=False))
    Xs, keep = _normalize_rows(X[sample])
    reference = None
    if "npmi" in wanted:
        reference = sp.csr_matrix(counts if counts is not None else X)[sample][keep]
    ns = Xs.shape[0]
    null = _null_sample(Xs, rng) if "null_cosine" in wanted else None
    m = max(2, int(round(subsample * ns)))
    result = {name: [] for name in CURVES if name in wanted}
    # every run's seed and subsample drawn first, in the order one run after the other
    # draws them, then the runs fitted on threads (compiled passes release the GIL): the
    # same partitions as fitted one by one
    plan = []
    for k in candidates:
        runs = [(int(rng.integers(2**31 - 1)), np.sort(rng.choice(ns, m, replace=False)))
                for _ in range(n_runs)]
        plan.append((k, runs, int(rng.integers(2**31 - 1)) if null is not None else None))

    def run(job):
        k, seed, rows = job
        return _assign(Xs, _skmeans(Xs[rows], min(k, m), seed, max_iter, n_init))

    jobs = [(k, seed, rows) for k, runs, _ in plan for seed, rows in runs]
    fitted = iter(map_blocks(lambda i: run(jobs[i]), len(jobs), n_threads()))
    for k, runs, null_seed in plan:
        t = time.perf_counter()
        partitions = [next(fitted) for _ in runs]
        values = {**_partition_curves(partitions, k, wanted),
                  **_centroid_curves(Xs, partitions, k, wanted, reference)}
        if null is not None:
            centers = _skmeans(null, min(k, null.shape[0]), null_seed, max_iter, n_init)
            values["null_cosine"] = (_cosine_sum(null, _assign(null, centers), k)[0]
                                     / null.shape[0])
        for name in result:
            result[name].append(values[name])
        if on_partitions is not None:
            on_partitions(k, sample[keep], partitions)
        log(f"k={k}: " + ", ".join(_shown(name, values[name], k) for name in result)
            + f" ({time.perf_counter() - t:.1f} s)", verbose)
    result["candidates"] = list(candidates)
    result["n_sample"] = int(ns)
    return result


def _shown(name, value, k):
    if name == "cluster_jaccard":
        return f"stable clusters {stable_count(value, k, STABLE_JACCARD):.1f}"
    return f"{name} {value:.3f}"


def stable_count(jaccards, k, threshold):
    """Clusters per run whose clusterwise stability (:func:`_cluster_jaccards`) is at least
    ``threshold``: the number of clusters the runs at this k reproduce."""
    values = np.asarray(jaccards, dtype=float)
    runs = max(values.size / max(int(k), 1), 1.0)
    return float(np.sum(values >= threshold) / runs)


def penalized_scores(raw, ks, param, center=DEFAULT_CENTER):
    """``curve01(k) + param · |log(k / center)|``: the curve rescaled to [0, 1] over the
    candidates (its finite values; a flat curve is 0), so that one penalty scale serves
    every criterion. ``center`` = 1 gives ``param · log k``."""
    raw = np.asarray(raw, dtype=float)
    finite = raw[np.isfinite(raw)]
    span = finite.max() - finite.min() if finite.size else 0.0
    scaled = (raw - finite.min()) / span if span > 0 else np.zeros_like(raw)
    return scaled + param * np.abs(np.log(np.asarray(ks, dtype=float) / center))


def criterion_scores(curves, criterion=DEFAULT_CRITERION, param=DEFAULT_PARAM,
                     center=DEFAULT_CENTER):
    """Score of every candidate under ``criterion`` (higher is better) from the curves of
    :func:`measure_candidates`: the raw curve and ``curve01 + param · |log(k / center)|``
    (:func:`penalized_scores`)."""
    if criterion not in CRITERIA:
        raise ValueError(f"Unknown criterion {criterion!r}; choose one of "
                         f"{', '.join(CRITERIA)}.")
    ks = np.asarray(curves["candidates"], dtype=float)
    logk = np.log(ks)
    c = lambda name: np.asarray(curves[name], dtype=float)  # noqa: E731
    if criterion == "gain":
        # relative drop of the dispersion 1 - cos per doubling of k, between neighbours;
        # the chosen k is the largest whose gain from the previous candidate is >= param
        w = np.maximum(1.0 - c("cosine"), 1e-12)
        gain = np.full(ks.size, np.nan)
        gain[1:] = -np.diff(np.log(w)) / np.diff(logk) * math.log(2)
        scores = np.full(ks.size, -np.inf)
        scores[0] = 0.0
        last = 0
        for i in range(1, ks.size):
            if gain[i] >= param:
                last = i
            else:
                break
        scores[last] = 1.0
        return gain, scores
    if criterion == "stable_clusters":
        # the k whose runs reproduce the most clusters (clusterwise Jaccard >= param);
        # ties go to the smaller k
        raw = np.array([stable_count(v, k, param) for v, k in zip(curves["cluster_jaccard"], ks)])
        return raw, raw.copy()
    if criterion == "gap":
        w = np.maximum(1.0 - c("cosine"), 1e-12)
        w0 = np.maximum(1.0 - c("null_cosine"), 1e-12)
        raw = np.log(w0) - np.log(w)
    elif criterion == "npmi_diversity":
        raw = c("npmi") * c("diversity")
    else:
        raw = c(criterion)
    return raw, penalized_scores(raw, ks, param, center)


def select_n_components(X, candidates="auto", *, criterion=DEFAULT_CRITERION,
                        param=DEFAULT_PARAM, center=DEFAULT_CENTER, n_runs=5,
                        n_init=DEFAULT_N_INIT, sample_size="auto", max_iter=30, counts=None,
                        random_state=0, verbose=False):
    """Choose the number of clusters without labels.

    Parameters
    ----------
    X : sparse matrix of shape (n_documents, n_terms)
    candidates : "auto" or list of int
        "auto": :func:`candidate_grid` (2 .. min(24, n/10), geometric).
    criterion : str, default=DEFAULT_CRITERION
        One of :data:`CRITERIA`.
    param : float, default=DEFAULT_PARAM
        Penalty a of ``curve01 + a |log(k / center)|`` (threshold of ``gain``).
    center : float, default=DEFAULT_CENTER
        The k the penalty pulls towards (1: ``a log k``, towards the fewest clusters).
    n_init : int, default=DEFAULT_N_INIT
        k-means++ starts of each run (its best kept).
    n_runs, sample_size, max_iter, counts, random_state : see :func:`measure_candidates`.

    Returns
    -------
    SelectionResult

    Examples
    --------
    >>> from semnmf.models.selection import select_n_components
    >>> result = select_n_components(X, [2, 3, 4, 5, 6])  # doctest: +SKIP
    >>> result.best, result.scores                         # doctest: +SKIP
    """
    t0 = time.perf_counter()
    n = X.shape[0]
    if isinstance(candidates, str):
        if candidates != "auto":
            raise ValueError(f"candidates must be 'auto' or a list of ints, got {candidates!r}.")
        candidates = candidate_grid(n)
    candidates = sorted({int(k) for k in candidates})
    if not candidates or candidates[0] < 1 or (len(candidates) > 1 and candidates[0] < 2):
        raise ValueError(f"candidates must be integers of at least 2 (one cluster needs no "
                         f"choice), got {candidates!r}.")
    if n_runs < 2:
        raise ValueError(f"n_runs={n_runs}: the agreement between runs needs at least 2.")
    if not (np.isfinite(center) and center > 0):
        raise ValueError(f"center={center!r}: the k the penalty pulls towards must be a "
                         "positive number.")
    if criterion == "stable_clusters" and not 0 < param <= 1:
        raise ValueError(f"criterion 'stable_clusters' takes a Jaccard threshold in (0, 1] "
                         f"as param (e.g. 0.75), got {param!r}.")
    n_sample = _sample_size(sp.csr_matrix(X), sample_size)
    if candidates[-1] > n_sample - 1:
        raise ValueError(f"the largest candidate k={candidates[-1]} needs more documents "
                         f"than the {n_sample} sampled.")
    if criterion not in CRITERIA:
        raise ValueError(f"Unknown criterion {criterion!r}; choose one of "
                         f"{', '.join(CRITERIA)}.")
    if len(candidates) == 1:
        return SelectionResult(candidates[0], candidates, [np.nan], criterion, float(param),
                               {}, 0, time.perf_counter() - t0, float(center))
    curves = measure_candidates(X, candidates, curves=CRITERION_CURVES[criterion],
                                n_runs=n_runs, n_init=n_init, sample_size=sample_size,
                                max_iter=max_iter,
                                counts=counts, random_state=random_state, verbose=verbose)
    _, scores = criterion_scores(curves, criterion, param, center)
    best = candidates[int(np.nanargmax(np.where(np.isfinite(scores), scores, -np.inf)))]
    if best == candidates[-1]:
        warnings.warn(
            f"the chosen k={best} is the largest candidate: no smaller k stood out, and a "
            "larger one might; read the criterion's curve (run.json: k_selection) and try a "
            f"wider range (CLI: -k 2:{2 * best}) or choose k yourself.", UserWarning,
            stacklevel=2)
    return SelectionResult(int(best), candidates, [float(s) for s in scores], criterion,
                           float(param), {key: value for key, value in curves.items()
                                          if key not in ("candidates", "n_sample")},
                           curves["n_sample"], time.perf_counter() - t0, float(center))
