"""The Frobenius and KL problems on a PyTorch device (the torch engine,
:mod:`semnmf.models.torch_engine`): the updates, objectives and guards of
:mod:`.frobenius` and :mod:`.kl`, written with torch tensors so that one source runs on
PyTorch's CPU build (the tests) and on CUDA. PyTorch is imported only inside functions.

X, Xᵀ, M and Mᵀ are CSR tensors (:class:`DeviceCSR`), built once per fit; their indices
are int32 when every count fits and the device takes them (a 2 x 2 probe), int64
otherwise (``benchmarks/results/design_notes.md``). The KL ratios a_ij / (L Rᵀ)_ij are
formed at the non-zeros only, by ``torch.sparse.sampled_addmm`` where the device runs it,
else by gathering L_i and R_j a chunk of non-zeros at a time (:data:`GATHER_ELEMENTS`).
Objectives are accumulated in float64, one transfer to the host per step.
"""

import warnings

import numpy as np
import scipy.sparse as sp

from .fro_kernels import canonical_csr
from .kl import _KLObjective
from .kl_kernels import scale_free_floor
from .mu import EPSILON, squared_norm

# Floats in one chunk of the gathered ratio path (two gathers of chunk x k each):
# 16 M floats, 64 MB a gather in float32.
GATHER_ELEMENTS = 1 << 24

RATIO_PATHS = ("auto", "sampled", "gather")

_INT32_LIMIT = np.iinfo(np.int32).max

# (device, dtype, index dtype) -> (products work, sampled_addmm works)
_PROBES = {}


def csr_tensor(torch, crow, col, values, shape):
    """A torch sparse CSR tensor of these arrays (no invariant check: they come from a
    canonical scipy CSR or from the device's own sort), without torch's beta warning."""
    with warnings.catch_warnings():  # "Sparse CSR tensor support is in beta state"
        warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support.*")
        return torch.sparse_csr_tensor(crow, col, values, size=shape, check_invariants=False)


def probe(torch, device, dtype, index_dtype):
    """Whether the device multiplies a CSR tensor with ``index_dtype`` indices by a dense
    matrix, and whether ``torch.sparse.sampled_addmm`` runs there: ``(products,
    sampled)``, tried once on a 2 x 2 matrix and remembered."""
    key = (str(device), dtype, index_dtype)
    if key not in _PROBES:
        crow = torch.tensor([0, 1, 2], dtype=index_dtype, device=device)
        col = torch.tensor([1, 0], dtype=index_dtype, device=device)
        A = csr_tensor(torch, crow, col, torch.ones(2, dtype=dtype, device=device), (2, 2))
        R = torch.ones((2, 3), dtype=dtype, device=device)
        results = []
        for product in (lambda: A @ R, lambda: torch.sparse.sampled_addmm(A, R, R.mT, beta=0.0)):
            try:
                value = product()
                value = value.values() if value.layout != torch.strided else value
                results.append(bool(torch.all(value == (3 if value.dim() == 1 else 1))))
            except (RuntimeError, NotImplementedError, TypeError):
                results.append(False)
        _PROBES[key] = tuple(results)
    return _PROBES[key]


def index_dtype_for(torch, device, dtype, shape, nnz, index_dtype=None, ratios=None):
    """The index dtype of the device's CSR tensors: ``index_dtype`` when given; else int32
    when every count fits and the device multiplies with it, and, for the KL ratios
    (``ratios="auto"``), runs ``sampled_addmm`` with it too where int64 would (the fused
    sampled product beats a gather by more than int32 beats int64:
    ``benchmarks/results/design_notes.md``); else int64."""
    if index_dtype is not None:
        return index_dtype
    if max(nnz, *shape) >= _INT32_LIMIT or not probe(torch, device, dtype, torch.int32)[0]:
        return torch.int64
    if (ratios == "auto" and not probe(torch, device, dtype, torch.int32)[1]
            and probe(torch, device, dtype, torch.int64)[1]):
        return torch.int64
    return torch.int32


class DeviceCSR:
    """A sparse matrix on the device (CSR tensor) and the products the updates need.

    Parameters
    ----------
    A : scipy sparse matrix or ndarray (m, p), non-negative (a dense A: its non-zeros)
    torch, device, dtype : the module, the device and the factors' dtype
    index_dtype : torch dtype or None (:func:`index_dtype_for`)
    floor : float or None
        The floor on (L Rᵀ)_ij of the ratio products (None: A's own,
        :func:`.kl_kernels.scale_free_floor`).
    ratios : {"auto", "sampled", "gather"} or None
        How the ratios are formed: ``sampled_addmm`` or the chunked gather ("auto": the
        first where the device runs it); None: the Frobenius products only.
    chunk : int or None
        Non-zeros per chunk of the gathered path (None: :data:`GATHER_ELEMENTS` / k).
    """

    def __init__(self, A, torch, device, dtype, index_dtype=None, floor=None, ratios="auto",
                 chunk=None):
        A = canonical_csr(A if sp.issparse(A) else sp.csr_matrix(A))
        self.torch, self.shape, self.nnz = torch, A.shape, int(A.nnz)
        self.total = float(np.sum(A.data, dtype=np.float64))
        self.squared_norm = squared_norm(A)
        self.index_dtype = index_dtype_for(torch, device, dtype, A.shape, self.nnz,
                                           index_dtype, ratios)
        self.crow = torch.as_tensor(A.indptr).to(device=device, dtype=self.index_dtype)
        self.col = torch.as_tensor(A.indices).to(device=device, dtype=self.index_dtype)
        self.values = torch.as_tensor(A.data).to(device=device, dtype=dtype)
        self._finish(device, dtype, floor, ratios, chunk)

    @classmethod
    def from_tensors(cls, torch, crow, col, values, shape, floor=None, ratios="auto",
                     chunk=None):
        """A matrix already on the device, in CSR arrays (sorted columns in each row:
        the benchmarks' synthetic corpora, made on the GPU)."""
        self = cls.__new__(cls)
        self.torch, self.shape, self.nnz = torch, tuple(shape), int(values.numel())
        self.total = float(values.sum(dtype=torch.float64))
        self.squared_norm = float((values * values).sum(dtype=torch.float64))
        self.index_dtype = col.dtype
        self.crow, self.col, self.values = crow, col, values
        self._finish(values.device, values.dtype, floor, ratios, chunk)
        return self

    def _finish(self, device, dtype, floor, ratios, chunk):
        torch = self.torch
        self.floor = float(scale_free_floor(self.total, self.nnz) if floor is None else floor)
        self.tensor = csr_tensor(torch, self.crow, self.col, self.values, self.shape)
        if ratios is not None and ratios not in RATIO_PATHS:
            raise ValueError(f"ratios must be one of {RATIO_PATHS}, got {ratios!r}.")
        if ratios is None:
            ratios = "gather"
        elif ratios == "auto":
            ratios = "sampled" if probe(torch, device, dtype, self.index_dtype)[1] else "gather"
        self.ratio_path = ratios
        self.chunk = chunk
        self._rows = None  # the row of each non-zero, for the gathered path

    def __matmul__(self, R):
        """A R, R dense (p, k)."""
        if self.nnz == 0:
            return self.torch.zeros((self.shape[0], R.shape[1]), dtype=R.dtype, device=R.device)
        return self.tensor @ R

    def ratios(self, L, R, with_log=False):
        """``(P, s)``: P = (A ⊘ max(L Rᵀ, floor)) R (m, k) and s = Σ_nz a_ij log(a_ij /
        max((L Rᵀ)_ij, floor)) as a float64 0-d tensor (None unless ``with_log``), as
        :class:`.kl_kernels.RatioKernel` computes them."""
        torch = self.torch
        if self.nnz == 0:
            zero = torch.zeros((), dtype=torch.float64, device=L.device)
            return torch.zeros((self.shape[0], R.shape[1]), dtype=L.dtype, device=L.device), \
                (zero if with_log else None)
        if self.ratio_path == "sampled":
            # the dot products L_i·R_j at A's non-zeros (beta = 0: A's values unused)
            r = torch.sparse.sampled_addmm(self.tensor, L, R.mT, beta=0.0).values()
            r.clamp_(min=self.floor)
            torch.div(self.values, r, out=r)
        else:
            r = self._gathered(L, R)
        P = csr_tensor(torch, self.crow, self.col, r, self.shape) @ R
        log = torch.xlogy(self.values, r).sum(dtype=torch.float64) if with_log else None
        return P, log

    def _gathered(self, L, R):
        """The ratios a_ij / max(L_i·R_j, floor) by chunks of non-zeros (L_i and R_j
        gathered for a chunk at a time)."""
        torch = self.torch
        if self._rows is None:
            counts = (self.crow[1:] - self.crow[:-1]).to(torch.int64)
            rows = torch.arange(self.shape[0], device=self.crow.device)
            self._rows = torch.repeat_interleave(rows, counts).to(self.index_dtype)
        chunk = self.chunk or max(1, GATHER_ELEMENTS // max(1, L.shape[1]))
        r = torch.empty_like(self.values)
        for start in range(0, self.nnz, chunk):
            stop = min(start + chunk, self.nnz)
            s = (L[self._rows[start:stop]] * R[self.col[start:stop]]).sum(dim=1)
            s.clamp_(min=self.floor)
            torch.div(self.values[start:stop], s, out=r[start:stop])
        return r


class DeviceOperators:
    """X, Xᵀ, M and Mᵀ of one fit on the device, shared by its restarts: ``X``, ``M`` and
    their transposes ``Xt``, ``Mt`` (None where not needed; ``Mt is M`` for a symmetric M)
    on the host, the other parameters as in :class:`DeviceCSR`.
    """

    @classmethod
    def from_device(cls, X, Xt, M=None, Mt=None):
        """Operators from :class:`DeviceCSR` matrices already on the device."""
        self = cls.__new__(cls)
        self.torch, self.device, self.dtype = X.torch, X.values.device, X.values.dtype
        self.X, self.Xt, self.M, self.Mt = X, Xt, M, Mt
        return self

    def __init__(self, X, Xt, M, Mt, torch, device, dtype, index_dtype=None, ratios="auto",
                 chunk=None):
        def put(A, floor=None):
            return DeviceCSR(A, torch, device, dtype, index_dtype=index_dtype, floor=floor,
                             ratios=ratios, chunk=chunk)

        self.torch, self.device, self.dtype = torch, device, dtype
        self.X = put(X)
        self.Xt = None if Xt is None else put(Xt, self.X.floor)
        self.M = self.Mt = None
        if M is not None:
            self.M = put(M)
            if Mt is not None:
                self.Mt = self.M if Mt is M else put(Mt, self.M.floor)

    def to_device(self, array):
        """A host array as a tensor of the device's dtype, on the device (a copy)."""
        tensor = self.torch.as_tensor(np.ascontiguousarray(array))
        return tensor.to(device=self.device, dtype=self.dtype, copy=True)


def _trace_residual(sq, F, AtG, FtF, GtG):
    """½‖A − G Fᵀ‖² by the trace identity (:func:`.mu.trace_residual`), as a float64 0-d
    tensor: ``sq`` = ‖A‖², ``AtG`` = AᵀG, ``FtF``, ``GtG`` the Gram matrices."""
    import torch

    value = (sq - 2.0 * (F * AtG).sum(dtype=torch.float64)
             + (FtF * GtG).sum(dtype=torch.float64))
    return 0.5 * value.clamp(min=0.0)


class TorchFrobenius:
    """One Semantic-NMF (NMF when ``ops.M`` is None) problem of eq. (5) on the device,
    updated in place: the :class:`~semnmf.models.pipeline.Problem` protocol.

    ``ops``: :class:`DeviceOperators`; ``Z``, ``W``, ``Q``: tensors on the device (Q when
    M is given); ``lam``: the effective λ; ``update_W`` False holds W (and Q) fixed.
    """

    def __init__(self, ops, Z, W, Q=None, lam=0.0, update_W=True):
        self.ops, self.Z, self.W, self.Q = ops, Z, W, Q
        self.lam, self.update_W = float(lam), bool(update_W)
        self.M = ops.M
        self.sqX = ops.X.squared_norm
        self.XtZ = ops.Xt @ Z
        if self.M is not None:
            self.sqM = self.M.squared_norm
            self.MtW = ops.Mt @ W

    def _objective(self, WtW):
        """F of eq. (5) at the current factors (``WtW`` = WᵀW), a float64 0-d tensor."""
        Z, W = self.Z, self.W
        value = _trace_residual(self.sqX, W, self.XtZ, WtW, Z.T @ Z)
        if self.M is not None and self.lam > 0:
            value = value + self.lam * self._context(WtW)
        return value

    def _context(self, WtW):
        return _trace_residual(self.sqM, self.Q, self.MtW, WtW, self.Q.T @ self.Q)

    def objective(self):
        """F(Z, W, Q) of eq. (5) at the current factors."""
        return float(self._objective(self.W.T @ self.W))

    def terms(self):
        """(½‖X − ZWᵀ‖², ½‖M − WQᵀ‖²) at the current factors."""
        WtW = self.W.T @ self.W
        data = _trace_residual(self.sqX, self.W, self.XtZ, WtW, self.Z.T @ self.Z)
        context = self._context(WtW) if self.M is not None else None
        return float(data), (0.0 if context is None else float(context))

    def step(self):
        """One sweep of (7a)-(7c); returns F at the new iterate."""
        Z, W = self.Z, self.W
        WtW = W.T @ W
        Z.mul_((self.ops.X @ W).div_(Z @ WtW + EPSILON))                    # (7a)
        self.XtZ = self.ops.Xt @ Z
        if self.update_W:
            ZtZ = Z.T @ Z
            if self.M is not None and self.lam > 0:
                QtQ = self.Q.T @ self.Q
                numerator = self.XtZ + self.lam * (self.M @ self.Q)
                W.mul_(numerator.div_(W @ (ZtZ + self.lam * QtQ) + EPSILON))  # (7b)
            else:
                W.mul_(self.XtZ / (W @ ZtZ + EPSILON))                       # (7b), λ = 0
            WtW = W.T @ W
            if self.M is not None:
                self.MtW = self.ops.Mt @ W
                self.Q.mul_(self.MtW / (self.Q @ WtW + EPSILON))            # (7c)
        return float(self._objective(WtW))


def _safe(denominator):
    """A column-sum denominator with its zeros replaced by 1 (:func:`.mu.safe_denominator`)."""
    return denominator.masked_fill(denominator == 0, 1)


class TorchKL(_KLObjective):
    """One SNMF-KL (NMF-KL when ``ops.M`` is None) problem of eq. (2) on the device,
    updated in place: :class:`.kl.KLProblem`'s sweep and objective (the two passes that
    give the objective also give the next step's products)."""

    def __init__(self, ops, Z, W, Q=None, lam=0.0, update_W=True):
        self.ops, self.Z, self.W, self.Q = ops, Z, W, Q
        self.lam, self.update_W = float(lam), bool(update_W)
        self.M = ops.M
        self._A = self._C = None     # (X ⊘ ZWᵀ) W, (M ⊘ WQᵀ) Q at the current iterate
        self._data = None            # D(X‖ZWᵀ) at the current iterate (float64 tensor)
        self._context = None         # D(M‖WQᵀ)

    def _mass(self, L, R):
        torch = self.ops.torch
        return L.sum(dim=0, dtype=torch.float64) @ R.sum(dim=0, dtype=torch.float64)

    def _data_pass(self):
        self._A, log = self.ops.X.ratios(self.Z, self.W, with_log=True)
        self._data = (log - self.ops.X.total + self._mass(self.Z, self.W)).clamp(min=0.0)

    def _context_pass(self):
        self._C, log = self.M.ratios(self.W, self.Q, with_log=True)
        self._context = (log - self.M.total + self._mass(self.W, self.Q)).clamp(min=0.0)

    def objective(self):
        """F(Z, W, Q) of eq. (2) at the current iterate."""
        return float(super().objective())

    def terms(self):
        """(D(X‖ZWᵀ), D(M‖WQᵀ)) at the current iterate."""
        return tuple(float(term) for term in super().terms())

    def step(self):
        """One sweep of Algorithm 2 (steps 2-4, corrected in :mod:`.kl`); returns F at the
        new iterate."""
        Z, W = self.Z, self.W
        if self._data is None:
            self._data_pass()
        if self._use_context and self._context is None:
            self._context_pass()
        # step 2: Z ← Z ⊙ (X ⊘ ZWᵀ)W ⊘ 1(1ᵀW)
        Z.mul_(self._A.div_(_safe(W.sum(dim=0))))
        self._A = self._data = None
        if self.update_W:
            # step 3: W ← W ⊙ [(X ⊘ ZWᵀ)ᵀZ + λ(M ⊘ WQᵀ)Q] ⊘ 1(1ᵀZ + λ1ᵀQ): new Z, old W, Q
            B, _ = self.ops.Xt.ratios(W, Z)
            denominator = Z.sum(dim=0)
            if self._use_context:
                B.add_(self._C, alpha=self.lam)
                denominator = denominator + self.lam * self.Q.sum(dim=0)
            W.mul_(B.div_(_safe(denominator)))
            self._C = self._context = None
            if self.M is not None:
                # step 4: Q ← Q ⊙ (M ⊘ WQᵀ)ᵀW ⊘ 1(1ᵀW), new W
                E, _ = self.ops.Mt.ratios(self.Q, W)
                self.Q.mul_(E.div_(_safe(W.sum(dim=0))))
        return self.objective()
