"""Atomic file writes and JSON helpers: the one way semnmf writes a result file.

:func:`atomic_write` writes to a temporary file in the same folder and renames it over
``path``, so a reader never sees a half-written file. Only the standard library is
imported here; numpy values are recognized by duck typing.
"""

import json
import math
import os
import tempfile


def atomic_write(path, write, binary=False):
    """Write ``path`` (its folder must exist) through a temporary file renamed into place:
    ``write(f)`` writes the content to the open file ``f`` (binary with ``binary``, else
    UTF-8 text with ``newline=""``, as :mod:`csv` wants). The file gets an ordinary new
    file's permissions; on any error ``path`` is unchanged and the exception propagates.
    """
    path = os.fspath(path)
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.basename(path))
    try:
        mode = {"mode": "wb"} if binary else {"mode": "w", "encoding": "utf-8", "newline": ""}
        with os.fdopen(fd, **mode) as f:
            write(f)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; results are ordinary files
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def json_default(value):
    """``json.dump`` fallback: numpy scalars and arrays as Python values, anything else as
    text."""
    if hasattr(value, "tolist") and type(value).__module__ == "numpy":
        return value.tolist()  # numpy scalar (-> Python scalar) or array (-> lists)
    return str(value)


def json_safe(value):
    """``value`` with every non-finite float (NaN, ±inf) replaced by ``None`` (JSON
    ``null``: NaN is not JSON), numpy values turned into Python ones, tuples into lists."""
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return json_safe(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_json(path, value, indent=2):
    """Write ``value`` as JSON to ``path`` atomically; NaN and infinities become ``null``,
    numpy values Python ones, anything else not JSON its ``str``."""
    text = json.dumps(json_safe(value), indent=indent, default=json_default, allow_nan=False)
    atomic_write(path, lambda f: f.write(text))


def check_writable(folder, what="the results"):
    """Refuse (ValueError naming ``folder``) a folder where no file can be made: missing,
    read-only, full. Made and removed at once, so that a command fails before its work,
    not after it."""
    folder = os.fspath(folder)
    if not os.path.isdir(folder):
        raise ValueError(f"cannot write {what} to {folder}: no such folder.")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise ValueError(f"cannot write {what} to {folder}: {exc.strerror or exc}; choose "
                         "another folder.") from None
