"""The threading layer: map_blocks runs every index once, in order, on the caller and
the pool, and stops and re-raises on an error; cache_aligned places arrays on 64-byte
boundaries."""

import threading
import time

import numpy as np
import pytest

from semnmf._utils.parallel import CACHE_LINE, cache_aligned, map_blocks, row_blocks

from conftest import at_offset


@pytest.mark.parametrize("workers", [1, 2, 4])
@pytest.mark.parametrize("n_items", [0, 1, 2, 7, 40])
def test_map_blocks_runs_every_index_once_in_order(workers, n_items):
    calls = []
    lock = threading.Lock()

    def func(i):
        with lock:
            calls.append(i)
        time.sleep(0.001 * (i % 3))  # uneven work: threads take indices in any order
        return i * i

    assert map_blocks(func, n_items, workers) == [i * i for i in range(n_items)]
    assert sorted(calls) == list(range(n_items))


def test_map_blocks_uses_the_caller_and_the_pool():
    names = set()

    def func(i):
        names.add(threading.current_thread().name)
        time.sleep(0.01)

    map_blocks(func, 8, 2)
    assert threading.current_thread().name in names
    assert any(name.startswith("semnmf") for name in names)


def test_map_blocks_stops_and_reraises_the_first_error():
    started = []

    def func(i):
        started.append(i)
        if i == 1:
            raise ValueError("block 1 failed")
        time.sleep(0.005)
        return i

    with pytest.raises(ValueError, match="block 1 failed"):
        map_blocks(func, 50, 2)
    n_started = len(started)
    time.sleep(0.05)  # every thread has stopped: nothing runs after the call returned
    assert len(started) == n_started < 50


def test_row_blocks_balance_non_zeros():
    indptr = np.concatenate([[0], np.cumsum(np.r_[np.full(10, 100), np.full(90, 1)])])
    blocks = row_blocks(indptr, 2)  # 1,090 non-zeros, 1,000 in the first 10 rows
    assert blocks == [(0, 6), (6, 100)] or blocks == [(0, 5), (5, 100)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("offset", [0, 8, 16, 48])
def test_cache_aligned_copies_only_what_is_off_a_line(dtype, offset):
    a = at_offset(np.random.default_rng(0).random((37, 4)).astype(dtype), offset)
    out = cache_aligned(a)
    assert out.ctypes.data % CACHE_LINE == 0 and out.flags.c_contiguous
    assert out.dtype == a.dtype and out.shape == a.shape
    np.testing.assert_array_equal(out, a)
    assert (out is a) == (offset == 0)
    if offset:  # a copy, not a view: updating it in place leaves the input alone
        out[0, 0] += 1
        assert out[0, 0] != a[0, 0]


def test_cache_aligned_takes_strided_and_empty_arrays():
    a = np.arange(24.0).reshape(4, 6)
    out = cache_aligned(a.T)  # F-ordered: copied to C order
    assert out.flags.c_contiguous and out.ctypes.data % CACHE_LINE == 0
    np.testing.assert_array_equal(out, a.T)
    empty = cache_aligned(np.empty((0, 3)))
    assert empty.shape == (0, 3)
