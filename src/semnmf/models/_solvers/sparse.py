"""The sparse operators every loss uses: Aᵀ computed once, and ``A @ R`` by row blocks
(the compiled kernel of :mod:`.fro_kernels` for sparse A, else scipy by row blocks).

Imported by the Frobenius, KL, graph, SeNMF, projective and SymNMF problems and by the
engines; it imports the compiled kernels' module but compiles nothing until a product runs.
"""

import numpy as np
import scipy.sparse as sp

from ..._utils.parallel import compiled_kernels
from .fro_kernels import CSRKernel, is_symmetric
from .mu import ThreadedProduct


def transpose_csr(A):
    """Aᵀ in CSR, computed once (never per iteration).

    A sparse matrix that is symmetric (a PPMI or co-occurrence matrix) is returned as it
    is: its transpose would be a second copy of the same matrix. Symmetric means equal
    patterns and entries equal to within 4 ε max|A| (:func:`is_symmetric`), rounding of
    the size the compiled sweep already allows.
    """
    if not sp.issparse(A):
        return np.ascontiguousarray(A.T)
    if is_symmetric(A):
        return A
    return A.T.tocsr()


def use_kernels(*matrices):
    """Whether the compiled sweep serves these matrices: all sparse (None skipped), and
    :func:`~semnmf._utils.parallel.compiled_kernels` ($SEMNMF_KERNELS is not "0", the
    reference scipy path, for comparisons)."""
    if not compiled_kernels():
        return False
    return all(A is None or sp.issparse(A) for A in matrices)


def product_operator(A, dtype=None, kernels=None):
    """``A @ R`` by row blocks: the compiled kernel for sparse A, else :class:`ThreadedProduct`."""
    if (use_kernels(A) if kernels is None else kernels) and sp.issparse(A):
        return CSRKernel(A, dtype=dtype)
    return ThreadedProduct(A)
