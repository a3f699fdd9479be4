"""CSV, TSV and JSONL tables: the delimiter from the header (or given), strict rows refused
with their line numbers (or skipped and counted), the text, label and id columns, and one
column read alone."""

import csv
import io
import json
import logging
import os
import sys
import warnings

from ._base import Corpus, DatasetError, TABLE_SUFFIXES
from .encodings import _read_text, _split_lines
from .frames import _missing, frame_column, is_frame


def _load_table(path, name, text_column, label_column, encoding, id_column, delimiter,
                on_bad_lines, **corpus_options):
    """The Corpus of a table; the lines of the bad rows skipped (``on_bad_lines="skip"``)
    warned and kept as its ``skipped_lines``."""
    skipped = []
    texts, labels, ids = _read_table(path, text_column, label_column, encoding, id_column,
                                     delimiter, on_bad_lines, skipped)
    if skipped:
        shown = ", ".join(map(str, skipped[:10])) + (", ..." if len(skipped) > 10 else "")
        warnings.warn(f"{path}: {len(skipped)} bad row(s) skipped (on_bad_lines='skip'), on "
                      f"line(s) {shown}; {len(texts)} read.", UserWarning, stacklevel=3)
    corpus = Corpus(texts, labels, ids, name=name, **corpus_options)
    corpus.skipped_lines = skipped
    return corpus


def _read_table(path, text_column, label_column, encoding, id_column=None, delimiter=None,
                on_bad_lines="error", skipped=None):
    """(texts, labels, ids) of a table; the line numbers of the rows skipped
    (``on_bad_lines="skip"``) are appended to ``skipped``."""
    if path.lower().endswith((".jsonl", ".ndjson", ".json")):
        return _read_jsonl(path, text_column or "text", label_column, encoding, id_column,
                           on_bad_lines, skipped)
    content = _read_text(path, encoding)
    columns, rows = _table_rows(content, path, delimiter, on_bad_lines, skipped, say=True)
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


def read_column(source, column, encoding="utf-8", delimiter=None, on_bad_lines="error"):
    """The values of one column (CSV / TSV, a data frame's: dates as ISO text) or field
    (JSONL) of a table source, one per document in the order :func:`load_dataset` reads them
    with the same ``delimiter`` and ``on_bad_lines`` (None where a record lacks it).
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
        records = _json_records(content, path, on_bad_lines)
        if all(column not in r for r in records):
            raise DatasetError(f"{path}: no field {column!r} in any record.")
        return [r.get(column) for r in records]
    content = _read_text(path, encoding)
    columns, rows = _table_rows(content, path, delimiter, on_bad_lines)
    if column not in columns:
        raise DatasetError(f"{path} has no column {column!r}; its columns are {columns}.")
    return [r[column] or None for r in rows]


#: The delimiters a CSV file may use; the header line tells which (:func:`csv_delimiter`).
DELIMITERS = (",", ";", "\t", "|")
#: Their names: said in messages, and accepted for ``delimiter=`` (``--delimiter tab``).
DELIMITER_WORDS = dict(zip(DELIMITERS, ("comma", "semicolon", "tab", "bar")))
DELIMITER_NAMES = {**{word: d for d, word in DELIMITER_WORDS.items()}, "pipe": "|"}
#: What ``on_bad_lines`` may be: refuse the table at its first bad row, or skip bad rows.
ON_BAD_LINES = ("error", "skip")


def check_delimiter(delimiter, words=None):
    """The delimiter ``delimiter`` names (one character, or comma / semicolon / tab / bar),
    or None for None; anything else refused in one line."""
    if delimiter is None:
        return None
    value = DELIMITER_NAMES.get(str(delimiter).lower(), delimiter)
    if not isinstance(value, str) or len(value) != 1 or value in "\"\r\n":
        name = words("delimiter") if words else "delimiter="
        raise DatasetError(f"{name} must be one character or comma, semicolon, tab, bar "
                           f"(not a quote or a line end), got {delimiter!r}.")
    return value


def _table_rows(content, path, delimiter, on_bad_lines, skipped=None, say=False):
    """The header and rows of a CSV / TSV text with the given (or sniffed) delimiter."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    given = check_delimiter(delimiter)
    delimiter = given or csv_delimiter(content, path)
    if say and not given and delimiter != ("\t" if path.lower().endswith(".tsv") else ","):
        named = DELIMITER_WORDS[delimiter]
        logging.getLogger("semnmf").info(f"{path}: read as {named}-separated (its header "
                                         "line)")
    return _csv_rows(content, delimiter, path, on_bad_lines, skipped)


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


def _csv_rows(content, delimiter, path, on_bad_lines="error", skipped=None):
    """The header and the rows (dicts) of a CSV / TSV text, parsed strictly: a quoting
    error, or a row with more or fewer fields than the header, is refused naming the line
    the row starts on, or with ``on_bad_lines="skip"`` left out and its line appended to
    ``skipped``; a quoted field never closed is refused either way. Blank lines are
    skipped."""
    reader = csv.reader(io.StringIO(content), delimiter=delimiter, strict=True)
    shown = DELIMITER_WORDS.get(delimiter, repr(delimiter))
    skip = on_bad_lines == "skip"
    skipped = [] if skipped is None else skipped
    header, rows, start = None, [], 1
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            if "unexpected end of data" in str(exc):
                raise DatasetError(
                    f"{path}: the row that starts on line {start} opens a quoted field that "
                    "is never closed, so the rest of the file would be one text; close the "
                    'quote (a quote inside a quoted field is written "").') from None
            if not skip or header is None:
                raise DatasetError(
                    f"{path}, line {start}: not valid CSV ({exc}): a quoted field must end "
                    'at a delimiter or a line end; write a quote inside a quoted text as ""'
                    + (" (or skip such rows: on_bad_lines='skip', CLI: --on-bad-lines "
                       "skip)." if header is not None else " (in the header line).")) from None
            skipped.append(start)
        else:
            if not fields:  # a blank line
                pass
            elif header is None:
                header = fields
            elif len(fields) == len(header):
                rows.append(dict(zip(header, fields)))
            elif skip:
                skipped.append(start)
            else:
                raise DatasetError(
                    f"{path}, line {start}: {len(fields)} field(s) where the header has "
                    f"{len(header)} ({shown}-separated): a text holding the {shown} must be "
                    'quoted, and a quote inside a quoted text written "" (a stray quote '
                    "joins the lines up to the next quote); or skip such rows: "
                    "on_bad_lines='skip' (CLI: --on-bad-lines skip).")
        start = reader.line_num + 1
    return list(header or []), rows


def _json_type(value):
    return {list: "array", str: "string", bool: "boolean", int: "number", float: "number",
            type(None): "null"}.get(type(value), type(value).__name__)


def _json_records(content, path, on_bad_lines="error", skipped=None):
    """The records of a JSON array or of JSON lines; a line that is not valid JSON is
    refused naming it, or (``on_bad_lines="skip"``) left out and appended to ``skipped``."""
    if path.lower().endswith(".json") and content.lstrip().startswith("["):
        try:
            return json.loads(content)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}, line {exc.lineno}, column {exc.colno}: not valid "
                               f"JSON ({exc.msg}).") from None
    records = []
    for number, line in enumerate(_split_lines(content), 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                if on_bad_lines != "skip":
                    raise DatasetError(f"{path}, line {number}, column {exc.colno}: not "
                                       f"valid JSON ({exc.msg}); or skip such lines: "
                                       "on_bad_lines='skip' (CLI: --on-bad-lines "
                                       "skip).") from None
                if skipped is not None:
                    skipped.append(number)
    return records


def _read_jsonl(path, text_column, label_column, encoding, id_column=None,
                on_bad_lines="error", skipped=None):
    text_column = text_column or "text"
    texts, labels, ids = [], [], []
    records = _json_records(_read_text(path, encoding), path, on_bad_lines, skipped)
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
