"""``semnmf assign RUN_DIR SOURCE``: the saved model of a cluster / tree run assigns the
same documents to the same clusters, new documents to their topic, writes the result
files (assignments.csv with membership, topics.csv, run.json naming the model), reads a
counts-only dataset folder by term, and fails with one line on a bad run folder. Also the
run outputs: topics.csv without zero weights, empty clusters flagged,
n_classes and threads recorded, --refine gt topics from the refined partition."""

import csv
import json
import os

import numpy as np
import pytest

from semnmf import Corpus
from semnmf.cli import main

from conftest import make_planted, write_csv

FAST = ["--max-iter", "50", "-q"]


def read_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return reader.fieldnames, list(reader)


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def clusters(folder):
    return np.array([int(r["cluster"]) for r in read_rows(os.path.join(folder, "assignments.csv"))[1]])


@pytest.mark.parametrize("options", [["--method", "nmf"], ["--method", "skmeans"], [],
                                     ["--method", "nmf", "--consensus", "cspa", "--runs", "3"],
                                     ["--method", "gnmf", "--weighting", "ncut"]],
                         ids=["nmf", "skmeans", "snmf", "consensus", "gnmf-ncut"])
def test_assign_reproduces_the_run(planted45_csv, tmp_path, options):
    run, out = tmp_path / "run", tmp_path / "assigned"
    assert main(["cluster", planted45_csv, "-k", "3", "--out", str(run), *options, *FAST]) == 0
    assert main(["assign", str(run), planted45_csv, "--out", str(out), "-q"]) == 0
    assert sorted(os.listdir(out)) == ["assignments.csv", "run.json", "topics.csv"]
    assert np.mean(clusters(run) == clusters(out)) >= 0.99
    columns, rows = read_rows(out / "assignments.csv")
    assert columns == ["doc", "cluster", "strength", "label"]
    assert all(0 < float(r["strength"]) <= 1 for r in rows)
    with open(out / "topics.csv", encoding="utf-8") as f, \
            open(run / "topics.csv", encoding="utf-8") as g:
        assert f.read() == g.read()  # the model's topics
    record = read_json(out / "run.json")
    assert record["command"] == "assign" and record["model"]["path"].endswith("model")
    assert record["model"]["format"] == "semnmf-model" and record["scores"]["nmi"] > 0.9
    assert record["n_classes"] == 3 and record["threads"] >= 1
    assert record["empty_clusters"] == []


def test_assign_a_tree_and_new_documents(planted45_csv, tmp_path, capsys):
    run = tmp_path / "tree"
    assert main(["tree", planted45_csv, "--leaves", "3", "--out", str(run), "-q"]) == 0
    assert main(["assign", str(run), planted45_csv, "--out", str(tmp_path / "a"), "-q"]) == 0
    kept = clusters(run) >= 0
    assert np.mean(clusters(run)[kept] == clusters(tmp_path / "a")[kept]) >= 0.99
    new = write_csv(tmp_path / "new.csv", [["the rocket and the telescope reached orbit"],
                                           ["qqq zzz"]], ["text"])
    capsys.readouterr()
    assert main(["assign", str(run), str(new), "-q"]) == 0  # default --out: RUN_DIR/assigned_new
    columns, rows = read_rows(run / "assigned_new" / "assignments.csv")
    assert columns == ["doc", "cluster", "strength"]
    assert int(rows[0]["cluster"]) >= 0 and int(rows[1]["cluster"]) == -1
    printed = capsys.readouterr().out
    assert "documents without any known term" in printed
    record = read_json(run / "assigned_new" / "run.json")
    assert record["scores"] is None and record["n_documents_without_known_terms"] == 1
    # no document with a known term: refused, nothing written (it was all -1, exit 0)
    unknown = write_csv(tmp_path / "unknown.csv", [["qqq zzz"], ["xxyy"]], ["text"])
    assert main(["assign", str(run), str(unknown), "-q"]) == 2
    assert "none of the 2 documents has a term of the model's vocabulary" in \
        capsys.readouterr().err
    assert not (run / "assigned_unknown").exists()


def test_assign_a_counts_folder_by_term(tmp_path):
    texts, labels = make_planted(docs_per_topic=12)
    corpus = Corpus(texts, labels)
    corpus.to_folder(tmp_path / "data")
    os.remove(tmp_path / "data" / "docs.jsonl")  # counts only
    run = tmp_path / "run"
    assert main(["cluster", str(tmp_path / "data"), "-k", "3", "--method", "nmf",
                 "--out", str(run), *FAST]) == 0
    # the same documents with the vocabulary in another order and one unknown term
    order = np.random.default_rng(0).permutation(corpus.n_terms)
    counts = corpus.counts()[:, order]
    import scipy.sparse as sp

    counts = sp.hstack([counts, sp.csr_matrix(np.ones((len(texts), 1)))]).tocsr()
    Corpus(counts=counts, vocabulary=list(corpus.vocabulary[order]) + ["unknownterm"],
           labels=labels).to_folder(tmp_path / "shuffled")
    assert main(["assign", str(run), str(tmp_path / "shuffled"), "--out",
                 str(tmp_path / "a"), "-q"]) == 0
    np.testing.assert_array_equal(clusters(run), clusters(tmp_path / "a"))


def test_bad_run_folder_is_one_error_line(tmp_path, planted45_csv, capsys):
    assert main(["assign", str(tmp_path), planted45_csv, "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("semnmf: error:") and "model.json is missing" in err
    assert len(err.splitlines()) == 1


def test_run_outputs_membership_topics_and_record(planted45_csv, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["cluster", planted45_csv, "-k", "3", "--method", "skmeans", "--out",
                 str(run), *FAST]) == 0
    record = read_json(run / "run.json")
    assert record["n_classes"] == 3 and record["threads"] >= 1
    assert record["empty_clusters"] == []
    _, topics = read_rows(run / "topics.csv")
    assert all(float(t["weight"]) > 0 for t in topics)
    # skmeans memberships are cosines to the centroid
    _, rows = read_rows(run / "assignments.csv")
    assert all(0 < float(r["strength"]) <= 1 for r in rows)


def test_empty_clusters_are_flagged(planted45_csv, tmp_path, capsys):
    # a consensus of 3-cluster runs asked for 6 clusters leaves some clusters empty or
    # tiny; whatever happens, run.json lists exactly the clusters without documents
    run = tmp_path / "run"
    assert main(["cluster", planted45_csv, "-k", "6", "--method", "nmf", "--init", "random",
                 "--out", str(run), *FAST]) == 0
    record = read_json(run / "run.json")
    sizes = record["cluster_sizes"]
    assert record["empty_clusters"] == [c for c in range(6) if str(c) not in sizes]
    printed = capsys.readouterr().out
    assert ("(empty)" in printed) == bool(record["empty_clusters"])
    _, topics = read_rows(run / "topics.csv")
    assert all(float(t["weight"]) > 0 for t in topics)


def test_refined_topics_are_cluster_means(planted45_csv, tmp_path):
    run = tmp_path / "run"
    assert main(["cluster", planted45_csv, "-k", "3", "--method", "nmf", "--refine", "gt",
                 "--out", str(run), *FAST]) == 0
    model = read_json(run / "model" / "model.json")
    assert model["refine"]["method"] == "gt"
    assert "underlying model" in model["refine"]["assigned_with"]
    from semnmf import load_dataset, load_model
    from semnmf.ensemble.runs import cluster_means

    corpus = load_dataset(planted45_csv)
    means = cluster_means(corpus.tfidf(), clusters(run), 3)
    np.testing.assert_allclose(load_model(run).topics, means)
    _, rows = read_rows(run / "assignments.csv")
    assert all(0 <= float(r["strength"]) <= 1 for r in rows)


def test_the_default_run_is_refined_by_centroids_unless_told_not_to(planted45_csv, tmp_path):
    """The default run's last step is the centroid step (run.json says so and why, its
    model assigns by those centroids); ``--refine none`` skips it, ``--refine centroid``
    asks for it with a method named."""
    default, plain, named = tmp_path / "default", tmp_path / "plain", tmp_path / "named"
    assert main(["cluster", planted45_csv, "-k", "3", "--out", str(default), *FAST]) == 0
    assert main(["cluster", planted45_csv, "-k", "3", "--refine", "none",
                 "--out", str(plain), *FAST]) == 0
    assert main(["cluster", planted45_csv, "-k", "3", "--method", "snmf-robust",
                 "--refine", "centroid", "--out", str(named), *FAST]) == 0
    record = read_json(default / "run.json")
    assert record["refine"]["method"] == "centroid" and "why" in record["refine"]
    assert "refine" not in read_json(plain / "run.json")
    assert "why" not in read_json(named / "run.json")["refine"]
    np.testing.assert_array_equal(clusters(named), clusters(default))
    assert record["refine"]["scores_before"]["nmi"] == pytest.approx(
        read_json(plain / "run.json")["scores"]["nmi"])
    model = read_json(default / "model" / "model.json")
    assert model["kind"] == "estimator" and model["refine"]["method"] == "centroid"
    _, rows = read_rows(default / "assignments.csv")
    assert all(0 < float(r["strength"]) <= 1 for r in rows)


def _one_run(planted45_csv, tmp_path):
    run = tmp_path / "run"
    assert main(["cluster", planted45_csv, "-k", "3", "--method", "nmf", "--out", str(run),
                 *FAST]) == 0
    return run


def test_assign_checks_its_output_before_any_work(planted45_csv, tmp_path, capsys):
    """--out is checked as cluster's is: never the run folder, never an earlier result
    without --overwrite, and --top is refused before any file is written."""
    run = _one_run(planted45_csv, tmp_path)
    before = (run / "run.json").read_bytes()
    capsys.readouterr()
    assert main(["assign", str(run), planted45_csv, "--out", str(run), "-q"]) == 2
    assert "the run folder itself" in capsys.readouterr().err
    assert (run / "run.json").read_bytes() == before
    # RUN/model as the model: its run folder is protected too (--overwrite deleted the
    # run's model and results), and no run is written into a saved-model folder
    assert main(["assign", str(run / "model"), planted45_csv, "--out", str(run),
                 "--overwrite", "-q"]) == 2
    assert "the run folder itself" in capsys.readouterr().err
    for command in (["cluster", planted45_csv, "-k", "3"], ["tree", planted45_csv,
                                                            "--leaves", "3"]):
        assert main([*command, "--out", str(run / "model"), "--overwrite", "-q"]) == 2
        assert "is a saved model folder (model.json)" in capsys.readouterr().err
    assert (run / "run.json").read_bytes() == before and (run / "model" / "model.json").exists()
    assert not (run / "model" / "run.json").exists()

    out = tmp_path / "assigned"
    assert main(["assign", str(run), planted45_csv, "--out", str(out), "--top", "0",
                 "-q"]) == 2
    assert "--top" in capsys.readouterr().err and not out.exists()

    assert main(["assign", str(run), planted45_csv, "--out", str(out), "-q"]) == 0
    first = (out / "run.json").read_bytes()
    capsys.readouterr()
    assert main(["assign", str(run), planted45_csv, "--out", str(out), "-q"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert (out / "run.json").read_bytes() == first
    assert main(["assign", str(run), planted45_csv, "--out", str(out), "--overwrite",
                 "-q"]) == 0


def test_cluster_overwrite_clears_assignments_made_by_the_old_model(planted45_csv, tmp_path):
    run = _one_run(planted45_csv, tmp_path)
    assert main(["assign", str(run), planted45_csv, "-q"]) == 0   # default: RUN/assigned_*
    assigned = [p for p in run.iterdir() if p.name.startswith("assigned_")]
    assert len(assigned) == 1
    assert main(["cluster", planted45_csv, "-k", "2", "--method", "nmf", "--out", str(run),
                 "--overwrite", *FAST]) == 0
    assert not assigned[0].exists()   # assigned by the earlier model: gone with it


def test_report_out_never_replaces_another_file(planted45_csv, tmp_path, capsys):
    run = _one_run(planted45_csv, tmp_path)
    data = tmp_path / "keep.csv"
    data.write_text("text\nmine\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(data), "-q"]) == 2
    assert "not a semnmf report" in capsys.readouterr().err
    assert data.read_text(encoding="utf-8") == "text\nmine\n"
    assert main(["report", str(run), "--out", str(tmp_path / "missing" / "r.html"), "-q"]) == 2
    assert "does not exist" in capsys.readouterr().err
    page = tmp_path / "r.html"
    assert main(["report", str(run), "--out", str(page), "-q"]) == 0
    assert main(["report", str(run), "--out", str(page), "-q"]) == 0   # a report: replaced


def test_refinement_warnings_are_one_line_notices(planted45_csv, tmp_path, capsys,
                                                  monkeypatch):
    """A warning raised while refining is printed as the CLI's one-line notice, not as a
    Python warning with its source line."""
    import warnings

    from semnmf.refine import gtnmf

    original = gtnmf.GTNMF.fit

    def fit(self, *args, **kwargs):
        warnings.warn("all memberships are hard", UserWarning)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(gtnmf.GTNMF, "fit", fit)
    assert main(["cluster", planted45_csv, "-k", "3", "--method", "nmf", "--refine", "gt",
                 "--out", str(tmp_path / "gt"), *FAST]) == 0
    err = capsys.readouterr().err
    assert "warning: all memberships are hard" in err
    assert "UserWarning" not in err and "warnings.warn" not in err


@pytest.mark.parametrize("option", [["--text-column", "body"], ["--label-column", "topic"],
                                    ["--encoding", "latin-1"]])
def test_raw_text_options_refused_on_a_counts_folder(tmp_path, capsys, option):
    """cluster FOLDER and assign RUN FOLDER on a counts-only folder refuse the options
    that would do nothing, one line, exit 2, naming the option."""
    texts, labels = make_planted(docs_per_topic=12)
    Corpus(texts).to_folder(tmp_path / "data")   # no labels.txt
    os.remove(tmp_path / "data" / "docs.jsonl")  # counts only
    if option[0] == "--encoding":
        os.remove(tmp_path / "data" / "vocab.txt")  # no text file left to decode
    data = str(tmp_path / "data")
    assert main(["cluster", data, "-k", "3", "--out", str(tmp_path / "x"), *option]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("semnmf: error:")
    assert "counts only" in err[0] and option[0] in err[0]
    assert not (tmp_path / "x").exists()
    run = tmp_path / "run"
    assert main(["cluster", data, "-k", "3", "--method", "nmf", "--out", str(run),
                 *FAST]) == 0
    capsys.readouterr()
    assert main(["assign", str(run), data, "--out", str(tmp_path / "a"), *option]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "counts only" in err[0] and option[0] in err[0]
    assert not (tmp_path / "a").exists()


def test_run_folders_of_0_1_are_read(planted45_csv, tmp_path):
    """assignments.csv's strength column was called "membership" in 0.1: such run folders
    are still assigned from and reported on, their strengths read."""
    run, out = tmp_path / "run", tmp_path / "assigned"
    assert main(["cluster", planted45_csv, "-k", "3", "--method", "nmf", "--out", str(run),
                 *FAST]) == 0
    path = run / "assignments.csv"
    columns, rows = read_rows(path)
    assert columns == ["doc", "cluster", "strength", "label"]
    path.write_text(path.read_text(encoding="utf-8").replace("strength", "membership", 1),
                    encoding="utf-8")
    assert main(["assign", str(run), planted45_csv, "--out", str(out), "-q"]) == 0
    assert np.mean(clusters(run) == clusters(out)) >= 0.99
    assert main(["report", str(run), "-q"]) == 0
    with open(run / "report.html", encoding="utf-8") as f:
        assert "highest membership" in f.read()  # representatives by the strengths read


def test_assign_takes_one_txt_document(tmp_path, capsys, planted_csv_path):
    out = tmp_path / "run"
    assert main(["cluster", planted_csv_path, "-k", "3", "--out", str(out), *FAST]) == 0
    one = tmp_path / "one_doc.txt"
    one.write_text("the rocket and the telescope saw a galaxy near the moon", encoding="utf-8")
    assert main(["assign", str(out), str(one), "--out", str(tmp_path / "a"), "-q"]) == 0
    with open(tmp_path / "a" / "assignments.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [row["doc"] for row in rows] == ["one_doc.txt"]
    planted = {row["doc"]: row["cluster"] for row in csv.DictReader(
        open(out / "assignments.csv", newline="", encoding="utf-8"))}
    space = [doc for doc, label in zip(planted, make_planted()[1]) if label == "space"]
    assert rows[0]["cluster"] == planted[space[0]]
