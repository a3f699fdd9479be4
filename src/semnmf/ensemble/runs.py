"""A cluster ensemble of runs: fit one estimator many times, keep the best runs by
objective, and combine their partitions into one (SN §5.6).

:class:`ClusterEnsemble` is what ``semnmf cluster --consensus`` runs; it works with any
estimator that has ``random_state``, ``labels_`` and a lower-is-better ``objective_``
(every semnmf estimator).
"""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, clone
from sklearn.utils import check_random_state

from .._utils.labels import cluster_means  # noqa: F401 (a name of this module since 0.2)
from .._utils.progress import log
from .._utils.renamed import renamed
from ..models._defaults import MAX_SEED
from ._labels import check_label_matrix
from .consensus import _METHODS, consensus as _consensus, medoid, pairwise_agreement
from .mixture import mixture_consensus

# "anmi" (the best of cspa / hgpa / mcla by ANMI), each of them, "mmm" (the
# multinomial-mixture consensus) and "medoid" (the run that agrees most with the others)
CONSENSUS_METHODS = ("anmi", *_METHODS, "mmm", "medoid")

__all__ = ["ClusterEnsemble", "CONSENSUS_METHODS", "run_seeds", "combine", "cluster_means"]

# EM starts per latent-class model in the "mmm" consensus of runs (mixture_consensus's own
# default is 5; benchmarks/results/default_medoid.md).
MMM_STARTS = 2



def run_seeds(random_state, n_runs):
    """Seeds of the ``n_runs`` runs and of the consensus, all from ``random_state``.

    An int ``s`` gives the runs the seeds ``s, s+1, ..., s+n_runs-1`` and the consensus
    the seed ``s``; anything else (None, a RandomState) is one generator from which
    ``n_runs + 1`` seeds are drawn in order: the runs', then the consensus'.
    """
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        start = int(random_state)
        if start + n_runs - 1 > MAX_SEED:
            raise ValueError(f"random_state={start} with n_runs={n_runs} needs the seeds up to "
                             f"{start + n_runs - 1}, above the largest seed ({MAX_SEED}); "
                             f"use a random_state of at most {MAX_SEED - n_runs + 1}.")
        return [start + r for r in range(n_runs)], start
    rng = check_random_state(random_state)
    drawn = rng.randint(np.iinfo(np.int32).max, size=n_runs + 1)
    return [int(s) for s in drawn[:-1]], int(drawn[-1])


@renamed("n_clusters", "n_components")
def combine(partitions, n_components, method="anmi", random_state=None):
    """One partition out of the columns of ``partitions`` (n_documents x n_partitions).

    Documents labelled -1 in every column (no term: no run could place them) stay -1;
    the others are combined by ``method`` (see :data:`CONSENSUS_METHODS`; "mmm" is
    :func:`~semnmf.ensemble.mixture.mixture_consensus` with :data:`MMM_STARTS` EM starts per
    model; "medoid" keeps the column of :func:`~semnmf.ensemble.consensus.medoid` as it
    is). Returns ``(labels, chosen, anmi)``: ``chosen`` is the consensus function that made the
    partition (the best by ANMI for "anmi") and ``anmi`` its ANMI with the partitions
    (None for "mmm"; the medoid's mean NMI with the others for "medoid").
    """
    if method not in CONSENSUS_METHODS:
        raise ValueError(f"consensus must be one of {CONSENSUS_METHODS}, got {method!r}.")
    L = np.asarray(partitions)
    placed = (L >= 0).any(axis=1)
    labels = np.full(L.shape[0], -1, dtype=np.int64)
    if method == "mmm":
        labels[placed] = mixture_consensus(L[placed], n_components, n_init=MMM_STARTS,
                                           random_state=random_state)
        return labels, "mmm", None
    if method == "medoid":  # one of the columns as it is, its missing labels -1
        codes, categories = check_label_matrix(L, require_labelled_rows=False)
        index, agreement = medoid(codes)
        column = codes[:, index]
        labels[column >= 0] = np.asarray(categories[index])[column[column >= 0]]
        return labels, "medoid", float(agreement[index])
    result = _consensus(L[placed], n_components, method=method, random_state=random_state)
    labels[placed] = result.labels
    return labels, result.method, float(result.anmi)


class ClusterEnsemble(ClusterMixin, BaseEstimator):
    """Fit ``n_runs`` clones of an estimator, keep the ``n_keep`` best by objective, and
    combine their labels into one consensus partition (SN §5.6).

    Parameters
    ----------
    estimator : estimator
        Unfitted; cloned for every run with ``random_state`` (and ``verbose=0``) set. Must
        give ``labels_`` and ``objective_`` (lower is better).
    n_runs : int, default=10
    n_keep : int or None, default=None
        Runs kept by objective (the smallest); None keeps them all.
    consensus : {"anmi", "cspa", "hgpa", "mcla", "mmm", "medoid"}, default="anmi"
        Strehl & Ghosh's consensus functions (cspa, hgpa, mcla), the best of them by ANMI
        ("anmi"), the multinomial-mixture consensus ("mmm", :data:`MMM_STARTS` EM starts),
        or the kept run that agrees most with the others ("medoid", SN eq. 12).
    n_components : int or None, default=None
        Number of consensus clusters; None takes the estimator's ``n_components``.
    random_state : int, RandomState instance or None, default=None
        Seeds every run and the consensus (see :func:`run_seeds`): an int ``s`` gives the
        runs ``s, s+1, ...``; otherwise one generator draws all the seeds.
    verbose : int, default=0
        One line per run on stderr when > 0.

    Attributes
    ----------
    labels_ : ndarray of shape (n_documents,)
        The consensus partition; -1 for documents that no run could place.
    runs_ : list of dict
        ``{"seed", "objective", "kept"}`` of every run, in the order they ran.
    kept_seeds_ : list of int
        Seeds of the kept runs, best objective first.
    partitions_ : ndarray of shape (n_documents, n_kept)
        Labels of the kept runs, one column each, in the order of ``kept_seeds_``.
    consensus_ : dict
        ``method`` (requested), ``chosen`` (the function that made ``labels_``), ``anmi``
        (None for "mmm"), ``runs``, ``kept_seeds``, ``mean_pairwise_nmi_of_kept`` (the
        ensemble's diversity) and, with "medoid", ``medoid_seed``.
    n_components_ : int
        Number of consensus clusters used last.

    Examples
    --------
    >>> from semnmf import NMF, ClusterEnsemble
    >>> ensemble = ClusterEnsemble(NMF(3), n_runs=5, n_keep=3, consensus="mcla",
    ...                            random_state=0)                     # doctest: +SKIP
    >>> labels = ensemble.fit(X).labels_                                # doctest: +SKIP
    >>> other = ensemble.recluster(consensus="mmm")                     # doctest: +SKIP
    """

    def __init__(self, estimator, n_runs=10, n_keep=None, consensus="anmi", *,
                 n_components=None, random_state=None, verbose=0):
        self.estimator = estimator
        self.n_runs = n_runs
        self.n_keep = n_keep
        self.consensus = consensus
        self.n_components = n_components
        self.random_state = random_state
        self.verbose = verbose

    def _check_params(self):
        if not isinstance(self.n_runs, numbers.Integral) or self.n_runs < 2:
            raise ValueError(f"n_runs must be at least 2 for a consensus, got {self.n_runs}.")
        keep = self.n_runs if self.n_keep is None else self.n_keep
        if not isinstance(keep, numbers.Integral) or not 2 <= keep <= self.n_runs:
            raise ValueError(f"n_keep must be between 2 and n_runs ({self.n_runs}), "
                             f"got {keep}.")
        if self.consensus not in CONSENSUS_METHODS:
            raise ValueError(f"consensus must be one of {CONSENSUS_METHODS}, "
                             f"got {self.consensus!r}.")
        est = self.estimator
        if not (hasattr(est, "get_params") and hasattr(est, "fit")) or isinstance(est, type):
            raise ValueError(f"estimator must be an estimator instance such as NMF(5), got "
                             f"{est!r}.")
        if "random_state" not in est.get_params():
            raise ValueError(f"{type(est).__name__} has no random_state: its runs would all "
                             "be the same. Ensemble an estimator whose runs vary with the seed "
                             "(NMF, SemanticNMF, SphericalKMeans, ...).")
        return keep

    def fit(self, X, y=None, **fit_params):
        """Fit the runs on ``X`` (``fit_params`` go to every run's ``fit``, e.g. ``M=``)
        and combine the best ones."""
        keep = self._check_params()
        seeds, self._consensus_seed = run_seeds(self.random_state, self.n_runs)
        params = self.estimator.get_params()
        quiet = {"verbose": 0} if "verbose" in params else {}
        runs = []
        for r, seed in enumerate(seeds):
            fitted = clone(self.estimator).set_params(random_state=seed, **quiet)
            fitted.fit(X, **fit_params)
            if not hasattr(fitted, "objective_"):
                raise ValueError(
                    f"ClusterEnsemble keeps the runs of lowest objective_, which "
                    f"{type(fitted).__name__} does not have: ensemble an estimator that has "
                    "one (NMF, SemanticNMF, SphericalKMeans, ...).")
            objective = float(fitted.objective_)
            runs.append((seed, objective, np.asarray(fitted.labels_)))
            log(f"run {r + 1}/{self.n_runs} (seed {seed}): objective {objective:.6g}",
                self.verbose > 0)
        kept = sorted(range(len(runs)), key=lambda i: runs[i][1])[:keep]  # stable: ties by order
        self.runs_ = [{"seed": seed, "objective": objective, "kept": i in kept}
                      for i, (seed, objective, _) in enumerate(runs)]
        self.kept_seeds_ = [runs[i][0] for i in kept]
        self.partitions_ = np.column_stack([runs[i][2] for i in kept])
        agreement = pairwise_agreement(self.partitions_, metric="nmi")
        self._mean_pairwise_nmi = float(agreement[~np.eye(keep, dtype=bool)].mean())
        k = self.n_components if self.n_components is not None else params["n_components"]
        self.recluster(self.consensus, k)
        return self

    def recluster(self, consensus=None, n_components=None):
        """Combine the stored partitions again, without refitting: with another consensus
        function and/or number of clusters (default: the last ones). Sets ``labels_``,
        ``consensus_`` and ``n_components_``, and returns the new labels."""
        if not hasattr(self, "partitions_"):
            raise ValueError("This ClusterEnsemble is not fitted yet; call fit first.")
        method = consensus if consensus is not None else self.consensus_["method"]
        k = n_components if n_components is not None else self.n_components_
        runs_k = self.estimator.get_params().get("n_components")
        if method == "medoid" and runs_k is not None and k != runs_k:
            raise ValueError(f"consensus='medoid' keeps one of the runs, with their "
                             f"{runs_k} clusters; n_components={k} needs a consensus that "
                             "makes a new partition (e.g. 'mmm').")
        labels, chosen, anmi = combine(self.partitions_, k, method, self._consensus_seed)
        self.labels_ = labels
        self.n_components_ = k
        self.consensus_ = {"method": method, "chosen": chosen, "anmi": anmi,
                           "runs": [dict(run) for run in self.runs_],
                           "kept_seeds": list(self.kept_seeds_),
                           "mean_pairwise_nmi_of_kept": self._mean_pairwise_nmi}
        if method == "mmm":
            self.consensus_["em_starts"] = MMM_STARTS
        if method == "medoid":  # the run whose partition it is (the first of equal ones)
            self.consensus_["medoid_seed"] = next(
                seed for seed, column in zip(self.kept_seeds_, self.partitions_.T)
                if np.array_equal(column, labels))
        return labels
