"""SeNMF: NMF meets word embedding (Ailem, Salah & Nadif, SIGIR 2017).

Jointly factorizes the document-term matrix X ≈ Z Wᵀ and a symmetric word-context matrix
M ≈ W S Wᵀ (the shifted PPMI of Levy & Goldberg), sharing the word factors W. Eq. (3),
with the weight λ of the Neurocomputing paper added (SIGIR has λ = 1)::

    F(Z, W, S) = ½‖X − Z Wᵀ‖²_F + (λ/2)‖M − W S Wᵀ‖²_F,   Z, W, S ≥ 0, S = Sᵀ (k x k)

Objective by the trace identities of eq. (4), with G = WᵀW (k x k)::

    ‖M − WSWᵀ‖² = ‖M‖² − 2 ⟨WᵀMW, S⟩ + tr(S G S G)

Updates (7a)-(7c), one sweep in this order, with λ carried through eq. (5)-(6) (eq. (5b)
prints W ZᵀZ + 2SWᵀWS, a misprint for W ZᵀZ + 2WSWᵀWS, which is what (7b) uses)::

    Z ← Z ⊙ XW / (Z WᵀW)                                   (7a)
    W ← W ⊙ (XᵀZ + 2λ M W S) / (W (ZᵀZ + 2λ S WᵀW S))      (7b)
    S ← S ⊙ WᵀMW / (WᵀW S WᵀW)                             (7c)

(7a) and (7c) (Ding et al. 2006, Theorem 7) minimize Lee-Seung auxiliary functions, so F
does not increase under them. (7b) has no proof in the paper and *can* increase F
(``benchmarks/results/design_notes.md``), so it is safeguarded: when its step raises F,
the damped step W ⊙ R^η (R the ratio of (7b), η = ½, ¼, ..., 2⁻¹⁰, then 0) is taken
instead. W ⊙ log R is a descent direction (Σ W (D − N) log(N/D) ≤ 0 for R = N/D), so F is
non-increasing over every sweep; the check is free when the full step is accepted (M W at
the new W is needed by (7c) anyway).

M must be a square word-word matrix over X's columns; a non-symmetric M is replaced by
its symmetric part (M + Mᵀ)/2, which has the same minimizers since WSWᵀ is symmetric.

Start of S (the paper is silent): S = α (I + 10⁻³ 11ᵀ), a scaled identity with a small
floor off the diagonal (a zero never moves under multiplicative updates), α the scalar
minimizing ‖M − α W S Wᵀ‖²; the least-squares fit G⁺(WᵀMW)G⁺ trapped the iterations
(``benchmarks/results/design_notes.md``).

Cost per sweep O(k (nnz X + nnz M) + k² (n + d)) as SIGIR's Proposition 1; M is never
densified.
"""

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from .._utils.validation import check_matrix
from ._solvers.frobenius import FrobeniusProblem
from ._solvers.mu import squared_norm
from ._solvers.senmf import MAX_DAMPING, SeNMFProblem, _sym, initial_core  # noqa: F401
from .nmf import _BaseNMF
from ._defaults import DEFAULT_LAM, DEFAULT_MAX_ITER, DEFAULT_TOL
from .context_term import check_lam, document_context, effective_lambda

class SeNMF(_BaseNMF):
    """SeNMF (SIGIR 2017): NMF of X with a tri-factorization M ≈ W S Wᵀ of a word-context matrix.

    Minimizes ½‖X − ZWᵀ‖²_F + (λ/2)‖M − W S Wᵀ‖²_F over Z, W ≥ 0 and a symmetric
    S ≥ 0 (k x k) by the SIGIR paper's updates (7a)-(7c), (7b) safeguarded so that the
    objective never increases (:mod:`semnmf.models.senmf`). With ``lam=0`` it is
    :class:`~semnmf.NMF`.

    Parameters
    ----------
    n_components : int, default=8
        Number of clusters k.
    lam : float, default=10.0
        Weight of the word-context term, relative by default as
        :class:`~semnmf.SemanticNMF`'s (SIGIR uses λ = 1 in absolute terms).
    lam_scale : {"relative", "absolute"}, default="relative"
    shift : float, default=2
        N of the shifted PPMI max(PMI − log N, 0) built from X when ``fit`` gets no M
        (SIGIR: N = 2).
    init, n_init, max_iter, tol, random_state, verbose
        As in :class:`~semnmf.NMF`. S starts as a scaled identity.

    Attributes
    ----------
    labels_, components_, objective_history_, objective_, n_iter_, n_components_
        As in NMF.
    context_core_ : ndarray of shape (n_components, n_components)
        S, symmetric, in the scale of the normalized factors: M ≈ W S Wᵀ with
        W = ``components_.T``.
    lambda_ : float
        The effective (absolute) λ.
    n_damped_ : int
        Sweeps of the kept run in which the full step (7b) would have raised the
        objective and a damped step was taken (0 in the usual case).
    reconstruction_err_, context_err_ : float
        ‖X − ZWᵀ‖_F and ‖M − WSWᵀ‖_F at the end of the fit (M symmetrized if it was not).

    Notes
    -----
    ``fit(X, M=M)`` takes a square word-word matrix over X's columns (the SIGIR paper's:
    ``corpus.word_context("window", association="sppmi", shift=2)``); without M, a
    document-level shifted PPMI is built from X. ``transform`` solves (7a) with W fixed.

    References
    ----------
    M. Ailem, A. Salah and M. Nadif. Non-negative matrix factorization meets word
    embedding. SIGIR 2017, 1081-1084.
    """

    _parameter_constraints: dict = {
        **_BaseNMF._parameter_constraints,
        "lam": [Interval(numbers.Real, 0, None, closed="left")],
        "lam_scale": [StrOptions({"relative", "absolute"})],
        "shift": [Interval(numbers.Real, 0, None, closed="neither")],
    }

    def __init__(self, n_components=8, *, lam=DEFAULT_LAM, lam_scale="relative", shift=2,
                 init="skmeans", n_init=1, max_iter=DEFAULT_MAX_ITER, tol=DEFAULT_TOL,
                 random_state=None, verbose=0):
        super().__init__(n_components, init=init, n_init=n_init, max_iter=max_iter, tol=tol,
                         random_state=random_state, verbose=verbose)
        self.lam = lam
        self.lam_scale = lam_scale
        self.shift = shift

    _fit_inputs = ("M",)

    def fit(self, X, y=None, *, M=None):
        """Fit the model to X and the square word-word matrix M (None: the document-level
        shifted PPMI of X) and set ``labels_``."""
        self._fit(X, y, M=M)
        return self

    def fit_transform(self, X, y=None, *, M=None):
        """Fit (as :meth:`fit`) and return Z (n_documents, n_components), unit-norm columns."""
        return self._fit(X, y, M=M).document_factors()

    def _context_weight(self):
        return self.lam, self.lam_scale

    def _prepare_context(self, X, M=None):
        check_lam(self.lam, self.lam_scale)
        if (isinstance(self.shift, bool) or not isinstance(self.shift, numbers.Real)
                or not np.isfinite(self.shift) or not self.shift > 0):
            raise ValueError(f"shift must be a positive number (N in log N), got {self.shift!r}.")
        d = X.shape[1]
        if M is None:
            M = document_context(X, "sppmi", shift=self.shift)
        else:
            M = check_matrix(M, "M", dtype=X.dtype)
            if M.shape != (d, d):
                raise ValueError(
                    f"M has shape {M.shape} but SeNMF needs a square word-word matrix "
                    f"(n_terms, n_terms) = ({d}, {d}) over the same vocabulary as X's "
                    "columns, since it is approximated by W S Wᵀ.")
            asymmetry = M - M.T
            if (asymmetry.nnz if sp.issparse(asymmetry) else np.count_nonzero(asymmetry)):
                M = _sym(M)
                M = M.tocsr() if sp.issparse(M) else np.ascontiguousarray(M)
        if squared_norm(M) == 0:
            warnings.warn("the word-context matrix M is all zero (no pair of words is "
                          "associated above the shift), so SeNMF reduces to NMF; pass a "
                          "richer M (e.g. corpus.word_context('window', association="
                          "'sppmi')) or a smaller shift.", UserWarning, stacklevel=2)
        return M, effective_lambda(self.lam, X, M, self.lam_scale)

    _context_factor = False  # M ≈ W S Wᵀ: no Q, no Mᵀ

    def _make_problem(self, X, Z, W, M=None, Q=None, lam=0.0, update_W=True, Xt=None, Mt=None):
        if M is None or not update_W:                       # transform: (7a), W frozen
            return FrobeniusProblem(X, Z, W, update_W=False, Xt=Xt)
        return SeNMFProblem(X, Z, W, M, lam=lam, Xt=Xt)

    def _finish_fit(self, result):
        # the engine rescaled S with Z and W (S ← D⁻¹ S D⁻¹: W S Wᵀ unchanged)
        self.context_core_ = result.context_core
        self.n_damped_ = result.n_damped
