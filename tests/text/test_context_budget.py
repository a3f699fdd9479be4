"""The nnz bound of a word-context matrix, and pruning to a budget of non-zeros."""

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import make_planted, read_json, write_csv
from semnmf.text.context import (TokenSequences, budget_top_k, cooccurrence, estimate_nnz,
                                 prune, word_context)


def _random_counts(seed, n=60, d=80, density=0.08):
    A = sp.random(n, d, density=density, random_state=seed, format="csr")
    A.data = np.ceil(A.data * 4)
    return A


def _random_sequences(seed, n_docs=40, n_terms=50):
    rng = np.random.default_rng(seed)
    documents = [[list(rng.integers(0, n_terms, size=rng.integers(1, 12)))
                  for _ in range(rng.integers(1, 4))] for _ in range(n_docs)]
    return TokenSequences.from_documents(documents, n_terms)


@pytest.mark.parametrize("seed", range(8))
def test_the_bound_holds_on_random_data(seed):
    A = _random_counts(seed, density=0.02 + 0.02 * seed)
    C = cooccurrence(counts=A)
    bound = estimate_nnz(counts=A)
    assert C.nnz <= bound.upper
    assert np.all(np.diff(C.indptr) <= bound.row_upper)
    assert 0 <= bound.estimate <= bound.upper
    seqs = _random_sequences(seed)
    for context, window in (("window", 1 + seed % 4), ("sentence", 10), ("document", 10)):
        C = cooccurrence(sequences=seqs, context=context, window=window)
        bound = estimate_nnz(sequences=seqs, context=context, window=window)
        assert C.nnz <= bound.upper
        assert np.all(np.diff(C.indptr) <= bound.row_upper)


def test_the_estimate_is_exact_when_every_row_is_sampled():
    A = _random_counts(3)
    assert estimate_nnz(counts=A, n_sample_rows=10_000).estimate == cooccurrence(counts=A).nnz


@pytest.mark.parametrize("budget", [50, 300, 1000, 3000])
@pytest.mark.parametrize("min_count", [1, 2])
def test_pruning_respects_the_budget(budget, min_count):
    A = _random_counts(1, n=80, d=120, density=0.1)
    full = word_context(counts=A, min_count=min_count)
    M, info = word_context(counts=A, min_count=min_count, max_nnz=budget, return_info=True)
    assert M.nnz <= budget
    assert info["nnz"] == M.nnz and info["nnz_before"] == full.nnz
    assert info["pruned"] and info["budget_applied"]
    assert "max_nnz" in info["rule"] and info["max_nnz"] == budget
    if "largest entries" not in info["rule"]:
        # block by block, the same as pruning the full matrix
        reference = prune(full, top_k=info["top_k"])
        assert abs(M - reference).max() < 1e-12
        assert M.nnz == reference.nnz
    assert abs(M - M.T).max() < 1e-12
    # window context: the built matrix is pruned to the budget
    seqs = _random_sequences(2, n_docs=80, n_terms=60)
    M, info = word_context(sequences=seqs, context="window", window=3, max_nnz=budget,
                           return_info=True)
    assert M.nnz <= budget


def test_no_pruning_under_the_budget():
    A = _random_counts(4)
    full = word_context(counts=A)
    M, info = word_context(counts=A, max_nnz=10**9, return_info=True)
    assert (M != full).nnz == 0
    assert not info["pruned"] and not info["budget_applied"] and info["rule"] == "none"
    assert info["estimated_nnz_upper"] >= full.nnz


def test_a_smaller_top_k_given_is_kept():
    A = _random_counts(5, n=80, d=120, density=0.1)
    M, info = word_context(counts=A, max_nnz=3000, top_k=2, return_info=True)
    assert info["top_k"] == 2 and M.nnz <= 3000


def test_budget_top_k():
    assert budget_top_k([10, 10, 10], 60) == 10
    assert budget_top_k([10, 10, 10], 30) == 5
    assert budget_top_k([100, 1, 1], 24) == 10
    assert budget_top_k([5, 5], 1) == 1
    with pytest.raises(ValueError):
        word_context(counts=_random_counts(0), max_nnz=0)


def test_cli_records_the_pruning(tmp_path):
    from semnmf.cli import main

    texts, labels = make_planted(docs_per_topic=15)
    source = write_csv(tmp_path / "p.csv", zip(texts, labels), ["text", "label"])
    out = tmp_path / "pruned"
    assert main(["cluster", str(source), "-k", "3", "--max-nnz", "200", "--out", str(out),
                 "--quiet", "--max-iter", "20"]) == 0
    context = read_json(out / "run.json")["context"]
    assert context["max_nnz"] == 200 and context["nnz"] <= 200
    pruning = context["pruning"]
    assert pruning["budget_applied"] and pruning["nnz_before"] > pruning["nnz"]
    assert "top" in pruning["rule"]
    out = tmp_path / "unpruned"
    assert main(["cluster", str(source), "-k", "3", "--max-nnz", "0", "--out", str(out),
                 "--quiet", "--max-iter", "20"]) == 0
    context = read_json(out / "run.json")["context"]
    assert context["max_nnz"] is None and not context["pruning"]["budget_applied"]
    assert main(["cluster", str(source), "-k", "3", "--method", "nmf", "--max-nnz", "10",
                 "--quiet"]) != 0  # no word-context matrix: refused


def test_a_budget_that_leaves_no_context_warns():
    """max_nnz=1 cannot hold one symmetric pair: M comes out empty, and the user is told
    that the word-context term has no effect, not left with a silent plain NMF."""
    A = _random_counts(3)
    with pytest.warns(UserWarning, match="left no word context"):
        M, info = word_context(counts=A, max_nnz=1, return_info=True)
    assert M.nnz == 0 and info["nnz_before"] > 0
