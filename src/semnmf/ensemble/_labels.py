"""Label matrices of a cluster ensemble: validation, coding, incidence, relabelling.

Shared by the consensus functions (:mod:`semnmf.ensemble.consensus`) and the latent class
model (:mod:`semnmf.ensemble.mixture`).
"""

import numpy as np
import scipy.sparse as sp

#: The integer that marks a missing label (a document that a partition leaves out).
MISSING = -1


def check_label_matrix(labels, name="labels", *, require_labelled_rows=True):
    """Validate an ``n x r`` label matrix (or a list of the partitions' label vectors,
    stacked as columns) and code every column as ``0..m_q-1``; a document labelled by no
    partition is refused when ``require_labelled_rows`` (a consensus must place it).

    Returns
    -------
    codes : ndarray of int64 of shape (n, r)
        Cluster of each document in each partition, numbered in order of first
        appearance in the column; ``-1`` where the label is missing.
    categories : list of r ndarrays
        ``categories[q][c]`` is the original label value of code ``c`` in column ``q``.
    """
    if labels is None:
        raise ValueError(
            f"{name} is None: pass an array of shape (n_documents, n_partitions) with one "
            "column of cluster labels per partition.")
    if sp.issparse(labels):
        raise ValueError(
            f"{name} must be a dense array of labels of shape (n_documents, n_partitions), "
            "not a sparse matrix; pass labels.toarray() (missing labels as -1).")
    if isinstance(labels, (list, tuple)) and labels and all(
            isinstance(x, np.ndarray) and x.ndim == 1 for x in labels):
        # [model.labels_, ...]: the label vectors of the partitions, one column each (as
        # rows they read as documents, and the consensus came out with one label per run)
        lengths = {x.shape[0] for x in labels}
        if len(lengths) > 1:
            raise ValueError(f"{name}: the label vectors have different lengths "
                             f"{sorted(lengths)}; each partition labels every document.")
        labels = np.column_stack(labels)
    try:
        arr = np.asarray(labels)
    except Exception as exc:  # ragged nested lists and the like
        raise ValueError(f"{name} could not be read as a 2-D array of labels: {exc}") from None
    if arr.ndim != 2:
        hint = (" A single partition is a column: use labels.reshape(-1, 1); several label "
                "vectors are stacked with np.column_stack([labels_1, labels_2, ...]).")
        raise ValueError(
            f"{name} must be 2-D (n_documents, n_partitions) with one column per partition; "
            f"got an array of shape {arr.shape}.{hint if arr.ndim == 1 else ''}")
    n, r = arr.shape
    if n == 0 or r == 0:
        raise ValueError(
            f"{name} is empty (shape {arr.shape}); it needs at least one document (row) "
            "and one partition (column).")
    if arr.dtype == bool:
        arr = arr.astype(np.int64)
    if np.issubdtype(arr.dtype, np.integer):
        missing = arr == MISSING
        values = arr.astype(np.int64, copy=False)
    elif np.issubdtype(arr.dtype, np.floating):
        missing = np.isnan(arr)
        finite = arr[~missing]
        if not np.all(np.isfinite(finite)):
            raise ValueError(
                f"{name} contains infinite values; labels must be integers, with missing "
                "labels as -1 or NaN.")
        if np.any(finite != np.round(finite)):
            bad = finite[finite != np.round(finite)][:3]
            raise ValueError(
                f"{name} must hold integer cluster labels; got non-integer values such as "
                f"{bad.tolist()}. Pass hard labels (e.g. the argmax of a membership matrix).")
        missing |= arr == MISSING
        values = np.where(missing, MISSING, arr).astype(np.int64)
    else:
        raise ValueError(
            f"{name} must hold integer cluster labels (missing ones as -1 or NaN); got "
            f"dtype {arr.dtype}. Encode other labels as integers first, e.g. "
            "np.unique(column, return_inverse=True)[1] for each column.")

    labelled_per_column = n - missing.sum(axis=0)
    empty_cols = np.flatnonzero(labelled_per_column == 0)
    if empty_cols.size:
        raise ValueError(
            f"{name}: partition(s) (column(s)) {empty_cols[:10].tolist()} label no document "
            "(all missing); drop these columns.")
    empty_rows = np.flatnonzero(missing.all(axis=1)) if require_labelled_rows else []
    if len(empty_rows):
        raise ValueError(
            f"{name}: {len(empty_rows)} document(s) (e.g. rows {np.asarray(empty_rows[:10]).tolist()}) "
            "have no label in any partition, so no consensus can place them; drop these "
            "rows (or label them in at least one partition).")

    codes = np.full((n, r), MISSING, dtype=np.int64)
    categories = []
    for q in range(r):  # a loop over partitions, each step vectorized over documents
        keep = ~missing[:, q]
        codes[keep, q], values_q = _by_first_appearance(values[keep, q])
        categories.append(values_q)
    return codes, categories


def _by_first_appearance(values):
    """``(codes, values of the codes)``: ``values`` coded 0..g-1 in order of first
    appearance."""
    uniq, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[inverse.ravel()], uniq[order]


def n_categories(codes):
    """Number of clusters ``m_q`` of every column of a coded label matrix."""
    return codes.max(axis=0) + 1


def incidence(codes, n_categories, dtype=np.float64):
    """CSR incidence matrix ``H`` of a coded label matrix (no validation)."""
    n, r = codes.shape
    offsets = np.concatenate([[0], np.cumsum(n_categories)])
    labelled = codes >= 0
    rows, cols = np.nonzero(labelled)  # row-major: sorted by row, then by partition
    indices = offsets[cols] + codes[rows, cols]
    indptr = np.concatenate([[0], np.cumsum(labelled.sum(axis=1))])
    index_dtype = np.int32 if max(indices.size, offsets[-1]) < 2**31 else np.int64
    H = sp.csr_matrix(
        (np.ones(indices.size, dtype=dtype), indices.astype(index_dtype),
         indptr.astype(index_dtype)),
        shape=(n, int(offsets[-1])))
    return H, offsets


def relabel(labels):
    """Labels renamed 0..g-1 in order of first appearance."""
    return _by_first_appearance(labels)[0].astype(np.int64)
