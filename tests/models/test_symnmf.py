"""SymNMF and NMF-S: the NNLS kernel and the ANLS method against naive references, GT's
graph against a dense construction, and the estimator API."""

import time
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import nnls
from sklearn.exceptions import ConvergenceWarning

from semnmf import NMF, nmi
from semnmf.models.symnmf import NMFS, SymNMF, nnls_rows, symnmf_anls
from semnmf.graphs.knn import knn_graph, normalized_cut_scaling
from conftest import planted_corpus


def dense_gt_graph(X, q):
    """GT §V-B written naively: dense cosine similarities, q largest per row (self
    excluded), an edge when either end chose it, D^-1/2 S D^-1/2."""
    Xd = X.toarray()
    Xd = Xd / np.linalg.norm(Xd, axis=1, keepdims=True)
    S = Xd @ Xd.T
    np.fill_diagonal(S, -np.inf)
    keep = np.zeros_like(S, dtype=bool)
    for i in range(S.shape[0]):
        keep[i, np.argsort(-S[i], kind="stable")[:q]] = True
    keep |= keep.T
    np.fill_diagonal(S, 0)
    S = np.where(keep & (S > 0), S, 0.0)
    d = S.sum(axis=1)
    return S / np.sqrt(np.outer(d, d))


def penalized_objective(A, W, H, alpha):
    return np.sum((A - W @ H.T) ** 2) + alpha * np.sum((W - H) ** 2)


def random_graph(n, density=0.2, seed=0):
    rng = np.random.default_rng(seed)
    B = sp.random(n, n, density=density, random_state=rng, format="csr")
    return normalized_cut_scaling(B.maximum(B.T).tocsr())


# -- kernels against references -----------------------------------------------------------
@pytest.mark.parametrize("k", [1, 3, 8])
def test_nnls_rows_matches_scipy(k):
    rng = np.random.default_rng(k)
    B = rng.random((30, k))
    G = B.T @ B + 0.05 * np.eye(k)
    F = rng.standard_normal((60, k))
    warm = np.where(rng.random((60, k)) < 0.5, 1.0, 0.0)     # an arbitrary warm start
    for X0 in (None, warm):
        X = nnls_rows(G, F, X0)
        C = np.linalg.cholesky(G)          # ½xᵀGx − fᵀx = ½‖Cᵀx − C⁻¹f‖² + const
        for i in range(F.shape[0]):
            expected, _ = nnls(C.T, np.linalg.solve(C, F[i]))
            np.testing.assert_allclose(X[i], expected, atol=1e-10)


def test_anls_iteration_matches_dense_reference():
    """One ANLS iteration = two exact NNLS block solves (Kuang et al.), checked with
    scipy's nnls on the stacked least-squares problems, dense."""
    A = random_graph(25, seed=1)
    Ad = A.toarray()
    rng = np.random.default_rng(0)
    H0 = rng.random((25, 3))
    alpha = float(Ad.max()) ** 2
    H, W, AH, history, *_ = symnmf_anls(A, H0, max_iter=1, tol=0)
    root = np.sqrt(alpha)
    W_ref = np.vstack([nnls(np.vstack([H0, root * np.eye(3)]),
                            np.r_[Ad[:, i], root * H0[i]])[0] for i in range(25)])
    H_ref = np.vstack([nnls(np.vstack([W_ref, root * np.eye(3)]),
                            np.r_[Ad[:, i], root * W_ref[i]])[0] for i in range(25)])
    np.testing.assert_allclose(W, W_ref, atol=1e-10)
    np.testing.assert_allclose(H, H_ref, atol=1e-10)
    np.testing.assert_allclose(AH, Ad @ H_ref, atol=1e-12)
    assert history[0] == pytest.approx(np.sum((Ad - H0 @ H0.T) ** 2), rel=1e-10)
    assert history[1] == pytest.approx(penalized_objective(Ad, W_ref, H_ref, alpha), rel=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_penalized_objective_non_increasing(seed):
    """Exact block minimization: f(W, H) never increases (Kuang et al.'s ANLS)."""
    A = random_graph(80, density=0.1, seed=seed)
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        _, _, _, history, n_iter, *_ = symnmf_anls(A, rng.random((80, 5)), max_iter=100, tol=0)
    history = np.asarray(history)
    assert n_iter == 100
    assert np.all(np.diff(history) <= 1e-12 * history[:-1]), np.diff(history).max()
    assert history[-1] < 0.5 * history[0]


def test_kkt_conditions_at_convergence():
    """At the end W ≈ H and H is a KKT point of SymNMF: H ⊙ ∇ ≈ 0, ∇ ≳ 0 with
    ∇ = 4 (H HᵀH − A H), the gradient of ‖A − HHᵀ‖²."""
    X, y = planted_corpus(n_per=20, seed=3)
    model = SymNMF(3, tol=1e-7, max_iter=3000, random_state=0).fit(X)
    A = model.affinity_matrix_.toarray()
    H = model.embedding_
    grad = 4 * (H @ (H.T @ H) - A @ H)
    scale = np.abs(4 * A @ H).max()
    assert np.abs(H * grad).max() / scale < 1e-4
    assert grad.min() / scale > -1e-3
    assert model.n_iter_ < 3000
    assert model.reconstruction_err_ == pytest.approx(np.linalg.norm(A - H @ H.T), rel=1e-8)


# -- the graph --------------------------------------------------------------------------------
def test_graph_is_gt_graph():
    X, y = planted_corpus(n_per=15, seed=4)
    n = X.shape[0]
    q = int(np.floor(np.log2(n))) + 1
    model = SymNMF(3, random_state=0).fit(X)
    assert model.n_neighbors_ == q
    np.testing.assert_allclose(model.affinity_matrix_.toarray(), dense_gt_graph(X, q), atol=1e-12)
    assert sp.issparse(model.affinity_matrix_)
    raw = NMFS(3, n_neighbors=4, scaling=None, random_state=0).fit(X)
    np.testing.assert_allclose(raw.affinity_matrix_.toarray(),
                               knn_graph(X, 4, weight="cosine").toarray())


@pytest.mark.parametrize("scale", [1e160, 1e-170])
def test_the_cosine_graph_does_not_depend_on_the_scale(scale):
    """At these scales the rows' normalization overflowed or underflowed: "the similarity
    graph has no edge ... they share no term"."""
    X, y = planted_corpus(n_per=15, seed=4)
    a = SymNMF(3, random_state=0).fit(X)
    b = SymNMF(3, random_state=0).fit(X * scale)
    np.testing.assert_allclose(b.affinity_matrix_.toarray(), a.affinity_matrix_.toarray(),
                               atol=1e-12)
    np.testing.assert_array_equal(b.labels_, a.labels_)


@pytest.mark.parametrize("model", [SymNMF, NMFS])
def test_all_zero_x_is_refused_in_our_words(model):
    """It was scikit-learn's "Found array with 0 sample(s) ... by the normalize function"."""
    with pytest.raises(ValueError, match="^every row of X is zero: there is nothing to cluster"):
        model(3).fit(sp.csr_matrix((6, 4)))


def test_user_graph_is_scaled_and_used():
    X, y = planted_corpus(seed=5)
    S = knn_graph(X, 7)
    built = SymNMF(3, n_neighbors=7, random_state=0).fit(X)
    given = SymNMF(3, random_state=0).fit(X, A=S)
    np.testing.assert_allclose(given.affinity_matrix_.toarray(), built.affinity_matrix_.toarray())
    np.testing.assert_array_equal(given.labels_, built.labels_)
    assert given.n_neighbors_ is None


# -- behaviour --------------------------------------------------------------------------------
@pytest.mark.parametrize("Estimator,kwargs", [(SymNMF, {}), (SymNMF, {"init": "skmeans"}),
                                              (NMFS, {})])
def test_recovers_planted_clusters(Estimator, kwargs):
    X, y = planted_corpus(seed=2)
    model = Estimator(3, random_state=0, **kwargs).fit(X)
    assert nmi(y, model.labels_) > 0.95
    np.testing.assert_array_equal(model.labels_, model.embedding_.argmax(axis=1))


def test_nmfs_is_nmf_of_the_graph():
    X, y = planted_corpus(seed=6)
    model = NMFS(3, init="random", random_state=3).fit(X)
    reference = NMF(3, init="random", random_state=3).fit(model.affinity_matrix_)
    np.testing.assert_array_equal(model.labels_, reference.labels_)
    np.testing.assert_allclose(model.affinity_components_, reference.components_)
    assert model.affinity_components_.shape == (3, X.shape[0])


def test_determinism_and_restarts():
    X, y = planted_corpus(seed=7)
    a = SymNMF(3, random_state=5).fit(X)
    b = SymNMF(3, random_state=5).fit(X)
    np.testing.assert_array_equal(a.embedding_, b.embedding_)
    # n_init=3 draws three of Kuang et al.'s random starts, 2 sqrt(mean(A)/k) U(0, 1), from
    # one RNG and keeps the lowest ‖A − HHᵀ‖: replay the three draws as custom starts
    best = SymNMF(3, n_init=3, random_state=0).fit(X)
    A = best.affinity_matrix_
    rng = np.random.RandomState(0)
    scale = 2 * np.sqrt(A.sum() / A.shape[0] ** 2 / 3)
    errors = [SymNMF(3, init=scale * rng.random_sample((A.shape[0], 3)))
              .fit(X).reconstruction_err_ for _ in range(3)]
    assert best.reconstruction_err_ == pytest.approx(min(errors), rel=1e-12)
    assert max(errors) > min(errors)


def test_custom_start():
    X, y = planted_corpus(seed=8)
    H0 = np.full((X.shape[0], 3), 0.1)
    H0[np.arange(X.shape[0]), y] = 1.0
    model = SymNMF(3, init=H0).fit(X)
    assert nmi(y, model.labels_) == pytest.approx(1.0)


def test_isolated_documents_get_minus_one():
    X, y = planted_corpus(seed=9)
    X = sp.vstack([X, sp.csr_matrix((1, X.shape[1]))]).tocsr()
    for Estimator in (SymNMF, NMFS):
        with pytest.warns(UserWarning, match="1 document.*no neighbour"):
            labels = Estimator(3, random_state=0).fit_predict(X)
        assert labels[-1] == -1 and (labels[:-1] >= 0).all()


def test_no_dense_n_by_n():
    """20,000 documents with a sparse graph: memory O(nnz + n k), never n x n (3.2 GB)."""
    n, k = 20_000, 3
    i = np.arange(n)
    rows = np.r_[i, (i + 1) % n, i, (i + 7) % n]
    cols = np.r_[(i + 1) % n, i, (i + 7) % n, i]
    A = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
    X = sp.csr_matrix((np.ones(n), (i, i % 50)), shape=(n, 50))
    start = time.perf_counter()
    tracemalloc.start()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        SymNMF(k, max_iter=5, random_state=0).fit(X, A=A)
        NMFS(k, init="random", max_iter=5, random_state=0).fit(X, A=A)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 100 * 2 ** 20, peak
    assert time.perf_counter() - start < 10


# -- bad input --------------------------------------------------------------------------------
@pytest.mark.parametrize("Estimator", [SymNMF, NMFS])
def test_bad_input(Estimator):
    X, _ = planted_corpus()
    n = X.shape[0]
    A = knn_graph(X, 3)
    with pytest.raises(ValueError, match=r"A has shape \(10, 10\) but X has 90 documents"):
        Estimator(3).fit(X, A=sp.eye(10))
    negative = A.copy()
    negative.data[0] = -1.0
    with pytest.raises(ValueError, match="non-negative similarities"):
        Estimator(3).fit(X, A=negative)
    with pytest.raises(ValueError, match="symmetric"):
        Estimator(3).fit(X, A=sp.triu(A).tocsr())
    with pytest.raises(ValueError, match="n_neighbors must be between 1 and n_samples - 1"):
        Estimator(3, n_neighbors=n).fit(X)
    with pytest.raises(ValueError, match="larger than the number of documents"):
        Estimator(n + 1).fit(X)
    nan = X.copy()
    nan.data[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Estimator(3).fit(nan)
    with pytest.raises(ValueError, match="no edge"):
        Estimator(2).fit(sp.csr_matrix(np.eye(4)))


def test_bad_symnmf_starts():
    # bad parameter values: one table for every estimator in tests/test_common.py
    X, _ = planted_corpus()
    with pytest.raises(ValueError, match="'init' parameter of SymNMF .* Got 'custom'"):
        SymNMF(3, init="custom").fit(X)     # the scheme of 0.1 (H_init), removed in 0.3
    with pytest.raises(ValueError, match=r"init \(Z\) has shape"):
        SymNMF(3, init=np.ones((5, 3))).fit(X)