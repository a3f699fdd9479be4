"""``semnmf edit``: the edited run's assign reproduces its labels; edits are recorded and
replayed; bad edits are one line."""

import csv
import json
import os

import numpy as np

from semnmf.cli import main

FAST = ["--max-iter", "50", "-q"]


def clusters(folder):
    with open(os.path.join(folder, "assignments.csv"), newline="", encoding="utf-8") as f:
        return np.array([int(r["cluster"]) for r in csv.DictReader(f)])


def test_a_merge_is_assigned_again_exactly(planted45_csv, tmp_path, capsys):
    run, edited, assigned = tmp_path / "run", tmp_path / "edited", tmp_path / "assigned"
    assert main(["cluster", planted45_csv, "-k", "3", "--method", "nmf", "--out", str(run),
                 *FAST]) == 0
    assert main(["edit", str(run), "--merge", "0,2", "--rename", "1=second", "--out",
                 str(edited)]) == 0
    out = capsys.readouterr().out
    assert "cluster 1 (second)" in out and out.strip().endswith(str(edited))
    # each new cluster with its words (the topics.csv of the edited run)
    with open(edited / "topics.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for c in (0, 1):
        words = [r["term"] for r in rows if r["cluster"] == str(c)][:3]
        line = next(line for line in out.splitlines() if line.startswith(f"cluster {c}"))
        assert line.split(" documents: ")[1].split()[:3] == words
    assert sorted(os.listdir(edited)) == ["assignments.csv", "model", "run.json", "topics.csv"]
    before, after = clusters(run), clusters(edited)
    assert set(after) == {0, 1}
    assert np.mean(after == np.where(before == 2, 0, before)) >= 0.97
    assert main(["assign", str(edited), planted45_csv, "--out", str(assigned), "-q"]) == 0
    np.testing.assert_array_equal(clusters(assigned), after)   # the edits are the model's
    with open(edited / "run.json", encoding="utf-8") as f:
        record = json.load(f)
    assert record["edits"][0]["merge"] == [[0, 2]] and record["cluster_names"][1] == "second"
    assert record["edited_from"] == str(run) and record["n_clusters"] == 2


def test_edits_replay_on_another_run(planted45_csv, tmp_path):
    run, other = tmp_path / "run", tmp_path / "other"
    assert main(["cluster", planted45_csv, "-k", "3", "--method", "nmf", "--out", str(run),
                 *FAST]) == 0
    assert main(["cluster", planted45_csv, "-k", "3", "--method", "nmf", "--seed", "5",
                 "--out", str(other), *FAST]) == 0
    assert main(["edit", str(run), "--drop", "1", "--out", str(tmp_path / "e1"), "-q"]) == 0
    assert main(["edit", str(other), "--replay", str(tmp_path / "e1"), "--out",
                 str(tmp_path / "e2"), "-q"]) == 0
    from semnmf import ari
    assert ari(clusters(tmp_path / "e1"), clusters(tmp_path / "e2")) > 0.9


def test_bad_edits_are_one_line(planted45_csv, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["cluster", planted45_csv, "-k", "3", "--method", "nmf", "--out", str(run),
                 *FAST]) == 0
    capsys.readouterr()
    assert main(["edit", str(run), "--drop", "7", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "semnmf: error: cluster 7 does not exist: the run has clusters 0..2."
    assert not os.path.exists(tmp_path / "x")
    assert main(["edit", str(run), "--out", str(tmp_path / "y")]) == 2
    assert "nothing to edit" in capsys.readouterr().err
    assert main(["edit", str(run), "--rename", "0=a", "--rename", "0=b", "--out",
                 str(tmp_path / "z")]) == 2
    assert capsys.readouterr().err.strip() == ("semnmf: error: --rename names cluster 0 "
                                               "twice ('a', 'b'): give each cluster one name.")
    assert not os.path.exists(tmp_path / "z")


def test_an_edit_moves_only_the_documents_it_names(tmp_path):
    """On a run refined by the centroid step, a merge moved documents it did not name
    (the edited model had dropped the step); it now maps the run's clusters."""
    import semnmf

    from conftest import write_csv

    texts = semnmf.load_dataset("bbc").texts[:800]  # the centroid step moves 7 of them
    source = write_csv(tmp_path / "bbc800.csv", [[t] for t in texts], ["text"])
    run = tmp_path / "run"
    assert main(["cluster", str(source), "-k", "5", "--max-iter", "50", "--out", str(run),
                 "-q"]) == 0
    with open(run / "run.json", encoding="utf-8") as f:
        assert json.load(f)["refine"]["n_changed"] > 0  # the step moved documents
    before = semnmf.load_model(run / "model").assign(texts)[0]
    assert main(["edit", str(run), "--merge", "0,1", "--out", str(tmp_path / "m"), "-q"]) == 0
    merged = np.where(before == 1, 0, before)
    np.testing.assert_array_equal(clusters(tmp_path / "m"),
                                  np.where(merged > 1, merged - 1, merged))
    assert main(["edit", str(run), "--drop", "2", "--out", str(tmp_path / "d"), "-q"]) == 0
    after = clusters(tmp_path / "d")
    kept = before != 2
    np.testing.assert_array_equal(after[kept], np.where(before > 2, before - 1, before)[kept])
    assert set(after[~kept]) <= {0, 1, 2, 3}
    # the edited runs' saved models give the same clusters again
    for name in ("m", "d"):
        assert (semnmf.load_model(tmp_path / name / "model").assign(texts)[0]
                == clusters(tmp_path / name)).all()
