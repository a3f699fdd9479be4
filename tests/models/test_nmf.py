"""NMF and Semantic-NMF: the paper's properties, a naive reference, and the estimator API."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from semnmf import NMF, SemanticNMF, nmi
from semnmf.models._solvers.frobenius import FrobeniusProblem
from semnmf.models.init import initialize, initialize_context_factor
from semnmf.models.semantic import effective_lambda
from conftest import planted_corpus

EPS = 1e-30  # the updates' denominator guard (_solvers.mu.EPSILON)


# -- naive dense reference of Algorithm 1 (eq. 5, 7a-7c) --------------------------------
def reference_objective(X, Z, W, M=None, Q=None, lam=0.0):
    value = 0.5 * np.sum((X - Z @ W.T) ** 2)
    if M is not None:
        value += lam / 2 * np.sum((M - W @ Q.T) ** 2)
    return value


def reference_step(X, Z, W, M=None, Q=None, lam=0.0):
    Z = Z * (X @ W) / (Z @ W.T @ W + EPS)
    if M is None:
        W = W * (X.T @ Z) / (W @ (Z.T @ Z) + EPS)
        return Z, W, None
    W = W * (X.T @ Z + lam * M @ Q) / (W @ (Z.T @ Z + lam * Q.T @ Q) + EPS)
    Q = Q * (M.T @ W) / (Q @ W.T @ W + EPS)
    return Z, W, Q


def random_problem(n=40, d=30, k=3, density=0.3, seed=0, sparse=True):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=rng, format="csr")
    C = sp.random(d, d, density=density, random_state=rng, format="csr")
    M = (C + C.T).tocsr()
    Z = rng.random((n, k)) + 0.1
    W = rng.random((d, k)) + 0.1
    Q = rng.random((d, k)) + 0.1
    if not sparse:
        X, M = X.toarray(), M.toarray()
    return X, M, Z, W, Q


@pytest.mark.parametrize("with_context", [False, True])
def test_fast_step_matches_reference(with_context):
    X, M, Z, W, Q = random_problem()
    lam = 0.7 if with_context else 0.0
    problem = FrobeniusProblem(X, Z.copy(), W.copy(), M=M if with_context else None,
                               Q=Q.copy() if with_context else None, lam=lam)
    Xd, Md = X.toarray(), M.toarray()
    Zr, Wr, Qr = Z.copy(), W.copy(), (Q.copy() if with_context else None)
    for _ in range(5):
        objective = problem.step()
        Zr, Wr, Qr = reference_step(Xd, Zr, Wr, Md if with_context else None, Qr, lam)
        np.testing.assert_allclose(problem.Z, Zr, rtol=1e-10)
        np.testing.assert_allclose(problem.W, Wr, rtol=1e-10)
        expected = reference_objective(Xd, Zr, Wr, Md if with_context else None, Qr, lam)
        assert objective == pytest.approx(expected, rel=1e-9)
        if with_context:
            np.testing.assert_allclose(problem.Q, Qr, rtol=1e-10)


@pytest.mark.parametrize("Estimator,kwargs", [(NMF, {}), (SemanticNMF, {"lam": 1.0}),
                                              (SemanticNMF, {"lam": 50.0})])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_objective_non_increasing_every_iteration(Estimator, kwargs, seed):
    """Theorem 1: the objective never increases under (7a)-(7c)."""
    X, M, *_ = random_problem(n=60, d=40, k=4, seed=seed)
    fit_kwargs = {"M": M} if Estimator is SemanticNMF else {}
    model = Estimator(4, init="random", max_iter=150, tol=0, random_state=seed, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, **fit_kwargs)
    history = model.objective_history_
    assert len(history) == 151
    increases = np.diff(history)
    assert np.all(increases <= 1e-10 * history[:-1]), increases.max()
    assert history[-1] < history[0]


def _kkt_residuals(X, Z, W, M=None, Q=None, lam=0.0):
    """Complementarity Z ⊙ ∇_Z F and W ⊙ ∇_W F, relative to the scale of the terms (eq. 6)."""
    grad_Z = Z @ (W.T @ W) - X @ W
    if M is None:
        grad_W = W @ (Z.T @ Z) - X.T @ Z
    else:
        grad_W = W @ (Z.T @ Z + lam * Q.T @ Q) - (X.T @ Z + lam * M @ Q)
    rel_Z = np.abs(Z * grad_Z).max() / np.abs(Z * (X @ W)).max()
    rel_W = np.abs(W * grad_W).max() / np.abs(W * (X.T @ Z)).max()
    min_grad_Z = grad_Z.min() / np.abs(X @ W).max()
    min_grad_W = grad_W.min() / np.abs(X.T @ Z).max()
    return rel_Z, rel_W, min_grad_Z, min_grad_W


@pytest.mark.parametrize("with_context", [False, True])
def test_kkt_conditions_at_convergence(with_context):
    """At convergence Z ⊙ ∇F ≈ 0 and ∇F ≳ 0 (the KKT conditions behind eq. 7)."""
    X, y = planted_corpus(n_per=15, k=3, d_per=8, seed=3)
    Xd = X.toarray()
    rng = np.random.default_rng(0)
    C = sp.random(X.shape[1], X.shape[1], density=0.3, random_state=rng)
    M = (C + C.T).toarray()
    lam = 0.5 if with_context else 0.0
    Z, W = initialize(X, 3, "random", 0)
    Q = initialize_context_factor(M.T @ W, W) if with_context else None
    problem = FrobeniusProblem(Xd, Z, W, M=M if with_context else None, Q=Q, lam=lam)
    for _ in range(3000):
        problem.step()
    rel_Z, rel_W, min_Z, min_W = _kkt_residuals(Xd, problem.Z, problem.W,
                                                M if with_context else None, problem.Q if with_context else None, lam)
    assert rel_Z < 1e-3 and rel_W < 1e-3
    assert min_Z > -1e-3 and min_W > -1e-3


def test_lambda_zero_gives_nmf():
    """λ = 0 reduces Semantic-NMF to NMF (§5.2): same start, same factors."""
    X, M, Z, W, _ = random_problem(n=50, d=35, k=3, seed=4)
    common = dict(init=(Z, W), max_iter=80, tol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        nmf = NMF(3, **common).fit(X)
        snmf = SemanticNMF(3, lam=0.0, **common).fit(X, M=M)
    np.testing.assert_allclose(snmf.components_, nmf.components_, rtol=1e-12)
    np.testing.assert_allclose(snmf.objective_history_, nmf.objective_history_, rtol=1e-12)
    np.testing.assert_array_equal(snmf.labels_, nmf.labels_)


def test_dense_and_sparse_give_same_factors():
    X, M, Z, W, _ = random_problem(n=45, d=30, k=3, seed=5)
    common = dict(lam=2.0, init=(Z, W), max_iter=40, tol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sparse = SemanticNMF(3, **common).fit(X, M=M)
        dense = SemanticNMF(3, **common).fit(X.toarray(), M=M.toarray())
    np.testing.assert_allclose(sparse.components_, dense.components_, rtol=1e-9)
    np.testing.assert_array_equal(sparse.labels_, dense.labels_)


def test_relative_lambda_is_scale_free():
    """With lam_scale='relative', multiplying M by a constant changes nothing."""
    X, M, Z, W, _ = random_problem(n=45, d=30, k=3, seed=6)
    common = dict(lam=1.0, init=(Z, W), max_iter=30, tol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = SemanticNMF(3, **common).fit(X, M=M)
        b = SemanticNMF(3, **common).fit(X, M=1000.0 * M)
    # equal up to rounding: the updates' ε guard (1e-30) is far below every product
    np.testing.assert_allclose(a.components_, b.components_, rtol=1e-9)
    assert b.lambda_ == pytest.approx(a.lambda_ / 1e6)
    assert effective_lambda(3.0, X, M, "absolute") == 3.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("scale", [1e-10, 1e-6, 1e8])
def test_nmf_is_scale_equivariant(scale, dtype):
    """X -> cX leaves the Frobenius problem's minimizers as (Z, cW): the same clusters, W
    and the error times c (the updates' old ε of 1.2e-7 drove every factor to zero below
    a largest value of about 1e-5)."""
    X, y = planted_corpus(seed=3)
    X = X.astype(dtype)
    a = NMF(3, random_state=0).fit(X)
    b = NMF(3, random_state=0).fit(X * dtype(scale))
    np.testing.assert_array_equal(b.labels_, a.labels_)
    rtol = 1e-9 if dtype == np.float64 else 2e-3
    np.testing.assert_allclose(b.components_, scale * a.components_, rtol=rtol,
                               atol=scale * 1e-6 * a.components_.max())
    assert b.reconstruction_err_ == pytest.approx(scale * a.reconstruction_err_, rel=rtol)
    assert b.n_iter_ == a.n_iter_


def test_a_word_context_matrix_of_the_wrong_shape_is_refused():
    """A 1-D M was told "Reshape a single sample with X.reshape(1, -1)" and that it must be
    (n_documents, n_terms)."""
    X, _ = planted_corpus(seed=3)
    d = X.shape[1]
    with pytest.raises(ValueError, match=r"^M must be a 2-D matrix; got an array with 1 "
                                         r"dimension\(s\). A single row: M.reshape\(1, -1\).$"):
        SemanticNMF(3).fit(X, M=np.ones(d))
    with pytest.raises(ValueError, match=f"^M has {d - 1} rows but X has {d} terms"):
        SemanticNMF(3).fit(X, M=sp.eye(d - 1, format="csr"))


def test_data_out_of_the_updates_range_is_refused():
    X, _ = planted_corpus(seed=3)
    with pytest.raises(ValueError, match=r"^X's largest value is 1e-20, too small .* X / X.max\(\)"):
        NMF(3).fit(X * (1e-20 / X.max()))
    with pytest.raises(ValueError, match=r"^X's largest value is 1e\+20, too large for the updates in "
                                         r"float32 .* or fit in float64"):
        NMF(3).fit((X * (1e20 / X.max())).astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        held = NMF(3, max_iter=5).fit(X * (1e20 / X.max()))  # float64 holds it
    assert np.isfinite(held.reconstruction_err_) and held.labels_.min() >= 0
    with pytest.raises(ValueError, match=r"^M's largest value is 1e\+150, too large"):
        SemanticNMF(3).fit(X, M=sp.eye(X.shape[1], format="csr") * 1e150)


def test_column_normalization_and_labels():
    X, y = planted_corpus(seed=1)
    model = SemanticNMF(3, random_state=0)
    Z = model.fit_transform(X)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=0), 1.0)
    np.testing.assert_array_equal(model.labels_, Z.argmax(axis=1))
    assert (Z >= 0).all() and (model.components_ >= 0).all()


@pytest.mark.parametrize("Estimator", [NMF, SemanticNMF])
@pytest.mark.parametrize("init", ["skmeans", "random", "nndsvda"])
def test_recovers_planted_clusters(Estimator, init):
    X, y = planted_corpus(seed=2)
    labels = Estimator(3, init=init, n_init=3, random_state=0).fit_predict(X)
    assert nmi(y, labels) > 0.95


def test_semantic_term_helps_when_documents_share_no_words():
    """Documents of one topic that share no word are linked only through M."""
    rng = np.random.default_rng(0)
    k, words_per_topic, n_per = 2, 20, 20
    d = k * words_per_topic
    rows, y = [], []
    for c in range(k):
        for i in range(n_per):
            # each document uses 2 words of its topic, nearly disjoint from its neighbours
            words = c * words_per_topic + rng.choice(words_per_topic, 2, replace=False)
            row = np.zeros(d)
            row[words] = 1.0
            rows.append(row)
            y.append(c)
    X = sp.csr_matrix(np.array(rows) / np.sqrt(2))
    M = np.zeros((d, d))
    for c in range(k):
        block = slice(c * words_per_topic, (c + 1) * words_per_topic)
        M[block, block] = 1.0
    np.fill_diagonal(M, 0)
    scores_nmf, scores_snmf = [], []
    for seed in range(5):
        scores_nmf.append(nmi(y, NMF(k, init="random", random_state=seed).fit_predict(X)))
        scores_snmf.append(nmi(y, SemanticNMF(k, lam=1.0, init="random", random_state=seed)
                               .fit_predict(X, M=sp.csr_matrix(M))))
    assert np.mean(scores_snmf) > 0.9
    # NMF links the documents of a topic only through the few words two of them share
    # (mean NMI 0.80 over these seeds, 0.62 at worst); M links them all.
    assert np.mean(scores_snmf) > np.mean(scores_nmf) + 0.15


def test_default_context_is_built_from_X():
    X, y = planted_corpus(seed=3)
    model = SemanticNMF(3, random_state=0).fit(X)
    assert model.context_components_.shape == (3, X.shape[1])
    assert model.lambda_ > 0
    assert nmi(y, model.labels_) > 0.95


def test_determinism_and_float32():
    X, y = planted_corpus(seed=4)
    a = SemanticNMF(3, init="random", random_state=7).fit(X)
    b = SemanticNMF(3, init="random", random_state=7).fit(X)
    np.testing.assert_array_equal(a.components_, b.components_)
    X32 = X.astype(np.float32)
    model = SemanticNMF(3, random_state=0)
    Z = model.fit_transform(X32)
    assert Z.dtype == np.float32 and model.components_.dtype == np.float32
    model64 = SemanticNMF(3, random_state=0).fit(X)
    assert nmi(model64.labels_, model.labels_) == pytest.approx(1.0)
    np.testing.assert_allclose(model.components_, model64.components_, rtol=1e-3, atol=1e-4)


def test_n_init_keeps_best_objective():
    X, M, *_ = random_problem(n=60, d=40, k=4, seed=8)
    objectives = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for seed in range(3):
            objectives.append(NMF(4, init="random", random_state=np.random.RandomState(seed),
                                  max_iter=30).fit(X).objective_)
        best = NMF(4, init="random", n_init=5, random_state=0, max_iter=30).fit(X)
    assert best.objective_ <= np.median(objectives) * (1 + 1e-9) or best.objective_ <= min(objectives)


# -- screened restarts (screen_iter) -------------------------------------------------------
def screened_reference(X, M, k, n_init, screen_iter, seed, **params):
    """The slow, obvious screened restarts: build every start as the estimator does (one
    generator, 10 // n_init k-means restarts each), run each alone for ``screen_iter``
    sweeps, then fit the lowest from its start (a plain fit, one start)."""
    from sklearn.utils import check_random_state

    rng = check_random_state(seed)
    starts = [initialize(X, k, "skmeans", rng, n_restarts=max(1, 10 // n_init))
              for _ in range(n_init)]
    screened = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for Z, W in starts:
            model = SemanticNMF(k, init=(Z.copy(), W.copy()), max_iter=screen_iter, tol=0,
                                **params).fit(X, M=M)
            screened.append(model.objective_history_[-1])
    Z, W = starts[int(np.argmin(screened))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return SemanticNMF(k, init=(Z, W), **params).fit(X, M=M), screened


@pytest.mark.parametrize("loss", ["frobenius", "kl"])
def test_screened_restarts_match_the_reference(loss):
    # random data: the five starts differ after two sweeps, and the lowest is not the first
    X, M, *_ = random_problem(n=60, d=40, k=4, seed=3)
    params = dict(lam=1.0, loss=loss)
    expected, screened = screened_reference(X, M, 4, 5, 2, 7, **params)
    assert np.argmin(screened) == 2 and len(set(np.round(screened, 6))) == 5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = SemanticNMF(4, n_init=5, screen_iter=2, random_state=7, **params).fit(X, M=M)
    # the kept start is the one with the lowest objective after two sweeps, and its run
    # is the same sequence of iterates as a fit from that start alone
    assert model.objective_history_[2] == pytest.approx(min(screened), rel=1e-12)
    np.testing.assert_allclose(model.objective_history_, expected.objective_history_,
                               rtol=1e-12)
    assert model.n_iter_ == expected.n_iter_
    np.testing.assert_array_equal(model.labels_, expected.labels_)
    # the paused run stays monotone across the screening (Theorem 1)
    assert np.all(np.diff(model.objective_history_) <= 1e-12 * model.objective_history_[0])


def test_screening_a_single_start_changes_nothing():
    X, M, *_ = random_problem(n=60, d=40, k=4, seed=8)
    plain = SemanticNMF(4, loss="kl", random_state=0).fit(X, M=M)
    screened = SemanticNMF(4, loss="kl", random_state=0, screen_iter=3).fit(X, M=M)
    np.testing.assert_array_equal(plain.objective_history_, screened.objective_history_)


def test_screening_as_long_as_max_iter_stops_there():
    X, M, *_ = random_problem(n=60, d=40, k=4, seed=8)
    with pytest.warns(ConvergenceWarning, match="Maximum number of iterations 4"):
        model = NMF(4, n_init=3, screen_iter=10, max_iter=4, random_state=0).fit(X)
    assert model.n_iter_ == 4 and len(model.objective_history_) == 5


def test_screened_starts_share_the_k_means_restarts():
    from semnmf.models.init import SKMEANS_RESTARTS, start_restarts

    assert start_restarts(1, None) == start_restarts(5, None) == SKMEANS_RESTARTS == 10
    assert start_restarts(1, 1) == 10
    assert start_restarts(5, 1) == 2 and start_restarts(3, 0) == 3
    assert start_restarts(40, 1) == 1


def test_transform_with_fixed_components():
    X, y = planted_corpus(seed=5)
    model = SemanticNMF(3, random_state=0).fit(X)
    Z_new = model.transform(X)
    assert Z_new.shape == (X.shape[0], 3) and (Z_new >= 0).all()
    agreement = np.mean(Z_new.argmax(axis=1) == model.labels_)
    assert agreement > 0.95
    np.testing.assert_array_equal(model.predict(X[:5]), Z_new[:5].argmax(axis=1))
    with pytest.raises(ValueError, match="features, but SemanticNMF is expecting"):
        model.transform(X[:, :10])


def test_empty_documents_get_minus_one():
    X, y = planted_corpus(seed=6)
    X = sp.vstack([X, sp.csr_matrix((2, X.shape[1]))]).tocsr()
    with pytest.warns(UserWarning, match="no term"):
        labels = NMF(3, random_state=0).fit_predict(X)
    assert (labels[-2:] == -1).all() and (labels[:-2] >= 0).all()


def test_top_terms_from_components():
    X, y = planted_corpus(seed=7)
    vocabulary = np.array([f"w{j}" for j in range(X.shape[1])])
    model = NMF(3, random_state=0).fit(X)
    topics = model.top_terms(5, vocabulary)
    for c, terms in enumerate(topics):
        weights = [w for _, w in terms]
        assert weights == sorted(weights, reverse=True)
        # the top words of a cluster come from one planted topic block of 15 words
        blocks = {int(t[1:]) // 15 for t, _ in terms}
        assert len(blocks) == 1


# Bad parameter values: one table for every estimator in tests/test_common.py.
def test_more_clusters_than_documents():
    X, _ = planted_corpus()
    with pytest.raises(ValueError, match="larger than the number of documents"):
        SemanticNMF(1000).fit(X)


def test_bad_input_matrices():
    X, _ = planted_corpus()
    negative = X.copy()
    negative.data[0] = -1.0
    with pytest.raises(ValueError, match="negative"):
        NMF(3).fit(negative)
    nan = X.copy()
    nan.data[0] = np.nan
    with pytest.raises(ValueError, match="NaN|infinity"):
        NMF(3).fit(nan)
    inf = X.toarray()
    inf[0, 0] = np.inf
    with pytest.raises(ValueError, match="NaN|infinity"):
        NMF(3).fit(inf)
    with pytest.raises(ValueError, match="every row of X is zero"):
        NMF(2).fit(sp.csr_matrix((5, 4)))
    with pytest.raises(ValueError, match="M has 3 rows"):
        SemanticNMF(3).fit(X, M=sp.eye(3))
    with pytest.raises(ValueError, match="could not convert|dtype"):
        NMF(2).fit([["a", "b"], ["c", "d"]])
    with pytest.raises(ValueError, match="'init' parameter of NMF .* Got 'custom'"):
        NMF(3, init="custom").fit(X)        # the scheme of 0.1 (Z_init, W_init), removed in 0.3
    with pytest.raises(ValueError, match=r"init \(W\) has shape"):
        NMF(3, init=(np.ones((X.shape[0], 3)), np.ones((4, 3)))).fit(X)
    with pytest.raises(ValueError, match="finite and non-negative"):
        NMF(3, init=(-np.ones((X.shape[0], 3)), np.ones((X.shape[1], 3)))).fit(X)


def test_fit_arguments_that_would_be_dropped_are_refused():
    """fit(X, M) took M as y and fitted the default context silently; NMF.fit(X, M=M)
    named a private method."""
    X, M, _, _, _ = random_problem(n=40, d=30, k=3, seed=2)
    with pytest.raises(ValueError, match=r"^SemanticNMF.fit's second argument is y, which is "
                                         r"ignored; .* fit\(X, M=M\)\.$"):
        SemanticNMF(3).fit(X, M)
    with pytest.raises(ValueError, match="this estimator takes no word-context matrix"):
        NMF(3).fit_transform(X, M.toarray())
    with pytest.raises(TypeError, match=r"^NMF.fit\(\) got an unexpected keyword argument 'M'"):
        NMF(3).fit(X, M=M)
    labels = np.arange(X.shape[0]) % 3  # a real y is still ignored
    assert NMF(3, random_state=0).fit(X, labels).n_iter_ == NMF(3, random_state=0).fit(X).n_iter_


# -- the word factors of a fixed partition (semantic.partition_topics) -------------------
def _indicator(labels, k):
    Z = np.zeros((len(labels), k))
    for c in range(k):
        members = labels == c
        if members.any():
            Z[members, c] = 1.0 / np.sqrt(members.sum())
    return Z


@pytest.mark.parametrize("kernels", [True, False])
def test_frozen_document_factors_match_the_reference(kernels):
    """update_Z=False: (7b)-(7c) only, the compiled and scipy paths alike."""
    X, M, Z, W, Q = random_problem(seed=4)
    problem = FrobeniusProblem(X, Z.copy(), W.copy(), M=M, Q=Q.copy(), lam=0.7,
                               update_Z=False, kernels=kernels)
    Xd, Md = X.toarray(), M.toarray()
    Wr, Qr = W.copy(), Q.copy()
    for _ in range(5):
        objective = problem.step()
        Wr = Wr * (Xd.T @ Z + 0.7 * Md @ Qr) / (Wr @ (Z.T @ Z + 0.7 * Qr.T @ Qr) + EPS)
        Qr = Qr * (Md.T @ Wr) / (Qr @ Wr.T @ Wr + EPS)
        np.testing.assert_array_equal(problem.Z, Z)
        np.testing.assert_allclose(problem.W, Wr, rtol=1e-10)
        np.testing.assert_allclose(problem.Q, Qr, rtol=1e-10)
        assert objective == pytest.approx(reference_objective(Xd, Z, Wr, Md, Qr, 0.7),
                                          rel=1e-9)
    with pytest.raises(ValueError, match="nothing to update"):
        FrobeniusProblem(X, Z, W, update_W=False, update_Z=False)


def test_partition_topics():
    from semnmf.models.semantic import partition_topics

    X, y = planted_corpus(n_per=15, k=3, d_per=8, seed=5)
    rng = np.random.default_rng(1)
    C = sp.random(X.shape[1], X.shape[1], density=0.3, random_state=rng, format="csr")
    M = (C + C.T).tocsr()
    labels = np.asarray(y).copy()
    labels[:2] = -1                     # no cluster: no part in any topic
    Z = _indicator(labels, 3)
    # λ = 0: W = XᵀZ, each topic √|c| times its cluster's mean row
    W0, history = partition_topics(X, labels, 3, M, lam=0.0)
    np.testing.assert_allclose(W0, (X.T @ Z).T)
    dense = X.toarray()
    for c in range(3):
        members = labels == c
        np.testing.assert_allclose(W0[c], dense[members].mean(axis=0) * np.sqrt(members.sum()))
    assert history == []
    # λ > 0: the dense reference of (7b)-(7c) from the same start, sweep for sweep
    topics, history = partition_topics(X, labels, 3, M, lam=2.0, max_iter=50)
    lam = effective_lambda(2.0, X, M)
    Md = M.toarray()
    W = np.maximum(dense.T @ Z, EPS)
    Q = np.maximum(Md.T @ W @ np.linalg.pinv(W.T @ W), EPS)
    objectives = [reference_objective(dense, Z, W, Md, Q, lam)]
    for _ in range(50):
        W = W * (dense.T @ Z + lam * Md @ Q) / (W @ (Z.T @ Z + lam * Q.T @ Q) + EPS)
        Q = Q * (Md.T @ W) / (Q @ W.T @ W + EPS)
        objectives.append(reference_objective(dense, Z, W, Md, Q, lam))
    np.testing.assert_allclose(topics, W.T, rtol=1e-8)
    np.testing.assert_allclose(history, objectives, rtol=1e-9)
    # the objective of eq. (5) never rises with Z held (Theorem 1 for each subproblem)
    assert all(b <= a * (1 + 1e-12) for a, b in zip(history, history[1:]))
    assert history[-1] < history[0]
    # a cluster without documents has an empty topic; labels out of range are refused
    empty, _ = partition_topics(X, np.where(labels == 2, 0, labels), 3, M, max_iter=5)
    assert np.all(empty[2] == 0)
    with pytest.raises(ValueError, match=r"labels must give one cluster in -1\.\.2"):
        partition_topics(X, np.full(X.shape[0], 3), 3, M)
