"""Input checks shared by the whole package.

Every public entry point funnels user data through these functions so that bad input
fails early with a message that says what is wrong and how to fix it, instead of a
traceback from deep inside numpy or a NaN in the results.
"""

import numbers

import numpy as np
import scipy.sparse as sp

FLOAT_DTYPES = (np.float64, np.float32)


def check_matrix(X, name="X", *, nonnegative=True, dtype=None, sparse_format="csr"):
    """Validate a data matrix (``name`` in error messages; negative entries refused with
    ``nonnegative``) and return it as ``sparse_format`` (sparse input) or a C-ordered
    ndarray, in ``dtype`` (None keeps float32 / float64, casts anything else to float64).
    """
    if X is None:
        raise ValueError(f"{name} is None: pass a matrix of shape (n_documents, n_terms).")
    if sp.issparse(X):
        X = X.asformat(sparse_format)
        values = X.data
    else:
        try:
            X = np.asarray(X)
        except Exception as exc:  # ragged lists and the like
            raise ValueError(f"{name} could not be read as a 2-D numeric array: {exc}") from None
        if X.dtype == object or not (np.issubdtype(X.dtype, np.number) or X.dtype == bool):
            raise ValueError(
                f"{name} must hold numbers, got dtype {X.dtype}. If these are texts, "
                "vectorize them first (semnmf.Corpus(texts).tfidf()).")
        values = X
    if X.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D matrix; got an array with {X.ndim} dimension(s)."
            + (f" A single row: {name}.reshape(1, -1)." if X.ndim == 1 else ""))
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {X.shape}); it needs at least one row and one column.")
    if dtype is None:
        dtype = X.dtype if X.dtype in FLOAT_DTYPES else np.float64
    if X.dtype != dtype:
        X = X.astype(dtype)
        values = X.data if sp.issparse(X) else X
    if not np.all(np.isfinite(values)):
        n_bad = int(np.size(values) - np.count_nonzero(np.isfinite(values)))
        raise ValueError(
            f"{name} contains {n_bad} NaN or infinite value(s); remove or impute them "
            "(e.g. replace with 0) before fitting.")
    if nonnegative and values.size and values.min() < 0:
        n_neg = int(np.count_nonzero(values < 0))
        raise ValueError(
            f"Negative values in data passed to {name}: {n_neg} negative value(s) (min "
            f"{values.min():.3g}); NMF needs non-negative data. Use counts or TF-IDF weights, or clip with np.maximum(X, 0)."
        )
    if sp.issparse(X):
        if not X.has_canonical_format or np.any(X.data == 0):
            X = X.copy()  # never modify the caller's matrix
            X.sum_duplicates()
            X.eliminate_zeros()
    else:
        X = np.ascontiguousarray(X)
    return X


def check_square_nonnegative(A, name, *, square_as, nonnegative_as):
    """A finite, square, non-negative matrix (a graph or a payoff matrix) as float64 CSR
    or ndarray, with messages in the caller's terms: "{name} must be {square_as}" and
    "{name} must {nonnegative_as}" (check_matrix's own message speaks of NMF data)."""
    A = check_matrix(A, name, nonnegative=False, dtype=np.float64)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be {square_as}; got shape {A.shape}.")
    values = A.data if sp.issparse(A) else A
    if values.size and values.min() < 0:
        raise ValueError(
            f"{name} must {nonnegative_as}; found {int(np.count_nonzero(values < 0))} "
            f"negative value(s) (min {values.min():.3g}).")
    return A


def check_n_components(n_components, n_samples, name="n_components"):
    """Check that the number of clusters is an integer in [1, n_samples]."""
    if isinstance(n_components, bool) or not isinstance(n_components, numbers.Integral):
        raise ValueError(f"{name} must be a positive integer, got {n_components!r}.")
    if n_components < 1:
        raise ValueError(f"{name} must be at least 1, got {n_components}.")
    if n_components > n_samples:
        raise ValueError(
            f"{name}={n_components} is larger than the number of documents ({n_samples}); "
            f"ask for at most {n_samples} clusters.")
    return int(n_components)


def check_positive_int(value, name, minimum=1):
    """An integer >= minimum (bools refused), as a plain int; clear ValueError otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def is_missing_label(value):
    """Whether a reference label means "no label": None, an empty (or blank) string, or
    NaN. Such documents are unlabelled: no class, and left out of the scores."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, (float, np.floating)):
        return bool(np.isnan(value))
    return False


def reference_labels(labels):
    """A corpus's labels as a 1-D object array (a missing label, :func:`is_missing_label`,
    as None), or None when every label is missing. A label must be a string, a number or
    another value that can be compared with the others (classes are sorted and hashed by
    the scores): a JSON list or object, or numbers mixed with strings, raise a one-line
    ``ValueError`` naming the documents."""
    values = np.empty(len(labels), dtype=object)  # 1-D even when labels are tuples
    values[:] = [None if is_missing_label(y) else y for y in labels]
    classes = set()
    for i, y in enumerate(values.tolist()):
        if y is not None:
            try:
                classes.add(y)
            except TypeError:
                raise ValueError(f"the label of document {i} is a {type(y).__name__} "
                                 f"({_short(y)}): a label must be a string or a number.") from None
    if not classes:
        return None
    try:
        sorted(classes)
    except TypeError:  # the first document of each kind of label, for the message
        first = {}
        for i, y in enumerate(values.tolist()):
            if y is not None:
                first.setdefault(type(y), (i, y))
        (i, a), (j, b) = list(first.values())[:2]
        raise ValueError(f"labels of different kinds cannot be compared: document {i} has "
                         f"{_short(a)} ({type(a).__name__}), document {j} has {_short(b)} "
                         f"({type(b).__name__}); give every label as a string, or every "
                         "label as a number.") from None
    return values


def _short(value, width=40):
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def check_nonnegative_float(value, name):
    """A finite real number >= 0 (bools refused); clear ValueError otherwise."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not np.isfinite(value) or value < 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}.")


def empty_rows(X):
    """Boolean mask of the all-zero rows of a CSR matrix or ndarray."""
    if sp.issparse(X):
        return np.diff(X.tocsr().indptr) == 0
    return ~np.any(X != 0, axis=1)


def check_documents(X):
    """Mask of the documents (rows of X) without any term: refused when all are, warned
    about (they get label -1) otherwise. One rule for every document clusterer."""
    import warnings

    empty = empty_rows(X)
    if empty.all():
        raise ValueError("every row of X is zero: there is nothing to cluster.")
    if empty.any():
        warnings.warn(
            f"{int(empty.sum())} document(s) have no term (all-zero rows); they get "
            "label -1. Remove them or lower min_df to give them terms.", UserWarning,
            stacklevel=3)
    return empty


def largest_abs(X):
    """The largest |value| of a dense or sparse X (0 when it stores none), without an
    ``np.abs`` copy of the data."""
    values = X.data if sp.issparse(X) else X
    return float(max(values.max(), -values.min())) if values.size else 0.0


# Largest |value| whose square neither overflows nor underflows, with a margin for the
# sum over a row: outside, :func:`unit_rows` first divides X by its largest value.
_SQUARE_SAFE = {np.dtype(np.float32): (1e-15, 1e15), np.dtype(np.float64): (1e-100, 1e100)}


def unit_rows(X):
    """X (CSR or ndarray) with unit-L2 rows, zero rows left zero, at any scale of X: a
    copy, as scikit-learn's ``normalize``, which squares the values and so turned every
    row of a matrix scaled by 1e160 (or 1e-170) into zero or NaN. Such a matrix is first
    divided by its largest value; a row's direction does not depend on the scale."""
    from sklearn.preprocessing import normalize

    top = largest_abs(X)
    low, high = _SQUARE_SAFE.get(np.dtype(X.dtype), _SQUARE_SAFE[np.dtype(np.float64)])
    if top > high or 0 < top < low:
        return normalize(X / X.dtype.type(top), norm="l2", copy=False)
    return normalize(X, norm="l2", copy=True)


def validate_estimator_input(estimator, X, *, reset):
    """scikit-learn's ``validate_data`` (n_features_in_ bookkeeping, its standard
    messages for complex / 1-D / empty / non-finite input), then our non-negativity
    check. Returns CSR or a C-ordered float ndarray."""
    from sklearn.utils.validation import validate_data

    X = validate_data(estimator, X, reset=reset, accept_sparse=("csr", "csc"),
                      dtype=[np.float64, np.float32], ensure_min_samples=1)
    return check_scale(check_matrix(X, "X"), "X")


# The range of X's largest value in which the multiplicative updates are exact up to
# rounding: below, the updates' denominator guard (``_solvers.mu.EPSILON``) outweighs the
# products of the factors; above, the products overflow (measured on BBC's counts scaled).
SCALE_LIMITS = {np.dtype(np.float32): (1e-12, 1e15), np.dtype(np.float64): (1e-12, 1e140)}


def check_scale(X, name="X"):
    """Refuse a matrix whose largest value lies outside :data:`SCALE_LIMITS` for its
    dtype, saying how to rescale it (NMF is scale-equivariant: ``X / X.max()`` gives the
    same clusters). Returns X."""
    top = largest_abs(X)
    low, high = SCALE_LIMITS.get(np.dtype(X.dtype), SCALE_LIMITS[np.dtype(np.float64)])
    if 0 < top < low:
        raise ValueError(
            f"{name}'s largest value is {top:.3g}, too small for the multiplicative updates "
            f"(below {low:g} the denominators' guard outweighs the data); rescale it, e.g. "
            f"{name} / {name}.max(): the clusters do not depend on the scale.")
    if top > high:
        also = (" or fit in float64 (CLI: --dtype float64)"
                if np.dtype(X.dtype) == np.float32 else "")
        raise ValueError(
            f"{name}'s largest value is {top:.3g}, too large for the updates in {X.dtype} "
            f"(the factors' products overflow above about {high:g}); rescale it, e.g. "
            f"{name} / {name}.max(){also}: the clusters do not depend on the scale.")
    return X


def check_fit_target(estimator, y, accepts_M=False):
    """``fit(X, y=None, ...)``: y is ignored (scikit-learn's convention), so a matrix there
    is a word-context matrix passed by position, which would be silently dropped: refused,
    naming the estimator and the fix."""
    if y is not None and (sp.issparse(y) or np.asarray(y).ndim == 2):
        where = ("fit(X, M=M)" if accepts_M else
                 "SemanticNMF(...).fit(X, M=M): this estimator takes no word-context matrix")
        raise ValueError(f"{type(estimator).__name__}.fit's second argument is y, which is "
                         f"ignored; a matrix there would be dropped: pass the word-context "
                         f"matrix by name, {where}.")
