"""Semantic-NMF (Febrissy, Salah, Ailem & Nadif, Neurocomputing 2022; Ailem et al. SIGIR 2017).

Jointly factorizes the document-term matrix X ≈ Z Wᵀ and a word-context matrix
M ≈ W Qᵀ (PPMI by default) with the word factors W shared, so that words used in the same
contexts get close factors and documents about one topic cluster together.
"""


import numbers

from sklearn.utils._param_validation import Interval, StrOptions

from ._defaults import DEFAULT_LAM
# the word-context term's rules, written once (re-exported here for the callers of 0.1)
from .context_term import (check_effective, check_lam, document_context,  # noqa: F401
                           effective_lambda, prepare_context)
from .nmf import NMF, _BaseNMF, _twin, _Variants


class SemanticNMF(_Variants, _BaseNMF):
    """Semantic-NMF: NMF of X regularized by a factorization of a word-context matrix M.

    Minimizes (Neurocomputing paper, eq. 5)::

        F(Z, W, Q) = ½‖X − Z Wᵀ‖²_F + (λ/2)‖M − W Qᵀ‖²_F,   Z, W, Q ≥ 0

    by the multiplicative updates (7a)-(7c) of Algorithm 1 (objective non-increasing,
    Theorem 1), then normalizes Z to unit-length columns (step 5; W and Q are rescaled so
    that Z Wᵀ and W Qᵀ are unchanged) and assigns each document to the argmax of its row.
    With ``lam=0`` it is exactly :class:`~semnmf.NMF` (§5.2).

    Parameters
    ----------
    n_components : int, default=8
        Number of clusters k (the paper's g).
    lam : float, default=10.0
        Weight of the word-context term. With ``lam_scale="relative"`` (default) it is the
        weight of the *relative* error ‖M − WQᵀ‖²/‖M‖² against ‖X − ZWᵀ‖²/‖X‖², i.e. the
        paper's λ = lam·‖X‖²/‖M‖² (see :func:`effective_lambda`); this makes the value mean
        the same on every corpus. The default comes from a sweep over the benchmark
        corpora (``benchmarks/results/lambda_sweep.md``).
    lam_scale : {"relative", "absolute"}, default="relative"
        "absolute" uses ``lam`` as the paper's raw λ.
    loss : {"frobenius", "kl"}, default="frobenius"
        "kl" replaces both squared errors of eq. (5) by generalized KL divergences
        (SNMF-KL, slides Algorithm 2), see :mod:`semnmf.models._solvers.kl`.
    orthogonal : bool, default=False
        The Neurocomputing paper's §6.1 variant: the Z update of orthogonal NMF.
    init, n_init, screen_iter, max_iter, tol, random_state, verbose, device, Z_init, W_init
        As in :class:`~semnmf.NMF` (``device="cuda"``: the torch engine on a GPU; M's
        products run there too).

    Attributes
    ----------
    labels_, components_, objective_history_, objective_, n_iter_ : as in NMF
    context_components_ : ndarray of shape (n_components, d')
        Qᵀ, the context factors.
    lambda_ : float
        The effective (paper's) λ used in eq. (5).
    reconstruction_err_, context_err_ : float
        ‖X − ZWᵀ‖_F and ‖M − WQᵀ‖_F at the end of the fit (for ``loss="kl"``,
        √(2·D(X‖ZWᵀ)) and √(2·D(M‖WQᵀ)), as in :class:`~semnmf.NMF`).

    Notes
    -----
    ``fit(X, M=M)`` takes the word-context matrix; without it a document-level PPMI is
    built from X itself (co-occurrence = number of documents containing both words),
    so the estimator drops into a plain scikit-learn pipeline. Build richer contexts
    (sentence, L-word window, shifted PPMI) with :meth:`semnmf.Corpus.word_context`.
    """

    _parameter_constraints: dict = {
        **NMF._parameter_constraints,
        "lam": [Interval(numbers.Real, 0, None, closed="left")],
        "lam_scale": [StrOptions({"relative", "absolute"})],
    }
    _supports_blocks = True

    def __init__(self, n_components=8, *, lam=DEFAULT_LAM, lam_scale="relative",
                 loss="frobenius", orthogonal=False, init="skmeans", n_init=1,
                 screen_iter=None, max_iter=200, tol=1e-4, random_state=None, verbose=0,
                 device="cpu", Z_init=None, W_init=None):
        super().__init__(n_components, init=init, n_init=n_init, max_iter=max_iter, tol=tol,
                         random_state=random_state, verbose=verbose, Z_init=Z_init,
                         W_init=W_init)
        self.loss = loss
        self.orthogonal = orthogonal
        self.screen_iter = screen_iter
        self.device = device
        self.lam = lam
        self.lam_scale = lam_scale

    _fit_inputs = ("M",)

    def fit(self, X, y=None, *, M=None):
        """Fit the model to the document-term matrix X (and the word-context matrix M, of
        shape (n_terms, n_contexts); None builds the document-level PPMI of X) and set
        ``labels_``. X as row blocks runs the blocked engine (see :class:`~semnmf.NMF`)."""
        self._fit(X, y, M=M)
        return self

    def fit_transform(self, X, y=None, *, M=None):
        """Fit (as :meth:`fit`) and return the document factors Z (n_documents,
        n_components), unit-norm columns."""
        return self._fit(X, y, M=M).document_factors()

    def _prepare_context(self, X, M=None, size_X=None):
        return prepare_context(X, M, self.lam, self.lam_scale, loss=self.loss, size_X=size_X)

    def _context_weight(self):
        return self.lam, self.lam_scale


def semantic_nmf(X, M=None, n_components=8, *, lam=DEFAULT_LAM, lam_scale="relative",
                 loss="frobenius", orthogonal=False, init="skmeans", W=None, update_W=True,
                 n_init=1, screen_iter=None, max_iter=200, tol=1e-4, random_state=None,
                 verbose=0):
    """Function twin of :class:`SemanticNMF`: X ≈ Z Wᵀ and M ≈ W Qᵀ (eq. 5, Algorithm 1).

    As scikit-learn's ``non_negative_factorization`` for :class:`~sklearn.decomposition.NMF`:
    the same pipeline as the estimator (the local engine), so the same parameters give
    the same factors as ``SemanticNMF(...).fit_transform(X, M=M)``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_documents, n_terms), non-negative
    M : {array-like, sparse matrix} of shape (n_terms, n_contexts) or None
        Word-context matrix; None builds the document-level PPMI of X
        (:func:`~semnmf.models.context_term.document_context`).
    n_components, lam, lam_scale, loss, orthogonal, init, n_init, screen_iter, max_iter, \
tol, random_state, verbose
        As in :class:`SemanticNMF`.
    W, update_W
        As in :func:`~semnmf.non_negative_factorization`: ``update_W=False`` holds the word
        factors fixed (and the context factors Q with them) and solves Z only.

    Returns
    -------
    Z : ndarray of shape (n_documents, n_components)
        Document factors, unit-length columns (Algorithm 1, step 5).
    W : ndarray of shape (n_terms, n_components)
        Word factors (``SemanticNMF.components_.T``).
    Q : ndarray of shape (n_contexts, n_components)
        Context factors (``SemanticNMF.context_components_.T``).
    n_iter : int
        Iterations of the kept run.
    """
    model = SemanticNMF(n_components, lam=lam, lam_scale=lam_scale, loss=loss,
                        orthogonal=orthogonal, init=init, n_init=n_init,
                        screen_iter=screen_iter, max_iter=max_iter,
                        tol=tol, random_state=random_state, verbose=verbose)
    result = _twin(model, X, init_W=W, update_W=update_W, name="semantic_nmf", M=M)
    return result.Z, result.W, result.Q, result.n_iter
