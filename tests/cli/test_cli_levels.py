"""``-k auto`` at several resolutions: levels.csv and run.json's range and levels, ``semnmf
edit --level`` giving a level exactly, ``--min-cluster-size`` at every level, the Python
call equal to the command line, and the refusals in one line."""

import csv
import json
import os

import numpy as np
import pytest

import semnmf
from semnmf.cli import main

FAST = ["--max-iter", "50", "-q"]


def read_levels(folder):
    with open(os.path.join(folder, "levels.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return {int(name[1:]): np.array([int(r[name]) for r in rows])
            for name in rows[0] if name != "doc"}, [r["doc"] for r in rows]


def clusters(folder):
    with open(os.path.join(folder, "assignments.csv"), newline="", encoding="utf-8") as f:
        return np.array([int(r["cluster"]) for r in csv.DictReader(f)])


@pytest.fixture(scope="module")
def auto_run(planted45_csv, tmp_path_factory):
    out = tmp_path_factory.mktemp("levels") / "auto"
    assert main(["cluster", planted45_csv, "-k", "auto", "--method", "nmf", "--out",
                 str(out), *FAST]) == 0
    return out


def test_auto_writes_every_level_and_the_range(auto_run):
    levels, docs = read_levels(auto_run)
    with open(auto_run / "run.json", encoding="utf-8") as f:
        record = json.load(f)
    low, high = record["k_range"]
    assert sorted(levels) == list(range(low, high + 1)) and len(levels) > 1
    k = len(record["cluster_sizes"])
    assert record["k_recommended"] == k and low <= k <= high
    np.testing.assert_array_equal(levels[k], clusters(auto_run))
    assert [entry["k"] for entry in record["levels"]] == sorted(levels)
    for entry in record["levels"]:
        assert sum(entry["sizes"]) == len(docs) == 45
        assert len(entry["steps"]) == abs(entry["k"] - k)
        np.testing.assert_array_equal(np.bincount(levels[entry["k"]]), entry["sizes"])


def test_edit_level_gives_the_level_exactly_and_replays(auto_run, tmp_path, planted45_csv):
    levels, _ = read_levels(auto_run)
    for k in levels:
        out = tmp_path / f"k{k}"
        assert main(["edit", str(auto_run), "--level", str(k), "--out", str(out), "-q"]) == 0
        np.testing.assert_array_equal(clusters(out), levels[k])
        with open(out / "run.json", encoding="utf-8") as f:
            record = json.load(f)
        assert record["level"] == k and record["n_clusters"] == k and "levels" not in record
        assigned = tmp_path / f"assigned{k}"
        assert main(["assign", str(out), planted45_csv, "--out", str(assigned), "-q"]) == 0
        np.testing.assert_array_equal(clusters(assigned), levels[k])


def test_python_gives_the_same_levels(auto_run, planted45_csv):
    result = semnmf.cluster(planted45_csv, "auto", method="nmf", max_iter=50)
    levels, _ = read_levels(auto_run)
    assert sorted(result.levels) == sorted(levels)
    for k, labels in levels.items():
        np.testing.assert_array_equal(result.levels[k], labels)


def test_min_cluster_size_alone_is_auto_and_holds_at_every_level(planted45_csv, tmp_path):
    out = tmp_path / "min"
    assert main(["cluster", planted45_csv, "--min-cluster-size", "12", "--method", "nmf",
                 "--out", str(out), *FAST]) == 0
    with open(out / "run.json", encoding="utf-8") as f:
        record = json.load(f)
    assert "k_selection" in record and record["k_range"]
    for entry in record["levels"]:
        assert min(entry["sizes"]) >= 12
    assert np.bincount(clusters(out)).min() >= 12


@pytest.mark.parametrize("argv, message", [
    (["--method", "nmf"], "-k is required"),
    (["-k", "auto", "--min-cluster-size", "0"], "--min-cluster-size"),
    (["-k", "3", "--min-cluster-size", "5", "--semantics", "minilm"], "--min-cluster-size"),
    (["-k", "3", "--min-cluster-size", "5", "--engine", "dask"], "--min-cluster-size"),
    (["-k", "auto", "--min-cluster-size", "23"], "at most 22"),
])
def test_bad_level_options_are_one_line(planted45_csv, tmp_path, capsys, argv, message):
    assert main(["cluster", planted45_csv, *argv, "--out", str(tmp_path / "x"), "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "x").exists()


def test_edit_level_refusals_are_one_line(auto_run, planted45_csv, tmp_path, capsys):
    plain = tmp_path / "plain"
    assert main(["cluster", planted45_csv, "-k", "3", "--method", "nmf", "--out", str(plain),
                 *FAST]) == 0
    assert main(["edit", str(plain), "--level", "2", "--out", str(tmp_path / "e")]) == 2
    assert "has no levels" in capsys.readouterr().err
    assert main(["edit", str(auto_run), "--level", "40", "--out", str(tmp_path / "f")]) == 2
    err = capsys.readouterr().err.strip()
    assert "--level 40" in err and "levels k =" in err and len(err.splitlines()) == 1


def test_the_report_carries_every_level_with_its_words(auto_run):
    from semnmf.report._page import build_page
    from semnmf.report._reading import read_run

    record = read_run(auto_run)
    page = build_page(record)
    levels, _ = read_levels(auto_run)
    assert page.levels.ks == sorted(levels) and page.levels.current == len(page.clusters)
    for k, level in page.levels.by_k.items():
        assert [view["id"] for view in level["views"]] == list(range(k))
        assert all(view["words"] for view in level["views"])
        assert sum(view["size"] for view in level["views"]) == 45


def test_a_damaged_levels_file_is_one_line(auto_run, tmp_path):
    import shutil

    from semnmf.report._reading import read_run

    copy = tmp_path / "copy"
    shutil.copytree(auto_run, copy)
    with open(copy / "levels.csv", encoding="utf-8") as f:
        lines = f.readlines()
    (copy / "levels.csv").write_text("".join(lines[:-3]), encoding="utf-8")
    with pytest.raises(ValueError, match="levels.csv does not list the documents"):
        read_run(copy)
    rows = lines[1:]  # the same documents in another order: refused too
    (copy / "levels.csv").write_text("".join(lines[:1] + rows[1:] + rows[:1]),
                                     encoding="utf-8")
    with pytest.raises(ValueError, match="levels.csv does not list the documents"):
        read_run(copy)


def test_a_given_k_with_a_minimum_size_merges_small_clusters(planted45_csv, tmp_path):
    out = tmp_path / "k6"
    assert main(["cluster", planted45_csv, "-k", "6", "--min-cluster-size", "12", "--method",
                 "nmf", "--out", str(out), *FAST]) == 0
    with open(out / "run.json", encoding="utf-8") as f:
        record = json.load(f)
    run = clusters(out)
    assert np.bincount(run).min() >= 12 and len(set(run)) == record["k_recommended"] < 6
    assert record["merged_small_clusters"] and not (out / "levels.csv").exists()
    assigned = tmp_path / "assigned"  # the saved model is the merged one
    assert main(["assign", str(out), planted45_csv, "--out", str(assigned), "-q"]) == 0
    np.testing.assert_array_equal(clusters(assigned), run)


def test_the_default_method_s_levels_start_at_its_clusters(planted45_csv, tmp_path):
    out = tmp_path / "default"  # snmf-robust: its centroid step moves documents
    assert main(["cluster", planted45_csv, "-k", "auto", "--out", str(out), *FAST]) == 0
    levels, _ = read_levels(out)
    with open(out / "run.json", encoding="utf-8") as f:
        record = json.load(f)
    np.testing.assert_array_equal(levels[record["k_recommended"]], clusters(out))


def test_a_level_edit_replays_on_another_auto_run(auto_run, planted45_csv, tmp_path):
    from semnmf import ari

    levels, _ = read_levels(auto_run)
    finest = max(levels)
    other = tmp_path / "other"
    assert main(["cluster", planted45_csv, "-k", "auto", "--method", "nmf", "--seed", "5",
                 "--out", str(other), *FAST]) == 0
    assert main(["edit", str(auto_run), "--level", str(finest), "--out",
                 str(tmp_path / "level"), "-q"]) == 0
    assert main(["edit", str(other), "--replay", str(tmp_path / "level"), "--out",
                 str(tmp_path / "replayed"), "-q"]) == 0
    replayed = clusters(tmp_path / "replayed")
    assert len(set(replayed)) == finest
    assert ari(clusters(tmp_path / "level"), replayed) > 0.8


def test_python_min_cluster_size_alone_is_auto(planted45_csv):
    result = semnmf.cluster(planted45_csv, min_cluster_size=12, method="nmf", max_iter=50)
    assert result.extra["k_range"] and result.levels
    for labels in result.levels.values():
        assert np.bincount(labels).min() >= 12
    with pytest.raises(ValueError, match="min_cluster_size"):
        semnmf.cluster(planted45_csv, method="nmf")
