"""The KL consensus: the default for corpora without raw text (counts only).

Three cheap, different runs combined by the multinomial-mixture consensus
(:func:`~semnmf.ensemble.mixture.mixture_consensus`, MMM):

- NMF with the KL loss and the default's five screened starts (Semantic-NMF at λ = 0);
- NMF with the KL loss, one start;
- spherical k-means.

Chosen by leave-one-corpus-out on the shared counts-only corpora
(``benchmarks/results/default_kinds25.md``, ``benchmarks/results/portfolio.md``). The
consensus is made three times (seeds s, s+1, s+2) and the three partitions are combined
again by the MMM (``benchmarks/results/default_medoid.md``); every MMM fits each model from
:data:`~semnmf.ensemble.runs.MMM_STARTS` EM starts.

The one-start NMF-KL starts from the spherical k-means that is the third member, itself
the best of the ten restarts behind the screened NMF-KL's five starts: it is fitted once
and serves all three (the same partitions, to the bit, as three separate fits).
"""

import numbers
from dataclasses import dataclass

import numpy as np

from ..metrics import nmi
from ..models._defaults import DEFAULT_MAX_ITER, DEFAULT_TOL
from .runs import MMM_STARTS, combine, run_seeds

MEMBERS = ("nmf-kl-screened", "nmf-kl", "skmeans")
# the screened NMF-KL member's starts (each screened by one sweep)
SCREENED_STARTS = 5
# the consensus is made this many times (seeds s, s+1, ...) and the runs combined by the
# MMM (benchmarks/results/default_medoid.md)
N_RUNS = 3
COMBINED = "the multinomial-mixture consensus (MMM) of the runs' consensus partitions"


@dataclass
class KLConsensus:
    """A fitted KL consensus: ``labels_``; the runs' consensus ``partitions_`` (n x
    n_runs) and their seeds ``kept_seeds_`` (the names of
    :class:`~semnmf.ensemble.runs.ClusterEnsemble`, whose records the workflow reads);
    every run's members ``members_`` (n x 3 n_runs, the columns of :data:`MEMBERS`);
    ``consensus_``, how they were combined (with each run's seed and NMI with the labels)."""

    labels_: np.ndarray
    partitions_: np.ndarray
    kept_seeds_: list
    members_: np.ndarray
    consensus_: dict


def kl_consensus(X, n_components, *, random_state=0, max_iter=DEFAULT_MAX_ITER, tol=DEFAULT_TOL,
                 n_runs=N_RUNS, verbose=0):
    """Fit the three members on X (documents x terms) and combine them (module docstring),
    ``n_runs`` times with the seeds of :func:`~semnmf.ensemble.runs.run_seeds`, the runs'
    partitions combined again by the MMM. Documents without a term keep -1. Returns a
    :class:`KLConsensus`."""
    if isinstance(n_runs, bool) or not isinstance(n_runs, numbers.Integral) or n_runs < 1:
        raise ValueError(f"n_runs must be a positive number of runs, got {n_runs!r}.")
    seeds, consensus_seed = run_seeds(random_state, n_runs)
    runs = [_kl_consensus_once(X, n_components, seed, max_iter, tol, verbose)
            for seed in seeds]
    partitions = np.column_stack([labels for labels, _ in runs])
    if n_runs == 1:
        labels = partitions[:, 0].copy()
    else:
        labels, _, _ = combine(partitions, n_components, "mmm", random_state=consensus_seed)
    return KLConsensus(
        labels_=labels, partitions_=partitions, kept_seeds_=[int(s) for s in seeds],
        members_=np.column_stack([members for _, members in runs]),
        consensus_={"method": "mmm", "chosen": "mmm", "anmi": None, "em_starts": MMM_STARTS,
                    "members": list(MEMBERS),
                    "runs": [{"seed": int(seed), "nmi": round(float(nmi(column, labels)), 4)}
                             for seed, column in zip(seeds, partitions.T)],
                    "combined": COMBINED if n_runs > 1 else "one run"})


def _kl_consensus_once(X, k, seed, max_iter, tol, verbose):
    """(labels, members' partitions) of one KL consensus with ``seed``."""
    from ..models.init import SKMEANS_RESTARTS, factors_from_skmeans, start_restarts
    from ..models.nmf import NMF, fit_record
    from ..models.skmeans import SphericalKMeans

    screened = NMF(k, loss="kl", n_init=SCREENED_STARTS, screen_iter=1, max_iter=max_iter,
                   tol=tol, random_state=seed, verbose=verbose)
    # The third member, spherical k-means with the run's seed and SKMEANS_RESTARTS
    # restarts, is the best of the screened starts' restarts (five starts of two, drawn
    # in the same order from the same seed: FitResult.start_kmeans); the one-start NMF-KL
    # starts from it too (models.init.initialize's start), so it is fitted once for all.
    km = fit_record(screened, X).start_kmeans
    if km is None or SCREENED_STARTS * start_restarts(SCREENED_STARTS, 1) != SKMEANS_RESTARTS:
        km = SphericalKMeans(k, n_init=SKMEANS_RESTARTS, random_state=seed).fit(X)
    # the start in the dtype NMF fits X in, which is the k-means' (both validate X alike:
    # float32 stays, anything else becomes float64)
    single = NMF(k, loss="kl", max_iter=max_iter, tol=tol, random_state=seed, verbose=verbose,
                 init=factors_from_skmeans(km, km.cluster_centers_.dtype)).fit(X)
    partitions = np.column_stack([np.asarray(m.labels_) for m in (screened, single, km)])
    labels, _, _ = combine(partitions, k, "mmm", random_state=seed)
    return labels, partitions
