"""The KL consensus: the default for corpora without raw text (counts only).

Three cheap, different runs combined by the multinomial-mixture consensus
(:func:`~semnmf.ensemble.mixture.mixture_consensus`, MMM):

- NMF with the KL loss and the default's five screened starts (Semantic-NMF at λ = 0: no
  word-context matrix, which on counts alone is a document-level SPPMI that hurt);
- NMF with the KL loss, one start;
- spherical k-means.

Why (``benchmarks/results/default_kinds25.md``, ``portfolio.md``): on the 14 shared corpora
without raw text (k = number of classes, seeds 0-4) today's Semantic-NMF default was 0.082
NMI below the best of spherical k-means / NMF / NMF-KL on its worst corpus and 0.025 below on
average; this consensus, chosen by leave-one-corpus-out on 13 of those 14 folds, is 0.022
below on its worst and 0.005 below on average, at a median 0.39x the time. With raw text the
Semantic-NMF default keeps its gains (classic4 +0.112, agnews +0.089), which no consensus
kept, so the command line's default picks this recipe for counts-only corpora only.

The consensus is made three times (seeds s, s+1, s+2) and the three consensus partitions
are combined again by the MMM (``benchmarks/results/default_medoid.md``, 15 seeds): over
the 14 counts-only corpora one run was worst 0.061 below the best baseline (cluto_mm, where
one seed in fifteen collapsed to an NMI near 0) and -0.008 on average; keeping the run that
agrees most with the other two (their medoid, :func:`~semnmf.ensemble.consensus.medoid`)
was worst 0.013 below and +0.000 on average; their MMM is worst 0.012 below and +0.005 on
average, above the medoid on 8 corpora by more than 0.002 and below it on two by as much
(cluto_tr31 0.006, cluto_k1b 0.002). Every MMM here fits each latent-class model from
:data:`~semnmf.ensemble.runs.MMM_STARTS` EM starts (2; with 5, worst and mean within
0.0002 and each corpus within 0.0052, in 2.3x the MMM's time).

The one-start NMF-KL starts from spherical k-means with the run's seed and ten restarts,
which is the third member itself; and that k-means is the best of the ten restarts behind
the screened NMF-KL's five starts (two each, drawn from the same seed in the same order).
So it is fitted once, as part of the screened member, and serves all three (the same
partitions, to the bit, as three separate fits: ten k-means restarts in a run instead of
thirty).
"""

import numbers
from dataclasses import dataclass

import numpy as np

from ..metrics import nmi
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
    n_runs) and their seeds ``kept_seeds_`` (every run is kept; the name is
    :class:`~semnmf.ensemble.runs.ClusterEnsemble`'s, whose records the workflow reads);
    every run's members ``members_`` (n x 3 n_runs: per run, the columns of
    :data:`MEMBERS`); ``consensus_``, how they were combined, with each run's seed and
    its NMI with the final labels."""

    labels_: np.ndarray
    partitions_: np.ndarray
    kept_seeds_: list
    members_: np.ndarray
    consensus_: dict


def kl_consensus(X, n_components, *, random_state=0, max_iter=200, tol=1e-4, n_runs=N_RUNS,
                 verbose=0):
    """Fit the three members on X (documents x terms) and combine them (module docstring),
    ``n_runs`` times with the seeds ``random_state``, ``random_state + 1``, ...; the runs'
    consensus partitions are combined again by the MMM (seeded ``random_state``, or, for
    None or a RandomState, by the last seed :func:`~semnmf.ensemble.runs.run_seeds` draws;
    with one run its consensus is the result). Documents without a term keep -1.
    Returns a :class:`KLConsensus`."""
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
