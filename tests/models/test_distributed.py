"""The blocked engine (X as row blocks) computes the local engine's iterates; the Dask
engine the same on workers; partial_fit learns the planted clusters from mini-batches."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import planted_corpus
from semnmf import GNMF, NMF, BlockedMatrix, SemanticNMF
from semnmf.metrics import nmi
from semnmf.models import blocked as distributed


@pytest.fixture(scope="module")
def data():
    X, y = planted_corpus(n_per=40, k=4, noise=0.08, seed=1)
    order = np.random.default_rng(0).permutation(X.shape[0])
    return X[order], y[order]


def _blocks(X, size):
    return [X[a:a + size] for a in range(0, X.shape[0], size)]


@pytest.mark.parametrize("cls", [NMF, SemanticNMF])
@pytest.mark.parametrize("init", ["skmeans", "random"])
def test_blocked_engine_gives_the_local_iterates(data, cls, init):
    X, _ = data
    local = cls(4, init=init, max_iter=60, random_state=0)
    Z = local.fit_transform(X)
    blocked = cls(4, init=init, max_iter=60, random_state=0)
    Zb = blocked.fit_transform(_blocks(X, 37))
    assert local.engine_ == "local" and blocked.engine_ == "serial"
    assert np.array_equal(local.labels_, blocked.labels_)
    assert blocked.n_iter_ == local.n_iter_
    np.testing.assert_allclose(blocked.objective_history_, local.objective_history_,
                               rtol=1e-10)
    np.testing.assert_allclose(Zb, Z, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(blocked.components_, local.components_, rtol=1e-8, atol=1e-12)
    if cls is SemanticNMF:
        assert blocked.lambda_ == pytest.approx(local.lambda_, rel=1e-12)
        np.testing.assert_allclose(blocked.context_components_, local.context_components_,
                                   rtol=1e-8, atol=1e-12)
    np.testing.assert_array_equal(blocked.predict(X), local.predict(X))


def test_given_start_and_word_context_matrix(data):
    X, _ = data
    rng = np.random.default_rng(0)
    start = (rng.random((X.shape[0], 4)) + 0.1, rng.random((X.shape[1], 4)) + 0.1)
    M = sp.random(X.shape[1], X.shape[1], density=0.2, random_state=0, format="csr")
    local = SemanticNMF(4, init=start, max_iter=30, tol=0, random_state=0).fit(X, M=M)
    blocked = SemanticNMF(4, init=start, max_iter=30, tol=0, random_state=0).fit(
        BlockedMatrix.from_csr(X, n_blocks=3), M=M)
    assert np.array_equal(local.labels_, blocked.labels_)
    np.testing.assert_allclose(blocked.objective_history_, local.objective_history_,
                               rtol=1e-10)


def test_empty_documents_get_minus_one(data):
    X, _ = data
    X = sp.vstack([X[:20], sp.csr_matrix((1, X.shape[1])), X[20:]], format="csr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        local = NMF(4, max_iter=20, random_state=0).fit(X)
    blocked = NMF(4, max_iter=20, random_state=0).fit(_blocks(X, 50))
    assert blocked.labels_[20] == -1
    assert np.array_equal(local.labels_, blocked.labels_)


def test_sampled_start_for_large_corpora(data, monkeypatch):
    X, y = data
    monkeypatch.setattr(distributed, "CLIENT_START_MAX_NNZ", 0)
    monkeypatch.setattr(distributed, "SAMPLE_DOCUMENTS", 60)
    model = NMF(4, max_iter=80, random_state=0).fit(_blocks(X, 30))
    assert nmi(y, model.labels_) > 0.9


def test_refused(data):
    X, _ = data
    blocks = _blocks(X, 50)
    with pytest.raises(ValueError, match="Frobenius"):
        NMF(4, loss="kl").fit(blocks)
    with pytest.raises(ValueError, match="Frobenius"):
        SemanticNMF(4, orthogonal=True).fit(blocks)
    with pytest.raises(TypeError, match="NMF and SemanticNMF"):
        GNMF(4).fit(blocks)
    with pytest.raises(ValueError, match="different numbers of columns"):
        NMF(4).fit([X[:10], X[10:, :-1]])
    with pytest.raises(ValueError, match="negative"):
        NMF(4).fit([X[:10], -X[10:]])
    with pytest.raises(ValueError, match="M has"):
        SemanticNMF(4).fit(blocks, M=sp.eye(3, format="csr"))


def test_dask_array_without_a_client_runs_here(data):
    da = pytest.importorskip("dask.array")
    from semnmf._utils.blocks import dask_client

    if dask_client() is not None:
        pytest.skip("a distributed client is active")
    X, _ = data
    model = NMF(4, max_iter=20, random_state=0).fit(
        da.from_array(X, chunks=(50, -1), asarray=False))
    assert model.engine_ == "serial"
    with pytest.raises(ValueError, match="rows only"):
        NMF(4).fit(da.from_array(X, chunks=(50, 10), asarray=False))


# -- partial_fit ------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [NMF, SemanticNMF])
def test_partial_fit_reaches_fit_nmi(data, cls):
    X, y = data
    fitted = nmi(y, cls(4, random_state=0).fit(X).labels_)
    model = cls(4, random_state=0)
    for _ in range(3):                       # three passes over batches of 40 documents
        for batch in _blocks(X, 40):
            model.partial_fit(batch, forget_factor=0.8)
    assert model.engine_ == "online" and model.n_batches_ == 12
    assert model.n_documents_seen_ == 3 * X.shape[0]
    assert model.components_.shape == (4, X.shape[1])
    assert nmi(y, model.predict(X)) >= fitted - 0.05
    assert model.labels_.shape == (40,)


def test_partial_fit_checks(data):
    X, _ = data
    with pytest.raises(ValueError, match="forget_factor"):
        NMF(4).partial_fit(X, forget_factor=0)
    model = SemanticNMF(4, random_state=0).partial_fit(X[:40])
    with pytest.raises(ValueError, match="first partial_fit"):
        model.partial_fit(X[40:80], M=sp.eye(X.shape[1], format="csr"))
    with pytest.raises(ValueError, match="features"):
        model.partial_fit(X[40:80, :-1])
    with pytest.raises(ValueError, match="fewer than"):
        NMF(4).partial_fit(X[:2])
    assert not hasattr(GNMF(4), "partial_fit")
    assert not hasattr(NMF(4, loss="kl"), "partial_fit")
    assert not hasattr(SemanticNMF(4, orthogonal=True), "partial_fit")


# -- Dask ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def client():
    pytest.importorskip("distributed", reason="the Dask engine needs the [dask] extra")
    from semnmf._utils.blocks import start_client

    client = start_client(workers=2, processes=False)
    yield client
    client.close()
    client.cluster.close()


@pytest.mark.parametrize("cls", [NMF, SemanticNMF])
def test_dask_array_on_workers_gives_the_local_iterates(data, client, cls):
    da = pytest.importorskip("dask.array")
    X, _ = data
    local = cls(4, max_iter=60, random_state=0).fit(X)
    dX = da.from_array(X, chunks=(45, -1), asarray=False)
    model = cls(4, max_iter=60, random_state=0).fit(dX)
    assert model.engine_ == "dask"
    assert np.array_equal(local.labels_, model.labels_)
    np.testing.assert_allclose(model.objective_history_, local.objective_history_,
                               rtol=1e-10)


def test_sharded_corpus_on_workers(tmp_path, client):
    from conftest import make_planted
    from semnmf import Corpus
    from semnmf.text.shards import ShardedCorpus, write_shards

    texts, labels = make_planted(30)
    write_shards(tmp_path, texts, labels, shard_size=20)
    sharded = ShardedCorpus(tmp_path, client=client)
    corpus = Corpus(texts, labels)
    assert abs(sharded.tfidf() - corpus.tfidf()).max() == 0
    assert abs(sharded.word_context("window") - corpus.word_context("window")).max() == 0
    X = sharded.blocks()
    assert X.executor.name == "dask" and len(X) == 5
    model = SemanticNMF(3, random_state=0).fit(X)
    local = SemanticNMF(3, random_state=0).fit(corpus.tfidf())
    assert np.array_equal(model.labels_, local.labels_)
