"""The torch engine (semnmf.models.torch_engine) against the local engine, on PyTorch's CPU
build: from one prepared FitProblem, float64 on the device gives the local engine's
objective history to ~1e-10 relative and its labels (NMF and SemanticNMF, Frobenius and
KL, one start and screened starts); float32 gives the labels on the planted corpus; the
KL objective never increases; the two ways of forming the KL ratios agree; the estimators'
``device`` parameter. A CUDA test runs where a GPU is usable."""

import importlib.util
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

if importlib.util.find_spec("torch") is None:
    pytest.skip('PyTorch is not installed (the torch engine\'s extra: pip install '
                '"semnmf[gpu]", or the CPU build for the tests)', allow_module_level=True)

import torch  # noqa: E402

from conftest import planted_corpus  # noqa: E402
from semnmf import NMF, SemanticNMF  # noqa: E402
from semnmf.models import torch_engine  # noqa: E402
from semnmf.models._solvers.torch_problems import DeviceCSR  # noqa: E402
from semnmf.models.local import fit_local  # noqa: E402
from semnmf.models.nmf import fit_record  # noqa: E402
from semnmf.models.pipeline import FitResult, Problem  # noqa: E402
from semnmf.models.torch_engine import fit_torch  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _planted():
    X, _ = planted_corpus(n_per=25, k=3, seed=3)
    return X, None


def _random_sparse():
    """A small random problem without planted clusters (long histories, distinct
    starts), with a rectangular word-context matrix (Mᵀ a CSR of its own)."""
    rng = np.random.default_rng(7)
    X = sp.random(80, 50, density=0.12, format="csr", random_state=rng)
    X.data = rng.gamma(2.0, 1.0, X.nnz)
    M = sp.random(50, 35, density=0.2, format="csr", random_state=rng)
    return X, M


CORPORA = {"planted": _planted, "random": _random_sparse}

ESTIMATORS = [
    (NMF, "frobenius"), (NMF, "kl"), (SemanticNMF, "frobenius"), (SemanticNMF, "kl"),
]


def _prepared(cls, loss, corpus, **params):
    X, M = CORPORA[corpus]()
    k = 3
    # the planted corpus converges within MIN_ITER sweeps: its runs make all 60 (tol = 0);
    # the random one stops by the rule (35-71 sweeps)
    tol = 0.0 if corpus == "planted" else 1e-5
    params = {"random_state": 0, "max_iter": 60 if corpus == "planted" else 300, "tol": tol,
              **params}
    model = cls(k, loss=loss, **params)
    inputs = {"M": M} if cls is SemanticNMF else {}
    problem = model._prepare(model._validate(X, None), **inputs)
    return problem, model._options()


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


@pytest.fixture
def device_runs(monkeypatch):
    """The runs the torch engine makes (its record keeps data, not the live problem)."""
    runs = []
    new_run = torch_engine.TorchBackend.new_run

    def recorded(self, Z, W):
        runs.append(new_run(self, Z, W))
        return runs[-1]

    monkeypatch.setattr(torch_engine.TorchBackend, "new_run", recorded)
    return runs


def _same_partition(a, b):
    """The same clusters under other names: a one-to-one map between the labels."""
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def _assert_same_run(local, device, rtol=1e-10, tied_starts=False):
    """The same run. ``tied_starts``: the starts are one partition under permuted cluster
    names (screened starts on the planted corpus): their objectives tie to rounding, so
    either engine may keep another of them: the same history and the same partition."""
    assert device.n_iter == local.n_iter
    np.testing.assert_allclose(device.history, local.history, rtol=rtol, atol=0)
    if tied_starts:
        assert _same_partition(device.labels, local.labels)
        return
    np.testing.assert_array_equal(device.labels, local.labels)
    np.testing.assert_allclose(device.errors, local.errors, rtol=1e-8)
    np.testing.assert_allclose(device.W, local.W, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(device.Z, local.Z, rtol=1e-7, atol=1e-12)
    if local.Q is not None:
        np.testing.assert_allclose(device.Q, local.Q, rtol=1e-7, atol=1e-12)
    assert device.effective_lambda == local.effective_lambda


@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("starts", [{}, {"n_init": 3, "screen_iter": 2}],
                         ids=["one-start", "screened"])
@pytest.mark.parametrize("cls, loss", ESTIMATORS, ids=lambda v: getattr(v, "__name__", v))
def test_float64_follows_the_local_engine(cls, loss, corpus, starts, device_runs):
    problem, options = _prepared(cls, loss, corpus, **starts)
    local = _quiet(fit_local, problem, options)
    device = _quiet(fit_torch, problem, options, device="cpu", dtype="float64")
    assert device.engine == "torch:cpu"
    assert isinstance(device, FitResult) and not hasattr(device, "problem")
    assert device_runs and all(isinstance(run, Problem) for run in device_runs)
    assert len(device.history) > 11
    _assert_same_run(local, device, tied_starts=bool(starts) and corpus == "planted")


@pytest.mark.parametrize("cls, loss", ESTIMATORS, ids=lambda v: getattr(v, "__name__", v))
def test_a_given_start_and_fixed_word_factors(cls, loss):
    """``init=(Z, W)`` and ``update_W=False`` (the function twins' problems) too."""
    X, M = _random_sparse()
    rng = np.random.default_rng(1)
    Z0, W0 = rng.random((X.shape[0], 3)) + 0.1, rng.random((X.shape[1], 3)) + 0.1
    for update_W in (True, False):
        model = cls(3, loss=loss, init=(Z0, W0), max_iter=40, tol=1e-7)
        inputs = {"M": M} if cls is SemanticNMF else {}
        problem = model._prepare(model._validate(X, None), update_W=update_W, **inputs)
        local = _quiet(fit_local, problem, model._options())
        device = _quiet(fit_torch, problem, model._options(), device="cpu", dtype="float64")
        _assert_same_run(local, device)
    np.testing.assert_array_equal(Z0, np.random.default_rng(1).random((X.shape[0], 3)) + 0.1)


@pytest.mark.parametrize("cls, loss", ESTIMATORS, ids=lambda v: getattr(v, "__name__", v))
def test_float32_gives_the_labels_of_the_planted_corpus(cls, loss, device_runs):
    problem, options = _prepared(cls, loss, "planted", tol=1e-4)
    local = _quiet(fit_local, problem, options)
    device = _quiet(fit_torch, problem, options, device="cpu")   # float32 by default
    assert device_runs and all(run.Z.dtype == torch.float32 for run in device_runs)
    assert device.W.dtype == np.float64                          # back in X's dtype
    np.testing.assert_array_equal(device.labels, local.labels)
    assert device.history[-1] == pytest.approx(local.history[-1], rel=1e-4)


@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("cls", [NMF, SemanticNMF])
def test_the_kl_objective_never_increases(cls, corpus):
    problem, options = _prepared(cls, "kl", corpus, max_iter=80, tol=0)
    record = _quiet(fit_torch, problem, options, device="cpu", dtype="float64")
    history = np.asarray(record.history)
    assert len(history) == 81
    assert np.all(np.diff(history) <= 1e-12 * history[:-1])


@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
def test_sampled_ratios_and_chunked_gather_agree(index_dtype):
    X, _ = _random_sparse()
    rng = np.random.default_rng(3)
    L = torch.as_tensor(rng.random((X.shape[0], 4)))
    R = torch.as_tensor(rng.random((X.shape[1], 4)))
    L[0] = 0  # (L Rᵀ)_0j = 0: the floor
    sampled = DeviceCSR(X, torch, "cpu", torch.float64, index_dtype, ratios="sampled")
    gathered = DeviceCSR(X, torch, "cpu", torch.float64, index_dtype, ratios="gather",
                         chunk=17)  # many chunks, the last one short
    P1, log1 = sampled.ratios(L, R, with_log=True)
    P2, log2 = gathered.ratios(L, R, with_log=True)
    torch.testing.assert_close(P1, P2, rtol=1e-13, atol=0)
    assert float(log1) == pytest.approx(float(log2), rel=1e-13)
    dense = X.toarray()
    S = np.maximum(L.numpy() @ R.numpy().T, sampled.floor)
    ratio = np.divide(dense, S, out=np.zeros_like(dense), where=dense > 0)
    np.testing.assert_allclose(P1.numpy(), ratio @ R.numpy(), rtol=1e-12)
    logs = np.log(ratio, out=np.zeros_like(ratio), where=dense > 0)
    assert float(log1) == pytest.approx(float(np.sum(dense * logs)), rel=1e-12)


@pytest.mark.parametrize("cls, loss", ESTIMATORS, ids=lambda v: getattr(v, "__name__", v))
def test_the_gathered_ratios_give_the_same_fit(cls, loss):
    problem, options = _prepared(cls, loss, "random")
    sampled = _quiet(fit_torch, problem, options, device="cpu", dtype="float64",
                     ratios="sampled")
    gathered = _quiet(fit_torch, problem, options, device="cpu", dtype="float64",
                      ratios="gather", chunk=29, index_dtype=torch.int64)
    _assert_same_run(sampled, gathered, rtol=1e-12)


def test_the_estimators_run_the_torch_engine_for_a_gpu_device(monkeypatch):
    """device="cuda" puts the fit on the torch engine (here its CPU device, the GPU checks
    patched away): the estimator's attributes come from its record, in X's dtype."""
    monkeypatch.setattr(torch_engine, "check_device", lambda device: None)
    monkeypatch.setattr(torch_engine, "select_device", lambda device: "cpu")
    X, _ = _planted()
    for cls in (NMF, SemanticNMF):
        for loss in ("frobenius", "kl"):
            model = cls(3, loss=loss, random_state=0, device="cuda")
            record = _quiet(fit_record, model, X)
            reference = _quiet(cls(3, loss=loss, random_state=0).fit, X)
            assert model.engine_ == record.engine == "torch:cpu"
            assert reference.engine_ == "local"
            np.testing.assert_array_equal(model.labels_, reference.labels_)
            assert model.components_.dtype == np.float64
            assert model.objective_ == pytest.approx(reference.objective_, rel=1e-4)
            # transform and predict stay on the CPU path
            np.testing.assert_array_equal(model.predict(X), model.labels_)


def test_device_checks_are_one_line_errors(monkeypatch):
    X, _ = _planted()
    with pytest.raises(ValueError, match="device") as error:
        NMF(3, device="tpu").fit(X)
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="orthogonal"):
        NMF(3, orthogonal=True, device="cuda:0").fit(X)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA") as error:
            SemanticNMF(3, device="cuda").fit(X)
        assert "\n" not in str(error.value)
        assert str(error.value).startswith("device='cuda' needs a CUDA GPU")
        model = _quiet(NMF(3, device="auto", random_state=0).fit, X)
        assert model.engine_ == "local"
    monkeypatch.setitem(sys.modules, "torch", None)  # torch missing
    with pytest.raises(ImportError, match=r"semnmf\[gpu\]") as error:
        NMF(3, device="cuda").fit(X)
    assert "\n" not in str(error.value)
    assert _quiet(NMF(3, device="auto", random_state=0).fit, X).engine_ == "local"


def test_auto_says_which_engine_it_chose(monkeypatch, caplog):
    import logging

    X, _ = _planted()
    with caplog.at_level(logging.INFO, logger="semnmf"):
        model = _quiet(NMF(3, device="auto", random_state=0).fit, X)
    chose = [r.getMessage() for r in caplog.records if "device='auto' chose" in r.getMessage()]
    expected = "torch" if torch.cuda.is_available() else "the CPU (local engine)"
    assert len(chose) == 1 and expected in chose[0]
    assert model.engine_.startswith("torch:cuda" if torch.cuda.is_available() else "local")
    # a usable GPU (patched: torch's CPU device) is chosen, orthogonal NMF stays on the CPU
    monkeypatch.setattr(torch_engine, "gpu_usable", lambda device="cuda": True)
    monkeypatch.setattr(torch_engine, "check_device", lambda device: None)
    monkeypatch.setattr(torch_engine, "_device_name", lambda torch, device: torch.device("cpu"))
    assert _quiet(NMF(3, device="auto", random_state=0).fit, X).engine_ == "torch:cpu"
    assert _quiet(NMF(3, device="auto", orthogonal=True, random_state=0).fit,
                  X).engine_ == "local"


def test_importing_semnmf_and_the_engine_loads_no_torch():
    code = ("import sys, semnmf, semnmf.models.torch_engine, semnmf.models.nmf; "
            "from semnmf import NMF; NMF(2, device='cuda'); "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(ROOT / "src"),
                                          "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "False"


def test_the_gpu_check_script_runs_quick_on_cpu(tmp_path):
    script = ROOT / "benchmarks" / "gpu_check.py"
    out = subprocess.run([sys.executable, str(script), "--quick", "--device", "cpu",
                          "--threads", "1", "--out", str(tmp_path)], capture_output=True,
                         text=True,
                         env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin",
                              "HOME": str(tmp_path)}, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    report = (tmp_path / "gpu.md").read_text()
    for section in ("## Machine", "## Agreement", "## Per iteration", "## Synthetic"):
        assert section in report
    bbc = ROOT.parent / "shared" / "datasets" / "bbc" / "counts.mtx"
    assert ("## End to end" in report) == bbc.is_file()  # a corpus folder: one nmf run
    assert "failed" not in report


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("cls, loss", ESTIMATORS, ids=lambda v: getattr(v, "__name__", v))
def test_cuda_follows_the_local_engine(cls, loss):
    problem, options = _prepared(cls, loss, "random")
    local = _quiet(fit_local, problem, options)
    device = _quiet(fit_torch, problem, options, device="cuda", dtype="float64")
    assert device.engine.startswith("torch:cuda")
    _assert_same_run(local, device, rtol=1e-9)
    single = _quiet(fit_torch, *_prepared(cls, loss, "planted", tol=1e-4), device="cuda")
    reference = _quiet(fit_local, *_prepared(cls, loss, "planted", tol=1e-4))
    np.testing.assert_array_equal(single.labels, reference.labels)
    model = _quiet(cls(3, loss=loss, random_state=0, device="cuda").fit,
                   _planted()[0])
    assert model.engine_.startswith("torch:cuda")
