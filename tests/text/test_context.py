"""Tests for semnmf.text.context: co-occurrence counts, PMI family, pruning.

The optimized (vectorized, sparse) code is checked entry by entry against naive
reference implementations written below with plain Python loops.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from semnmf.text.context import (
    TokenSequences,
    association,
    cooccurrence,
    prune,
    word_context,
)

N_TERMS = 8

# documents -> sentences -> token ids; includes repeated words, an empty sentence and an
# empty document
DOCS = [
    [[0, 1, 2, 1], [3, 4]],
    [[2, 2, 5], [], [6, 0, 1, 7, 3]],
    [],
    [[4]],
    [[7, 6, 5, 4, 3], [2, 1], [0, 0, 1]],
    [[5, 3, 5, 3, 1, 6]],
]


# ------------------------------------------------------------------ naive references


def naive_cooccurrence(docs, n_terms, context, window=None):
    """C[a, b] = number of ordered position pairs p != q, same context, a at p, b at q, a != b."""
    C = np.zeros((n_terms, n_terms))
    for doc in docs:
        units = doc if context == "sentence" else [[t for sent in doc for t in sent]]
        for unit in units:
            for p, a in enumerate(unit):
                for q, b in enumerate(unit):
                    if p == q or a == b:
                        continue
                    if context == "window" and abs(p - q) > window:
                        continue
                    C[a, b] += 1
    return C


def naive_counts(docs, n_terms):
    A = np.zeros((len(docs), n_terms))
    for i, doc in enumerate(docs):
        for sent in doc:
            for t in sent:
                A[i, t] += 1
    return A


def naive_association(C, kind, shift=2):
    C = np.asarray(C, dtype=float)
    total, rows, cols = C.sum(), C.sum(axis=1), C.sum(axis=0)
    M = np.zeros_like(C)
    for j in range(C.shape[0]):
        for k in range(C.shape[1]):
            if C[j, k] == 0:
                continue
            pmi = math.log(C[j, k] * total / (rows[j] * cols[k]))
            if kind == "ppmi":
                pmi = max(pmi, 0.0)
            elif kind == "sppmi":
                pmi = max(pmi - math.log(shift), 0.0)
            M[j, k] = pmi
    return M


def naive_top_k(M, k):
    """Dense mask of the k largest entries (among the non-zeros) of each row."""
    keep = np.zeros(M.shape, dtype=bool)
    for j, row in enumerate(M):
        nonzero = [(value, col) for col, value in enumerate(row) if value != 0]
        for value, col in sorted(nonzero, key=lambda vc: (-vc[0], vc[1]))[:k]:
            keep[j, col] = True
    return keep


@pytest.fixture
def seqs():
    return TokenSequences.from_documents(DOCS, n_terms=N_TERMS)


def random_docs(seed, n_docs=25, n_terms=12, max_sents=4, max_len=9):
    rng = np.random.default_rng(seed)
    return [
        [list(rng.integers(0, n_terms, size=rng.integers(0, max_len + 1)))
         for _ in range(rng.integers(0, max_sents + 1))]
        for _ in range(n_docs)
    ]


# ------------------------------------------------------------------------ TokenSequences


def test_from_documents_layout(seqs):
    assert seqs.tokens.tolist() == [t for doc in DOCS for sent in doc for t in sent]
    assert seqs.n_docs == len(DOCS)
    lengths = [sum(len(s) for s in doc) for doc in DOCS]
    np.testing.assert_array_equal(np.diff(seqs.doc_ptr), lengths)
    np.testing.assert_array_equal(np.diff(seqs.sent_ptr), [len(s) for doc in DOCS for s in doc])
    assert np.isin(seqs.doc_ptr, seqs.sent_ptr).all()


# ------------------------------------------------------------------------- cooccurrence


@pytest.mark.parametrize(
    "context, window",
    [("document", None), ("sentence", None), ("window", 1), ("window", 2), ("window", 3)],
)
def test_cooccurrence_matches_naive(seqs, context, window):
    kwargs = {} if window is None else {"window": window}
    C = cooccurrence(sequences=seqs, context=context, **kwargs)
    assert isinstance(C, sp.csr_matrix)
    assert C.shape == (N_TERMS, N_TERMS)
    np.testing.assert_allclose(C.toarray(), naive_cooccurrence(DOCS, N_TERMS, context, window))


@pytest.mark.parametrize("context, window", [("sentence", 10), ("window", 1), ("window", 4)])
@pytest.mark.parametrize("threads", [1, 3])
def test_cooccurrence_random_corpus_blocks(monkeypatch, context, window, threads):
    # the compiled kernel cuts the words into 4 blocks per thread: 4 or 12 blocks
    monkeypatch.setenv("SEMNMF_NUM_THREADS", str(threads))
    docs = random_docs(seed=0)
    seqs = TokenSequences.from_documents(docs, n_terms=12)
    C = cooccurrence(sequences=seqs, context=context, window=window)
    np.testing.assert_allclose(C.toarray(), naive_cooccurrence(docs, 12, context, window))


@pytest.mark.parametrize("n_terms", [12, 600])
def test_cooccurrence_rows_sorted_long_and_short(n_terms):
    # a row that touches more than 1/32 of the vocabulary lists its marks in order, a
    # shorter one is heap-sorted: with 600 terms most rows are short, with 12 all are long
    docs = random_docs(seed=2, n_docs=60, n_terms=n_terms, max_sents=5, max_len=20)
    seqs = TokenSequences.from_documents(docs, n_terms=n_terms)
    C = cooccurrence(sequences=seqs, context="window", window=3)
    assert C.has_sorted_indices
    for j in range(n_terms):
        row = C.indices[C.indptr[j]:C.indptr[j + 1]]
        assert (np.diff(row) > 0).all()
    np.testing.assert_allclose(C.toarray(), naive_cooccurrence(docs, n_terms, "window", 3))


def test_heapsort_is_numpys_sort():
    from semnmf.text._context_kernels import _heapsort

    rng = np.random.default_rng(0)
    for size in (0, 1, 2, 3, 17, 256, 1001):
        for high in (3, 10**6):  # many ties, few ties
            x = rng.integers(0, high, size=size)
            y = x.copy()
            _heapsort(y)
            np.testing.assert_array_equal(y, np.sort(x))


def test_document_context_from_counts_equals_from_sequences(seqs):
    A = naive_counts(DOCS, N_TERMS)
    expected = cooccurrence(sequences=seqs, context="document").toarray()
    np.testing.assert_allclose(expected, naive_cooccurrence(DOCS, N_TERMS, "document"))
    for counts in (A, sp.csr_matrix(A), sp.csc_matrix(A), sp.csr_array(A), A.astype(np.int64)):
        np.testing.assert_allclose(cooccurrence(counts=counts).toarray(), expected)
    # C = AᵀA without its diagonal
    gram = A.T @ A
    np.fill_diagonal(gram, 0)
    np.testing.assert_allclose(expected, gram)


@pytest.mark.parametrize("context", ["document", "sentence", "window"])
def test_cooccurrence_symmetric_zero_diagonal_nonnegative(context):
    seqs = TokenSequences.from_documents(random_docs(seed=1), n_terms=12)
    C = cooccurrence(sequences=seqs, context=context, window=2)
    dense = C.toarray()
    np.testing.assert_array_equal(dense, dense.T)
    np.testing.assert_array_equal(np.diag(dense), 0)
    assert (C.data > 0).all()  # no explicit zeros, no negatives


def test_single_sentence_documents_all_contexts_agree():
    docs = [[[t for sent in doc for t in sent]] for doc in random_docs(seed=2)]
    seqs = TokenSequences.from_documents(docs, n_terms=12)
    longest = int(np.diff(seqs.sent_ptr).max())
    document = cooccurrence(sequences=seqs, context="document").toarray()
    sentence = cooccurrence(sequences=seqs, context="sentence").toarray()
    window = cooccurrence(sequences=seqs, context="window", window=longest).toarray()
    np.testing.assert_allclose(sentence, document)
    np.testing.assert_allclose(window, document)
    # a shorter window sees fewer pairs
    assert cooccurrence(sequences=seqs, context="window", window=2).sum() < document.sum()


def test_large_window_equals_document_context_across_sentences(seqs):
    longest_doc = int(np.diff(seqs.doc_ptr).max())
    np.testing.assert_allclose(
        cooccurrence(sequences=seqs, context="window", window=longest_doc).toarray(),
        cooccurrence(sequences=seqs, context="document").toarray(),
    )
    # window context ignores sentence boundaries: more pairs than the sentence context
    window = cooccurrence(sequences=seqs, context="window", window=longest_doc).toarray()
    sentence = cooccurrence(sequences=seqs, context="sentence").toarray()
    assert (window >= sentence).all() and window.sum() > sentence.sum()


@pytest.mark.parametrize("context", ["document", "sentence", "window"])
def test_min_count_drops_small_counts(context):
    seqs = TokenSequences.from_documents(random_docs(seed=3), n_terms=12)
    full = cooccurrence(sequences=seqs, context=context, window=2).toarray()
    min_count = int(np.median(full[full > 0]))
    assert ((full > 0) & (full < min_count)).any()  # something is dropped
    C = cooccurrence(sequences=seqs, context=context, window=2, min_count=min_count).toarray()
    np.testing.assert_allclose(C, np.where(full >= min_count, full, 0))
    assert np.count_nonzero(C) > 0


def test_min_count_from_counts():
    A = sp.random(30, 10, density=0.4, random_state=0, format="csr")
    A.data = np.ceil(A.data * 4)
    full = cooccurrence(counts=A).toarray()
    C = cooccurrence(counts=A, min_count=5).toarray()
    np.testing.assert_allclose(C, np.where(full >= 5, full, 0))


@pytest.mark.parametrize("block_size", [1, 2, 3, 7, 1000])
def test_block_size_does_not_change_result(block_size):
    seqs = TokenSequences.from_documents(random_docs(seed=4), n_terms=12)
    expected = naive_cooccurrence(random_docs(seed=4), 12, "document")
    for min_count in (1, 2):
        C = cooccurrence(sequences=seqs, min_count=min_count, block_size=block_size)
        np.testing.assert_allclose(C.toarray(), np.where(expected >= min_count, expected, 0))
        assert C.has_sorted_indices


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("context", ["document", "window"])
def test_cooccurrence_dtype(seqs, dtype, context):
    C = cooccurrence(sequences=seqs, context=context, window=2, dtype=dtype)
    assert C.dtype == dtype
    M = word_context(sequences=seqs, context=context, window=2, dtype=dtype)
    assert M.dtype == dtype


def test_empty_corpus_gives_empty_matrix():
    seqs = TokenSequences.from_documents([[], [[]]], n_terms=3)
    for context in ("document", "sentence", "window"):
        C = cooccurrence(sequences=seqs, context=context)
        assert C.shape == (3, 3) and C.nnz == 0


# -------------------------------------------------------------------------- association


@pytest.mark.parametrize("kind", ["pmi", "ppmi", "sppmi"])
def test_association_matches_naive_on_cooccurrence(seqs, kind):
    C = cooccurrence(sequences=seqs, context="window", window=2)
    M = association(C, kind=kind)
    assert isinstance(M, sp.csr_matrix)
    np.testing.assert_allclose(M.toarray(), naive_association(C.toarray(), kind), rtol=1e-12)


@pytest.mark.parametrize("kind, shift", [("pmi", 2), ("ppmi", 2), ("sppmi", 2), ("sppmi", 5)])
def test_association_rectangular_matches_naive(kind, shift):
    rng = np.random.default_rng(5)
    C = rng.integers(0, 4, size=(7, 4)) * (rng.random((7, 4)) < 0.6)
    C[0, 0] = 9  # make sure some PMI is negative
    M = association(sp.csr_matrix(C), kind=kind, shift=shift)
    assert M.shape == (7, 4)
    np.testing.assert_allclose(M.toarray(), naive_association(C, kind, shift), rtol=1e-12)
    np.testing.assert_allclose(association(C, kind=kind, shift=shift).toarray(), M.toarray())


def test_pmi_stored_only_on_nonzero_counts(seqs):
    C = cooccurrence(sequences=seqs, context="sentence")
    M = association(C, kind="pmi")
    assert (M.data < 0).any() and (M.data > 0).any()
    # same pattern as C (no PMI here is exactly 0)
    np.testing.assert_array_equal(M.toarray() != 0, C.toarray() != 0)


def test_ppmi_sppmi_properties():
    seqs = TokenSequences.from_documents(random_docs(seed=6), n_terms=12)
    C = cooccurrence(sequences=seqs, context="window", window=2)
    ppmi = association(C, kind="ppmi")
    sppmi = association(C, kind="sppmi", shift=2)
    for M in (ppmi, sppmi):
        assert (M.data > 0).all()  # non-negative, no explicit zeros
        np.testing.assert_allclose(M.toarray(), M.toarray().T, rtol=1e-12)
    assert (sppmi.toarray() <= ppmi.toarray()).all()
    assert sppmi.nnz < ppmi.nnz
    # on the entries kept by both, the shift is exactly log 2
    both = (sppmi.toarray() > 0)
    np.testing.assert_allclose(sppmi.toarray()[both], ppmi.toarray()[both] - math.log(2))
    np.testing.assert_allclose(association(C, kind="sppmi", shift=1).toarray(), ppmi.toarray())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_association_dtype(dtype):
    C = sp.csr_matrix(np.array([[0, 2, 1], [2, 0, 3], [1, 3, 0]]))
    assert association(C, dtype=dtype).dtype == dtype
    assert association(C.astype(np.float32)).dtype == np.float32
    assert association(C).dtype == np.float64


def test_association_empty_rows_and_columns():
    C = np.array([[0, 3, 0, 1], [3, 0, 0, 2], [0, 0, 0, 0]])
    with np.errstate(all="raise"):
        M = association(sp.csr_matrix(C), kind="pmi")
    np.testing.assert_allclose(M.toarray(), naive_association(C, "pmi"), rtol=1e-12)
    assert M[2].nnz == 0 and M[:, 2].nnz == 0


# -------------------------------------------------------------------------------- prune


def random_symmetric(seed, n=15, density=0.5):
    rng = np.random.default_rng(seed)
    M = rng.random((n, n)) * (rng.random((n, n)) < density)
    M = np.triu(M, 1)
    return M + M.T


@pytest.mark.parametrize("top_k", [1, 2, 4])
def test_prune_top_k_not_symmetric(top_k):
    M = random_symmetric(seed=7)
    P = prune(sp.csr_matrix(M), top_k=top_k, symmetric=False)
    dense = P.toarray()
    assert (np.count_nonzero(dense, axis=1) <= top_k).all()
    keep = naive_top_k(M, top_k)
    np.testing.assert_array_equal(dense != 0, keep)
    np.testing.assert_array_equal(dense[keep], M[keep])  # values untouched


@pytest.mark.parametrize("top_k", [1, 3])
def test_prune_top_k_symmetric_union(top_k):
    M = random_symmetric(seed=8)
    P = prune(M, top_k=top_k)
    dense = P.toarray()
    keep = naive_top_k(M, top_k)
    np.testing.assert_array_equal(dense != 0, keep | keep.T)
    np.testing.assert_array_equal(dense, dense.T)
    np.testing.assert_array_equal(dense[dense != 0], M[dense != 0])


def test_prune_threshold_and_combined():
    M = random_symmetric(seed=9)
    P = prune(M, threshold=0.5, symmetric=False).toarray()
    np.testing.assert_array_equal(P, np.where(M >= 0.5, M, 0))
    both = prune(M, top_k=2, threshold=0.5, symmetric=False).toarray()
    np.testing.assert_array_equal(both != 0, naive_top_k(M, 2) & (M >= 0.5))


@pytest.mark.parametrize("threads", [1, 3])
def test_prune_in_blocks_matches_naive(monkeypatch, threads):
    monkeypatch.setenv("SEMNMF_NUM_THREADS", str(threads))
    M = random_symmetric(seed=10, n=30)
    P = prune(M, top_k=3, symmetric=False).toarray()
    np.testing.assert_array_equal(P != 0, naive_top_k(M, 3) & (M != 0))


def test_prune_does_not_modify_its_input():
    dense = random_symmetric(seed=11, n=20)
    M = sp.csr_matrix(dense)
    # the same matrix with the columns of every row stored in reverse order
    rows = [slice(M.indptr[i], M.indptr[i + 1]) for i in range(M.shape[0])]
    unsorted = sp.csr_matrix((np.concatenate([M.data[r][::-1] for r in rows]),
                              np.concatenate([M.indices[r][::-1] for r in rows]),
                              M.indptr.copy()), shape=M.shape)
    assert not unsorted.has_sorted_indices
    expected = prune(dense, top_k=2).toarray()
    for A in (M, unsorted):
        before = (A.data.copy(), A.indices.copy(), A.indptr.copy())
        np.testing.assert_array_equal(prune(A, top_k=2).toarray(), expected)
        for a, b in zip(before, (A.data, A.indices, A.indptr)):
            np.testing.assert_array_equal(a, b)


def test_prune_ties_and_negative_values():
    M = np.array([[0, 2, 2, 2], [-1, 0, -3, 5], [1, 1, 0, 1], [-2, -1, 0, 0.0]])
    P = prune(M, top_k=2, symmetric=False).toarray()
    # ties keep the lower column index; negative values compete by value
    np.testing.assert_array_equal(
        P, [[0, 2, 2, 0], [-1, 0, 0, 5], [1, 1, 0, 0], [-2, -1, 0, 0]]
    )


def test_prune_rectangular():
    M = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(
        prune(M, top_k=1, symmetric=False).toarray(),
        [[0, 0, 0, 3], [0, 0, 0, 7], [0, 0, 0, 11]],
    )
    with pytest.raises(ValueError, match="square"):
        prune(M, top_k=1)


def test_prune_nothing_asked_returns_copy():
    M = sp.csr_matrix(random_symmetric(seed=11))
    P = prune(M)
    np.testing.assert_array_equal(P.toarray(), M.toarray())
    P.data[:] = 0
    assert M.data.any()


# ------------------------------------------------------------------------- word_context


@pytest.mark.parametrize("kind", ["pmi", "ppmi", "sppmi"])
def test_word_context_chains_the_steps(seqs, kind):
    M = word_context(sequences=seqs, context="window", window=2, association=kind, shift=3)
    C = naive_cooccurrence(DOCS, N_TERMS, "window", 2)
    np.testing.assert_allclose(M.toarray(), naive_association(C, kind, shift=3), rtol=1e-12)
    P = word_context(sequences=seqs, context="sentence", top_k=2, threshold=0.1, min_count=2)
    C = cooccurrence(sequences=seqs, context="sentence", min_count=2)
    expected = prune(association(C), top_k=2, threshold=0.1)
    np.testing.assert_allclose(P.toarray(), expected.toarray())
    np.testing.assert_allclose(P.toarray(), P.toarray().T)


def test_word_context_from_counts(seqs):
    A = sp.csr_matrix(naive_counts(DOCS, N_TERMS))
    np.testing.assert_allclose(
        word_context(counts=A).toarray(), word_context(sequences=seqs).toarray()
    )


# ------------------------------------------------------------------------------- errors


def test_bad_context_and_association(seqs):
    with pytest.raises(ValueError, match="Unknown context 'paragraph'"):
        cooccurrence(sequences=seqs, context="paragraph")
    with pytest.raises(ValueError, match="Unknown association 'npmi'.*'ppmi'"):
        association(sp.csr_matrix(np.eye(3)), kind="npmi")
    with pytest.raises(ValueError, match="Unknown association 'npmi'"):
        word_context(sequences=seqs, association="npmi")
    with pytest.raises(ValueError, match="shift must be a positive number"):
        association(sp.csr_matrix(np.eye(3)), kind="sppmi", shift=0)
    # word_context refuses it before counting, on every path (no NaN matrix)
    for options in ({"context": "window"}, {"context": "document", "max_nnz": 1}):
        with pytest.raises(ValueError, match="shift must be a positive number"):
            word_context(sequences=seqs, association="sppmi", shift=-1, **options)


@pytest.mark.parametrize("window", [0, -1, 2.5, True])
def test_bad_window(seqs, window):
    with pytest.raises(ValueError, match="window must be an integer >= 1"):
        cooccurrence(sequences=seqs, context="window", window=window)


@pytest.mark.parametrize("bad_id", [-1, N_TERMS, 100])
def test_token_ids_out_of_range(bad_id):
    seqs = TokenSequences.from_documents([[[0, 1, bad_id, 2]]], n_terms=N_TERMS)
    with pytest.raises(ValueError, match=r"out of range \[0, n_terms=8\)"):
        cooccurrence(sequences=seqs, context="window")
    with pytest.raises(ValueError, match="out of range"):
        cooccurrence(sequences=seqs, context="document")


def test_missing_or_conflicting_inputs(seqs):
    A = naive_counts(DOCS, N_TERMS)
    with pytest.raises(ValueError, match="Pass counts .* or sequences"):
        cooccurrence()
    with pytest.raises(ValueError, match="not both"):
        cooccurrence(counts=A, sequences=seqs)
    with pytest.raises(ValueError, match='context="window" needs the token order'):
        cooccurrence(counts=A, context="window")
    with pytest.raises(ValueError, match="must be a TokenSequences"):
        cooccurrence(sequences=[[0, 1]], context="window")


def test_bad_pointers():
    tokens = np.array([0, 1, 2, 3])
    with pytest.raises(ValueError, match="doc_ptr must start at 0 and end at len"):
        cooccurrence(sequences=TokenSequences(tokens, np.array([0, 3]), np.array([0, 4]), 4))
    with pytest.raises(ValueError, match="sent_ptr must be non-decreasing"):
        cooccurrence(sequences=TokenSequences(tokens, np.array([0, 4]), np.array([0, 3, 2, 4]), 4))
    with pytest.raises(ValueError, match="also be a sentence boundary"):
        cooccurrence(sequences=TokenSequences(tokens, np.array([0, 2, 4]), np.array([0, 3, 4]), 4),
                     context="sentence")


def test_bad_matrices_and_parameters(seqs):
    with pytest.raises(ValueError, match="negative"):
        association(sp.csr_matrix(np.array([[0.0, -1.0], [-1.0, 0.0]])))
    with pytest.raises(ValueError, match="negative"):
        cooccurrence(counts=-np.ones((2, 3)))
    with pytest.raises(ValueError, match="min_count must be an integer >= 1"):
        cooccurrence(sequences=seqs, min_count=0)
    with pytest.raises(ValueError, match="block_size must be an integer >= 1"):
        cooccurrence(sequences=seqs, block_size=0)
    with pytest.raises(ValueError, match="top_k must be an integer >= 1"):
        prune(np.eye(3), top_k=0)
    with pytest.raises(ValueError, match="threshold must be a finite number"):
        prune(np.eye(3), threshold=np.nan)


@pytest.mark.parametrize("top_k", [1, 2, 3, 5])
def test_top_k_mask_breaks_ties_by_column(top_k):
    """The selection-based top-k keeps what a stable sort by decreasing value keeps:
    with many equal values, the lower columns."""
    from semnmf.text._context_kernels import top_k_mask

    rng = np.random.default_rng(top_k)
    M = np.round(rng.random((20, 30)) * 3) * (rng.random((20, 30)) < 0.6)
    A = sp.csr_matrix(M)
    keep = np.zeros(M.shape, dtype=bool)
    rows = np.repeat(np.arange(20), np.diff(A.indptr))
    keep[rows[top_k_mask(A, top_k)], A.indices[top_k_mask(A, top_k)]] = True
    np.testing.assert_array_equal(keep, naive_top_k(M, top_k))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_document_cooccurrence_rows_are_scipys(dtype):
    """The compiled AᵀA rows are bit for bit scipy's product without the diagonal: real
    (not integer) weights, so that the order of the sums shows; a stored zero weight,
    whose zero sums scipy leaves out; blocks that cut the rows anywhere."""
    from semnmf.text._context_kernels import document_cooccurrence_rows

    rng = np.random.default_rng(3)
    A = sp.random(200, 60, density=0.15, format="csr", random_state=4,
                  data_rvs=lambda n: rng.random(n) * 7).astype(dtype)
    A.data[5] = 0  # stored, not eliminated
    At = sp.csr_matrix(A.T)
    At.sort_indices()
    for start, stop in [(0, 60), (0, 7), (7, 41), (41, 60), (59, 80)]:
        got = document_cooccurrence_rows(A, At, start, stop)
        # the code this replaced: scipy's product, sorted by a CSC round trip
        scipys = (At @ At[start:stop].T).tocsc().T.toarray()
        rows = np.arange(scipys.shape[0])
        scipys[rows, start + rows] = 0  # no self pairs
        assert got.dtype == dtype and got.has_sorted_indices
        assert got.shape == scipys.shape == (min(stop, 60) - start, 60)
        np.testing.assert_array_equal(got.toarray(), scipys)
        assert got.nnz == np.count_nonzero(scipys)  # no stored zeros


def _association_reference(block, start, log_rows, offset, positive, threshold, top_k,
                           dtype):
    """The numpy expressions that association_rows replaced (written out as they were)."""
    from semnmf.text._context_kernels import top_k_mask

    pmi = np.log(block.data, dtype=np.float64) + offset
    pmi -= np.repeat(log_rows[start:start + block.shape[0]], np.diff(block.indptr))
    pmi -= log_rows[block.indices]
    if positive:
        np.maximum(pmi, 0.0, out=pmi)
    block = sp.csr_matrix((pmi.astype(dtype, copy=False), block.indices, block.indptr),
                          shape=block.shape)
    block.eliminate_zeros()
    block.sort_indices()
    keep = np.ones(block.nnz, dtype=bool)
    if threshold is not None:
        keep &= block.data >= threshold
    if top_k is not None:
        keep &= top_k_mask(block, top_k)
    kept = np.flatnonzero(keep)
    return sp.csr_matrix((block.data[kept], block.indices[kept],
                          np.searchsorted(kept, block.indptr)), shape=block.shape), block.nnz


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("positive, threshold, top_k", [
    (True, None, None), (True, None, 3), (False, None, 2), (True, 0.1, 4), (False, -0.3, None)])
def test_association_rows_are_the_numpy_expressions(dtype, positive, threshold, top_k):
    """Same kept entries, bit for bit, as the numpy pipeline: PMI, clip, cast, zeros out,
    threshold (compared in the output dtype), top-k with ties to the lower column."""
    from semnmf.text._context_kernels import association_rows

    rng = np.random.default_rng(11)
    counts = sp.random(40, 40, density=0.4, format="csr", random_state=5,
                       data_rvs=lambda n: rng.integers(1, 6, n).astype(float))
    counts.sort_indices()
    log_rows = np.log(np.asarray(counts.sum(axis=1)).ravel() + 1.0)
    offset = float(np.log(counts.sum()))
    for start, stop in [(0, 40), (5, 23)]:
        block = sp.csr_matrix(counts[start:stop])
        got, nonzero = association_rows(block, start, log_rows, offset, positive,
                                        threshold, top_k, dtype)
        expected, expected_nonzero = _association_reference(
            block, start, log_rows, offset, positive, threshold, top_k, dtype)
        assert nonzero == expected_nonzero
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.indptr, expected.indptr)
        np.testing.assert_array_equal(got.indices, expected.indices)
        np.testing.assert_array_equal(got.data, expected.data)
