"""Sums of scaled rows of a dense matrix in explicit vector registers (numba intrinsics).

:func:`row_product` computes ``acc[:k] = (A R)_i``, row i of a CSR matrix A times a
C-contiguous R (p, k), for a compile-time k (``shape``: a tuple of k zeros). For each
non-zero a_ij it loads row j of R as whole vectors and adds ``a_ij · R_j`` to vector
accumulators with one fused multiply-add per vector::

    acc ← fmuladd(broadcast(a_ij), R[j, :], acc)

The k columns are cut into pieces of 8, 4, 2 and 1 lanes (k = 20: 8 + 8 + 4), so each
piece is a legal vector on every x86-64 or ARM target (LLVM splits an 8-lane double
vector into two 4-lane ones where there is no AVX-512). Two sets of accumulators take
the even and the odd non-zeros of the row, so two chains of multiply-adds run at once;
an odd last non-zero goes to the even set, and the two sets are added at the end.

Why an intrinsic and not a loop over the k columns: numba gives LLVM no way to know that
a small accumulator array does not alias R, so the loop over the columns either keeps
its sums in memory (each non-zero waits for the previous store) or, written with k
scalar sums, stays scalar: one multiply-add per column and non-zero. LLVM's vectorizers
did not turn either into vector code (the loop vectorizer vectorizes across the
non-zeros instead, with gathers, 2.8 ns per non-zero at k = 4). Written here with vector
types, one row product of CLASSIC4's X runs 1.0 → 0.6 ns per non-zero at k = 4 and
NG20's X 5.2 → 3.8 ns at k = 20 (one thread, float64).

:func:`row_combination` (and :func:`row_combination_add`, which adds to ``out``) is the
same with dense coefficients, ``Σ_m c_m R[first + m, :]`` for strided c: a dense row
times a k x k matrix (``F_i G``, the multiplicative updates' denominators) or one row of
a Gram matrix ``Σ_t F[t, r] F[t, :]``. One chain per piece, in the order of m.

Arithmetic: per column, exactly the scalar code of
:func:`semnmf.models._solvers.fro_kernels._row_product`'s compile-time path (a fused
multiply-add per non-zero into the even or the odd sum, the odd tail into the even sum,
then even + odd), so for k ≤ 8 the results are bitwise those of that code. For larger k
it replaces the run-time loop, which added four non-zeros at a time: the sums agree to
the rounding of the order (~1e-15 relative).
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

# Widest piece, in lanes: 8 doubles fill an AVX-512 register, 8 floats an AVX2 one. 16
# float lanes were no faster (NG20's X, k = 8 to 32).
_MAX_LANES = 8


def pieces(k, max_lanes=_MAX_LANES):
    """``[(offset, lanes), ...]`` cutting k columns into pieces of 8, 4, 2 and 1 lanes,
    widest first."""
    out, offset, lanes = [], 0, max_lanes
    while offset < k:
        while lanes > k - offset:
            lanes //= 2
        out.append((offset, lanes))
        offset += lanes
    return out


class _Pieces:
    """IR for k columns of one float dtype cut into vector pieces (:func:`pieces`)."""

    def __init__(self, context, builder, dtype, k):
        self.builder = builder
        self.k = k
        element = context.get_data_type(dtype)
        suffix, self.align = ("f64", 8) if dtype == types.float64 else ("f32", 4)
        self.parts = pieces(k)
        self.vector = {lanes: ir.VectorType(element, lanes) for _, lanes in self.parts}
        self.fmuladd = {lanes: cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vty, [vty] * 3), f"llvm.fmuladd.v{lanes}{suffix}")
            for lanes, vty in self.vector.items()}

    def _pointer(self, row, offset, lanes):
        b = self.builder
        return b.bitcast(b.gep(row, [ir.Constant(ir.IntType(64), offset)]),
                         self.vector[lanes].as_pointer())

    def zeros(self):
        return [ir.Constant(self.vector[lanes], None) for _, lanes in self.parts]

    def phis(self):
        return [self.builder.phi(self.vector[lanes]) for _, lanes in self.parts]

    def load_row(self, row):
        return [self.builder.load(self._pointer(row, offset, lanes), align=self.align)
                for offset, lanes in self.parts]

    def store_row(self, row, values):
        for (offset, lanes), value in zip(self.parts, values):
            self.builder.store(value, self._pointer(row, offset, lanes), align=self.align)

    def fma_row(self, scalar, row, sums):
        """``sums + scalar · row[0:k]``, piece by piece (fused multiply-adds)."""
        b = self.builder
        i32 = ir.IntType(32)
        out = []
        for (offset, lanes), total in zip(self.parts, sums):
            vty = self.vector[lanes]
            r = b.load(self._pointer(row, offset, lanes), align=self.align)
            undef = ir.Constant(vty, ir.Undefined)
            one = b.insert_element(undef, scalar, ir.Constant(i32, 0))
            broadcast = b.shuffle_vector(one, undef,
                                         ir.Constant(ir.VectorType(i32, lanes), [0] * lanes))
            out.append(b.call(self.fmuladd[lanes], [broadcast, r, total]))
        return out


def _nothing(context, builder, sig, args):
    return context.get_dummy_value()


@intrinsic
def row_product(typingctx, indptr, indices, data, R, i, acc, shape):
    """``acc[:k] = (A R)_i`` for k = ``len(shape)``; R and acc C-contiguous, of one float
    dtype with ``data``. (Typing fails, so compilation fails loudly, for anything else.)

    An empty ``shape`` compiles to nothing: numba types both branches of the callers'
    ``if len(shape) > 0`` test, and with ``()`` (a run-time k) this call is never made.
    """
    if isinstance(shape, types.BaseTuple) and len(shape) == 0:
        return types.void(indptr, indices, data, R, i, acc, shape), _nothing
    if not (isinstance(shape, types.UniTuple) and shape.count > 0
            and isinstance(R, types.Array) and R.ndim == 2 and R.layout == "C"
            and isinstance(acc, types.Array) and acc.layout == "C"
            and R.dtype in (types.float32, types.float64)
            and acc.dtype == R.dtype and data.dtype == R.dtype):
        return None
    k = shape.count
    sig = types.void(indptr, indices, data, R, i, acc, shape)

    def codegen(context, builder, sig, args):
        ip_t, ix_t, data_t, R_t, i_t, acc_t = sig.args[:6]
        arrays = [context.make_array(t)(context, builder, v)
                  for t, v in zip((ip_t, ix_t, data_t, R_t, acc_t), args[:4] + args[5:6])]
        indptr_a, indices_a, data_a, R_a, acc_a = arrays
        i64 = ir.IntType(64)
        ops = _Pieces(context, builder, R_t.dtype, k)

        def index(array, position):
            # indices and indptr are non-negative: zero-extended, no wraparound test
            value = builder.load(builder.gep(array.data, [position]))
            return builder.zext(value, i64) if value.type.width < 64 else value

        def add_term(p, sums):
            """sums + a_p · R[j_p, :]"""
            j = index(indices_a, p)
            value = builder.load(builder.gep(data_a.data, [p]))
            row = builder.gep(R_a.data, [builder.mul(j, ir.Constant(i64, k))])
            return ops.fma_row(value, row, sums)

        row_i = context.cast(builder, args[4], i_t, types.int64)
        start = index(indptr_a, row_i)
        end = index(indptr_a, builder.add(row_i, ir.Constant(i64, 1)))
        function = builder.function
        entry = builder.block
        head = function.append_basic_block("row_product.head")
        body = function.append_basic_block("row_product.body")
        tail = function.append_basic_block("row_product.tail")
        last = function.append_basic_block("row_product.last")
        done = function.append_basic_block("row_product.done")
        builder.branch(head)

        # head: while p + 1 < end, two non-zeros (even → sums_a, odd → sums_b)
        builder.position_at_end(head)
        p = builder.phi(i64)
        sums_a = ops.phis()
        sums_b = ops.phis()
        p.add_incoming(start, entry)
        for phi, zero in zip(sums_a + sums_b, ops.zeros() + ops.zeros()):
            phi.add_incoming(zero, entry)
        more = builder.icmp_unsigned("<", builder.add(p, ir.Constant(i64, 1)), end)
        builder.cbranch(more, body, tail)

        builder.position_at_end(body)
        next_a = add_term(p, sums_a)
        next_b = add_term(builder.add(p, ir.Constant(i64, 1)), sums_b)
        body_end = builder.block
        p.add_incoming(builder.add(p, ir.Constant(i64, 2)), body_end)
        for phi, value in zip(sums_a + sums_b, next_a + next_b):
            phi.add_incoming(value, body_end)
        builder.branch(head)

        # tail: at most one non-zero is left; it goes to sums_a
        builder.position_at_end(tail)
        builder.cbranch(builder.icmp_unsigned("<", p, end), last, done)
        builder.position_at_end(last)
        last_a = add_term(p, sums_a)
        builder.branch(done)

        builder.position_at_end(done)
        finals = ops.phis()
        for phi, before, after in zip(finals, sums_a, last_a):
            phi.add_incoming(before, tail)
            phi.add_incoming(after, last)
        ops.store_row(acc_a.data, [builder.fadd(x, y) for x, y in zip(finals, sums_b)])
        return context.get_dummy_value()

    return sig, codegen


def _combination(add):
    @intrinsic
    def combination(typingctx, coef, offset, stride, count, R, first, out, out_offset, shape):
        if isinstance(shape, types.BaseTuple) and len(shape) == 0:
            return types.void(coef, offset, stride, count, R, first, out, out_offset,
                              shape), _nothing
        if not (isinstance(shape, types.UniTuple) and shape.count > 0
                and isinstance(R, types.Array) and R.ndim == 2 and R.layout == "C"
                and isinstance(coef, types.Array) and coef.layout == "C"
                and isinstance(out, types.Array) and out.layout == "C"
                and R.dtype in (types.float32, types.float64)
                and coef.dtype == R.dtype and out.dtype == R.dtype):
            return None
        k = shape.count
        sig = types.void(coef, offset, stride, count, R, first, out, out_offset, shape)

        def codegen(context, builder, sig, args):
            coef_a = context.make_array(sig.args[0])(context, builder, args[0])
            R_a = context.make_array(sig.args[4])(context, builder, args[4])
            out_a = context.make_array(sig.args[6])(context, builder, args[6])
            offset_v, stride_v, count_v, first_v, out_offset_v = (
                context.cast(builder, args[n], sig.args[n], types.int64) for n in (1, 2, 3, 5, 7))
            i64 = ir.IntType(64)
            ops = _Pieces(context, builder, sig.args[4].dtype, k)
            out_row = builder.gep(out_a.data, [out_offset_v])
            if add:
                initial = ops.load_row(out_row)
            else:
                initial = ops.zeros()
            entry = builder.block
            head = builder.function.append_basic_block("combination.head")
            body = builder.function.append_basic_block("combination.body")
            done = builder.function.append_basic_block("combination.done")
            builder.branch(head)
            builder.position_at_end(head)
            m = builder.phi(i64)
            sums = ops.phis()
            m.add_incoming(ir.Constant(i64, 0), entry)
            for phi, value in zip(sums, initial):
                phi.add_incoming(value, entry)
            builder.cbranch(builder.icmp_signed("<", m, count_v), body, done)
            builder.position_at_end(body)
            c = builder.load(builder.gep(coef_a.data, [builder.add(offset_v,
                                                                   builder.mul(m, stride_v))]))
            row = builder.gep(R_a.data, [builder.mul(builder.add(first_v, m),
                                                      ir.Constant(i64, k))])
            new = ops.fma_row(c, row, sums)
            body_end = builder.block
            m.add_incoming(builder.add(m, ir.Constant(i64, 1)), body_end)
            for phi, value in zip(sums, new):
                phi.add_incoming(value, body_end)
            builder.branch(head)
            builder.position_at_end(done)
            ops.store_row(out_row, sums)
            return context.get_dummy_value()

        return sig, codegen

    return combination


row_combination = _combination(add=False)
row_combination.__doc__ = """``out.flat[o:o + k] = Σ_{m < count} coef.flat[offset + m·stride] · R[first + m, :]``,
    o = ``out_offset``, k = ``len(shape)``; all C-contiguous, one float dtype."""
row_combination_add = _combination(add=True)
row_combination_add.__doc__ = """As :func:`row_combination`, but adds the sum to ``out``."""


__all__ = ["pieces", "row_combination", "row_combination_add", "row_product"]
