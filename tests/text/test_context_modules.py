"""The rooms of the word-context matrix: counting (text.cooccurrence), association
(text.association), pruning and budget (text.pruning), the façade (text.context), and the
public interface the shard reader uses."""

import ast
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from semnmf.text import association as association_module
from semnmf.text import context, cooccurrence as cooccurrence_module, pruning
from semnmf.text.association import association, association_inplace
from semnmf.text.cooccurrence import DocumentCooccurrence, TokenSequences, cooccurrence

TEXT = Path(context.__file__).parent


def _counts(seed, n=40, d=30, density=0.15):
    A = sp.random(n, d, density=density, random_state=seed, format="csr")
    A.data = np.ceil(A.data * 3)
    return A


def test_the_facade_re_exports_the_objects_of_the_three_steps():
    for name in context.__all__:
        if name == "word_context":
            continue
        homes = [m for m in (cooccurrence_module, association_module, pruning)
                 if name in m.__all__]
        assert len(homes) == 1, name
        assert getattr(context, name) is getattr(homes[0], name), name


def test_the_shard_reader_imports_no_private_name():
    tree = ast.parse((TEXT / "shards.py").read_text(encoding="utf-8"))
    private = [f"{node.module}.{alias.name}" for node in ast.walk(tree)
               if isinstance(node, ast.ImportFrom)
               for alias in node.names if alias.name.startswith("_")
               or (node.module or "").rpartition(".")[2].startswith("_")]
    assert not private


@pytest.mark.parametrize("min_count", [1, 2])
@pytest.mark.parametrize("block_size", [1, 7, 100])
def test_document_cooccurrence_blocks_and_row_sums_are_the_whole_counts(min_count,
                                                                        block_size):
    A = _counts(0)
    C = cooccurrence(counts=A, min_count=min_count).toarray()
    blocks = DocumentCooccurrence(sp.csr_matrix(A), min_count)
    parts = list(blocks.blocks(block_size))
    assert [start for start, _ in parts] == list(range(0, A.shape[1], block_size))
    assert np.array_equal(sp.vstack([b for _, b in parts]).toarray(), C)
    assert np.allclose(blocks.row_sums(block_size), C.sum(axis=1))


def test_association_inplace_is_association_on_the_same_matrix():
    seqs = TokenSequences.from_documents([[[0, 1, 2, 1]], [[1, 2, 3]], [[3, 0]]], n_terms=4)
    C = cooccurrence(sequences=seqs, context="window", window=2)
    for kind in ("pmi", "ppmi", "sppmi"):
        owned = C.copy()
        M = association_inplace(owned, kind, shift=3)
        assert M is owned
        assert np.array_equal(M.toarray(), association(C, kind, shift=3).toarray())


def test_association_inplace_checks_before_touching_the_counts():
    C = cooccurrence(counts=_counts(1))
    before = C.copy()
    with pytest.raises(ValueError, match="Unknown association 'npmi'"):
        association_inplace(C, "npmi")
    with pytest.raises(ValueError, match="shift must be a positive number"):
        association_inplace(C, "sppmi", shift=0)
    assert np.array_equal(C.toarray(), before.toarray())


def test_budgeted_document_context_is_word_context_with_the_budget():
    A = _counts(2, n=60, d=50, density=0.2)
    bound = pruning.estimate_nnz(counts=A)
    max_nnz = bound.upper // 4
    _, info = pruning.budget_record(max_nnz, None, None, 1)
    M, info = pruning.budgeted_document_context(A, max_nnz=max_nnz,
                                                row_upper=bound.row_upper, info=info)
    expected, expected_info = context.word_context(counts=A, max_nnz=max_nnz,
                                                   return_info=True)
    assert info["budget_applied"] and M.nnz <= max_nnz
    assert np.array_equal(M.toarray(), expected.toarray())
    assert {k: v for k, v in info.items() if k != "estimated_nnz_upper"} == {
        k: v for k, v in expected_info.items() if k != "estimated_nnz_upper"}
