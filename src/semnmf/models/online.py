"""Mini-batch (online) multiplicative updates for NMF and Semantic-NMF: ``partial_fit``.

The papers fit on the whole corpus; for a stream of document batches X_1, X_2, ... we use
the online scheme of Mairal et al. (2010, "Online learning for matrix factorization and
sparse coding", JMLR 11) with the multiplicative steps of Lee & Seung, the scheme of
scikit-learn's ``MiniBatchNMF`` (Lefèvre, Bach & Févotte 2011). The papers say nothing
about mini-batches; what follows is our derivation.

At batch t (n_t documents), with W fixed, the batch's document factors solve the
(decoupled, per-document) problem min_Z ½‖X_t − Z Wᵀ‖²; ``max_inner_iter`` steps of (7a)
from a flat start::

    Z_t ← Z_t ⊙ X_t W / (Z_t WᵀW + ε)                                          (7a)

Then the word factors minimize the surrogate of the batches seen so far, each weighted by
a forgetting factor ρ ∈ (0, 1] per batch (older Z_s were computed with older W's)::

    G_t(W, Q) = Σ_{s ≤ t} ρ^{t−s} ½‖X_s − Z_s Wᵀ‖² + (λ_t/2)‖M − W Qᵀ‖²

whose W-gradient is W B_t − A_t + λ_t (W QᵀQ − M Q) with the sufficient statistics

    A_t = ρ A_{t−1} + X_tᵀ Z_t      (d x k)
    B_t = ρ B_{t−1} + Z_tᵀ Z_t      (k x k)
    S_t = ρ S_{t−1} + ‖X_t‖²_F      (the data term's size, for the relative λ)

so that the past batches need not be kept. Splitting the gradient into its positive and
negative parts gives the multiplicative updates (the auxiliary-function argument of
Lee & Seung applies to G_t unchanged: B_t and QᵀQ are positive semi-definite, A_t and M Q
non-negative, so each step does not increase G_t)::

    W ← W ⊙ (A_t + λ_t M Q) / (W (B_t + λ_t QᵀQ) + ε)                           (7b')
    Q ← Q ⊙ MᵀW / (Q WᵀW + ε)                                                   (7c)

(``max_inner_iter`` W and Q steps per batch; each costs O(dk² + k nnz M), nothing that
depends on the number of documents). λ_t: with ``lam_scale="relative"`` the paper's λ is
lam · ‖X‖²/‖M‖² (:func:`semnmf.models.semantic.effective_lambda`); the data term of G_t
has size S_t, so λ_t = lam · S_t / ‖M‖², which keeps the balance of the two terms as the
statistics accumulate (with ρ = 1 after one pass over a corpus, S_t = ‖X‖² and λ_t is
the batch λ). With ``lam_scale="absolute"``, λ_t = lam.

With ρ = 1, one batch holding the whole corpus and W's steps iterated, G_t is the batch
objective (5) with Z fixed: the online updates are (7b)-(7c) on accumulated statistics.
ρ < 1 forgets the statistics of the early batches, computed with poor W's, which helps on
a second pass over a corpus.

Sequences of calls: ``fit`` discards the online state (the next ``partial_fit`` starts
new statistics); a first ``partial_fit`` after ``fit`` continues from the fitted
``components_`` (and ``context_components_``) with fresh statistics A, B, S, as
scikit-learn's ``MiniBatchNMF``; with no fitted factors it starts as below. After a
``partial_fit``, ``n_iter_`` is the batch's inner steps (``max_inner_iter``) and the fitted
attributes that describe a whole-corpus fit (``objective_``, ``objective_history_``,
``reconstruction_err_``, ``context_err_``) are removed, never left from an earlier fit.

Start: the first batch initializes W with the estimator's ``init`` (spherical k-means of
that batch by default) and Q = s MᵀW (:func:`semnmf.models.init.initialize_context_factor`);
M is the one given to the first call, or the document-level PPMI of the first batch.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from .._utils.validation import check_matrix, empty_rows, validate_estimator_input
from ._solvers.mu import EPSILON, squared_norm


# Fitted attributes of ``fit`` that partial_fit does not compute: removed by each call, so
# that none describes an earlier fit. ``n_iter_`` is set to the batch's inner steps.
STALE_AFTER_PARTIAL_FIT = ("objective_", "objective_history_", "reconstruction_err_",
                           "context_err_")

# Attributes of partial_fit that ``fit`` removes (with the online state).
ONLINE_ATTRIBUTES = ("_online_state", "n_batches_", "n_documents_seen_")


def solve_documents(X, W, n_steps, Z=None):
    """Z of the documents of X with W fixed: ``n_steps`` steps of (7a) from a flat start."""
    k = W.shape[1]
    if Z is None:
        mean = float(X.sum()) / max(X.shape[0] * X.shape[1], 1)
        Z = np.full((X.shape[0], k), np.sqrt(max(mean, 1e-12) / k), dtype=X.dtype)
    WtW = W.T @ W
    XW = np.asarray(X @ W)
    for _ in range(n_steps):
        Z *= XW / (Z @ WtW + EPSILON)
    return Z


def partial_fit(estimator, X, M=None, forget_factor=1.0, max_inner_iter=10):
    """One mini-batch step of ``estimator`` (NMF or SemanticNMF), see the module docstring."""
    from .init import initialize, initialize_context_factor, resolve_start
    from .semantic import check_effective, check_lam, document_context

    if not 0 < forget_factor <= 1:
        raise ValueError(f"forget_factor must be in (0, 1], got {forget_factor!r}.")
    if int(max_inner_iter) < 1:
        raise ValueError(f"max_inner_iter must be at least 1, got {max_inner_iter!r}.")
    state = getattr(estimator, "_online_state", None)
    first = state is None
    k = estimator.n_components
    # after fit: continue from the fitted factors (as scikit-learn's MiniBatchNMF)
    resume = (first and getattr(estimator, "components_", None) is not None
              and estimator.components_.shape[0] == k)
    if first:
        estimator._validate_params()
        if estimator.loss != "frobenius" or estimator.orthogonal:
            raise ValueError("partial_fit runs the Frobenius updates; loss='kl' and "
                             "orthogonal=True are fitted with fit only.")
    X = validate_estimator_input(estimator, X, reset=first and not resume)
    semantic = hasattr(estimator, "lam")
    if first:
        rng = check_random_state(estimator.random_state)
        strategy, Z0, W0 = resolve_start(estimator, X.shape, dtype=X.dtype)
        if resume:
            W = np.array(estimator.components_.T, dtype=X.dtype)
        elif strategy == "custom":
            W = W0
        else:
            if X.shape[0] < k:
                raise ValueError(f"the first batch has {X.shape[0]} documents, fewer than "
                                 f"n_components={k}: it cannot start the factors.")
            _, W = initialize(X, k, strategy, rng)
        state = {"A": np.zeros((X.shape[1], k), dtype=X.dtype),
                 "B": np.zeros((k, k), dtype=X.dtype), "S": 0.0, "n_batches": 0,
                 "n_documents": 0, "W": np.ascontiguousarray(W, dtype=X.dtype)}
        if semantic:
            check_lam(estimator.lam, estimator.lam_scale)
            if M is None:
                M = document_context(X, "ppmi")
            M = check_matrix(M, "M", dtype=X.dtype)
            if M.shape[0] != X.shape[1]:
                raise ValueError(f"M has {M.shape[0]} rows but X has {X.shape[1]} terms.")
            state["M"] = sp.csr_matrix(M) if sp.issparse(M) else M
            state["Mt"] = state["M"].T.tocsr() if sp.issparse(M) else M.T.copy()
            state["sqM"] = squared_norm(M)
            fitted_Q = getattr(estimator, "context_components_", None) if resume else None
            if fitted_Q is not None and fitted_Q.shape == (k, M.shape[1]):
                state["Q"] = np.array(fitted_Q.T, dtype=X.dtype)
            else:
                state["Q"] = initialize_context_factor(state["Mt"] @ state["W"], state["W"])
    elif M is not None and semantic:
        raise ValueError("M is given to the first partial_fit call only (it is kept).")
    W = state["W"]
    rho = float(forget_factor)
    Z = solve_documents(X, W, int(max_inner_iter))
    state["A"] = rho * state["A"] + np.asarray(X.T @ Z)
    state["B"] = rho * state["B"] + Z.T @ Z
    state["S"] = rho * state["S"] + squared_norm(X)
    A, B = state["A"], state["B"]
    lam = 0.0
    if semantic:
        if estimator.lam_scale == "absolute":
            lam = float(estimator.lam)
        elif state["sqM"] > 0:
            lam = check_effective(float(estimator.lam) * state["S"] / state["sqM"],
                                  estimator.lam)
    for _ in range(int(max_inner_iter)):
        if semantic:
            Q, Mm = state["Q"], state["M"]
            numerator = A + lam * np.asarray(Mm @ Q)
            W *= numerator / (W @ (B + lam * (Q.T @ Q)) + EPSILON)               # (7b')
            Q *= np.asarray(state["Mt"] @ W) / (Q @ (W.T @ W) + EPSILON)        # (7c)
        else:
            W *= A / (W @ B + EPSILON)                                           # (7b')
    state["n_batches"] += 1
    state["n_documents"] += X.shape[0]
    estimator._online_state = state
    estimator.components_ = W.T.copy()
    if semantic:
        estimator.context_components_ = state["Q"].T.copy()
        estimator.lambda_ = lam
    estimator.n_components_ = k
    estimator.n_iter_ = int(max_inner_iter)  # the W (and Q) steps of this batch
    for name in STALE_AFTER_PARTIAL_FIT:  # values of an earlier fit, not of W now
        estimator.__dict__.pop(name, None)
    estimator.n_batches_ = state["n_batches"]
    estimator.n_documents_seen_ = state["n_documents"]
    estimator.engine_ = "online"
    # the batch's clusters, from its Z under the updated W
    Z = solve_documents(X, W, int(max_inner_iter), Z)
    labels = np.argmax(Z, axis=1).astype(np.int64)
    labels[empty_rows(X)] = -1
    estimator.labels_ = labels
    return estimator
