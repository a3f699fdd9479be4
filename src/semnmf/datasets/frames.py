"""Texts held in memory: pandas and polars data frames, Series, arrays, lists and other
iterables of strings."""

import os
import sys

from ._base import DatasetError


def is_frame(source):
    """Whether ``source`` is a data frame (pandas, polars, or anything with named columns
    and a 2-D shape); nothing is imported."""
    return (not isinstance(source, (str, bytes, os.PathLike)) and hasattr(source, "columns")
            and len(getattr(source, "shape", ())) == 2 and hasattr(source, "__getitem__"))


def is_in_memory_texts(source):
    """Whether ``source`` holds texts in memory: a data frame, a list or tuple, or another
    iterable that is neither a path, a :class:`Corpus` nor a matrix (a pandas or polars
    Series, a 1-D numpy array of strings, a generator)."""
    corpus = sys.modules.get("semnmf.text.corpus")  # not imported: no Corpus exists yet
    if isinstance(source, (str, bytes, os.PathLike)) or hasattr(source, "tocsr") or (
            corpus is not None and isinstance(source, corpus.Corpus)):
        return False
    if is_frame(source) or isinstance(source, (list, tuple)):
        return True
    shape = getattr(source, "shape", None)
    return hasattr(source, "__iter__") and (shape is None or len(shape) == 1)


def _missing(value):
    """None or NaN: a data frame's missing value."""
    return value is None or (isinstance(value, float) and value != value)


def text_list(source, what="texts"):
    """An in-memory sequence of texts (not a frame) as a list of str; a missing value
    (None, NaN) or a value of another type is refused in one line naming its position."""
    texts = source.to_list() if hasattr(source, "to_list") else list(source)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            kind = "missing" if _missing(text) else type(text).__name__
            raise DatasetError(f"{what} must all be strings; document {i} is {kind}: fill or "
                               "drop it (a pandas column: df[col].fillna('')).")
    return texts


def frame_column(frame, column):
    """The values of ``frame[column]`` as a list (pandas and polars alike)."""
    values = frame[column]
    return values.to_list() if hasattr(values, "to_list") else list(values)


def _read_frame(frame, text_column, label_column, id_column=None):
    """(texts, labels, ids) of a data frame: the text column (default "text"), the label
    column (default "label" when it has one) and the id column (default "id" when it has
    one); a missing column is refused naming the columns it has."""
    columns = [str(c) for c in frame.columns]
    text_column = text_column or "text"
    for role, column, needed in (("text", text_column, True),
                                 ("label", label_column, label_column is not None),
                                 ("id", id_column, id_column is not None)):
        if needed and column not in columns:
            raise DatasetError(f"the data frame has no {role} column {column!r}; its columns "
                               f"are {columns}. Name it with {role}_column=.")
    texts = text_list(frame_column(frame, text_column), f"column {text_column!r}")
    label_column = label_column or ("label" if "label" in columns else None)
    labels = frame_column(frame, label_column) if label_column else None
    if labels is not None:  # NaN marks an unlabelled document, as an empty CSV cell does
        labels = [None if _missing(y) else y for y in labels]
    id_column = id_column or ("id" if "id" in columns else None)
    ids = [str(i) for i in frame_column(frame, id_column)] if id_column else None
    return texts, labels, ids
