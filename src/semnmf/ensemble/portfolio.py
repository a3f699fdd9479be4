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
"""

from dataclasses import dataclass

import numpy as np

from .runs import combine

MEMBERS = ("nmf-kl-screened", "nmf-kl", "skmeans")


@dataclass
class KLConsensus:
    """A fitted KL consensus: ``labels_``, the members' ``partitions_`` (n x 3, columns in
    :data:`MEMBERS` order), their names (``kept_seeds_``, as a consensus of runs records
    its runs) and ``consensus_`` (how they were combined)."""

    labels_: np.ndarray
    partitions_: np.ndarray
    kept_seeds_: list
    consensus_: dict


def kl_consensus(X, n_components, *, random_state=0, max_iter=200, tol=1e-4, verbose=0):
    """Fit the three members on X (documents x terms) and combine them (module docstring).
    Documents without a term keep -1. Returns a :class:`KLConsensus`."""
    from ..models.nmf import NMF
    from ..models.skmeans import SphericalKMeans

    k = n_components
    members = [NMF(k, loss="kl", n_init=5, screen_iter=1, max_iter=max_iter, tol=tol,
                   random_state=random_state, verbose=verbose),
               NMF(k, loss="kl", max_iter=max_iter, tol=tol, random_state=random_state,
                   verbose=verbose),
               SphericalKMeans(k, random_state=random_state)]
    partitions = np.column_stack([np.asarray(m.fit(X).labels_) for m in members])
    labels, chosen, _ = combine(partitions, k, "mmm", random_state=random_state)
    return KLConsensus(labels_=labels, partitions_=partitions, kept_seeds_=list(MEMBERS),
                       consensus_={"method": "mmm", "chosen": chosen, "anmi": None,
                                   "members": list(MEMBERS)})
