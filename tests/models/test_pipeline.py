"""The one fit pipeline (semnmf.models.pipeline): every engine returns the same record from
one preparation, the problems honour the declared interface, and the function twins take a
start and can hold the word factors fixed (scikit-learn's ``update_H=False``)."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.preprocessing import normalize

from conftest import planted_corpus
from semnmf import NMF, SemanticNMF, SeNMF, GNMF, non_negative_factorization, semantic_nmf
from semnmf.models.context_term import effective_lambda, prepare_context, relative_weight
from semnmf.models.local import LocalBackend, fit_local
from semnmf.models.nmf import fit_record
from semnmf.models.pipeline import FitOptions, FitProblem, FitResult, Problem


@pytest.fixture(scope="module")
def X():
    X, _ = planted_corpus(n_per=25, k=3, seed=3)
    return X


@pytest.mark.parametrize("model", [NMF(3, random_state=0), NMF(3, loss="kl", random_state=0),
                                   NMF(3, orthogonal=True, random_state=0),
                                   SemanticNMF(3, random_state=0), SeNMF(3, random_state=0),
                                   GNMF(3, random_state=0)],
                         ids=lambda m: repr(m))
def test_every_problem_honours_the_declared_interface(X, model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        record = fit_record(model, X)
    assert isinstance(record, FitResult) and record.engine == "local"
    # the record carries data, not the live problem; the local engine's runs are Problems
    assert not hasattr(record, "problem")
    fresh = clone(model)
    prepared = fresh._prepare(fresh._validate(X, None))
    backend = LocalBackend(prepared)
    assert isinstance(backend.new_run(*backend.start(np.random.RandomState(0), 1)), Problem)
    # the record is what the estimator shows: its attributes come from it
    np.testing.assert_array_equal(model.labels_, record.labels)
    np.testing.assert_array_equal(model.components_, record.W.T)
    assert model.objective_ == record.history[-1]
    assert model.n_iter_ == record.n_iter == len(record.history) - 1
    # SeNMF's core S and its damped steps: fields of the record
    assert (record.context_core is None) == (not isinstance(model, SeNMF))
    if isinstance(model, SeNMF):
        np.testing.assert_array_equal(model.context_core_, record.context_core)
        assert model.n_damped_ == record.n_damped


def test_an_engine_writes_into_no_estimator(X):
    """The local engine runs a prepared problem with options alone: the estimator that
    prepared it is not changed by the run."""
    model = SemanticNMF(3, random_state=0)
    prepared = model._prepare(model._validate(X, None))
    before = dict(vars(model))
    record = fit_local(prepared, FitOptions(random_state=0, name="test"))
    assert vars(model).keys() == before.keys()
    reference = SemanticNMF(3, random_state=0).fit(X)
    np.testing.assert_array_equal(record.labels, reference.labels_)
    assert record.effective_lambda == reference.lambda_ > 0


@pytest.mark.parametrize("n_init, screen_iter, restarts", [(1, None, 10), (5, 1, 10),
                                                          (2, None, 20), (3, 1, 9)])
def test_the_record_keeps_the_best_kmeans_of_the_starts(n_init, screen_iter, restarts):
    """The local engine's ``start_kmeans`` is the best of every spherical k-means restart
    behind its starts: those of one SphericalKMeans with as many restarts in all, drawn
    from the same seed in the same order (screened starts have 10 // n_init each)."""
    from semnmf import SphericalKMeans

    X, _ = planted_corpus(n_per=30, k=4, noise=0.9, seed=8)
    record = fit_record(NMF(6, loss="kl", n_init=n_init, screen_iter=screen_iter,
                            max_iter=20, random_state=5), X)
    alone = SphericalKMeans(6, n_init=restarts, random_state=5).fit(X)
    # the premise: the restarts differ and the first is not the best, so which one is
    # kept is tested
    rng = np.random.RandomState(5)
    one = [SphericalKMeans(6, n_init=1, random_state=rng).fit(X).similarity_
           for _ in range(restarts)]
    assert len(set(one)) > 1 and np.argmax(one) > 0
    km = record.start_kmeans
    np.testing.assert_array_equal(km.labels_, alone.labels_)
    np.testing.assert_array_equal(km.cluster_centers_, alone.cluster_centers_)
    assert km.similarity_ == alone.similarity_


def test_the_record_has_no_kmeans_without_a_kmeans_start(X):
    Z0, W0 = np.full((X.shape[0], 3), 0.5), np.full((X.shape[1], 3), 0.5)
    for model in (NMF(3, init="random", random_state=0), NMF(3, init=(Z0, W0))):
        assert fit_record(model, X).start_kmeans is None


def test_the_relative_weight_is_one_rule(X):
    """The local engine's λ (from X) and the blocked engine's (X's size summed over the
    blocks) come from relative_weight; the online engine's λ_t is the same rule with the
    accumulated S_t."""
    M, lam = prepare_context(X, None, 2.0)
    assert lam == pytest.approx(effective_lambda(2.0, X, M))
    size_X = float((X.data ** 2).sum())
    _, lam_sized = prepare_context(X, M, 2.0, size_X=size_X)
    assert lam_sized == pytest.approx(lam)
    assert relative_weight(2.0, size_X, 0.0) == 0.0           # an empty M has no weight
    assert relative_weight(2.0, size_X, 5.0, "absolute") == 2.0
    blocked = SemanticNMF(3, lam=2.0, max_iter=30, random_state=0).fit([X[:40], X[40:]], M=M)
    local = SemanticNMF(3, lam=2.0, max_iter=30, random_state=0).fit(X, M=M)
    assert blocked.lambda_ == pytest.approx(local.lambda_, rel=1e-12)
    online = SemanticNMF(3, lam=2.0, random_state=0).partial_fit(X, M=M)
    assert online.lambda_ == pytest.approx(local.lambda_, rel=1e-12)  # one batch: S_1 = ‖X‖²


def test_the_twins_take_a_start(X):
    model = NMF(3, max_iter=40, random_state=0)
    Z0 = model.fit_transform(X) + 0.1
    W0 = model.components_.T + 0.1
    Z, W, n_iter = non_negative_factorization(X, 3, init=(Z0, W0), max_iter=40)
    again = NMF(3, init=(Z0, W0), max_iter=40).fit(X)
    np.testing.assert_allclose(W, again.components_.T)
    assert n_iter == again.n_iter_


def test_the_twins_hold_the_word_factors_fixed(X):
    """update_W=False solves Z for given W (as transform does) and returns W as given, up
    to the normalization of Z's columns."""
    model = NMF(3, random_state=0).fit(X)
    W_fixed = model.components_.T.copy()
    Z, W, _ = non_negative_factorization(X, 3, W=W_fixed, update_W=False)
    scale = W / W_fixed
    np.testing.assert_allclose(scale, np.broadcast_to(scale[0], scale.shape), rtol=1e-10)
    np.testing.assert_allclose(Z, normalize(model.transform(X), axis=0), rtol=1e-6, atol=1e-9)
    Z2, W2, Q2, _ = semantic_nmf(X, None, 3, init=(np.full_like(Z, 1 / 3), W_fixed),
                                 update_W=False)
    np.testing.assert_allclose(W2 / W_fixed, np.broadcast_to((W2 / W_fixed)[0], W2.shape),
                               rtol=1e-10)


def test_the_twins_refuse_update_w_without_w(X):
    with pytest.raises(ValueError, match=r"update_W=False holds W fixed: pass it as W="):
        non_negative_factorization(X, 3, update_W=False)
    with pytest.raises(ValueError, match=r"W is the fixed word factors of update_W=False"):
        non_negative_factorization(X, 3, W=np.ones((X.shape[1], 3)))
    with pytest.raises(ValueError, match=r"W has shape"):
        non_negative_factorization(X, 3, W=np.ones((2, 3)), update_W=False)


def test_each_engine_refuses_what_its_row_of_the_table_does_not_run(X):
    """engine.SUPPORT is the one statement of what runs where: the estimators' and the
    engines' refusals are its lines."""
    from semnmf import BlockedMatrix
    from semnmf.models.engine import SUPPORT, unsupported
    from semnmf.models.nmf import prepare_fit

    assert set(SUPPORT) == {"local", "blocked", "torch", "online"}
    assert all(unsupported("local", loss=loss, orthogonal=loss == "frobenius",
                           context_core=True) is None for loss in ("frobenius", "kl"))
    blocks = BlockedMatrix.from_csr(X, n_blocks=2)
    with pytest.raises(ValueError, match=r"^orthogonal=True runs on the local engine only "
                                         r"\(device='cpu', X as one matrix\), not the "
                                         r"blocked engine\.$"):
        NMF(3, orthogonal=True).fit(blocks)
    # the online engine: partial_fit exists where its row says it runs
    assert hasattr(SemanticNMF(3), "partial_fit")
    assert not hasattr(NMF(3, loss="kl"), "partial_fit")
    assert not hasattr(SemanticNMF(3, orthogonal=True), "partial_fit")
    pytest.importorskip("torch")
    from semnmf.models.torch_engine import fit_torch

    problem, options = prepare_fit(SeNMF(3, random_state=0), X)
    with pytest.raises(ValueError, match="SeNMF's M ≈ W S Wᵀ runs on the local engine only, "
                                         "not the torch engine"):
        fit_torch(problem, options, device="cpu")


def test_the_online_engine_is_an_engine(X):
    """partial_fit's engine takes a FitProblem and FitOptions like the others, and its
    result fills the estimator as theirs do."""
    from semnmf.models.online import OnlineEngine

    model = NMF(3, random_state=0).partial_fit(X)
    state = model._online_state
    before = state.W.copy()
    engine = OnlineEngine(state)
    result = engine(FitProblem(X=X, n_components=3, make_problem=None),
                    FitOptions(max_iter=4))
    assert isinstance(result, FitResult) and result.engine == "online"
    assert result.n_iter == 4 and result.history is None and state.n_batches == 2
    assert not np.array_equal(before, state.W) and result.W is state.W
    np.testing.assert_array_equal(result.labels, result.Z.argmax(axis=1))
