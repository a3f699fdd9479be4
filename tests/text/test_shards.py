"""Sharded corpora: built shard by shard (two passes, mergeable counts), the same
vocabulary, counts, TF-IDF and word-context matrices as one Corpus of all the documents,
exactly."""

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import make_planted
from semnmf import Corpus, load_dataset
from semnmf.text.shards import (CooccurrenceAccumulator, DocumentFrequencies, ShardedCorpus,
                                read_shard, shard_paths, write_shards)
from semnmf.text.vectorize import make_analyzer


def _same(A, B, values=np.array_equal):
    """Same shape and pattern (CSR, sorted indices), and values equal by ``values``."""
    A, B = sp.csr_matrix(A), sp.csr_matrix(B)
    A.sort_indices()
    B.sort_indices()
    return (A.shape == B.shape and np.array_equal(A.indptr, B.indptr)
            and np.array_equal(A.indices, B.indices) and bool(values(A.data, B.data)))


def _equal(A, B):
    return _same(A, B)


@pytest.fixture(scope="module")
def documents():
    texts, labels = make_planted(40, seed=3)
    texts[5] = "Café réforme économique. " + texts[5]   # Unicode words
    texts[7] = ""                                      # an empty document
    return texts, labels


@pytest.mark.parametrize("options", [{}, {"min_df": 1}, {"min_df": 3, "max_df": 0.9},
                                     {"max_features": 20}, {"stem": "porter"}])
def test_shards_give_the_corpus_matrices_exactly(tmp_path, documents, options):
    texts, labels = documents
    write_shards(tmp_path, texts, labels, shard_size=17)
    assert len(shard_paths(tmp_path)) == 8
    sharded = ShardedCorpus(tmp_path, **options)
    corpus = Corpus(texts, labels, **options)
    assert sharded.vocabulary.tolist() == corpus.vocabulary.tolist()
    assert sharded.min_df == corpus.min_df and sharded.n_documents == len(texts)
    assert list(sharded.labels) == list(corpus.labels)
    assert _equal(sharded.counts(), corpus.counts())
    assert _equal(sharded.tfidf(), corpus.tfidf())
    assert np.array_equal(sharded._idf, corpus._idf)
    # ncut's degree is a row's similarity to the whole corpus, not to its shard's rows
    for dtype in (np.float64, np.float32):
        assert _close(sharded.vectorize("ncut", dtype), corpus.vectorize("ncut", dtype))
    for context, extra in [("window", {}), ("sentence", {}), ("document", {}),
                           ("window", {"window": 2, "min_count": 2}),
                           ("document", {"association": "sppmi", "top_k": 5})]:
        assert _equal(sharded.word_context(context, **extra),
                      corpus.word_context(context, **extra)), (context, extra)


def _close(A, B):
    return _same(A, B, np.allclose)


@pytest.mark.parametrize("context, extra", [
    ("window", {}), ("sentence", {}), ("document", {}),
    ("document", {"association": "sppmi", "top_k": 3}), ("window", {"min_count": 2})])
@pytest.mark.parametrize("max_nnz", [1, 40, 300, 10**9])
def test_sharded_word_context_budget_equals_the_corpus(tmp_path, documents, context, extra,
                                                       max_nnz):
    """max_nnz / return_info on a ShardedCorpus: the in-memory M and the same record."""
    texts, labels = documents
    write_shards(tmp_path, texts, labels, shard_size=17)
    M, info = ShardedCorpus(tmp_path).word_context(context, max_nnz=max_nnz,
                                                   return_info=True, **extra)
    M0, info0 = Corpus(texts, labels).word_context(context, max_nnz=max_nnz,
                                                   return_info=True, **extra)
    assert _close(M, M0)
    assert M.nnz <= max_nnz
    assert info == info0
    plain = ShardedCorpus(tmp_path).word_context(context, **extra)
    assert _close(plain, Corpus(texts, labels).word_context(context, **extra))


def test_blocks_are_one_per_shard(tmp_path, documents):
    texts, labels = documents
    write_shards(tmp_path, texts, labels, shard_size=50)
    sharded = ShardedCorpus(tmp_path)
    X = sharded.blocks()
    assert len(X) == 3 and X.sizes == [50, 50, 20] and X.shape == (120, sharded.n_terms)
    assert X.nnz == sharded.tfidf().nnz
    assert "3 shards" in repr(sharded)


def test_parquet_shards(tmp_path, documents):
    pytest.importorskip("pyarrow", reason="Parquet shards need pyarrow")
    texts, labels = documents
    write_shards(tmp_path, texts, labels, shard_size=25, format="parquet")
    assert shard_paths(tmp_path)[0].endswith("docs-00000.parquet")
    sharded = ShardedCorpus(tmp_path)
    corpus = Corpus(texts, labels)
    assert _equal(sharded.tfidf(), corpus.tfidf())
    assert _equal(sharded.word_context("window"), corpus.word_context("window"))
    assert read_shard(shard_paths(tmp_path)[1])[0] == texts[25:50]


def test_load_dataset_reads_a_sharded_folder_whole(tmp_path, documents):
    texts, labels = documents
    write_shards(tmp_path / "news", texts, labels, ids=[f"d{i}" for i in range(len(texts))],
                 shard_size=30)
    corpus = load_dataset(tmp_path / "news")
    assert corpus.name == "news" and corpus.n_documents == len(texts)
    assert corpus.ids[3] == "d3" and list(corpus.labels) == labels
    assert _equal(corpus.tfidf(), Corpus(texts, labels).tfidf())
    assert _equal(ShardedCorpus(tmp_path / "news").to_corpus().tfidf(), corpus.tfidf())


def test_accumulators_merge(documents):
    texts, _ = documents
    analyze = make_analyzer()
    whole = DocumentFrequencies().add(texts, analyze)
    parts = DocumentFrequencies().add(texts[:50], analyze).merge(
        DocumentFrequencies().add(texts[50:], analyze))
    assert parts.df == whole.df and parts.totals == whole.totals
    assert parts.n_documents == whole.n_documents == len(texts)
    assert parts.vocabulary(2).tolist() == whole.vocabulary(2).tolist()
    counts = Corpus(texts).counts()
    one = CooccurrenceAccumulator(counts.shape[1]).add_counts(counts, binary=True)
    two = CooccurrenceAccumulator(counts.shape[1]).add_counts(counts[:33], binary=True)
    two.merge(CooccurrenceAccumulator(counts.shape[1]).add_counts(counts[33:], binary=True))
    assert _equal(one.result(), two.result()) and two.n_documents == len(texts)
    assert _equal(one.word_context(), (two + CooccurrenceAccumulator(counts.shape[1]))
                  .word_context())


def test_bad_shards_are_refused(tmp_path):
    with pytest.raises(ValueError, match="no shard"):
        ShardedCorpus(tmp_path)
    (tmp_path / "docs-00000.jsonl").write_text('{"text": "a b"}\nnot json\n')
    with pytest.raises(ValueError, match="line 2"):
        ShardedCorpus(tmp_path)
    (tmp_path / "docs-00000.jsonl").write_text('{"body": "a b"}\n')
    with pytest.raises(ValueError, match="'text'"):
        ShardedCorpus(tmp_path)


def test_consumed_counts_give_the_same_word_context(documents):
    texts, _ = documents
    counts = Corpus(texts).counts()
    kept = CooccurrenceAccumulator(counts.shape[1]).add_counts(counts)
    eaten = CooccurrenceAccumulator(counts.shape[1]).add_counts(counts)
    for options in [{}, {"association": "sppmi", "top_k": 4}, {"max_nnz": 50},
                    {"min_count": 2}, {"association": "pmi", "dtype": np.float32},
                    {"min_count": 3, "dtype": np.float32, "max_nnz": 40}]:
        eaten_M = eaten.copy().word_context(consume=True, **options)
        kept_M = kept.word_context(**options)
        assert _equal(eaten_M, kept_M) and eaten_M.dtype == kept_M.dtype, options
    for dtype in (np.float64, np.float32):
        copy = eaten.copy()
        copy.word_context(consume=True, dtype=dtype)
        assert copy.result().nnz == 0  # the counts became M: nothing is held twice
    assert kept.result().nnz > 0


def test_merged_counts_keep_the_accumulators_dtype(documents):
    texts, _ = documents
    counts = Corpus(texts).counts()
    n = counts.shape[1]
    wide = CooccurrenceAccumulator(n, np.float64).add_counts(counts[:20])
    wide.merge(CooccurrenceAccumulator(n, np.float32).add_counts(counts[20:]))
    assert wide.result().dtype == np.float64
    narrow = CooccurrenceAccumulator(n, np.float32)
    narrow.merge(CooccurrenceAccumulator(n, np.float64).add_counts(counts))
    assert narrow.result().dtype == np.float32
    assert _equal(wide.result(), CooccurrenceAccumulator(n).add_counts(counts).result())


def test_a_warning_of_the_last_step_reaches_the_caller(tmp_path, documents):
    """M is made where the summed counts lie (a worker, with a client): its warnings
    are raised again here."""
    texts, labels = documents
    write_shards(tmp_path, texts, labels, shard_size=17)
    with pytest.warns(UserWarning, match="max_nnz=10 left no word context"):
        M = ShardedCorpus(tmp_path).word_context("window", threshold=1e9, max_nnz=10)
    assert M.nnz == 0
    with pytest.warns(UserWarning, match="the pruning left no word context.*threshold"):
        M, info = ShardedCorpus(tmp_path).word_context("window", threshold=1e9,
                                                       return_info=True)
    assert M.nnz == 0 and info["nnz_before"] > 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", range(6))
def test_sum_counts_is_the_sparse_sum_at_its_exact_size(seed, dtype):
    from semnmf.text.context import sum_counts

    rng = np.random.default_rng(seed)
    n, m = rng.integers(1, 40, 2)

    def counts(density):
        A = sp.random(n, m, density=density, format="csr", dtype=dtype, random_state=rng,
                      data_rvs=lambda k: rng.integers(1, 9, k))
        if seed % 2:  # each row's entries in reverse order: unsorted indices are accepted
            for i in range(n):
                row = slice(A.indptr[i], A.indptr[i + 1])
                A.indices[row], A.data[row] = A.indices[row][::-1], A.data[row][::-1]
            A.has_sorted_indices = False
        return A

    A, B = counts(rng.random()), counts(rng.random() * 0.3)
    reference = sp.csr_matrix(A.toarray() + B.toarray())  # the slow, obvious sum
    total = sum_counts(A, B)
    assert _equal(total, reference) and total.dtype == dtype
    assert total.indices.size == total.data.size == reference.nnz  # no spare room held
    empty = sp.csr_matrix((n, m), dtype=dtype)
    assert _equal(sum_counts(empty, B), B.toarray()) and _equal(sum_counts(A, empty), A)
    assert sum_counts(empty.astype(np.float64), B).dtype == np.float64  # A's dtype
    with pytest.raises(ValueError, match="cannot be added"):
        sum_counts(A, sp.csr_matrix((n + 1, m), dtype=dtype))


def test_files_a_folder_does_not_read_are_named(tmp_path, documents):
    """Files beside the data that the loader skips, and a shard missing from the
    numbering, were passed over in silence."""
    import shutil
    texts, labels = documents
    shards = tmp_path / "shards"
    write_shards(shards, texts, labels, shard_size=10)
    paths = shard_paths(shards)
    (shards / "labels.txt").write_text("\n".join(labels) + "\n", encoding="utf-8")
    with pytest.warns(UserWarning, match="labels.txt is not read: a folder of shards is read "
                                         "from its shards alone"):
        assert len(load_dataset(shards)) == len(texts)
    (shards / "labels.txt").unlink()
    second = len(read_shard(paths[1])[0])
    shutil.move(paths[1], tmp_path / "elsewhere.jsonl")
    for load in (load_dataset, ShardedCorpus):
        with pytest.warns(UserWarning, match=rf"1 shard number\(s\) missing between docs-00000 "
                                             rf"and docs-{len(paths) - 1:05d} \(00001\); "
                                             rf"reading the {len(paths) - 1} present"):
            assert load(shards).n_documents == len(texts) - second
    folder = tmp_path / "folder"
    Corpus(texts, labels).to_folder(folder)
    (folder / "counts.mtx").unlink()  # vocab.txt names counts.mtx's columns: now unread
    shutil.copy(paths[0], folder)
    with pytest.warns(UserWarning, match=r"docs-00000.jsonl, vocab.txt are not read: a dataset "
                                         "folder is read from counts.mtx"):
        assert load_dataset(folder).texts == list(texts)
