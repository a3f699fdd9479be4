"""DCN (Yang et al. 2017): the paper's update rules, training behaviour, the optional extra.

Tests that run PyTorch skip when it is not installed (``pip install "semnmf[deep]"``);
the optional-extra test and the centroid-rule test run without it.
"""

import importlib
import sys
import time

import numpy as np
import pytest
import scipy.sparse as sp

import semnmf.models
from semnmf import nmi
from semnmf.models import deep
from semnmf.models.deep import DCN, _incremental_centroid_update
from conftest import planted_corpus as _planted_corpus


def planted_corpus(n_per=30, k=3, d_per=15, noise=0.05, seed=0):
    """The conftest planted corpus with a little more noise."""
    return _planted_corpus(n_per, k, d_per, noise, seed)


def small_dcn(k=3, **params):
    """A DCN small enough for unit tests (a few hundred mini-batch steps in all)."""
    defaults = dict(hidden_layer_sizes=(32,), latent_dim=3, pretrain_epochs=30,
                    max_iter=15, batch_size=32, n_threads=1, random_state=0)
    defaults.update(params)
    return DCN(k, **defaults)


@pytest.fixture(scope="session")
def torch():
    torch = pytest.importorskip("torch")
    # the first optimizer built in a process imports torch._dynamo (seconds): do it here,
    # so that the timing in test_recovers_planted_clusters measures DCN only
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])
    return torch


# -- reference implementations ----------------------------------------------------------
def reference_centroid_updates(centers, counts, Z, labels):
    """Eq. (7) as written, one sample at a time: c_k += 1; m_k -= (1/c_k)(m_k - z_i)."""
    centers, counts = centers.copy(), counts.copy()
    for z, k in zip(Z, labels):
        counts[k] += 1
        centers[k] = centers[k] - (1.0 / counts[k]) * (centers[k] - z)
    return centers, counts


def reference_objective(model, X, torch):
    """Eq. (3) / n with nearest-centroid assignments, from the fitted network, densely."""
    x = torch.from_numpy(X.toarray().astype(np.float32))
    scale = model.input_scale_
    with torch.no_grad():
        z = model.autoencoder_["encoder"](x * scale)
        recon = ((x - model.autoencoder_["decoder"](z) / scale) ** 2).sum(dim=1).numpy()
    Z = z.numpy().astype(np.float64)
    dist = np.array([[np.sum((zi - m) ** 2) for m in model.cluster_centers_] for zi in Z])
    return np.mean(recon + model.lam_ / 2 * dist.min(axis=1)), recon.mean()


# -- the optional extra -------------------------------------------------------------------
def test_missing_torch_gives_clear_error(monkeypatch):
    """Without torch the module imports, and fitting names the extra to install."""
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` fail
    monkeypatch.delitem(sys.modules, "semnmf.models.deep")
    monkeypatch.setattr(semnmf.models, "deep", deep, raising=False)  # restored after
    fresh = importlib.import_module("semnmf.models.deep")
    assert fresh is not deep
    X, _ = planted_corpus()
    with pytest.raises(ImportError, match=r'pip install "semnmf\[deep\]"'):
        fresh.DCN(3).fit(X)
    with pytest.raises(ImportError, match="PyTorch"):
        fresh._require_torch()


# -- eq. (7): the incremental centroid update ----------------------------------------------
def test_centroid_update_hand_example():
    # m = 0 with count 1; absorbing 2 then 4 (c = 2 then 3): m = 0 + (2-0)/2 = 1,
    # then m = 1 + (4-1)/3 = 2, the running mean of (0, 2, 4).
    centers = np.array([[0.0, 0.0], [5.0, 5.0]])
    counts = np.array([1.0, 7.0])
    _incremental_centroid_update(centers, counts, np.array([[2.0, 0.0], [4.0, 0.0]]),
                                 np.array([0, 0]))
    np.testing.assert_allclose(centers, [[2.0, 0.0], [5.0, 5.0]])
    np.testing.assert_array_equal(counts, [3.0, 7.0])


def test_centroid_update_matches_sequential_rule():
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(4, 3))
    counts = rng.integers(1, 50, size=4).astype(np.float64)
    Z = rng.normal(size=(25, 3))
    labels = rng.integers(0, 3, size=25)  # cluster 3 receives nothing
    expected_centers, expected_counts = reference_centroid_updates(centers, counts, Z, labels)
    got_centers, got_counts = _incremental_centroid_update(centers.copy(), counts.copy(), Z, labels)
    np.testing.assert_allclose(got_centers, expected_centers, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got_counts, expected_counts)
    np.testing.assert_array_equal(got_centers[3], centers[3])


# -- training behaviour --------------------------------------------------------------------
def test_pretraining_reduces_reconstruction_error(torch):
    X, _ = planted_corpus()
    model = small_dcn(max_iter=0).fit(X)  # max_iter=0: the network is the pretrained one
    history = model.pretrain_loss_history_
    assert history.shape == (31,)
    assert history[-1] < 0.5 * history[0]
    assert np.all(history[1:6] < history[0])
    _, recon = reference_objective(model, X, torch)
    assert history[-1] == pytest.approx(recon, rel=1e-5)
    assert model.reconstruction_err_ == pytest.approx(recon, rel=1e-5)


def test_joint_objective_decreases_on_planted_clusters(torch):
    X, _ = planted_corpus()
    model = small_dcn(max_iter=20).fit(X)
    history = model.objective_history_
    assert history.shape == (21,) and model.n_iter_ == 20
    assert history[-1] < 0.8 * history[0]
    # stochastic steps need not be monotone, but the trend must be downhill
    assert np.mean(np.diff(history) < 0) >= 0.9
    expected, _ = reference_objective(model, X, torch)
    assert history[-1] == pytest.approx(expected, rel=1e-5)


def test_recovers_planted_clusters(torch):
    X, y = planted_corpus(n_per=40, k=4, d_per=20)
    start = time.perf_counter()
    labels = small_dcn(4).fit_predict(X)
    assert time.perf_counter() - start < 10
    assert nmi(y, labels) > 0.9


def test_deterministic_under_random_state(torch):
    X, _ = planted_corpus()
    a = small_dcn(max_iter=5, random_state=3).fit(X)
    b = small_dcn(max_iter=5, random_state=3).fit(X)
    c = small_dcn(max_iter=5, random_state=4).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    np.testing.assert_array_equal(a.objective_history_, b.objective_history_)
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    assert not np.allclose(a.pretrain_loss_history_, c.pretrain_loss_history_)


def test_torch_global_state_is_restored(torch):
    X, _ = planted_corpus()
    threads = torch.get_num_threads()
    rng_state = torch.get_rng_state().clone()
    small_dcn(max_iter=1, pretrain_epochs=1, n_threads=1).fit(X)
    assert torch.get_num_threads() == threads
    assert torch.equal(torch.get_rng_state(), rng_state)


def test_sparse_input_densified_one_batch_at_a_time(torch, monkeypatch):
    X, _ = planted_corpus()  # 90 documents
    limit = 16
    monkeypatch.setattr(deep, "_EVAL_BATCH", limit)
    original = sp.csr_matrix.toarray
    shapes = []

    def guarded(self, *args, **kwargs):
        shapes.append(self.shape)
        assert self.shape[0] <= limit, f"densified {self.shape[0]} rows at once"
        return original(self, *args, **kwargs)

    monkeypatch.setattr(sp.csr_matrix, "toarray", guarded)
    model = small_dcn(batch_size=limit, max_iter=2, pretrain_epochs=2).fit(X)
    model.predict(X)
    assert shapes and max(s[0] for s in shapes) <= limit


def test_dense_and_sparse_input_agree(torch):
    X, _ = planted_corpus()
    sparse = small_dcn(max_iter=3, pretrain_epochs=5).fit(X)
    dense = small_dcn(max_iter=3, pretrain_epochs=5).fit(X.toarray())
    np.testing.assert_array_equal(sparse.labels_, dense.labels_)
    np.testing.assert_allclose(sparse.transform(X), dense.transform(X.toarray()))


def test_transform_predict_and_attributes(torch):
    X, _ = planted_corpus()
    model = small_dcn(max_iter=3, pretrain_epochs=5, latent_dim=4).fit(X)
    Z = model.transform(X)
    assert Z.shape == (90, 4) and Z.dtype == np.float64
    assert model.transform(X.astype(np.float32)).dtype == np.float32
    np.testing.assert_array_equal(model.predict(X), model.labels_)
    dist = ((Z[:, None, :] - model.cluster_centers_[None]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(model.labels_, dist.argmin(axis=1))
    assert model.cluster_centers_.shape == (3, 4)
    assert model.cluster_counts_.sum() >= 90 * (1 + 3)  # k-means sizes + 3 epochs of samples
    assert model.n_features_in_ == X.shape[1]
    # the network sees s·X with entries of mean square 1 (unit rows: s = sqrt(d))
    assert model.input_scale_ ** 2 * X.multiply(X).sum() / np.prod(X.shape) == pytest.approx(1)


def test_int_hidden_layer_and_verbose_progress(torch, capsys):
    X, _ = planted_corpus()
    model = small_dcn(hidden_layer_sizes=16, max_iter=2, pretrain_epochs=2, verbose=1).fit(X)
    assert model.autoencoder_["encoder"][0].out_features == 16
    err = capsys.readouterr().err
    assert "DCN pretraining" in err and "DCN joint training" in err


def test_lambda_scaling_and_sgd_solver(torch):
    X, _ = planted_corpus()
    absolute = small_dcn(max_iter=2, pretrain_epochs=3, cluster_weight=0.3, lam_scale="absolute").fit(X)
    assert absolute.lam_ == 0.3
    relative = small_dcn(max_iter=0, pretrain_epochs=3, cluster_weight=2.0).fit(X)
    Z = relative.transform(X)
    # relative: λ = lam · R0 / K0, with R0 after pretraining and K0 the k-means loss
    k0 = np.mean(((Z - relative.cluster_centers_[relative.labels_]) ** 2).sum(axis=1))
    assert relative.lam_ == pytest.approx(2.0 * relative.reconstruction_err_ / k0, rel=1e-4)
    sgd = small_dcn(max_iter=5, solver="sgd", learning_rate=0.05, cluster_weight=1.0,
                    lam_scale="absolute").fit(X)
    assert sgd.pretrain_loss_history_[-1] < sgd.pretrain_loss_history_[0]
    assert sgd.objective_history_[-1] < sgd.objective_history_[0]


def test_divergence_is_reported(torch):
    X, _ = planted_corpus()
    with pytest.raises(ValueError, match="diverged.*learning_rate"):
        small_dcn(solver="sgd", learning_rate=1e3, pretrain_epochs=3).fit(X)


# -- bad input -----------------------------------------------------------------------------
def test_bad_input(torch):
    X, _ = planted_corpus()
    bad = X.toarray()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        small_dcn().fit(bad)
    with pytest.raises(ValueError, match="larger than the number of documents"):
        small_dcn(100).fit(X)
    with pytest.raises(ValueError, match="2D|2-D"):
        small_dcn().fit(np.ones(10))
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        small_dcn(hidden_layer_sizes=(32, 0)).fit(X)
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        small_dcn(hidden_layer_sizes=(3.5,)).fit(X)
    with pytest.raises(ValueError, match="cluster_weight"):
        small_dcn(cluster_weight=-1).fit(X)
    with pytest.raises(ValueError, match="batch_size"):
        small_dcn(batch_size=0).fit(X)
    with pytest.raises(ValueError, match="solver"):
        small_dcn(solver="lbfgs").fit(X)
    with pytest.raises(ValueError, match="dtype|convert"):
        small_dcn().fit([["a", "b"], ["c", "d"]])
    model = small_dcn(max_iter=1, pretrain_epochs=1).fit(X)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :10])


# -- scikit-learn API ----------------------------------------------------------------------
