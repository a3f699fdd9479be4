"""Guided topics: seed words that start some topics and hold them near their words.

The papers' models have no word priors (our construction; compare seeded LDA or
BERTopic's guided topics). For a seeded topic j with seed terms S_j and indicator u_j
(u_jt = 1 for t ∈ S_j), one *seed pseudo-document* β_j u_j per seeded topic is added to X
and the augmented matrix is factorized as usual::

    F_guided(Z, W, ...) = F(X ≈ Z Wᵀ, ...) + Σ_j D(β_j u_j ‖ p_j Wᵀ)

with p_j the pseudo-document's own factor row and D the model's data loss. The added data
terms reward W for reconstructing the seed words together, so a topic whose start holds
them (:func:`~semnmf.models.init.seeded_start`) keeps them; every update rule, its
monotonicity and every engine apply unchanged. The pseudo-documents get no label.

Weight. ``strength`` s is the pseudo-document's weight as a fraction of an average cluster
(n/k documents): ‖β_j u_j‖² = s·n/k for the Frobenius loss, mass β_j |S_j| = s·(n/k)·mean
row mass for KL. The default, 0.02, is measured in ``benchmarks/results/design_notes.md``.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .init import SKMEANS_OFFSET, seeded_start, topic_drift

DEFAULT_STRENGTH = 0.02


def seed_documents(X, seeds, n_components, strength=DEFAULT_STRENGTH, loss="frobenius"):
    """The seed pseudo-documents (one CSR row per seed list, X's dtype): β_j u_j with the
    weight of the module docstring."""
    n, d = X.shape
    if not strength > 0:
        raise ValueError(f"strength must be positive, got {strength!r}.")
    share = strength * n / n_components
    row_mass = float(X.sum()) / max(n, 1)
    rows, cols, vals = [], [], []
    for j, terms in enumerate(seeds):
        terms = np.unique(np.asarray(list(terms), dtype=np.int64))
        value = share * row_mass / terms.size if loss == "kl" else np.sqrt(share / terms.size)
        rows += [j] * terms.size
        cols += terms.tolist()
        vals += [value] * terms.size
    return sp.csr_matrix((vals, (rows, cols)), shape=(len(seeds), d), dtype=X.dtype)


@dataclass
class GuidedFit:
    """What :func:`fit_guided` found: per topic whether it was seeded, and how far each
    topic moved from its start (1 − cosine, :func:`~semnmf.models.init.topic_drift`)."""

    seeded: np.ndarray
    drift: np.ndarray
    Z: np.ndarray = None


def fit_guided(estimator, X, seeds, *, strength=DEFAULT_STRENGTH, random_state=None, **inputs):
    """Fit an NMF-family ``estimator`` (NMF, SemanticNMF, ...) with topics guided by seed
    words (module docstring): ``seeds`` lists term indices, one list per seeded topic (at
    most ``n_components``); the other topics are found freely.

    The estimator is started from :func:`~semnmf.models.init.seeded_start` and fitted on X
    with the seed pseudo-documents appended; its ``labels_`` are then X's documents' only.
    ``inputs`` go to ``fit`` (the word-context matrix ``M``). Returns a :class:`GuidedFit`.
    """
    X = sp.csr_matrix(X) if not sp.issparse(X) else X.tocsr()
    k = estimator.n_components
    loss = estimator._loss()
    if not hasattr(estimator, "_loss"):
        raise TypeError(f"{type(estimator).__name__} is not an NMF-family estimator; guided "
                        "topics start and hold the word factors of NMF, SemanticNMF, GNMF, ...")
    Z0, W0 = seeded_start(X, k, seeds, random_state=random_state)
    pseudo = seed_documents(X, seeds, k, strength, loss)
    Z_pseudo = np.full((len(seeds), k), SKMEANS_OFFSET, dtype=Z0.dtype)
    Z_pseudo[np.arange(len(seeds)), np.arange(len(seeds))] += 1.0
    init = estimator.init
    estimator.set_params(init=(np.vstack([Z0, Z_pseudo]), W0))
    try:
        Z = estimator.fit_transform(sp.vstack([X, pseudo], format="csr"), **inputs)
    finally:  # the parameter as the user set it; the start is recorded in the result
        estimator.set_params(init=init)
    estimator.labels_ = estimator.labels_[: X.shape[0]]
    seeded = np.zeros(k, dtype=bool)
    seeded[: len(seeds)] = True
    return GuidedFit(seeded=seeded, drift=topic_drift(W0, estimator.components_.T),
                     Z=Z[: X.shape[0]])
