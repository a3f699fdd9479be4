"""Loading corpora: the built-in BBC News corpus, dataset folders (``counts.mtx``,
``vocab.txt``, ``labels.txt``, ``docs.jsonl``, or shards), folders of text files, CSV /
TSV / JSONL tables, data frames and Python lists of strings (docs/guide/inputs.md). Named
datasets other than the built-in ones are looked up in the folders of ``$SEMNMF_DATA``.

The readers live in :mod:`.encodings`, :mod:`.tables`, :mod:`.frames`, :mod:`.folders`
and :mod:`.planted`; this module chooses among them.
"""

import os

from .._utils.words import LIBRARY
from ._base import BUILTIN, TABLE_SUFFIXES, Corpus, DatasetError, _refuse_columns, _shards
from .encodings import _read_text
from .encodings import binary_kind, detect_encoding
from .folders import (RESULTS_FOLDER, _is_dataset_folder, _load_bbc, _load_folder,
                      _load_shards, _load_text_tree, _warn_ignored)
from .frames import _read_frame, frame_column, is_frame, is_in_memory_texts, text_list
from .planted import make_planted
from .tables import (DELIMITERS, ON_BAD_LINES, _load_table, check_delimiter, csv_delimiter,
                     read_column)

__all__ = ["BUILTIN", "DELIMITERS", "ON_BAD_LINES", "RESULTS_FOLDER", "TABLE_SUFFIXES",
           "binary_kind", "check_delimiter", "check_source_exists", "check_source_options",
           "check_table_options", "csv_delimiter", "data_paths", "DatasetError",
           "detect_encoding", "frame_column", "has_raw_text", "is_frame",
           "is_in_memory_texts", "list_datasets", "load_dataset", "make_planted",
           "read_column", "source_name", "text_list"]


def data_paths():
    """Folders searched for named datasets ($SEMNMF_DATA)."""
    return [p for p in os.environ.get("SEMNMF_DATA", "").split(os.pathsep) if p]


def list_datasets():
    """Name -> description of the datasets ``load_dataset`` can open by name."""
    found = dict(BUILTIN)
    for root in data_paths():
        if os.path.isdir(root):
            for name in sorted(os.listdir(root)):
                folder = os.path.join(root, name)
                if name not in found and _is_dataset_folder(folder):
                    found[name] = f"dataset folder {folder}"
    return found


def source_name(source):
    """The name :func:`load_dataset` gives the corpus of ``source`` (without reading it):
    "bbc", a dataset's folder name, or a table's file name without its suffix."""
    if is_in_memory_texts(source):
        return "data frame" if is_frame(source) else "corpus"
    source = os.fspath(source)
    if _builtin(source):
        return source.lower()
    # abspath: "." and ".." are named by the folder they stand for (normpath kept them)
    name = os.path.basename(os.path.abspath(source)) or "corpus"
    return name if os.path.isdir(source) else os.path.splitext(name)[0]


def load_dataset(source, *, text_column=None, label_column=None, id_column=None,
                 encoding="utf-8", delimiter=None, on_bad_lines="error",
                 use_counts=True, vocabulary=None, vocab=None, **corpus_options):
    """Open a corpus from a name, a path or a list of strings.

    Parameters
    ----------
    source : str, os.PathLike, data frame or sequence of str
        "bbc" (built in), a dataset name found in $SEMNMF_DATA, a dataset folder, a folder
        of ``.txt`` files (one sub-folder per label, or flat without labels), a CSV / TSV /
        JSONL file, a pandas or polars data frame, or texts (a list, a Series, a 1-D
        array, any iterable of str).
    text_column, label_column, id_column : str, optional
        Columns of a table or a data frame (fields of a JSONL record); default "text",
        "label" and "id" (the label and id columns are optional: without an id column the
        documents are named by their row numbers).
    encoding : str, default="utf-8"
        Encoding of text files; a file that does not decode raises a clear error.
    delimiter : str, optional
        The delimiter of a CSV / TSV file: one character, or "comma", "semicolon", "tab",
        "bar". Default: read from the header line (the suffix's, tab for .tsv and comma
        otherwise, when the header holds it, else the one of :data:`DELIMITERS` it holds
        most).
    on_bad_lines : {"error", "skip"}, default="error"
        A CSV row with more or fewer fields than the header, a quoting error, or a JSONL
        line that is not JSON: refused naming its line ("error"), or left out ("skip"),
        with a warning that counts them and names their lines; the returned corpus's
        ``skipped_lines`` lists them. A quoted field never closed is refused either way.
    use_counts : bool, default=True
        For a dataset folder with both ``counts.mtx`` and ``docs.jsonl``: use the
        distributed count matrix (True) or re-vectorize the raw text (False).
    vocabulary : str, os.PathLike or list of str, optional
        The terms of the columns of a dataset folder's ``counts.mtx`` (a file with one
        term per line, or a list): for a folder without ``vocab.txt`` (its terms would be
        shown as ``t0``, ``t1``, ...), or to replace it. ``vocab`` is another name for it
        (CLI: ``--vocab FILE``). Repeated terms are refused.
    **corpus_options
        Vectorizing options passed to :class:`~semnmf.Corpus` (``min_df``, ``stem``,
        ``stop_words`` -- "english" or "none" for other languages --, ``token_pattern``,
        ...).

    Returns
    -------
    Corpus

    Notes
    -----
    Labels that are empty (an empty CSV cell, an empty line of ``labels.txt``, a JSON
    null or a record without the label field) mark unlabelled documents: they are
    clustered but left out of the scores.
    """
    if vocab is not None:
        if vocabulary is not None:
            raise ValueError("give vocabulary= or vocab= (the same thing), not both.")
        vocabulary = vocab
    check_table_options(source, delimiter, on_bad_lines)
    if vocabulary is not None and is_in_memory_texts(source):
        raise DatasetError("vocabulary= (CLI: --vocab) names the columns of a counts.mtx; "
                           "texts make their own vocabulary.")
    if is_frame(source):
        texts, labels, ids = _read_frame(source, text_column, label_column, id_column)
        return Corpus(texts, labels, ids, name="data frame", **corpus_options)
    if id_column is not None and not (isinstance(source, (str, os.PathLike)) and str(
            source).lower().endswith(TABLE_SUFFIXES)):
        raise DatasetError("id_column= (CLI: --id-column) names a column of a CSV, TSV or "
                           "JSONL table or of a data frame; this source is not one.")
    if is_in_memory_texts(source):
        _refuse_columns(text_column, label_column, "a list of texts")
        return Corpus(text_list(source), **corpus_options)
    source = os.fspath(source)
    if _builtin(source):
        if vocabulary is not None:
            raise DatasetError(f"vocabulary= (CLI: --vocab) names the columns of a counts.mtx; "
                               f"{source!r} has its own vocabulary.")
        return _load_bbc(**corpus_options)
    path = _find_source(source)
    if path is None:
        raise _not_found(source)
    name = source_name(path)
    counts_folder = os.path.isdir(path) and os.path.exists(os.path.join(path, "counts.mtx"))
    if vocabulary is not None and not counts_folder:
        raise DatasetError(f"vocabulary= (CLI: --vocab) names the columns of a counts.mtx, "
                           f"and {path!r} is no dataset folder with one; texts make their "
                           "own vocabulary.")
    if os.path.isdir(path):
        present = {f for f in ("counts.mtx", "docs.jsonl", "labels.txt", "vocab.txt")
                   if os.path.exists(os.path.join(path, f))}
        shards = _shards().shard_paths(path)
        if shards and not present & {"counts.mtx", "docs.jsonl"}:
            _warn_ignored(path, sorted(present), "a folder of shards is read from its shards "
                          "alone (labels come from the records' label field)")
            return _load_shards(path, name, text_column, label_column, encoding,
                                **corpus_options)
        if _is_dataset_folder(path):
            ignored = [os.path.basename(p) for p in shards]
            if "vocab.txt" in present and "counts.mtx" not in present:
                ignored.append("vocab.txt")
            _warn_ignored(path, ignored, "a dataset folder is read from counts.mtx (with "
                          "vocab.txt, its columns' terms) or docs.jsonl, with labels.txt")
            return _load_folder(path, name, use_counts=use_counts, encoding=encoding,
                                vocabulary=vocabulary, **corpus_options)
        _refuse_columns(text_column, label_column, f"{path} is a folder of .txt files (its "
                        "labels are its sub-folders' names)")
        return _load_text_tree(path, name, encoding, **corpus_options)
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".txt":  # one document
        _refuse_columns(text_column, label_column, f"{path} is one .txt document")
        return Corpus([_read_text(path, encoding)], ids=[os.path.basename(path)], name=name,
                      **corpus_options)
    if suffix not in TABLE_SUFFIXES:
        raise DatasetError(
            f"don't know how to read {path!r}: expected a folder, a .txt file (one document) "
            "or a file ending in "
            f"{', '.join(TABLE_SUFFIXES)}.")
    return _load_table(path, name, text_column, label_column, encoding, id_column, delimiter,
                       on_bad_lines, **corpus_options)


def check_table_options(source, delimiter=None, on_bad_lines="error", words=LIBRARY):
    """Refuse ``delimiter`` and ``on_bad_lines`` when they are wrong or would do nothing on
    ``source`` (from its name only): a delimiter applies to a CSV / TSV file, skipping bad
    lines to a CSV / TSV / JSONL file."""
    if on_bad_lines not in ON_BAD_LINES:
        raise DatasetError(f"{words('on_bad_lines')} must be one of "
                           f"{', '.join(ON_BAD_LINES)}, got {on_bad_lines!r}.")
    check_delimiter(delimiter, words)
    if delimiter is None and on_bad_lines == "error":
        return
    path = os.fspath(source) if isinstance(source, (str, os.PathLike)) else ""
    if delimiter is not None and not path.lower().endswith((".csv", ".tsv")):
        raise DatasetError(f"{words('delimiter')} applies to a CSV or TSV file; "
                           f"{path or 'this source'} is not one: drop it.")
    if on_bad_lines != "error" and not path.lower().endswith(TABLE_SUFFIXES):
        raise DatasetError(f"{words('on_bad_lines')} applies to a CSV, TSV or JSONL file; "
                           f"{path or 'this source'} is not one: drop it.")


def check_source_exists(source):
    """Refuse a source named by a string or path that names nothing (no file, folder,
    built-in or $SEMNMF_DATA dataset), as :func:`load_dataset` would, without reading."""
    if not isinstance(source, (str, os.PathLike)):
        return
    source = os.fspath(source)
    if _find_source(source) is None and not _builtin(source):
        raise _not_found(source)


def _builtin(source):
    """Whether the string ``source`` names a built-in corpus (a path of that name wins)."""
    return source.lower() in BUILTIN and not os.path.exists(source)


def _not_found(source):
    return DatasetError(
        f"no dataset named or found at {source!r}. Built-in: {', '.join(BUILTIN)}; "
        "otherwise give a dataset folder, a folder of .txt files, or a .csv/.tsv/.jsonl "
        "file (named datasets are searched in $SEMNMF_DATA).")


def _find_source(source):
    """The path ``load_dataset(source)`` reads (a path, or a dataset named in
    $SEMNMF_DATA), or None."""
    if os.path.exists(source):
        return source
    for root in data_paths():
        candidate = os.path.join(root, source)
        if _is_dataset_folder(candidate):
            return candidate
    return None


def has_raw_text(source):
    """Whether ``load_dataset(source)`` will have raw texts, told without reading them: a
    dataset folder with ``docs.jsonl`` (or shards), any text file or folder of texts, a
    list of strings, the built-in BBC; not a folder of counts only, nor a matrix."""
    if source is None or is_in_memory_texts(source):
        return True
    if not isinstance(source, (str, os.PathLike)):
        texts = getattr(source, "texts", None)  # a Corpus: its own; a matrix: none
        return texts is not None and not getattr(source, "from_counts", False)
    if _builtin(os.fspath(source)):
        return True  # as load_dataset: a built-in name before $SEMNMF_DATA's folders
    path = _find_source(os.fspath(source))
    if path is None or not os.path.isdir(path):
        return True  # a file (CSV, JSONL, .txt) is text; an unknown name fails later
    if os.path.isfile(os.path.join(path, "counts.mtx")):
        return os.path.isfile(os.path.join(path, "docs.jsonl"))
    return True


def check_source_options(source, *, text_column=None, label_column=None, encoding=None,
                         vocabulary=None, words=LIBRARY):
    """Refuse the input settings (None: not given) that would do nothing on ``source``,
    naming them in ``words``, from the names of its files only (nothing is read): on a
    dataset folder of counts only (``counts.mtx``, no ``docs.jsonl``) ``text_column``,
    ``label_column``, and ``encoding`` when no file there would be decoded."""
    if not isinstance(source, (str, os.PathLike)):
        return
    source = os.fspath(source)
    path = _find_source(source)
    if (path is None or not os.path.isdir(path)
            or not os.path.exists(os.path.join(path, "counts.mtx"))
            or os.path.exists(os.path.join(path, "docs.jsonl"))):
        return
    where = f"{source} has counts only (counts.mtx, no docs.jsonl), no raw text"
    if text_column is not None:
        raise DatasetError(f"{where}: {words('text_column')} applies to the texts of a "
                           "CSV/TSV/JSONL table.")
    if label_column is not None:
        raise DatasetError(f"{where}: {words('label_column')} applies to a CSV/TSV/JSONL "
                           "table; the labels of a counts folder are its labels.txt.")
    if encoding is not None:
        decoded = [f for f in ("labels.txt", "vocab.txt")
                   if os.path.exists(os.path.join(path, f))]
        if isinstance(vocabulary, (str, os.PathLike)):
            decoded.append(os.fspath(vocabulary))
        if not decoded:
            raise DatasetError(f"{where}: {words('encoding')} applies to text files, and it "
                               f"has none (no labels.txt, vocab.txt or {words('vocabulary')} "
                               "file).")
