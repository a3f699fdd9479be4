"""A sparse row times a dense matrix in explicit vector registers (a numba intrinsic).

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
        i32 = ir.IntType(32)
        element = context.get_data_type(R_t.dtype)
        suffix, align = ("f64", 8) if R_t.dtype == types.float64 else ("f32", 4)
        parts = pieces(k)
        vector = {lanes: ir.VectorType(element, lanes) for _, lanes in parts}
        fmuladd = {lanes: cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vty, [vty] * 3), f"llvm.fmuladd.v{lanes}{suffix}")
            for lanes, vty in vector.items()}

        def index(array, position):
            # indices and indptr are non-negative: zero-extended, no wraparound test
            value = builder.load(builder.gep(array.data, [position]))
            return builder.zext(value, i64) if value.type.width < 64 else value

        def add_term(p, sums):
            """sums + a_p · R[j_p, :], piece by piece."""
            j = index(indices_a, p)
            value = builder.load(builder.gep(data_a.data, [p]))
            row = builder.gep(R_a.data, [builder.mul(j, ir.Constant(i64, k))])
            out = []
            for (offset, lanes), total in zip(parts, sums):
                vty = vector[lanes]
                pointer = builder.bitcast(builder.gep(row, [ir.Constant(i64, offset)]),
                                          vty.as_pointer())
                r = builder.load(pointer, align=align)
                undef = ir.Constant(vty, ir.Undefined)
                one = builder.insert_element(undef, value, ir.Constant(i32, 0))
                broadcast = builder.shuffle_vector(
                    one, undef, ir.Constant(ir.VectorType(i32, lanes), [0] * lanes))
                out.append(builder.call(fmuladd[lanes], [broadcast, r, total]))
            return out

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
        sums_a = [builder.phi(vector[lanes]) for _, lanes in parts]
        sums_b = [builder.phi(vector[lanes]) for _, lanes in parts]
        p.add_incoming(start, entry)
        for phi, (_, lanes) in zip(sums_a + sums_b, parts + parts):
            phi.add_incoming(ir.Constant(vector[lanes], None), entry)
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
        finals = []
        for index_part, (_, lanes) in enumerate(parts):
            phi = builder.phi(vector[lanes])
            phi.add_incoming(sums_a[index_part], tail)
            phi.add_incoming(last_a[index_part], last)
            finals.append(phi)
        for (offset, lanes), total_a, total_b in zip(parts, finals, sums_b):
            pointer = builder.bitcast(builder.gep(acc_a.data, [ir.Constant(i64, offset)]),
                                      vector[lanes].as_pointer())
            builder.store(builder.fadd(total_a, total_b), pointer, align=align)
        return context.get_dummy_value()

    return sig, codegen


__all__ = ["pieces", "row_product"]
