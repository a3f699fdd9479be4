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

Start: the fitted factors after ``fit`` (with fresh statistics, as scikit-learn's
``MiniBatchNMF``), else W from the estimator's ``init`` on the first batch and Q = s MᵀW
(:func:`semnmf.models.init.initialize_context_factor`); M is the one given to the first
call, or the document-level PPMI of the first batch.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._utils.validation import empty_rows
from ._solvers.mu import EPSILON, squared_norm
from .context_term import relative_weight
from .init import initialize_context_factor
from .pipeline import FitResult, labels_from_memberships


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


@dataclass
class OnlineState:
    """The online engine's state between mini-batches: the word factors W (and Q), the
    sufficient statistics A, B, S of the batches seen (module docstring), and M."""

    W: np.ndarray
    A: np.ndarray
    B: np.ndarray
    S: float = 0.0
    n_batches: int = 0
    n_documents: int = 0
    M: object = None
    Mt: object = None
    sqM: float = 0.0
    Q: np.ndarray | None = None

    @classmethod
    def start(cls, W, dtype, M=None, Q=None):
        """A fresh state from the word factors W (d x k) and, for Semantic-NMF, the
        checked word-context matrix M (Q: the fitted context factors to continue from, or
        None for Q = s MᵀW)."""
        d, k = W.shape
        state = cls(W=np.ascontiguousarray(W, dtype=dtype), A=np.zeros((d, k), dtype=dtype),
                    B=np.zeros((k, k), dtype=dtype))
        if M is not None:
            state.M = sp.csr_matrix(M) if sp.issparse(M) else M
            state.Mt = state.M.T.tocsr() if sp.issparse(M) else M.T.copy()
            state.sqM = squared_norm(M)
            state.Q = (np.array(Q, dtype=dtype) if Q is not None
                       else initialize_context_factor(state.Mt @ state.W, state.W))
        return state


class OnlineEngine:
    """The online engine behind :class:`~semnmf.models.pipeline.Engine`'s interface: each
    call runs the FitProblem's X as one mini-batch on the :class:`OnlineState` (updated in
    place), ``options.max_iter`` inner steps of the module docstring's updates; ``lam``,
    ``lam_scale``: the estimator's word-context weight, which gives λ_t. The FitResult has
    the batch's labels and no objective."""

    name = "online"

    def __init__(self, state, lam=0.0, lam_scale="relative", forget_factor=1.0):
        self.state, self.lam, self.lam_scale = state, lam, lam_scale
        self.forget_factor = float(forget_factor)

    def __call__(self, problem, options):
        state, X, n_steps = self.state, problem.X, int(options.max_iter)
        W, rho = state.W, self.forget_factor
        Z = solve_documents(X, W, n_steps)
        state.A = rho * state.A + np.asarray(X.T @ Z)
        state.B = rho * state.B + Z.T @ Z
        state.S = rho * state.S + squared_norm(X)
        A, B = state.A, state.B
        semantic = state.M is not None
        lam_t = (relative_weight(self.lam, state.S, state.sqM, self.lam_scale) if semantic
                 else 0.0)
        for _ in range(n_steps):
            if semantic:
                Q, M = state.Q, state.M
                numerator = A + lam_t * np.asarray(M @ Q)
                W *= numerator / (W @ (B + lam_t * (Q.T @ Q)) + EPSILON)           # (7b')
                Q *= np.asarray(state.Mt @ W) / (Q @ (W.T @ W) + EPSILON)        # (7c)
            else:
                W *= A / (W @ B + EPSILON)                                         # (7b')
        state.n_batches += 1
        state.n_documents += X.shape[0]
        Z = solve_documents(X, W, n_steps, Z)
        return FitResult(W=W, Q=state.Q, labels=labels_from_memberships(Z, empty_rows(X)),
                         n_iter=n_steps, effective_lambda=lam_t, engine=self.name, Z=Z)
