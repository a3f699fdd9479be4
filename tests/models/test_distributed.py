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
@pytest.mark.parametrize("loss", ["frobenius", "kl"])
def test_blocked_engine_gives_the_local_iterates(data, cls, init, loss):
    X, _ = data
    local = cls(4, loss=loss, init=init, max_iter=60, random_state=0)
    Z = local.fit_transform(X)
    blocked = cls(4, loss=loss, init=init, max_iter=60, random_state=0)
    Zb = blocked.fit_transform(_blocks(X, 37))
    assert local.engine_ == "local" and blocked.engine_ == "blocked:serial"
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


def test_empty_documents_get_minus_one_and_strengths_come_from_the_blocks(data):
    from semnmf.pipelines.saved import strengths_from_factors

    X, _ = data
    X = sp.vstack([X[:20], sp.csr_matrix((1, X.shape[1])), X[20:]], format="csr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        local = NMF(4, max_iter=20, random_state=0)
        Z = local.fit_transform(X)
    blocked = NMF(4, max_iter=20, random_state=0).fit(_blocks(X, 50))
    assert blocked.labels_[20] == -1
    assert np.array_equal(local.labels_, blocked.labels_)
    # fit_record: Z stays in the blocks; labels and the strengths (each document's share
    # of its cluster) are computed there, as from the gathered Z
    from semnmf.models.nmf import fit_record

    model = NMF(4, max_iter=20, random_state=0)
    result = fit_record(model, _blocks(X, 50))
    assert result.Z is None  # the fit record, Z not gathered
    assert result.strengths[20] == 0 and model.labels_[20] == -1
    np.testing.assert_allclose(result.strengths, strengths_from_factors(Z, model.labels_),
                               rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(result.document_factors(), Z, rtol=1e-8, atol=1e-12)


def test_sampled_start_for_large_corpora(data, monkeypatch):
    X, y = data
    monkeypatch.setattr(distributed, "CLIENT_START_MAX_NNZ", 0)
    monkeypatch.setattr(distributed, "SAMPLE_DOCUMENTS", 60)
    model = NMF(4, max_iter=80, random_state=0).fit(_blocks(X, 30))
    assert nmi(y, model.labels_) > 0.9


def test_refused(data):
    X, _ = data
    blocks = _blocks(X, 50)
    with pytest.raises(ValueError, match="orthogonal=True runs on the local engine"):
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
    assert model.engine_ == "blocked:serial"
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


STALE = ("objective_", "objective_history_", "reconstruction_err_", "context_err_")


@pytest.mark.parametrize("cls", [NMF, SemanticNMF])
def test_partial_fit_after_fit_continues_from_the_fitted_factors(data, cls):
    """fit -> partial_fit: the batch updates the fitted W (not a restart), and the fitted
    attributes describe the batch (n_iter_) or are gone (objective_ ...), none stale."""
    X, y = data
    model = cls(4, random_state=0).fit(X)
    fitted_W = model.components_.copy()
    fitted_nmi = nmi(y, model.labels_)
    model.partial_fit(X[:40], max_inner_iter=3)
    assert model.n_batches_ == 1 and model.n_iter_ == 3
    assert all(not hasattr(model, name) for name in STALE)
    # one small step from the fitted factors: W moves little, the clusters are kept
    change = np.linalg.norm(model.components_ - fitted_W) / np.linalg.norm(fitted_W)
    restart = cls(4, random_state=0).partial_fit(X[:40], max_inner_iter=3)
    assert change < np.linalg.norm(restart.components_ - fitted_W) / np.linalg.norm(fitted_W)
    assert change < 0.5
    assert nmi(y, model.predict(X)) >= fitted_nmi - 0.05
    # a fresh start from the same batch is not what partial_fit after fit gives
    assert not np.allclose(model.components_, restart.components_)


@pytest.mark.parametrize("cls", [NMF, SemanticNMF])
def test_fit_discards_the_online_state(data, cls):
    """partial_fit x n -> fit -> partial_fit: fit starts over (the state of the earlier
    batches is gone), and the next partial_fit continues from fit's factors with new
    statistics: the same as fit -> partial_fit on a fresh estimator."""
    X, _ = data
    model = cls(4, random_state=0)
    for batch in _blocks(X, 40)[:3]:
        model.partial_fit(batch)
    model.fit(X)
    fresh = cls(4, random_state=0).fit(X)
    np.testing.assert_array_equal(model.components_, fresh.components_)
    assert model.engine_ == "local" and model.objective_ == fresh.objective_
    assert not hasattr(model, "n_batches_") and not hasattr(model, "n_documents_seen_")
    assert getattr(model, "_online_state", None) is None
    model.partial_fit(X[40:80])
    fresh.partial_fit(X[40:80])
    assert model.n_batches_ == 1 and model.n_documents_seen_ == 40
    np.testing.assert_array_equal(model.components_, fresh.components_)
    assert all(not hasattr(model, name) for name in STALE)


@pytest.mark.parametrize("cls", [NMF, SemanticNMF])
def test_partial_fit_only_sets_consistent_attributes(data, cls):
    X, _ = data
    model = cls(4, random_state=0)
    for i, batch in enumerate(_blocks(X, 40)[:3], start=1):
        model.partial_fit(batch, max_inner_iter=4)
        assert model.n_batches_ == i and model.n_iter_ == 4
        assert all(not hasattr(model, name) for name in STALE)
        assert model.engine_ == "online"


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


@pytest.mark.parametrize("cls, loss, starts", [
    (NMF, "frobenius", {}), (SemanticNMF, "frobenius", {}), (SemanticNMF, "kl", {}),
    # the command line's default: screened starts
    (SemanticNMF, "kl", {"n_init": 3, "screen_iter": 1})])
def test_dask_array_on_workers_gives_the_local_iterates(data, client, cls, loss, starts):
    da = pytest.importorskip("dask.array")
    X, _ = data
    local = cls(4, loss=loss, max_iter=60, random_state=0, **starts).fit(X)
    dX = da.from_array(X, chunks=(45, -1), asarray=False)
    model = cls(4, loss=loss, max_iter=60, random_state=0, **starts).fit(dX)
    assert model.engine_ == "blocked:dask"
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
    # M is made on a worker: its warnings are raised again on the client
    with pytest.warns(UserWarning, match="left no word context"):
        assert sharded.word_context("window", threshold=1e9, max_nnz=10).nnz == 0
    X = sharded.blocks()
    assert X.executor.name == "dask" and len(X) == 5
    model = SemanticNMF(3, random_state=0).fit(X)
    local = SemanticNMF(3, random_state=0).fit(corpus.tfidf())
    assert np.array_equal(model.labels_, local.labels_)


def test_the_modules_of_the_block_tasks_do_not_load_numba():
    # a Dask worker imports the modules whose functions it runs (the block tasks of the
    # sweep, the start and the shard readers); numba costs each worker about 55 MB (the
    # KL block tasks import it inside the tasks, so only a KL fit pays it)
    import os
    import subprocess
    import sys

    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    code = ("import sys, numpy\n"
            "import semnmf.models.blocked, semnmf.models._solvers.distributed\n"
            "import semnmf.models._solvers.distributed_kl\n"
            "import semnmf.text.shards, semnmf.text.context\n"
            "from semnmf.models._solvers.distributed import block_z_update, block_statistics\n"
            # nor does the client of a fit on blocks without a word-context matrix
            "import scipy.sparse as sp\n"
            "from semnmf import NMF\n"
            "X = sp.random(60, 30, density=0.3, random_state=0, format='csr')\n"
            "assert NMF(2, max_iter=5).fit([X[:25], X[25:]]).engine_ == 'blocked:serial'\n"
            "print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.path.abspath(src)}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


# -- fold: map and reduce holding one part per thread ---------------------------------------
class _Part:
    """A mergeable part that counts how many parts are alive at once."""
    alive = 0
    most = 0

    def __init__(self, value):
        self.value = np.asarray(value, dtype=float)
        _Part.alive += 1
        _Part.most = max(_Part.most, _Part.alive)

    def __del__(self):
        _Part.alive -= 1

    def merge(self, other):
        self.value = self.value + other.value
        return self


def _make_part(i, scale):
    return _Part([i * scale, 1.0])


def _value(total):
    return total.value


def test_serial_fold_holds_one_part_at_a_time():
    from semnmf._utils.blocks import SerialExecutor

    _Part.alive = _Part.most = 0
    ex = SerialExecutor()
    total = ex.fold(_make_part, range(10), 2.0, then=_value)
    assert total.tolist() == [90.0, 10.0]
    assert _Part.most == 2  # the running total and the part being added, never 10
    arrays = [np.arange(3.0) * i for i in range(5)]
    assert np.array_equal(ex.fold(lambda a: a, arrays), ex.reduce(arrays))
    assert ex.fold(_make_part, []) is None


def test_dask_fold_sums_every_block_once_in_a_chain_per_thread(client):
    from semnmf._utils.blocks import DaskExecutor, SerialExecutor

    ex = DaskExecutor(client)
    assert ex.n_threads() == 2
    for n in (1, 2, 7):
        expected = SerialExecutor().fold(_make_part, range(n), 3.0, then=_value)
        assert np.array_equal(ex.fold(_make_part, range(n), 3.0, then=_value), expected)
    counts = [sp.random(20, 20, density=0.2, format="csr", random_state=i) for i in range(5)]
    assert abs(ex.fold(sp.csr_matrix, counts) - sum(counts[1:], counts[0])).max() < 1e-12
    assert ex.fold(_make_part, [], then=lambda total: total) is None


def _chain_totals_held(total):
    """Run as ``then`` on a worker: how many of the chains' running totals the cluster
    still holds (waiting up to 5 s for releases in flight)."""
    import time

    from distributed import get_client

    deadline = time.monotonic() + 5
    while True:
        held = sum(str(key).startswith("_fold_step") for keys in get_client().has_what().values()
                   for key in keys)
        if not held or time.monotonic() > deadline:
            return held
        time.sleep(0.05)


def test_dask_fold_frees_the_chains_before_the_last_step(client):
    """Once the chains' totals are summed, only the sum stays on the workers while
    ``then`` runs (the M of a word context is made from it): not the totals too."""
    from semnmf._utils.blocks import DaskExecutor

    assert DaskExecutor(client).fold(_make_part, range(6), 1.0, then=_chain_totals_held) == 0
