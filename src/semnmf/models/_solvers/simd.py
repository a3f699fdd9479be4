"""Sums of scaled rows of a dense matrix in explicit vector registers (numba intrinsics).

:func:`row_product` computes ``acc[:k] = (A R)_i``, row i of a CSR matrix A times a
C-contiguous R (p, k), for a compile-time k (``shape``: a tuple of k zeros). For each
non-zero a_ij it loads row j of R as whole vectors and adds ``a_ij · R_j`` to vector
accumulators with one fused multiply-add per vector::

    acc ← fmuladd(broadcast(a_ij), R[j, :], acc)

The k columns are cut into pieces of 8, 4, 2 and 1 lanes (k = 20: 8 + 8 + 4), each a
legal vector on every x86-64 or ARM target. Two sets of accumulators take the even and
the odd non-zeros, so two chains of multiply-adds run at once; an odd last non-zero goes
to the even set, and the two sets are added at the end. numba gives LLVM no way to know
that a small accumulator does not alias R, so a plain loop over the columns stays scalar
or in memory; vector types are faster (``benchmarks/results/speed.md``).

:func:`row_combination` (and :func:`row_combination_add`, which adds to ``out``) is the
same with dense coefficients, ``Σ_m c_m R[first + m, :]`` for strided c: a dense row
times a k x k matrix (one chain, in the order of m) or one row of a Gram matrix (two
chains). :func:`update_row` is the elementwise update ``F_i ← F_i ⊙ num / (den + ε)``
with its share of the objective. :func:`ratio_row` is the KL product's row,
``Σ_j a_ij / max(L_i·R_j, floor) · R_j``; :func:`row_dot` is its dot product alone, for
the Dask engine's transposed product, so that both engines divide by the same numbers.

Arithmetic: for k ≤ 8 the iterates are bitwise those of the scalar loops these kernels
replaced (the golden set, ``benchmarks/golden.py``, checks it); for larger k, and for the
tree-added dot products and objective sums, they differ by the rounding of the order only.

numba's disk cache of a kernel is keyed on the kernel's own source file, not on the
files of the intrinsics it inlines: after an edit here, delete the ``*.nbi``/``*.nbc``
files under ``models/_solvers/__pycache__``.
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

# The flag every floating-point operation here carries. numba's fastmath pass adds its
# flags (reassoc, contract) to each float operation that has none, also to the
# intrinsics' own: LLVM could then fuse or reorder them differently in each caller, and
# ratio_row and row_dot would no longer divide by the same numbers, nor would
# row_product_exact keep scipy's roundings. "nsz" (the sign of a zero may change) allows
# no reordering and no fusing, and the pass leaves flagged operations alone.
_EXACT = ("nsz",)

# Widest piece, in lanes: 8 doubles fill an AVX-512 register, 8 floats an AVX2 one. 16
# float lanes were no faster.
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

    def index(self, array, position):
        """Entry ``position`` of an index array (indptr or indices) as i64: they are
        non-negative, so a narrower one is zero-extended (no wraparound test)."""
        value = self.builder.load(self.builder.gep(array.data, [position]))
        return self.builder.zext(value, ir.IntType(64)) if value.type.width < 64 else value

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

    def broadcast(self, scalar, lanes):
        """A vector of ``lanes`` copies of a scalar of this dtype."""
        b = self.builder
        i32 = ir.IntType(32)
        undef = ir.Constant(self.vector[lanes], ir.Undefined)
        one = b.insert_element(undef, scalar, ir.Constant(i32, 0))
        return b.shuffle_vector(one, undef, ir.Constant(ir.VectorType(i32, lanes), [0] * lanes))

    def horizontal_sum(self, vector, lanes):
        """The lanes of a vector added as a tree: halves added until one lane is left."""
        b = self.builder
        i32 = ir.IntType(32)
        while lanes > 1:
            half = lanes // 2
            low = b.shuffle_vector(vector, vector, ir.Constant(
                ir.VectorType(i32, half), list(range(half))))
            high = b.shuffle_vector(vector, vector, ir.Constant(
                ir.VectorType(i32, half), list(range(half, lanes))))
            vector, lanes = b.fadd(low, high, flags=_EXACT), half
        return b.extract_element(vector, ir.Constant(i32, 0))

    def fma_row(self, scalar, row, sums, fused=True):
        """``sums + scalar · row[0:k]`` (:meth:`fma_pieces` of the loaded row)."""
        return self.fma_pieces(scalar, self.load_row(row), sums, fused)

    def fma_pieces(self, scalar, pieces, sums, fused=True):
        """``sums + scalar · pieces``, piece by piece: fused multiply-adds, or with
        ``fused=False`` a rounded product then a sum (scipy's arithmetic)."""
        b = self.builder
        out = []
        for (_, lanes), r, total in zip(self.parts, pieces, sums):
            broadcast = self.broadcast(scalar, lanes)
            if fused:
                out.append(b.call(self.fmuladd[lanes], [broadcast, r, total]))
            else:
                out.append(b.fadd(total, b.fmul(broadcast, r, flags=_EXACT), flags=_EXACT))
        return out

    def dot(self, x, y):
        """Σ x ⊙ y of two rows of pieces: pieces of one width multiplied and added lane by
        lane (widest first); the 4-lane vector, when there are 8-lane pieces too, added
        into the first half of the 8-lane one; that vector added up as a tree, then the
        2- and 1-lane pieces' sums, in order (``benchmarks/results/kl.md``).
        :func:`ratio_row` and :func:`row_dot` share it, so a dot product is the same
        number wherever it is formed."""
        b = self.builder
        groups = {}  # by width, widest first (the order of the pieces)
        for (_, lanes), x_p, y_p in zip(self.parts, x, y):
            if lanes in groups:
                groups[lanes] = b.call(self.fmuladd[lanes], [x_p, y_p, groups[lanes]])
            else:
                groups[lanes] = b.fmul(x_p, y_p, flags=_EXACT)
        widest = next(iter(groups))
        vector = groups.pop(widest)
        if widest == 8 and 4 in groups:
            i32 = ir.IntType(32)
            extend = ir.Constant(ir.VectorType(i32, 8), [0, 1, 2, 3, 4, 4, 4, 4])
            four = b.shuffle_vector(groups.pop(4), ir.Constant(self.vector[4], None), extend)
            vector = b.fadd(vector, four, flags=_EXACT)
        total = self.horizontal_sum(vector, widest)
        for lanes, rest in groups.items():
            total = b.fadd(total, self.horizontal_sum(rest, lanes), flags=_EXACT)
        return total

    def chained_sum(self, start, end, term, initial, chains):
        """The sums after ``term(p, sums)`` for p = start .. end − 1 (i64 values), from
        ``initial``. ``chains`` = 2: even p into one set of sums, odd p into a second set
        that starts at zero, an odd last p into the first, and the two added at the end
        (two chains of multiply-adds run at once); 1: one set, in order."""
        b = self.builder
        i64 = ir.IntType(64)
        function = b.function
        entry = b.block
        head = function.append_basic_block("sum.head")
        body = function.append_basic_block("sum.body")
        tail = function.append_basic_block("sum.tail")
        last = function.append_basic_block("sum.last") if chains > 1 else None
        done = function.append_basic_block("sum.done")
        b.branch(head)
        b.position_at_end(head)
        p = b.phi(i64)
        sets = [self.phis() for _ in range(chains)]
        p.add_incoming(start, entry)
        for phi, value in zip(sets[0], initial):
            phi.add_incoming(value, entry)
        for phis in sets[1:]:
            for phi, value in zip(phis, self.zeros()):
                phi.add_incoming(value, entry)
        step = ir.Constant(i64, chains)
        more = b.icmp_signed("<", b.add(p, ir.Constant(i64, chains - 1)), end)
        b.cbranch(more, body, tail)
        b.position_at_end(body)
        new = [term(b.add(p, ir.Constant(i64, c)), phis) for c, phis in enumerate(sets)]
        body_end = b.block
        p.add_incoming(b.add(p, step), body_end)
        for phis, values in zip(sets, new):
            for phi, value in zip(phis, values):
                phi.add_incoming(value, body_end)
        b.branch(head)
        b.position_at_end(tail)
        if chains == 1:
            b.branch(done)
            b.position_at_end(done)
            return sets[0]
        # at most one p is left (p + 1 >= end); it goes to the first set
        b.cbranch(b.icmp_signed("<", p, end), last, done)
        b.position_at_end(last)
        last_first = term(p, sets[0])
        b.branch(done)
        b.position_at_end(done)
        finals = self.phis()
        for phi, before, after in zip(finals, sets[0], last_first):
            phi.add_incoming(before, tail)
            phi.add_incoming(after, last)
        return [b.fadd(x, y, flags=_EXACT) for x, y in zip(finals, sets[1])]


def _packed(*arrays):
    """Whether the CSR arrays are contiguous: the intrinsics step through them by
    element, so a strided view (scipy keeps one as it is) must be refused at typing, not
    read wrong."""
    return all(isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C" for a in arrays)


def _nothing(context, builder, sig, args):
    return context.get_dummy_value()


def _row_product(chains, fused):
    """The intrinsic ``row_product(indptr, indices, data, R, i, acc, shape)`` with
    ``chains`` sets of sums and fused (or rounded, then added) products."""

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
                and _packed(indptr, indices, data)
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

            def add_term(p, sums):
                """sums + a_p · R[j_p, :]"""
                j = ops.index(indices_a, p)
                value = builder.load(builder.gep(data_a.data, [p]))
                row = builder.gep(R_a.data, [builder.mul(j, ir.Constant(i64, k))])
                return ops.fma_row(value, row, sums, fused)

            row_i = context.cast(builder, args[4], i_t, types.int64)
            start = ops.index(indptr_a, row_i)
            end = ops.index(indptr_a, builder.add(row_i, ir.Constant(i64, 1)))
            ops.store_row(acc_a.data, ops.chained_sum(start, end, add_term, ops.zeros(), chains))
            return context.get_dummy_value()

        return sig, codegen

    return row_product


row_product = _row_product(chains=2, fused=True)
row_product.__doc__ = """``acc[:k] = (A R)_i`` in two chains of fused multiply-adds (the
    Frobenius passes; see the module docstring)."""
row_product_exact = _row_product(chains=1, fused=False)
row_product_exact.__doc__ = """``acc[:k] = (A R)_i`` with scipy's arithmetic: the row's
    non-zeros in stored order, one at a time, each product rounded before it is added (as
    ``csr_matvecs`` on x86-64), so the sums are bitwise scipy's (spherical k-means)."""


def _combination(add, chains):
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

            def term(m, sums):
                c = builder.load(builder.gep(coef_a.data,
                                             [builder.add(offset_v, builder.mul(m, stride_v))]))
                row = builder.gep(R_a.data, [builder.mul(builder.add(first_v, m),
                                                          ir.Constant(i64, k))])
                return ops.fma_row(c, row, sums)

            initial = ops.load_row(out_row) if add else ops.zeros()
            sums = ops.chained_sum(ir.Constant(i64, 0), count_v, term, initial, chains)
            ops.store_row(out_row, sums)
            return context.get_dummy_value()

        return sig, codegen

    return combination


row_combination = _combination(add=False, chains=1)
row_combination.__doc__ = """``out.flat[o:o + k] = Σ_{m < count} c_m · R[first + m, :]`` with
    ``c_m = coef.flat[offset + m·stride]``, o = ``out_offset``, k = ``len(shape)``; all
    C-contiguous, one float dtype."""
row_combination_add = _combination(add=True, chains=2)
row_combination_add.__doc__ = """As :func:`row_combination`, but adds the sum to ``out``,
    in two chains (even and odd m, as :func:`row_product`): its sums are long (a chunk's
    rows), where one chain would wait on each multiply-add."""


@intrinsic
def update_row(typingctx, F, i, num, den, t, eps, acc, shape):
    """``F[i] ← F[i] ⊙ num / (den[t] + ε)`` for the k = ``len(shape)`` columns, and
    return ``Σ_q F[i, q] · acc[q]`` at the new F[i], in float64 (the products in float64,
    summed as a tree). F, den 2-D and num, acc 1-D, C-contiguous, one float dtype.

    The update of F[i] is elementwise, so it is bitwise the scalar loop's; only the sum
    is added in another order (a tree, not a chain of fused multiply-adds)."""
    if isinstance(shape, types.BaseTuple) and len(shape) == 0:
        return types.float64(F, i, num, den, t, eps, acc, shape), _zero_of_dtype
    if not (isinstance(shape, types.UniTuple) and shape.count > 0
            and all(isinstance(a, types.Array) and a.layout == "C" for a in (F, num, den, acc))
            and F.dtype in (types.float32, types.float64)
            and num.dtype == F.dtype and den.dtype == F.dtype and acc.dtype == F.dtype):
        return None
    k = shape.count
    sig = types.float64(F, i, num, den, t, eps, acc, shape)

    def codegen(context, builder, sig, args):
        F_t, i_t, num_t, den_t, t_t, eps_t, acc_t = sig.args[:7]
        F_a = context.make_array(F_t)(context, builder, args[0])
        num_a = context.make_array(num_t)(context, builder, args[2])
        den_a = context.make_array(den_t)(context, builder, args[3])
        acc_a = context.make_array(acc_t)(context, builder, args[6])
        i64 = ir.IntType(64)
        double = ir.DoubleType()
        ops = _Pieces(context, builder, F_t.dtype, k)
        row = context.cast(builder, args[1], i_t, types.int64)
        t = context.cast(builder, args[4], t_t, types.int64)
        eps = context.cast(builder, args[5], eps_t, F_t.dtype)
        kk = ir.Constant(i64, k)
        F_row = builder.gep(F_a.data, [builder.mul(row, kk)])
        den_row = builder.gep(den_a.data, [builder.mul(t, kk)])
        f, n, d, a = (ops.load_row(p) for p in (F_row, num_a.data, den_row, acc_a.data))
        total = ir.Constant(double, 0.0)
        new = []
        for (_, lanes), f_p, n_p, d_p, a_p in zip(ops.parts, f, n, d, a):
            eps_v = ops.broadcast(eps, lanes)
            value = builder.fmul(f_p, builder.fdiv(n_p, builder.fadd(d_p, eps_v, flags=_EXACT),
                                                   flags=_EXACT), flags=_EXACT)
            new.append(value)
            if F_t.dtype != types.float64:
                wide = ir.VectorType(double, lanes)
                value, a_p = builder.fpext(value, wide), builder.fpext(a_p, wide)
            total = builder.fadd(total, ops.horizontal_sum(builder.fmul(value, a_p, flags=_EXACT),
                                                           lanes), flags=_EXACT)
        ops.store_row(F_row, new)
        return total

    return sig, codegen


@intrinsic
def ratio_row(typingctx, indptr, indices, data, L, R, out, i, ratios, floor, shape):
    """Row i of the KL product ``out = (A ⊘ max(L Rᵀ, floor)) R`` for k = ``len(shape)``:
    for each non-zero a_ij, s = L_i·R_j (:meth:`_Pieces.dot`, as :func:`row_dot`),
    r = a_ij / s (s below ``floor`` replaced by it), ``ratios[p − indptr[i]] = r``,
    ``out_i += r R_j`` (two chains, as :func:`row_product`). L_i stays in registers
    for the whole row and R_j is loaded once for the dot product and the sum. L, R, out
    C-contiguous of one float dtype; a_ij is read in that dtype; ``ratios`` 1-D of it
    or float64."""
    if isinstance(shape, types.BaseTuple) and len(shape) == 0:
        return types.void(indptr, indices, data, L, R, out, i, ratios, floor, shape), _nothing
    if not (isinstance(shape, types.UniTuple) and shape.count > 0
            and _packed(indptr, indices, data)
            and all(isinstance(a, types.Array) and a.layout == "C" for a in (L, R, out, ratios))
            and L.dtype in (types.float32, types.float64)
            and R.dtype == L.dtype and out.dtype == L.dtype
            and ratios.dtype in (L.dtype, types.float64)
            and data.dtype in (types.float32, types.float64)):
        return None
    k = shape.count
    sig = types.void(indptr, indices, data, L, R, out, i, ratios, floor, shape)

    def codegen(context, builder, sig, args):
        ip_t, ix_t, data_t, L_t, R_t, out_t, i_t, ratios_t, floor_t = sig.args[:9]
        indptr_a, indices_a, data_a, L_a, R_a, out_a, ratios_a = (
            context.make_array(t)(context, builder, v)
            for t, v in zip((ip_t, ix_t, data_t, L_t, R_t, out_t, ratios_t),
                            args[:6] + (args[7],)))
        i64 = ir.IntType(64)
        ops = _Pieces(context, builder, L_t.dtype, k)
        element = context.get_data_type(L_t.dtype)
        floor = context.cast(builder, args[8], floor_t, L_t.dtype)
        kk = ir.Constant(i64, k)

        row_i = context.cast(builder, args[6], i_t, types.int64)
        start = ops.index(indptr_a, row_i)
        end = ops.index(indptr_a, builder.add(row_i, ir.Constant(i64, 1)))
        l_row = ops.load_row(builder.gep(L_a.data, [builder.mul(row_i, kk)]))

        def term(p, sums):
            j = ops.index(indices_a, p)
            a = builder.load(builder.gep(data_a.data, [p]))
            if data_t.dtype != L_t.dtype:
                a = (builder.fptrunc(a, element) if data_t.dtype == types.float64
                     else builder.fpext(a, element))
            r_row = ops.load_row(builder.gep(R_a.data, [builder.mul(j, kk)]))
            dot = ops.dot(l_row, r_row)
            low = builder.fcmp_ordered("<", dot, floor, flags=_EXACT)
            s = builder.select(low, floor, dot)
            r = builder.fdiv(a, s, flags=_EXACT)
            slot = builder.gep(ratios_a.data, [builder.sub(p, start)])
            builder.store(r if ratios_t.dtype == L_t.dtype
                          else builder.fpext(r, ir.DoubleType()), slot)
            return ops.fma_pieces(r, r_row, sums)

        sums = ops.chained_sum(start, end, term, ops.zeros(), chains=2)
        ops.store_row(builder.gep(out_a.data, [builder.mul(row_i, kk)]), sums)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def row_dot(typingctx, L, i, R, j, shape):
    """``L_i · R_j`` over k = ``len(shape)`` columns, added exactly as :func:`ratio_row`
    adds it (the Dask engine's transposed KL product must divide by the same numbers).
    L and R C-contiguous of one float dtype; returns that dtype."""
    if isinstance(shape, types.BaseTuple) and len(shape) == 0:
        if not isinstance(L, types.Array):
            return None
        return L.dtype(L, i, R, j, shape), _zero_of_dtype
    if not (isinstance(shape, types.UniTuple) and shape.count > 0
            and all(isinstance(a, types.Array) and a.ndim == 2 and a.layout == "C"
                    for a in (L, R))
            and L.dtype in (types.float32, types.float64) and R.dtype == L.dtype):
        return None
    k = shape.count
    sig = L.dtype(L, i, R, j, shape)

    def codegen(context, builder, sig, args):
        L_a = context.make_array(sig.args[0])(context, builder, args[0])
        R_a = context.make_array(sig.args[2])(context, builder, args[2])
        i64 = ir.IntType(64)
        kk = ir.Constant(i64, k)
        row_i = context.cast(builder, args[1], sig.args[1], types.int64)
        row_j = context.cast(builder, args[3], sig.args[3], types.int64)
        ops = _Pieces(context, builder, sig.args[0].dtype, k)
        return ops.dot(ops.load_row(builder.gep(L_a.data, [builder.mul(row_i, kk)])),
                       ops.load_row(builder.gep(R_a.data, [builder.mul(row_j, kk)])))

    return sig, codegen


def _zero_of_dtype(context, builder, sig, args):
    return context.get_constant(sig.return_type, 0)


__all__ = ["pieces", "ratio_row", "row_combination", "row_combination_add", "row_dot",
           "row_product", "row_product_exact", "update_row"]
