"""``semnmf cluster --consensus`` and ``--refine gt``: what they write and record, and the
option combinations that are refused (exit 2, nothing written)."""

import csv
import os

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from semnmf.cli import main

from conftest import make_planted, read_json, write_csv


def read(out, name):
    with open(os.path.join(out, name), newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("method", ["mmm", "anmi", "mcla"])
def test_consensus_run(planted45_csv, tmp_path, method):
    out = str(tmp_path / method)
    argv = ["cluster", planted45_csv, "-k", "3", "--method", "nmf", "--consensus", method,
            "--runs", "4", "--keep", "3", "--max-iter", "50", "--out", out, "-q"]
    assert main(argv) == 0
    run = read_json(os.path.join(out, "run.json"))
    record = run["consensus"]
    assert record["method"] == method and len(record["runs"]) == 4
    assert run["n_iter"] is None and run["objective"] is None  # no iterations: not 0
    kept = [r for r in record["runs"] if r["kept"]]
    assert len(kept) == 3 and sorted(r["seed"] for r in kept) == sorted(record["kept_seeds"])
    dropped = [r for r in record["runs"] if not r["kept"]][0]
    assert dropped["objective"] >= max(r["objective"] for r in kept)  # the worst run left out
    partitions = read(out, "partitions.csv")
    assert list(partitions[0]) == ["doc"] + [f"seed_{s}" for s in record["kept_seeds"]]
    rows = read(out, "assignments.csv")
    truth = [r["label"] for r in rows]
    predicted = [int(r["cluster"]) for r in rows]
    assert adjusted_rand_score(truth, predicted) == pytest.approx(1.0)
    assert run["scores"]["nmi"] == pytest.approx(1.0)
    topics = read(out, "topics.csv")
    assert {int(t["cluster"]) for t in topics} == {0, 1, 2}


def test_refine_run(planted45_csv, tmp_path):
    out = str(tmp_path / "gt")
    assert main(["cluster", planted45_csv, "-k", "3", "--refine", "gt", "--max-iter", "50",
                 "--out", out, "-q"]) == 0
    run = read_json(os.path.join(out, "run.json"))
    refine = run["refine"]
    assert refine["method"] == "gt" and refine["converged"] and refine["n_iter"] >= 1
    assert set(refine["scores_before"]) == {"nmi", "ari", "accuracy"}
    assert "refine" in run["timings_seconds"]
    clusters = np.array([int(r["cluster"]) for r in read(out, "assignments.csv")])
    assert set(clusters) == {0, 1, 2}


@pytest.mark.parametrize("extra, pattern", [
    (["--consensus", "mmm", "--refine", "gt"], "not both"),
    (["--method", "skmeans", "--refine", "gt"], "needs soft memberships"),
    (["--consensus", "anmi", "--runs", "1"], "--runs must be at least 2"),
    (["--consensus", "anmi", "--runs", "3", "--keep", "5"], "--keep must be between 2 and --runs"),
])
def test_refused_combinations(planted45_csv, tmp_path, capsys, extra, pattern):
    out = tmp_path / "nothing"
    assert main(["cluster", planted45_csv, "-k", "3", *extra, "--out", str(out), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and pattern in err[0]
    assert not out.exists()


def test_consensus_keeps_documents_without_terms_apart(tmp_path):
    texts, labels = make_planted(docs_per_topic=15)
    texts[4] = "zzzq"  # a word in no other document: no term after min_df=2
    path = write_csv(tmp_path / "with_empty.csv", zip(texts, labels), ["text", "label"])
    out = str(tmp_path / "out")
    assert main(["cluster", str(path), "-k", "3", "--method", "nmf", "--consensus", "mmm",
                 "--runs", "3", "--max-iter", "50", "--min-df", "2", "--out", out, "-q"]) == 0
    clusters = [int(r["cluster"]) for r in read(out, "assignments.csv")]
    assert clusters[4] == -1 and set(clusters) - {-1} == {0, 1, 2}
