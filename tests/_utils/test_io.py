"""The one atomic writer and the JSON helpers."""

import json
import os

import numpy as np
import pytest

from semnmf._utils.io import atomic_write, json_safe, write_json


def test_atomic_write_replaces_whole_files_only(tmp_path):
    path = tmp_path / "a.txt"
    atomic_write(path, lambda f: f.write("first\n"))
    assert path.read_text() == "first\n"

    def broken(f):
        f.write("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(path, broken)
    assert path.read_text() == "first\n"  # the old file, untouched
    assert os.listdir(tmp_path) == ["a.txt"]  # no temporary file left behind
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_atomic_write_binary(tmp_path):
    atomic_write(tmp_path / "b.bin", lambda f: f.write(b"\x89PNG"), binary=True)
    assert (tmp_path / "b.bin").read_bytes() == b"\x89PNG"


def test_json_nan_is_null_and_numpy_is_python(tmp_path):
    value = {"a": np.float64("nan"), "b": [1.0, float("inf")], "c": np.arange(3),
             "d": np.int64(4), "e": (np.float32(0.5),), "f": object}
    assert json_safe(value)["a"] is None and json_safe(value)["b"] == [1.0, None]
    write_json(tmp_path / "r.json", value)
    back = json.loads((tmp_path / "r.json").read_text(),
                      parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))
    assert back["a"] is None and back["b"] == [1.0, None] and back["c"] == [0, 1, 2]
    assert back["d"] == 4 and back["e"] == [0.5] and back["f"].startswith("<class")
