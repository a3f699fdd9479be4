"""Reading text files right: binary files refused, UTF-16 told, the encoding of a file
that is not UTF-8 detected (charset-normalizer, with a language check), mojibake refused."""

import codecs
import functools

from ._base import DatasetError


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


def _utf16_hint(path, raw=None):
    """" It looks like UTF-16 ..." when the bytes of ``path`` start with a UTF-16 (or
    UTF-32) byte-order mark or hold NUL bytes (ASCII text in UTF-16 does), else ""."""
    raw = _head(path) if raw is None else raw
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
    reads as Latin script (charset-normalizer often prefers a Baltic page on short Western
    European texts: "garçon" as "garēon"); of those that decode, charset-normalizer's
    first is taken unless py3langid is clearly surer (:data:`SURER`) of another's text."""
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
