"""Projective NMF (Yuan & Oja 2005; Yuan, Yang & Oja 2009; Yang & Oja 2010) for clustering.

The data are approximated by their projection onto the span of one non-negative factor
Z (n x k, one row per document; the papers' W Wᵀ X with samples in columns)::

    X ≈ Z Zᵀ X,       F(Z) = ½‖X − Z Zᵀ X‖²_F,   Z ≥ 0                      (PNMF)

With Z restricted to normalized cluster indicators F is the k-means objective; PNMF
relaxes the indicator, and its solutions come out nearly orthogonal (Yuan, Yang & Oja
2009), so argmax over the rows of Z is a partition.

Objective by trace identities, with A = X Xᵀ never formed and B = XᵀZ (d x k)::

    ‖X − Z ZᵀX‖² = ‖X‖² − 2 tr(Zᵀ A Z) + tr(ZᵀZ · Zᵀ A Z),   Zᵀ A Z = BᵀB.

Update: the ratio of the negative and positive parts of ∇F (Yuan & Oja 2005)::

    Z ← Z ⊙ [ 2 A Z / (Z (ZᵀA Z) + A Z (ZᵀZ)) ]^η,        A Z = X (XᵀZ).

The original η = 1 is not monotone (``benchmarks/results/design_notes.md``); η = 1/3 is,
by an auxiliary function: −2 tr(ZᵀAZ) is concave, so it lies below its tangent at Z;
h(Z) = tr(ZᵀZ ZᵀAZ) is a degree-4 polynomial with non-negative coefficients, so by
weighted AM-GM h(Z') ≤ ¼ Σ_ik Z_ik (∇h)_ik (Z'_ik / Z_ik)⁴ with ∇h = 2 (Z ZᵀAZ + AZ ZᵀZ).
The sum of the two bounds is separable and its minimizer is the update with η = 1/3,
hence F(Z') ≤ G(Z', Z) ≤ G(Z, Z) = F(Z).

Start: any of the package's starts gives Z (W is not used), scaled by the s minimizing
F(sZ), s² = tr(ZᵀAZ) / tr(ZᵀZ ZᵀAZ). Cost per sweep O(k nnz(X) + k² (n + d)): XᵀZ, then
X (XᵀZ); XᵀZ at the new Z serves both the objective and the next sweep.
"""

import numpy as np
from sklearn.utils import check_random_state

from .._utils.validation import check_documents
from ._defaults import DEFAULT_MAX_ITER, DEFAULT_TOL
from ._solvers.frobenius import FrobeniusProblem, transpose_csr
from ._solvers.projective import ProjectiveProblem
from .init import initialize, resolve_start
from .engine import run_restarts
from .nmf import _INIT_CONSTRAINT, _BaseNMF
from .pipeline import labels_from_memberships, normalize_columns


class ProjectiveNMF(_BaseNMF):
    """Projective NMF for document clustering: X ≈ Z ZᵀX with one factor Z ≥ 0.

    Minimizes ½‖X − Z ZᵀX‖²_F over non-negative document factors Z (n_documents x k) by
    the multiplicative update of Yuan & Oja (2005) taken to the power 1/3, which makes
    the objective non-increasing (derivation in :mod:`semnmf.models.pnmf`): a relaxed
    k-means. Each document goes to the argmax of its row of Z.

    Parameters
    ----------
    n_components : int, default=8
        Number of clusters k.
    init : {"skmeans", "random", "nndsvda"} or array-like, default="skmeans"
        The Z of :func:`semnmf.models.init.initialize`'s start, scaled by the
        least-squares scalar; or the starting Z itself (a pair ``(Z, W)``: W unused).
    n_init, max_iter, tol, random_state, verbose
        As in :class:`~semnmf.NMF`.

    Attributes
    ----------
    labels_ : ndarray of shape (n_documents,)
    components_ : ndarray of shape (n_components, n_terms)
        Wᵀ with W = XᵀZ (rescaled with the normalization of Z), so that X ≈ Z Wᵀ: the
        term weights of each cluster.
    objective_history_ : ndarray
        ½‖X − ZZᵀX‖² at the (rescaled) start and after each iteration of the kept run.
    objective_, n_iter_, n_components_
    reconstruction_err_ : float
        ‖X − Z ZᵀX‖_F at the end of the fit.

    Notes
    -----
    ``transform`` (new documents) solves min ‖X_new − Z_new Wᵀ‖ over Z_new ≥ 0 with the
    fitted W by the multiplicative update (7a), as NMF's.

    References
    ----------
    Z. Yuan and E. Oja. Projective nonnegative matrix factorization for image compression
    and feature extraction. SCIA 2005.
    Z. Yuan, Z. Yang and E. Oja. Projective nonnegative matrix factorization: sparseness,
    orthogonality, and clustering. Neural Processing Letters, 2009.
    Z. Yang and E. Oja. Linear and nonlinear projective nonnegative matrix factorization.
    IEEE Trans. Neural Networks 21(5), 2010.

    Examples
    --------
    >>> from semnmf import load_dataset                        # doctest: +SKIP
    >>> from semnmf.models.pnmf import ProjectiveNMF           # doctest: +SKIP
    >>> X = load_dataset("bbc").tfidf()                        # doctest: +SKIP
    >>> ProjectiveNMF(5, random_state=0).fit(X).labels_        # doctest: +SKIP
    """

    _parameter_constraints: dict = {
        **_BaseNMF._parameter_constraints,
        "init": [*_INIT_CONSTRAINT, "array-like"],
    }

    def __init__(self, n_components=8, *, init="skmeans", n_init=1, max_iter=DEFAULT_MAX_ITER,
                 tol=DEFAULT_TOL, random_state=None, verbose=0):
        super().__init__(n_components, init=init, n_init=n_init, max_iter=max_iter, tol=tol,
                         random_state=random_state, verbose=verbose)

    def _make_problem(self, X, Z, W, update_W=True, **unused):
        """``transform``'s problem: (7a) with the fitted W frozen."""
        return FrobeniusProblem(X, Z, W, update_W=False)

    def fit_transform(self, X, y=None):
        """Fit and return the document factors Z (n_documents, n_components), unit-norm columns."""
        X = self._validate(X, y)
        empty = check_documents(X)
        rng = check_random_state(self.random_state)
        Xt = transpose_csr(X)
        strategy, Z0, _ = resolve_start(self, X.shape, n_factors=1, dtype=X.dtype)

        def new_problem(run):
            Z = Z0.copy() if Z0 is not None else initialize(X, self.n_components, strategy, rng)[0]
            return ProjectiveProblem(X, Z, Xt=Xt)

        problem, n_iter, history = run_restarts(new_problem, self._options())

        self.reconstruction_err_ = float(np.sqrt(2.0 * problem.objective()))
        Z, W = problem.Z, problem.W
        normalize_columns(Z, W)                  # Z D⁻¹ (W D)ᵀ = Z Wᵀ = Z ZᵀX
        self.components_ = W.T.copy()
        self.n_components_ = self.n_components
        self.n_iter_ = n_iter
        self.objective_ = history[-1]
        self.objective_history_ = np.asarray(history)
        self.labels_ = labels_from_memberships(Z, empty)
        return Z

    def fit(self, X, y=None):
        """Fit the model to the document-term matrix X and set ``labels_``."""
        self.fit_transform(X, y)
        return self
