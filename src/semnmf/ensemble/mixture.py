"""Multinomial-mixture (latent class) consensus of a cluster ensemble (SN eq. 13).

Topchy, Jain & Punch (2004) see the ``r`` labels that an ensemble gives document ``i``
as ``r`` categorical variables and cluster the documents with a finite mixture of ``K``
components in which the variables are independent given the component (the *latent
class model*). With ``m_{iq}^{(h)} = 1`` when partition ``q`` puts document ``i`` in its
cluster ``h`` (the disjunctive matrix ``M``, :func:`~semnmf.ensemble.hypergraph_incidence`),
the likelihood is (SN eq. 13)

.. math:: f(M; \\Theta) = \\prod_{i=1}^n \\sum_{k=1}^K \\pi_k \\prod_{q=1}^r
          \\prod_{h=1}^{m_q} \\left(\\alpha_{kq}^{(h)}\\right)^{m_{iq}^{(h)}},

and the consensus is the maximum a posteriori component of each document. SN fit it
with Rmixmod, choosing among its 10 parsimonious qualitative models by BIC; this module
fits the same 10 models (:data:`MODELS`) by EM, with Rmixmod's naming and parameter
counting (Celeux & Govaert, 1991; :func:`n_parameters`): ``Ekjh`` leaves every
``α_kq^(h)`` free; the others put probability ``1 - ε`` on one modal cluster ``a_kq`` of
each partition and ``ε / (m_q - 1)`` on each other, with ``ε`` per component and
partition (``Ekj``), per component (``Ek``), per partition (``Ej``) or shared (``E``);
``Binary_p_*`` fixes ``π_k = 1/K``. The modes are the most probable categories and are
not counted; a partition with one cluster gets no parameter.

Missing labels (``-1`` or ``NaN``) drop out of the likelihood: the product over ``q``
runs over the partitions that label the document.
"""

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._utils.parallel import compiled_kernels, map_blocks, n_threads
from .._utils.progress import progress
from .._utils.renamed import renamed
from .._utils.validation import check_n_components
from ._labels import MISSING, check_label_matrix, incidence, n_categories, relabel

__all__ = ["MODELS", "MultinomialMixture", "mixture_consensus", "n_parameters"]

#: Rmixmod's 10 qualitative (multinomial) models, in the order they are tried.
MODELS = (
    "Binary_pk_Ekjh", "Binary_pk_Ekj", "Binary_pk_Ek", "Binary_pk_Ej", "Binary_pk_E",
    "Binary_p_Ekjh", "Binary_p_Ekj", "Binary_p_Ek", "Binary_p_Ej", "Binary_p_E")
_DISPERSIONS = ("Ekjh", "Ekj", "Ek", "Ej", "E")


def _parse_model(name):
    """(free_proportions, dispersion) of a model name (``Binary_`` prefix optional)."""
    full = name if name.startswith("Binary_") else "Binary_" + name
    if full not in MODELS:
        raise ValueError(
            f"unknown model {name!r}; choose among {list(MODELS)} (the 'Binary_' prefix "
            "may be left out), or 'all'.")
    _, proportions, dispersion = full.split("_")
    return full, proportions == "pk", dispersion


def n_parameters(model, n_components, n_categories):
    """Number of free parameters of a latent class model (for BIC).

    Parameters
    ----------
    model : str
        One of :data:`MODELS` (the ``Binary_`` prefix may be left out).
    n_components : int
        Number of components ``K``.
    n_categories : array-like of int of shape (n_partitions,)
        Number of clusters ``m_q`` of each partition.

    Returns
    -------
    nu : int
        ``(K - 1 if proportions are free) + dispersion parameters``, the latter
        ``K Σ_q (m_q - 1)`` (Ekjh), ``K d`` (Ekj), ``K`` (Ek), ``d`` (Ej) or ``1`` (E),
        with ``d`` the number of partitions with ``m_q >= 2`` (Rmixmod's counts).
    """
    _, free, dispersion = _parse_model(model)
    K = int(n_components)
    m = np.asarray(n_categories, dtype=np.int64)
    d = int(np.count_nonzero(m >= 2))
    count = {"Ekjh": K * int(np.sum(m - 1)), "Ekj": K * d, "Ek": K if d else 0,
             "Ej": d, "E": 1 if d else 0}[dispersion]
    return count + (K - 1 if free else 0)


class _Data:
    """The one-hot data of a coded label matrix, built once per fit, on its distinct rows.

    The likelihood (SN eq. 13) depends on a document only through its row of labels, so
    EM runs on the ``u`` distinct rows, each weighted by how many documents share it
    (``counts``), in ``u / n`` of the work. ``inverse`` maps each document to its row.
    (The sums are added in another order than document by document, so a document whose
    posterior is an exact tie may go to the other component.)
    """

    def __init__(self, codes):
        self.codes = codes
        self.n, self.r = codes.shape
        self.m = n_categories(codes)
        rows, self.inverse, counts = np.unique(codes, axis=0, return_inverse=True,
                                               return_counts=True)
        self.inverse = self.inverse.ravel()
        self.rows = rows
        self.counts = counts.astype(np.float64)
        self.X, self.offsets = incidence(rows, self.m, dtype=np.float64)  # u x D
        self.XT = self.X.T.tocsr()                                         # D x u
        self.block = np.repeat(np.arange(self.r), self.m)                  # D -> q
        self.informative = self.m >= 2                                     # q with m_q >= 2
        # pseudo-count weights of the smoothing prior: 1/m_q on every category
        self.inv_m = 1.0 / self.m[self.block]


def _first_max_in_blocks(N, data):
    """Boolean K x D mask of the (first) largest entry of every variable block of N."""
    starts = data.offsets[:-1]
    block_max = np.maximum.reduceat(N, starts, axis=1)             # K x r
    is_max = N == block_max[:, data.block]
    running = np.cumsum(is_max, axis=1)
    before = np.zeros((N.shape[0], data.r), dtype=running.dtype)
    before[:, 1:] = running[:, starts[1:] - 1]
    return is_max & (running - before[:, data.block] == 1), block_max


def _m_step(resp, data, free_proportions, dispersion, smoothing):
    """Parameters maximizing the expected complete log-likelihood plus the log prior.

    Returns ``(log_weights, log_alpha)`` with ``log_alpha`` of shape (K, D).
    """
    K = resp.shape[1]
    weighted = resp * data.counts[:, None]                 # the documents of each row
    nk = weighted.sum(axis=0)
    if free_proportions:
        with np.errstate(divide="ignore"):
            log_weights = np.log(nk / data.n)
    else:
        log_weights = np.full(K, -np.log(K))
    N = np.asarray((data.XT @ weighted).T)                 # K x D: N_kq^(h)
    # K x r: N_kq = sum_h N_kq^(h), the weight of the documents that q labels (a block
    # sum of N rather than resp.T @ labelled: no BLAS call, which can stall on a busy
    # machine)
    Nq = np.add.reduceat(N, data.offsets[:-1], axis=1)
    s = smoothing
    with np.errstate(divide="ignore", invalid="ignore"):
        if dispersion == "Ekjh":
            num = N + s * data.inv_m
            den = (Nq + s)[:, data.block]
            alpha = np.where(den > 0, num / np.where(den > 0, den, 1), data.inv_m)
            log_alpha = np.log(alpha)
        else:
            is_mode, block_max = _first_max_in_blocks(N, data)
            on = block_max + s / data.m                    # K x r: mass on the mode
            off = Nq + s - on                              # K x r: mass elsewhere
            info = data.informative
            if dispersion == "Ekj":
                on_p, tot_p = on, on + off
            elif dispersion == "Ek":
                on_p = (on[:, info].sum(axis=1, keepdims=True)) * np.ones((1, data.r))
                tot_p = ((on + off)[:, info].sum(axis=1, keepdims=True)) * np.ones((1, data.r))
            elif dispersion == "Ej":
                on_p = on.sum(axis=0, keepdims=True) * np.ones((K, 1))
                tot_p = (on + off).sum(axis=0, keepdims=True) * np.ones((K, 1))
            else:  # "E"
                on_p = np.full((K, data.r), on[:, info].sum())
                tot_p = np.full((K, data.r), (on + off)[:, info].sum())
            uniform_eps = (data.m - 1) / data.m
            eps = np.where(tot_p > 0, 1 - on_p / np.where(tot_p > 0, tot_p, 1),
                           uniform_eps)                    # K x r
            eps = np.clip(eps, 0.0, 1.0)
            log_on = np.log1p(-eps)
            log_off = np.log(eps) - np.log(np.maximum(data.m - 1, 1))
            log_alpha = np.where(is_mode, log_on[:, data.block], log_off[:, data.block])
            log_alpha[:, ~info[data.block]] = 0.0          # one category: probability 1
    return log_weights, log_alpha


def logsumexp_rows(a):
    """``scipy.special.logsumexp(a, axis=1)`` of a real 2-D array, the same numbers (its
    algorithm: the largest entry of each row separated out of the sum, ``log1p`` of the
    rest over their count) without its array-API overhead, which was half of the EM's
    time at 77 components."""
    a_max = a.max(axis=1, keepdims=True)
    is_max = a == a_max
    count = is_max.sum(axis=1, keepdims=True, dtype=a.dtype)
    with np.errstate(invalid="ignore"):
        shifted = np.where(is_max, -np.inf, a) - a_max
    return _logsumexp_shifted(shifted, a_max[:, 0], count[:, 0])


def _logsumexp_shifted(shifted, a_max, count):
    """The rows' log-sum-exp from their entries shifted by the largest one (``a_max``, met
    ``count`` times; those entries −inf in ``shifted``)."""
    rest = np.exp(shifted).sum(axis=1)
    rest = np.where(rest == 0, rest, rest / count)
    with np.errstate(invalid="ignore"):
        out = np.log1p(rest) + np.log(count) + a_max
    return np.where(np.isneginf(a_max), -np.inf, out)  # a row of -inf: -inf


# entries (rows x K) of one block of the compiled E-step: 32 k float64s, 256 KB an array
_E_STEP_BLOCK = 1 << 15


def _e_step(data_X, log_weights, log_alpha):
    """Responsibilities and log-likelihoods of the rows of ``data_X`` (sparse
    X @ log α^T): by the compiled kernel (:mod:`semnmf.ensemble._mixture_kernels`, the
    same numbers in fewer passes) unless ``SEMNMF_KERNELS=0``."""
    if not compiled_kernels():
        log_joint = np.asarray(data_X @ log_alpha.T) + log_weights      # n x K
        log_lik = logsumexp_rows(log_joint)
        with np.errstate(invalid="ignore"):
            resp = np.exp(log_joint - log_lik[:, None])
        return resp, log_lik
    from ._mixture_kernels import shifted_joint

    # blocks of rows whose n x K arrays stay in the cache: every pass after the kernel's
    # reads what it just wrote (rows do not interact: the same numbers as in one block)
    n, K = data_X.shape[0], log_weights.shape[0]
    block = max(16, _E_STEP_BLOCK // K)
    log_alpha_t = np.ascontiguousarray(log_alpha.T)
    resp, log_lik = np.empty((n, K)), np.empty(n)
    shifted = np.empty((min(block, n), K))
    a_max, count = np.empty(min(block, n)), np.empty(min(block, n))
    indptr, indices, values = data_X.indptr, data_X.indices, data_X.data
    with np.errstate(invalid="ignore"):
        for start in range(0, n, block):
            stop = min(start + block, n)
            joint, b = resp[start:stop], stop - start       # the log joint, then resp
            shifted_joint(indptr[start:stop + 1], indices, values, log_alpha_t, log_weights,
                          joint, shifted[:b], a_max[:b], count[:b])
            log_lik[start:stop] = _logsumexp_shifted(shifted[:b], a_max[:b], count[:b])
            joint -= log_lik[start:stop, None]
            np.exp(joint, out=joint)
    return resp, log_lik


def _log_prior(log_alpha, data, smoothing):
    """Log of the Dirichlet smoothing prior, up to a constant: Σ (s / m_q) log α."""
    if smoothing == 0:
        return 0.0
    return float(smoothing * np.sum(data.inv_m * log_alpha))


def _init_start(data, K, rng):
    """The start of an EM run: each distinct row's closest of K seed documents chosen by
    greedy k-modes++ (the column of its one-hot responsibilities).

    The distance between two documents is the number of partitions that label both and
    disagree. As scikit-learn's greedy k-means++: the first seed drawn uniformly, each next
    the best of ``2 + log K`` candidates drawn by squared distance to the closest seed.
    Distances are computed once per distinct row; the draws are over the documents.
    """
    rows, n, inverse, counts = data.rows, data.n, data.inverse, data.counts
    labelled = rows >= 0
    both_all = labelled.sum(axis=1).astype(np.float64)  # against a row labelled everywhere
    X, XT = data.X, data.XT

    def distance(i):  # from document i to every distinct row
        row = inverse[i]
        both = (both_all if labelled[row].all()
                else labelled[:, labelled[row]].sum(axis=1).astype(np.float64))
        shared = [XT.indices[XT.indptr[j]:XT.indptr[j + 1]]
                  for j in X.indices[X.indptr[row]:X.indptr[row + 1]]]
        agree = np.bincount(np.concatenate(shared), minlength=rows.shape[0]) if shared else 0
        return both - agree

    n_trials = 2 + int(np.log(K))
    seeds = [int(rng.randint(n))]
    dist = [distance(seeds[0])]
    closest = dist[0] ** 2
    while len(seeds) < K:
        per_document = closest[inverse]
        total = per_document.sum()
        if total > 0:
            candidates = rng.choice(n, size=n_trials, p=per_document / total)
        else:  # fewer distinct label vectors than K: any unused document
            candidates = [rng.choice(np.setdiff1d(np.arange(n), seeds))]
        best = None
        for c in candidates:
            d = distance(c)
            potential = counts @ np.minimum(closest, d ** 2)
            if best is None or potential < best[0]:
                best = (potential, int(c), d)
        seeds.append(best[1])
        dist.append(best[2])
        closest = np.minimum(closest, best[2] ** 2)
    return np.argmin(np.column_stack(dist), axis=1)


def _em(data, K, model, *, smoothing, tol, max_iter, start):
    """One EM run from a k-modes++ start (``start``: each distinct row's seed, from
    :func:`_init_start`). Returns a dict with the fitted run."""
    _, free, dispersion = _parse_model(model)
    resp = np.zeros((data.rows.shape[0], K))
    resp[np.arange(data.rows.shape[0]), start] = 1.0
    history = []
    converged = False
    for _ in range(max_iter):
        log_weights, log_alpha = _m_step(resp, data, free, dispersion, smoothing)
        resp, log_lik = _e_step(data.X, log_weights, log_alpha)
        history.append(float(data.counts @ log_lik) + _log_prior(log_alpha, data, smoothing))
        if len(history) > 1 and history[-1] - history[-2] < tol * data.n:
            converged = True
            break
    return {"log_weights": log_weights, "log_alpha": log_alpha, "resp": resp,
            "log_likelihood": float(data.counts @ log_lik), "objective": history[-1],
            "history": np.asarray(history), "converged": converged,
            "n_iter": len(history)}


def _check_n_components_grid(n_components, n, default_max):
    """The candidate numbers of components as a sorted list of distinct ints."""
    if n_components is None:
        return list(range(1, min(n, default_max) + 1))
    if isinstance(n_components, numbers.Integral) and not isinstance(n_components, bool):
        return [check_n_components(n_components, n)]
    try:
        values = list(n_components)
    except TypeError:
        raise ValueError(
            "n_components must be an int, a sequence of ints (e.g. range(1, 7)) or None; "
            f"got {n_components!r}."
        ) from None
    if not values:
        raise ValueError("n_components is an empty sequence; give at least one value.")
    return sorted({check_n_components(v, n) for v in values})


def _check_models(models):
    if isinstance(models, str):
        models = MODELS if models == "all" else [models]
    try:
        names = [_parse_model(m)[0] for m in models]
    except TypeError:
        raise ValueError(
            f"models must be 'all', a model name or a list of them; got {models!r}."
        ) from None
    if not names:
        raise ValueError(f"models is empty; choose among {list(MODELS)} or 'all'.")
    return list(dict.fromkeys(names))


class MultinomialMixture(ClusterMixin, BaseEstimator):
    """Latent class (multinomial mixture) model of a cluster ensemble (SN eq. 13).

    The latent class model of :mod:`semnmf.ensemble.mixture`, fitted by EM on the sparse
    one-hot matrix ``M`` (no loop over documents); among the candidate models and numbers
    of components, the pair of smallest BIC ``= -2 log L + ν log n`` (or ICL) is kept, as
    SN do with Rmixmod.

    Parameters
    ----------
    n_components : int, sequence of int or None, default=None
        Number(s) of components to try. None tries ``1..max_q m_q`` (capped at
        ``n``); pass a range to look further (a consensus can have more clusters than
        any input partition).
    models : "all", str or list of str, default="all"
        Models to try, among :data:`MODELS` (the ``Binary_`` prefix may be left out).
    n_init : int, default=5
        EM runs per (model, number of components), each from a different k-modes++
        start; the run of largest penalized log-likelihood is kept.
    max_iter : int, default=200
        Maximum number of EM iterations per run.
    tol : float, default=1e-6
        A run stops when its penalized log-likelihood grows by less than
        ``tol * n_documents`` in one iteration (``tol`` per document).
    smoothing : float, default=1.0
        Pseudo-count ``s`` of a Dirichlet prior that keeps probabilities away from 0,
        ``α_kq^(h) = (N_kq^(h) + s/m_q) / (N_kq + s)`` (Rmixmod's estimator for ``s = 1``;
        pooled over the shared indices for the parsimonious models); ``0`` gives plain
        maximum likelihood.
    criterion : {"bic", "icl"}, default="bic"
        Selection criterion, to minimize: ``"bic"`` (SN's choice), or ``"icl"``, the
        integrated completed likelihood of Biernacki, Celeux & Govaert (2000), ``BIC + 2 E``
        with ``E`` the entropy of the responsibilities, which also penalizes components
        that documents cannot be assigned to with confidence (see Notes).
    random_state : int, RandomState instance or None, default=None
        Seeds the starts (one generator for the whole grid).
    verbose : int, default=0
        Show a progress bar over the (model, number of components) grid when > 0.

    Attributes
    ----------
    labels_ : ndarray of int64 of shape (n_documents,)
        Most probable component of each training document (component indices
        ``0..n_components_-1``; a component can end up empty).
    n_components_ : int
        Number of components of the selected model.
    model_ : str
        Name of the selected model (e.g. ``"Binary_pk_Ekjh"``).
    bic_ : dict
        ``{(model, n_components): BIC}`` for every pair tried (lower is better).
    icl_ : dict
        ``{(model, n_components): ICL}`` for every pair tried (lower is better).
    objective_ : float
        The selected model's BIC (or ICL): the minimum of ``bic_`` (or ``icl_``).
    weights_ : ndarray of shape (n_components_,)
        Mixing proportions ``π_k``.
    category_probs_ : list of n_partitions ndarrays of shape (n_components_, m_q)
        ``α_kq^(h)``: probability that a document of component ``k`` gets the ``h``-th
        cluster of partition ``q`` (clusters in the order of ``categories_[q]``).
    categories_ : list of n_partitions ndarrays
        Label values of each partition's clusters, in order of first appearance.
    log_likelihood_ : float
        Log-likelihood (SN eq. 13, log) of the training labels under the selected
        model, used in its BIC.
    log_likelihood_history_ : ndarray of shape (n_iter_,)
        Penalized log-likelihood (with the log smoothing prior, what EM increases) after
        each EM iteration of the selected run.
    converged_ : bool
        Whether the selected run met ``tol`` before ``max_iter``.
    n_iter_ : int
        Number of EM iterations of the selected run.
    n_partitions_in_ : int
        Number of partitions (columns) seen in :meth:`fit`.

    Notes
    -----
    EM increases the penalized log-likelihood at every iteration for the free and the
    ``Ekj`` dispersion models. In the pooled models (``Ek``, ``Ej``, ``E``) taking each
    block's most frequent cluster as its mode is the exact M-step only while the shared
    ``ε`` keeps every mode the most probable cluster, which holds unless partitions have
    very different numbers of clusters (as in Rmixmod).

    The modal categories of the parsimonious models are discrete parameters that
    Rmixmod's BIC does not count, which lets BIC buy likelihood with tiny extra
    components of the pooled models on small ensembles, or many partitions
    (``benchmarks/results/design_notes.md``). When the number of clusters matters,
    prefer ``criterion="icl"``, the ``Ekjh``/``Ekj`` models, or a fixed
    ``n_components``; :func:`mixture_consensus` drops components that end up empty.

    References
    ----------
    A. Topchy, A. K. Jain and W. Punch, "A mixture model for clustering ensembles", SIAM
    International Conference on Data Mining, 379-390, 2004.

    G. Celeux and G. Govaert, "Clustering criteria for discrete data and latent class
    models", Journal of Classification 8, 157-176, 1991.

    C. Biernacki, G. Celeux and G. Govaert, "Assessing a mixture model for clustering
    with the integrated completed likelihood", IEEE Transactions on Pattern Analysis
    and Machine Intelligence 22(7), 719-725, 2000.

    R. Lebret, S. Iovleff, F. Langrognet, C. Biernacki, G. Celeux, G. Govaert, "Rmixmod:
    the R package of the model-based unsupervised, supervised and semi-supervised
    classification mixmod library", Journal of Statistical Software 67(6), 2015.

    Examples
    --------
    >>> import numpy as np
    >>> from semnmf.ensemble import MultinomialMixture
    >>> truth = np.repeat([0, 1, 2], 20)
    >>> labels = np.column_stack([truth, (truth + 1) % 3, 5 * truth, truth])
    >>> model = MultinomialMixture(n_components=range(1, 5), random_state=0).fit(labels)
    >>> model.n_components_
    3
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left"), "array-like",
                         None],
        "models": [str, list, tuple],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "smoothing": [Interval(numbers.Real, 0, None, closed="left")],
        "criterion": [StrOptions({"bic", "icl"})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, n_components=None, *, models="all", n_init=5, max_iter=200, tol=1e-6,
                 smoothing=1.0, criterion="bic", random_state=None, verbose=0):
        self.n_components = n_components
        self.models = models
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.smoothing = smoothing
        self.criterion = criterion
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, labels, y=None):
        """Fit the candidate models by EM and keep the one of smallest BIC (or ICL).

        Parameters
        ----------
        labels : array-like of shape (n_documents, n_partitions)
            One column of integer cluster labels per partition (missing: ``-1``, ``NaN``).
        y : None

        Returns
        -------
        self : MultinomialMixture
        """
        codes, categories = check_label_matrix(labels)
        data = _Data(codes)
        grid = _check_n_components_grid(self.n_components, data.n, int(data.m.max()))
        models = _check_models(self.models)
        rng = check_random_state(self.random_state)
        smoothing = float(self.smoothing)

        best, best_key, bic, icl = None, None, {}, {}
        table = icl if self.criterion == "icl" else bic
        with progress("latent class EM", total=len(models) * len(grid),
                      enabled=self.verbose > 0) as bar:
            for model in models:
                for K in grid:
                    # the starts drawn in turn from the one generator, the runs from
                    # them on the package's threads (the same runs as one by one; the
                    # n_init runs' responsibilities are held at once)
                    starts = [_init_start(data, K, rng) for _ in range(self.n_init)]
                    trials = map_blocks(
                        lambda i: _em(data, K, model, smoothing=smoothing, tol=self.tol,
                                      max_iter=self.max_iter, start=starts[i]),
                        self.n_init, n_threads())
                    run = None
                    for trial in trials:
                        if run is None or trial["objective"] > run["objective"]:
                            run = trial
                    del trials
                    nu = n_parameters(model, K, data.m)
                    value = -2.0 * run["log_likelihood"] + nu * np.log(data.n)
                    resp = run["resp"]
                    with np.errstate(divide="ignore", invalid="ignore"):
                        terms = np.where(resp > 0, resp * np.log(resp), 0.0)
                    entropy = -float(data.counts @ terms.sum(axis=1))
                    bic[(model, K)] = float(value)
                    icl[(model, K)] = float(value + 2.0 * entropy)
                    if best is None or table[(model, K)] < table[best_key]:
                        best, best_key = run, (model, K)
                    bar.advance(status=f"{model} K={K} BIC={value:.1f}")

        self.model_, self.n_components_ = best_key
        self.objective_ = table[best_key]
        self.bic_ = bic
        self.icl_ = icl
        self.categories_ = categories
        self.n_partitions_in_ = data.r
        self._log_weights = best["log_weights"]
        self._log_alpha = best["log_alpha"]
        self.weights_ = np.exp(best["log_weights"])
        alpha = np.exp(best["log_alpha"])
        self.category_probs_ = [alpha[:, data.offsets[q]:data.offsets[q + 1]]
                                for q in range(data.r)]
        self.log_likelihood_ = best["log_likelihood"]
        self.log_likelihood_history_ = best["history"]
        self.converged_ = best["converged"]
        self.n_iter_ = best["n_iter"]
        self.labels_ = np.argmax(best["resp"], axis=1).astype(np.int64)[data.inverse]
        if not self.converged_:
            warnings.warn(
                f"EM of the selected model ({self.model_}, {self.n_components_} components) "
                f"did not converge in max_iter={self.max_iter} iterations. Increase "
                "max_iter or tol.",
                ConvergenceWarning,
                stacklevel=2)
        return self

    def _encode(self, labels):
        """Code new labels with the training categories; unknown labels are missing."""
        check_is_fitted(self, "categories_")
        codes, categories = check_label_matrix(labels, require_labelled_rows=False)
        if codes.shape[1] != self.n_partitions_in_:
            raise ValueError(
                f"labels has {codes.shape[1]} partitions (columns) but the model was fitted "
                f"on {self.n_partitions_in_}; pass the same partitions in the same order.")
        out = np.full_like(codes, MISSING)
        n_unknown = 0
        for q, (train, new) in enumerate(zip(self.categories_, categories)):
            order = np.argsort(train)
            pos = np.clip(np.searchsorted(train[order], new), 0, max(train.size - 1, 0))
            found = train[order][pos] == new
            mapping = np.where(found, order[pos], MISSING)     # new code -> train code
            keep = codes[:, q] >= 0
            out[keep, q] = mapping[codes[keep, q]]
            n_unknown += int(np.count_nonzero(out[keep, q] < 0))
        if n_unknown:
            warnings.warn(
                f"{n_unknown} label(s) were not seen in fit; they are treated as missing.",
                UserWarning,
                stacklevel=3)
        return out

    def _log_joint(self, labels):
        codes = self._encode(labels)
        m = np.array([c.size for c in self.categories_])
        X, _ = incidence(codes, m, dtype=np.float64)
        return np.asarray(X @ self._log_alpha.T) + self._log_weights

    def predict_proba(self, labels):
        """Posterior probability of each component for each document.

        Parameters
        ----------
        labels : array-like of shape (n_documents, n_partitions)
            Labels of the partitions seen in :meth:`fit` (same columns, same label
            values; values unseen in fit count as missing, with a warning).

        Returns
        -------
        proba : ndarray of shape (n_documents, n_components_)
        """
        log_joint = self._log_joint(labels)
        return np.exp(log_joint - logsumexp_rows(log_joint)[:, None])

    def predict(self, labels):
        """Most probable component of each document (see :meth:`predict_proba`)."""
        return np.argmax(self._log_joint(labels), axis=1).astype(np.int64)

    def score(self, labels, y=None):
        """Mean log-likelihood per document under the fitted model (SN eq. 13)."""
        return float(np.mean(logsumexp_rows(self._log_joint(labels))))

    def fit_predict(self, labels, y=None):
        """Fit and return :attr:`labels_`."""
        return self.fit(labels).labels_


@renamed("n_clusters", "n_components")
def mixture_consensus(labels, n_components=None, *, models="all", n_init=5, max_iter=200,
                      tol=1e-6, smoothing=1.0, criterion="bic", random_state=None,
                      verbose=0, return_model=False):
    """Consensus partition by a latent class (multinomial mixture) model (SN eq. 13).

    Each document's most probable component of :class:`MultinomialMixture`, renumbered.

    Parameters
    ----------
    labels : array-like of shape (n_documents, n_partitions)
        One column of integer labels per partition; missing labels as ``-1`` or ``NaN``.
    n_components : int, sequence of int or None, default=None
        Number of clusters, or candidates chosen by ``criterion`` (None:
        ``1..max_q m_q``).
    models, n_init, max_iter, tol, smoothing, criterion, random_state, verbose
        As in :class:`MultinomialMixture`.
    return_model : bool, default=False
        Also return the fitted :class:`MultinomialMixture` (BIC table, parameters...).

    Returns
    -------
    labels : ndarray of int64 of shape (n_documents,)
        Consensus clusters numbered ``0..g-1`` in order of first appearance
        (``g <= n_components_``: empty components are dropped).
    model : MultinomialMixture
        Only when ``return_model`` is true.
    """
    model = MultinomialMixture(
        n_components=n_components, models=models, n_init=n_init, max_iter=max_iter, tol=tol,
        smoothing=smoothing, criterion=criterion, random_state=random_state,
        verbose=verbose,
    ).fit(labels)
    out = relabel(model.labels_)
    return (out, model) if return_model else out

