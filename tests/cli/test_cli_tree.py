"""``semnmf tree``: the output contract (tree.json, assignments.csv, pictures, run.json),
the printed tree, and bad input (exit 2, one error line, nothing written)."""

import csv
import os

import pytest

from semnmf.cli import main

from conftest import one_error, read_json

FAST = ["--max-iter", "30", "-q"]


@pytest.fixture(scope="module")
def tree_run(planted45_csv, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("tree_out") / "run")
    return main(["tree", planted45_csv, "--leaves", "3", "--out", out, "-q"]), out


def test_tree_outputs(tree_run, capsys):
    code, out = tree_run
    assert code == 0
    assert sorted(os.listdir(out)) == ["assignments.csv", "model", "run.json", "tree.json",
                                       "tree.png", "tree.svg"]
    with open(os.path.join(out, "tree.png"), "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    with open(os.path.join(out, "tree.svg"), encoding="utf-8") as f:
        svg = f.read()
    assert "<svg" in svg
    tree = read_json(os.path.join(out, "tree.json"))
    leaves = [node for node in tree["nodes"] if node["leaf"]]
    assert len(leaves) == 3 and tree["n_leaves"] == 3
    with open(os.path.join(out, "assignments.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 45 and list(rows[0]) == ["doc", "cluster", "strength", "label"]
    # each leaf's documents are exactly the rows assigned to it, one label per planted topic
    for leaf in leaves:
        docs = {r["doc"] for r in rows if int(r["cluster"]) == leaf["label"]}
        assert docs == set(leaf["documents"])
        assert len({r["label"] for r in rows if r["doc"] in docs}) == 1
        assert leaf["top_terms"][0]["term"] in svg  # the picture shows the top terms
    run = read_json(os.path.join(out, "run.json"))
    assert run["method"] == "hiernmf2" and run["parameters"]["n_components"] == 3
    assert "n_leaves" not in run["parameters"]  # its name of 0.1, removed in 0.3
    assert run["scores"]["nmi"] == pytest.approx(1.0)
    assert set(run["nmi_by_number_of_leaves"]) == {"2", "3"}
    # the leaves' topics, scored as `semnmf cluster` scores its clusters' topics
    quality = run["topic_quality"]
    assert len(quality["npmi_per_topic"]) == 3
    assert -1 <= quality["npmi"] <= 1 and 0 < quality["diversity"] <= 1


def test_tree_prints_the_tree(planted45_csv, tmp_path, capsys):
    assert main(["tree", planted45_csv, "--leaves", "2", "--out", str(tmp_path / "o"), "-q"]) == 0
    printed = capsys.readouterr().out
    assert "[node 0] 45 docs" in printed and "[leaf 1]" in printed and "NMI" in printed


def test_tree_partition_stop_rule(planted45_csv, tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["tree", planted45_csv, "--leaves", "3", "--stop", "partition", "--out", str(out),
                 "-q"]) == 0
    assert read_json(str(out / "tree.json"))["params"]["stop"] == "partition"


@pytest.mark.parametrize("argv, pattern", [
    (["--leaves", "0"], "--leaves must be at least 1"),
    (["--leaves", "46"], "larger than the number of documents"),
    (["--leaves", "2", "--beta", "0.5"], "--beta must be greater than 1"),
])
def test_tree_bad_input(planted45_csv, tmp_path, capsys, argv, pattern):
    out = tmp_path / "nothing"
    assert main(["tree", planted45_csv, *argv, "--out", str(out), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("semnmf: error:") and pattern in err[0]
    assert not out.exists()


def test_tree_out_folder_needs_overwrite(planted_csv_path, tmp_path, capsys):
    out = tmp_path / "tree"
    assert main(["cluster", planted_csv_path, "-k", "3", "--out", str(out), *FAST]) == 0
    assert main(["tree", planted_csv_path, "--leaves", "3", "--out", str(out), "-q"]) == 2
    assert "--overwrite" in one_error(capsys)
    assert main(["tree", planted_csv_path, "--leaves", "3", "--out", str(out), "-q",
                 "--overwrite"]) == 0
    assert not (out / "topics.csv").exists() and (out / "tree.json").exists()


@pytest.mark.parametrize("options, option", [(["--lam", "1"], "--lam"),
                                             (["--window", "3"], "--window"),
                                             (["--association", "ppmi"], "--association")])
def test_tree_refuses_semantic_options_without_the_semantic_splitter(
        options, option, planted_csv_path, tmp_path, capsys):
    assert main(["tree", planted_csv_path, "--leaves", "3", *options,
                 "--out", str(tmp_path / "out"), "-q"]) == 2
    assert option in one_error(capsys)
    assert main(["tree", planted_csv_path, "--leaves", "3", "--splitter", "semantic",
                 *options, "--out", str(tmp_path / "ok"), "-q"]) == 0
