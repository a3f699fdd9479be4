"""The benchmarks' shared harness (``benchmarks/_common.py``): the corpus list, the
leave-one-corpus-out routine, and the rule that benchmark scripts use no private helper of
the library."""

import importlib.util
import re
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def common():
    spec = importlib.util.spec_from_file_location("bench_common", BENCHMARKS / "_common.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_leave_one_out_scores_the_worst_fold_first_then_the_mean(common):
    values = {"steady": {"a": 0.5, "b": 0.5, "c": 0.5},
              "mean-high": {"a": 0.95, "b": 0.9, "c": 0.1},    # collapses on c
              "also-steady": {"a": 0.4, "b": 0.6, "c": 0.5}}
    score = common.worst_then_mean(lambda cand, fold: values[cand][fold])
    chosen = common.leave_one_out(["a", "b", "c"], list(values), score)
    # held out b: mean-high has the best mean on a and c (0.525) but collapses on c;
    # held out a: steady and also-steady are as bad at worst, also-steady's mean is higher;
    # held out c: the collapse is out of sight
    assert chosen == {"a": "also-steady", "b": "steady", "c": "mean-high"}
    assert score("also-steady", ["b", "c"]) == (0.5, 0.55)


def test_leave_one_out_never_sees_the_held_out_fold_and_ties_go_first(common):
    seen = []

    def score(candidate, train):
        seen.append(tuple(train))
        return 0.0

    chosen = common.leave_one_out(["x", "y", "z"], ["first", "second"], score)
    assert chosen == {"x": "first", "y": "first", "z": "first"}
    assert set(seen) == {("y", "z"), ("x", "z"), ("x", "y")}


def test_one_corpus_list(common, tmp_path):
    assert len(common.CORPORA) == len(set(common.CORPORA)) == 10
    assert set(common.K_ORDER) == set(common.CORPORA)
    with pytest.raises(ValueError, match="not among the shared corpora: nope"):
        common.subset("cstr", "nope")
    for name, files in {"ng5": ["labels.txt", "counts.mtx"], "zeta": ["labels.txt", "docs.jsonl"],
                        "alpha": ["labels.txt", "docs.jsonl"], "cstr": ["labels.txt"],
                        "notes": ["README.md"]}.items():
        (tmp_path / name).mkdir()
        for file in files:
            (tmp_path / name / file).write_text("")
    assert common.all_corpora(str(tmp_path)) == ["ng5", "alpha", "zeta"]


def test_one_cache_folder_and_gzip_caches(common, tmp_path):
    assert common.CACHE_ROOT == str(BENCHMARKS / "cache")
    for name in ("cells.json", "cells.json.gz"):
        path = str(tmp_path / name)
        common.save_cache(path, {"a": {"x": 1}})
        common.save_cache(path, {"a": {"y": 2}, "b": [0.5]})
        assert common.load_cache(path) == {"a": {"x": 1, "y": 2}, "b": [0.5]}
    import gzip

    first = (tmp_path / "cells.json.gz").read_bytes()
    assert gzip.decompress(first) == (tmp_path / "cells.json").read_bytes()
    common.save_cache(str(tmp_path / "cells.json.gz"), {})
    assert (tmp_path / "cells.json.gz").read_bytes() == first  # no time stamp in the header
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cells.json", "cells.json.gz"]


def test_the_suite_is_curated_and_every_study_is_indexed():
    """At most 12 scripts beside the harness; the studies' index names every study, and the
    pages and files both READMEs link to exist."""
    suite = sorted(p.name for p in BENCHMARKS.glob("*.py") if p.name != "_common.py")
    assert len(suite) <= 12, suite
    readme = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    index = (BENCHMARKS / "studies" / "README.md").read_text(encoding="utf-8")
    studies = sorted(p.name for p in BENCHMARKS.glob("studies/*.py"))
    assert [name for name in studies if f"`{name}" not in index] == []
    for folder, text in ((BENCHMARKS, readme), (BENCHMARKS / "studies", index)):
        for link in re.findall(r"\]\(([^)#]+)\)", text):
            assert (folder / link).exists(), link


def test_benchmark_scripts_use_no_private_helper_of_the_library():
    """No ``from semnmf... import _x`` and no ``module._x(...)`` beyond the known ones."""
    found = set()
    for script in [*BENCHMARKS.glob("*.py"), *BENCHMARKS.glob("studies/*.py")]:
        text = script.read_text(encoding="utf-8")
        for names in re.findall(r"^\s*from semnmf[\w.]* import (\([^)]*\)|.*)", text, re.M):
            found |= {(script.name, name) for name in re.findall(r"\b_\w+", names)}
        found |= {(script.name, name)
                  for name in re.findall(r"\b(?!self\b)[a-z]\w*\.(_[a-z]\w*)\(", text)}
    assert not found, sorted(found)
