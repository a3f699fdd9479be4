"""The golden set (``benchmarks/golden.py``): the labels, objective and iterations of every
method on three shared corpora must be those recorded in ``benchmarks/results/golden.json``.

Marked ``golden`` and deselected by default (about 45 s; it needs the shared datasets, in
``../shared/datasets`` or ``$SEMNMF_BENCH_DATA``): run it with ``python -m pytest -m golden``.
"""

import importlib.util
import json
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.golden

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _golden_script():
    spec = importlib.util.spec_from_file_location("golden", BENCHMARKS / "golden.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_golden_set_is_unchanged():
    golden = _golden_script()
    root = golden.data_path()
    missing = [name for name in golden.GOLDEN_CORPORA
               if not os.path.isdir(os.path.join(root, name))]
    if missing:
        pytest.skip(f"the shared datasets {', '.join(missing)} are not in {root} "
                    "(set SEMNMF_BENCH_DATA)")
    with open(golden.GOLDEN, encoding="utf-8") as f:
        reference = json.load(f)
    differ = golden.differences(reference, golden.record(root))
    assert not differ, f"{len(differ)} golden entries differ:\n" + "\n".join(
        f"{corpus} {key}: {before} -> {after}" for corpus, key, before, after in differ)
