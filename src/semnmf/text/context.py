"""The word-context matrix M of Semantic-NMF: co-occurrence -> association -> pruning.

M tells which words tend to occur in the same contexts; :func:`word_context` chains the
three steps, each a module of its own (whose public names this module re-exports):
:func:`~semnmf.text.cooccurrence.cooccurrence` (a document, a sentence or an L-word window,
NSF section 3), :func:`~semnmf.text.association.association` (PMI, PPMI, NSF eq. (2)-(3),
or the SIGIR paper's shifted PPMI) and :func:`~semnmf.text.pruning.prune`. Nothing here
densifies a d x d matrix.

References
----------
.. [NSF] M. Febrissy, A. Salah, M. Ailem, M. Nadif, "Improving NMF clustering by leveraging
   contextual relationships among words", Neurocomputing 495 (2022) 105-117
   (``papers/semantic-nmf-neurocomputing-2022.txt``), eq. (2)-(3).
.. [SIGIR] M. Ailem, A. Salah, M. Nadif, "Non-negative Matrix Factorization Meets Word
   Embedding", SIGIR 2017 (``papers/senmf-sigir-2017.txt``), definition of the SPPMI matrix M.
"""

import numpy as np

from .association import ASSOCIATIONS, association, association_inplace, check_association
from .cooccurrence import CONTEXTS, TokenSequences, cooccurrence, document_term_counts, sum_counts
from .pruning import (NnzEstimate, budget_record, budget_top_k, budgeted_document_context,
                      estimate_nnz, prune, prune_to_budget, warn_if_emptied)

__all__ = ["TokenSequences", "cooccurrence", "association", "prune", "word_context",
           "estimate_nnz", "budget_top_k", "NnzEstimate", "prune_to_budget", "sum_counts",
           "budget_record", "warn_if_emptied", "CONTEXTS", "ASSOCIATIONS"]


def word_context(*, counts=None, sequences=None, context="document", window=10,
                 association="ppmi", shift=2, min_count=1, top_k=None, threshold=None,
                 dtype=np.float64, max_nnz=None, return_info=False):
    """Word-context matrix M for Semantic-NMF: co-occurrence -> association -> pruning.

    Chains :func:`cooccurrence`, :func:`association` (NSF eq. (2)-(3); SIGIR shifted PPMI)
    and, when ``top_k`` or ``threshold`` is given, :func:`prune` (symmetric).

    Parameters
    ----------
    counts : sparse matrix or array-like of shape (n_docs, n_terms), default=None
        Document-term counts (only for ``context="document"``).
    sequences : TokenSequences, default=None
        Token stream (needed for "sentence" and "window").
    context : {"document", "sentence", "window"}, default="document"
        See :func:`cooccurrence`.
    window : int, default=10
        Words on each side of a token, for ``context="window"``.
    association : {"pmi", "ppmi", "sppmi"}, default="ppmi"
        See :func:`association`.
    shift : float, default=2
        N of the shifted PPMI (``association="sppmi"``).
    min_count : int, default=1
        Co-occurrence counts below it are dropped before the association is computed (the
        marginals are then those of the kept counts).
    top_k : int or None, default=None
        Keep the ``top_k`` strongest associations per word (pattern symmetrized by union).
    threshold : float or None, default=None
        Drop associations below it.
    dtype : {np.float64, np.float32}, default=np.float64
        Dtype of the result.
    max_nnz : int or None, default=None
        Budget of non-zeros of M. When :func:`estimate_nnz`'s upper bound exceeds it, M is
        pruned to the largest ``top_k`` that surely fits (:func:`budget_top_k`), the
        document context built and pruned block by block; if even ``top_k=1`` does not
        fit, only the largest entries are kept. None: no budget.
    return_info : bool, default=False
        Also return a dict saying what was pruned: ``nnz_before`` (unpruned), ``nnz``,
        ``estimated_nnz_upper``, ``top_k`` used, ``rule``, ``pruned``.

    Returns
    -------
    M : scipy.sparse.csr_matrix of shape (n_terms, n_terms)
        Symmetric when no pruning is asked, or with pruning (pattern union).
    info : dict
        Only with ``return_info=True``.

    Examples
    --------
    >>> seqs = TokenSequences.from_documents([[[0, 1, 2]], [[1, 2, 3]]], n_terms=4)
    >>> M = word_context(sequences=seqs, context="window", window=1)
    >>> M.shape, M.nnz
    ((4, 4), 6)
    """
    check_association(association, shift)  # before any counting
    max_nnz, info = budget_record(max_nnz, top_k, threshold, min_count)
    options = {"top_k": top_k, "threshold": threshold, "max_nnz": max_nnz, "info": info}
    bound = None
    if max_nnz is not None:
        bound = estimate_nnz(counts=counts, sequences=sequences, context=context,
                             window=window)
        info["estimated_nnz_upper"] = bound.upper
    if bound is not None and bound.upper > max_nnz and context == "document":
        if counts is None:
            counts = document_term_counts(sequences, dtype)
        M, info = budgeted_document_context(counts, association=association, shift=shift,
                                            min_count=min_count, dtype=dtype,
                                            row_upper=bound.row_upper, **options)
    else:
        C = cooccurrence(counts=counts, sequences=sequences, context=context, window=window,
                         min_count=min_count, dtype=dtype)
        M = association_inplace(C, association, shift)  # C is ours: no copy
        del C
        M, info = prune_to_budget(M, return_info=True, warn=False, **options)
    warn_if_emptied(info, stacklevel=3)
    return (M, info) if return_info else M
