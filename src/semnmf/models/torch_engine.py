"""The torch engine: a :class:`~semnmf.models.pipeline.FitProblem` on one PyTorch device
(a GPU, or PyTorch's CPU build for the tests), behind the same
:class:`~semnmf.models.pipeline.Engine` interface as :func:`~semnmf.models.local.fit_local`.

NMF and Semantic-NMF, Frobenius or KL loss, by the problems of
:mod:`semnmf.models._solvers.torch_problems`. The start (drawn on the host as the local
engine draws it), the restarts and stopping rule (:func:`~semnmf.models._solvers.mu.best_of_runs`)
and the normalization and labels (on the host, in X's dtype) are the local engine's, so
from the same start on float64 it follows the local engine's iterates up to the order of
summation. The factors are float32 on the device by default. PyTorch is imported on first
use only.
"""

import numpy as np

from .._utils.blocks import is_blocked
from .._utils.validation import empty_rows
from ._solvers.sparse import transpose_csr
from ._solvers.torch_problems import DeviceOperators, TorchFrobenius, TorchKL
from .engine import Backend, HostStart, check_support, run_engine
from .init import initialize_context_factor
from .pipeline import labels_from_memberships, normalize_columns

# the device names and a GPU's presence, checked below the models too (the sentence
# encoders, the kNN searches): re-exported
from .._utils.devices import (DEVICES, check_device, gpu_usable,  # noqa: E402,F401
                              is_device_name, require_torch)


def select_device(device):
    """The torch device of an estimator's ``device``, or None for the local engine: "cpu"
    gives None, "auto" a GPU when one is usable (else None), "cuda"/"cuda:N" itself
    (checked by :func:`check_device`)."""
    if device == "cpu":
        return None
    if device == "auto":
        return "cuda" if gpu_usable() else None
    check_device(device)
    return device


def _resolve_dtype(torch, dtype, X):
    if dtype is None:
        return torch.float64 if X.dtype == np.float64 else torch.float32
    if isinstance(dtype, str):
        return {"float32": torch.float32, "float64": torch.float64}[dtype]
    return dtype


def _device_name(torch, device):
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device


def operators(problem, torch, device, dtype, *, index_dtype=None, ratios="auto", chunk=None):
    """The :class:`~semnmf.models._solvers.torch_problems.DeviceOperators` of a
    FitProblem: X, Xᵀ (not for KL with W held: only Z is updated), M and Mᵀ on the
    device."""
    X, M = problem.X, problem.M
    kl = problem.loss == "kl"
    Xt = transpose_csr(X) if (problem.update_W or not kl) else None
    Mt = transpose_csr(M) if M is not None else None  # Q's start reads it too
    return DeviceOperators(X, Xt, M, Mt, torch, device, dtype, index_dtype=index_dtype,
                           ratios=ratios if kl else None, chunk=chunk)


def _check_problem(problem):
    check_support("torch", loss=problem.loss, blocks=is_blocked(problem.X),
                  context_core=problem.M is not None and not problem.context_factor)


class TorchBackend(Backend):
    """One PyTorch device: the problems of
    :mod:`semnmf.models._solvers.torch_problems` on the device operators, the start drawn
    on the host as the local engine draws it and copied to the device; the kept run's
    factors back on the host in X's dtype, normalized and labelled there."""

    def __init__(self, problem, ops, device):
        self.problem, self.ops = problem, ops
        self.name = f"torch:{device}"
        self.start = HostStart(problem)
        self.make = TorchKL if problem.loss == "kl" else TorchFrobenius

    def new_run(self, Z, W):
        ops = self.ops
        Z, W = ops.to_device(Z), ops.to_device(W)
        Q = None
        if ops.M is not None:
            # Q = s·MᵀW (initialize_context_factor), the product on the device
            W_host = W.cpu().numpy()
            Q = ops.to_device(initialize_context_factor((ops.Mt @ W).cpu().numpy(), W_host))
        return self.make(ops, Z, W, Q=Q, lam=self.problem.effective_lambda,
                         update_W=self.problem.update_W)

    def finish(self, run):
        X = self.problem.X
        host = X.dtype if X.dtype in (np.float32, np.float64) else np.float64

        def to_host(tensor):
            return np.array(tensor.cpu().numpy(), dtype=host, order="C", copy=True)

        Z, W = to_host(run.Z), to_host(run.W)
        Q = to_host(run.Q) if self.problem.M is not None and run.Q is not None else None
        norms = normalize_columns(Z, W, Q)
        return dict(W=W, Z=Z, Q=Q, norms=norms,
                    labels=labels_from_memberships(Z, empty_rows(X)))


def fit_torch(problem, options, device="cuda", dtype="float32", *, index_dtype=None,
              ratios="auto", chunk=None):
    """Run ``problem`` (:class:`~semnmf.models.pipeline.FitProblem`) with ``options``
    (:class:`~semnmf.models.pipeline.FitOptions`) on the torch ``device``; returns a
    :class:`~semnmf.models.pipeline.FitResult` with numpy factors on the host (in X's
    dtype) and ``engine="torch:<device>"``.

    ``dtype``: the factors' dtype on the device ("float32", "float64", a torch dtype, or
    None for X's). ``index_dtype``: the CSR tensors' index dtype (None: int32 where it fits
    and the device takes it). ``ratios``: how the KL ratios are formed, "sampled"
    (``torch.sparse.sampled_addmm``), "gather" (chunks of ``chunk`` non-zeros) or "auto".
    """
    torch = require_torch()
    _check_problem(problem)
    device = _device_name(torch, device)
    dtype = _resolve_dtype(torch, dtype, problem.X)
    with torch.no_grad():
        ops = operators(problem, torch, device, dtype, index_dtype=index_dtype,
                        ratios=ratios, chunk=chunk)
        return run_engine(problem, options, TorchBackend(problem, ops, device))
