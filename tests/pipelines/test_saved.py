"""Saved models (semnmf.pipelines.saved): every savable estimator survives save -> load
with the same predictions, the vectorizer rebuilds the training X from raw text or from
counts over another vocabulary, and a missing, corrupt, unsafe or newer file is one clear
ValueError. The stored fixture (tests/fixtures/tiny_model) is a model written by an
earlier version: it must keep loading and assigning the same way."""

import json
import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import semnmf
from semnmf import (GNMF, NMF, ClusterEnsemble, Corpus, HierarchicalNMF, ProjectiveNMF,
                    SemanticGNMF, SemanticNMF, SeNMF, SphericalKMeans)
from semnmf.pipelines.saved import (FORMAT_VERSION, SavedModel, load_model, run_agreement,
                                    save_model, strengths_from_factors)

from conftest import make_planted

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tiny_model"

ESTIMATORS = {
    "NMF": lambda: NMF(3, max_iter=50, random_state=0),
    "NMF-kl": lambda: NMF(3, loss="kl", max_iter=50, random_state=0),
    "NMF-orthogonal": lambda: NMF(3, orthogonal=True, max_iter=50, random_state=0),
    "SemanticNMF": lambda: SemanticNMF(3, max_iter=50, random_state=0),
    "SeNMF": lambda: SeNMF(3, max_iter=50, random_state=0),
    "GNMF": lambda: GNMF(3, max_iter=30, n_neighbors=3, random_state=0),
    "SemanticGNMF": lambda: SemanticGNMF(3, max_iter=30, n_neighbors=3, random_state=0),
    "ProjectiveNMF": lambda: ProjectiveNMF(3, max_iter=50, random_state=0),
    "SphericalKMeans": lambda: SphericalKMeans(3, random_state=0),
    "HierarchicalNMF": lambda: HierarchicalNMF(3, random_state=0),
    "HierarchicalNMF-kmeans": lambda: HierarchicalNMF(3, splitter="kmeans", random_state=0),
}


@pytest.fixture(scope="module")
def corpus():
    texts, labels = make_planted(docs_per_topic=12)
    return Corpus(texts, labels)


def _fit(estimator, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(X)


@pytest.mark.parametrize("weighting", ["tfidf", "ncut", "counts"])
def test_vectorizer_rebuilds_the_training_matrix(corpus, weighting):
    X = corpus.vectorize(weighting)
    model = SavedModel.from_fit(_fit(NMF(3, max_iter=20, random_state=0), X), corpus,
                                weighting)
    again = model.vectorizer.transform_texts(corpus.texts)
    assert abs(again - X).max() < 1e-12
    # counts over a shuffled vocabulary with unknown terms are mapped by term
    counts = corpus.counts().toarray()
    order = np.random.default_rng(0).permutation(counts.shape[1])
    extra = np.ones((counts.shape[0], 2))
    vocabulary = list(corpus.vocabulary[order]) + ["unknownterm", "another"]
    mapped = model.vectorizer.transform_counts(np.hstack([counts[:, order], extra]),
                                               vocabulary)
    assert abs(mapped - X).max() < 1e-12


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_round_trip_gives_the_same_predictions(corpus, name, tmp_path):
    X = corpus.tfidf()
    estimator = _fit(ESTIMATORS[name](), X)
    saved = save_model(estimator, tmp_path / "model", corpus)
    loaded = load_model(tmp_path / "model")
    assert type(loaded.estimator) is type(estimator)
    labels, strength = loaded.assign(corpus.texts)
    if isinstance(estimator, HierarchicalNMF):
        expected, expected_strength = estimator.predict_membership(X)
    else:
        expected = estimator.predict(X)
        factors = estimator.transform(X)
        expected_strength = strengths_from_factors(
            factors, expected, cosine=isinstance(estimator, SphericalKMeans))
    np.testing.assert_array_equal(labels, expected)
    np.testing.assert_allclose(strength, expected_strength, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(saved.assign(corpus.texts)[0], labels)
    assert np.mean(labels == estimator.labels_) >= 0.99  # the planted topics
    np.testing.assert_array_equal(loaded.topics, saved.topics)
    assert ((strength > 0) & (strength <= 1 + 1e-12)).all()


@pytest.mark.parametrize("assign_labels", ["topics", "tree"])
def test_saved_tree_states_its_assignment_rule(corpus, tmp_path, assign_labels):
    tree = HierarchicalNMF(3, assign_labels=assign_labels, random_state=0).fit(corpus.tfidf())
    save_model(tree, tmp_path / "model", corpus)
    rule = json.loads((tmp_path / "model" / "model.json").read_text())["assignment"]
    assert ("NNLS coefficient over all leaves" in rule) == (assign_labels == "topics")
    assert rule.startswith("descend the tree") == (assign_labels == "tree")


def test_tree_saved_before_assign_labels_keeps_the_tree_rule(corpus):
    from semnmf.models._state import get_state, set_state

    X = corpus.tfidf()
    tree = HierarchicalNMF(3, assign_labels="tree", random_state=0).fit(X)
    record, arrays = get_state(tree)
    assert set_state(record, arrays).assign_labels == "tree"
    del record["params"]["assign_labels"]  # as a model saved by an earlier version
    loaded = set_state(record, arrays)
    assert loaded.assign_labels == "tree"
    np.testing.assert_array_equal(loaded.predict(X), tree.predict(X))


def test_consensus_model_assigns_to_the_nearest_cluster_mean(corpus, tmp_path):
    X = corpus.tfidf()
    ensemble = ClusterEnsemble(NMF(3, max_iter=30), n_runs=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ensemble.fit(X)
    save_model(ensemble, tmp_path / "m", corpus, method="nmf")
    loaded = load_model(tmp_path / "m")
    assert loaded.kind == "consensus" and loaded.estimator is None
    record = json.loads((tmp_path / "m" / "model.json").read_text())
    assert record["consensus"]["estimator"]["class"] == "NMF"
    labels, strength = loaded.assign(corpus)
    np.testing.assert_array_equal(labels, ensemble.labels_)
    assert (strength > 0).all() and (strength <= 1 + 1e-12).all()
    agreement = run_agreement(ensemble.partitions_, ensemble.labels_)
    assert agreement.shape == (len(corpus),) and ((agreement >= 0) & (agreement <= 1)).all()


def test_run_agreement_matches_clusters():
    labels = np.array([0, 0, 1, 1, 2, 2])
    runs = np.column_stack([[2, 2, 0, 0, 1, 1], [1, 1, 0, 0, 2, 0]])
    np.testing.assert_allclose(run_agreement(runs, labels), [1, 1, 1, 1, 1, 0.5])


def test_new_documents_and_documents_without_terms(corpus, tmp_path):
    model = save_model(_fit(NMF(3, random_state=0), corpus.tfidf()), tmp_path / "m", corpus)
    labels, strength = load_model(tmp_path / "m").assign(
        ["the rocket reached orbit and the telescope saw the galaxy",
         "garlic sauce in the oven for dinner", "zzz qqq", ""])
    topic = {name: model.assign([" ".join(words)])[0][0]
             for name, words in [("space", ["planet", "orbit", "rocket"]),
                                 ("food", ["recipe", "garlic", "sauce"])]}
    assert labels[0] == topic["space"] and labels[1] == topic["food"]
    assert list(labels[2:]) == [-1, -1] and list(strength[2:]) == [0, 0]


def test_no_documents_or_not_documents_are_one_line(corpus, tmp_path):
    """assign([]) gave scikit-learn's "Found array with 0 sample(s) ... TfidfTransformer"."""
    model = save_model(_fit(NMF(3, random_state=0), corpus.tfidf()), tmp_path / "m", corpus)
    for data, message in [([], "no documents to assign: the list of texts is empty"),
                          (sp.csr_matrix((0, model.vectorizer.n_terms)),
                           "no documents to assign: the matrix has no row"),
                          (5, "data must be a list of texts, .* got int")]:
        with pytest.raises(ValueError, match=message):
            model.assign(data)
    # a generator of texts is a list of texts
    labels, _ = model.assign(text for text in corpus.texts[:3])
    np.testing.assert_array_equal(labels, model.assign(corpus.texts[:3])[0])


def test_counts_only_corpus_and_a_matrix(tmp_path, corpus):
    # a dataset folder of counts (with a shuffled vocabulary) is mapped by term
    counts_corpus = Corpus(counts=corpus.counts(), vocabulary=corpus.vocabulary,
                           labels=corpus.labels)
    X = counts_corpus.tfidf()
    estimator = _fit(NMF(3, random_state=0), X)
    save_model(estimator, tmp_path / "m", counts_corpus)
    loaded = load_model(tmp_path / "m")
    assert loaded.vectorizer.source == "counts"
    order = np.random.default_rng(1).permutation(corpus.n_terms)
    folder = tmp_path / "data"
    Corpus(counts=corpus.counts()[:, order], vocabulary=corpus.vocabulary[order],
           labels=corpus.labels).to_folder(folder)
    labels, _ = loaded.assign(str(folder))
    np.testing.assert_array_equal(labels, estimator.predict(X))
    np.testing.assert_array_equal(loaded.assign(corpus.counts())[0], labels)
    with pytest.raises(ValueError, match="one column per saved term"):
        loaded.assign(sp.csr_matrix((2, 3)))


def test_public_names_and_overwrite(corpus, tmp_path):
    assert semnmf.save_model is save_model and semnmf.load_model is load_model
    estimator = _fit(NMF(3, random_state=0), corpus.tfidf())
    semnmf.save_model(estimator, tmp_path / "m", corpus)
    semnmf.save_model(_fit(SphericalKMeans(3, random_state=0), corpus.tfidf()),
                      tmp_path / "m", corpus)  # replaces the folder
    assert type(semnmf.load_model(tmp_path / "m").estimator) is SphericalKMeans
    assert sorted(os.listdir(tmp_path)) == ["m"]  # no temporary folder left
    # a run folder holding model/ loads too
    shutil.copytree(tmp_path / "m", tmp_path / "run" / "model")
    assert load_model(tmp_path / "run").n_clusters == 3


def test_unsupported_estimator_and_unfitted(corpus, tmp_path):
    with pytest.raises(ValueError, match="cannot save a SymNMF"):
        save_model(semnmf.SymNMF(3), tmp_path / "m", corpus)
    with pytest.raises(ValueError, match="not fitted"):
        save_model(NMF(3), tmp_path / "m", corpus)


@pytest.mark.parametrize("name", ["NMF", "SphericalKMeans", "HierarchicalNMF"])
def test_a_model_fitted_on_another_vocabulary_is_refused(corpus, name, tmp_path):
    """It was saved, and failed only at load_model(...).assign."""
    X = corpus.tfidf()
    model = _fit(ESTIMATORS[name](), X[:, : X.shape[1] - 3])
    with pytest.raises(ValueError, match=f"the model has {X.shape[1] - 3} terms but the "
                                         f"vocabulary has {X.shape[1]}"):
        save_model(model, tmp_path / "m", corpus)
    assert not (tmp_path / "m").exists()


@pytest.fixture
def model_dir(corpus, tmp_path):
    save_model(_fit(NMF(3, random_state=0), corpus.tfidf()), tmp_path / "m", corpus)
    return tmp_path / "m"


def _one_line_error(path, match):
    with pytest.raises(ValueError, match=match) as info:
        load_model(path)
    assert "\n" not in str(info.value)


def _edit_record(model_dir, **changes):
    record = json.loads((model_dir / "model.json").read_text())
    record.update(changes)
    (model_dir / "model.json").write_text(json.dumps(record))


def test_missing_files(model_dir, tmp_path):
    _one_line_error(tmp_path / "nowhere", "no saved model")
    _one_line_error(tmp_path, "model.json is missing")
    (model_dir / "vocabulary.txt").unlink()
    _one_line_error(model_dir, "lacks .*vocabulary.txt")
    (model_dir / "arrays.npz").unlink()
    _one_line_error(model_dir, "lacks .*arrays.npz")


def test_a_run_that_saved_no_model_says_why(tmp_path):
    """A sharded Dask run saves no model; assign said "model.json is missing (a run of an
    older semnmf, or not a run folder)" though run.json gives the reason."""
    (tmp_path / "run.json").write_text(json.dumps(
        {"model_not_saved": "a sharded corpus keeps its texts in shards."}))
    _one_line_error(tmp_path, r"no saved model at .*: the run saved none \(a sharded corpus "
                              r"keeps its texts in shards\)\.$")


def test_corrupt_files(model_dir):
    (model_dir / "arrays.npz").write_bytes(b"PK\x03\x04 not a zip")
    _one_line_error(model_dir, "corrupt")
    (model_dir / "model.json").write_text("{not json")
    _one_line_error(model_dir, "not readable JSON")
    (model_dir / "model.json").write_text(json.dumps({"format": "something-else"}))
    _one_line_error(model_dir, "not a semnmf model")


def test_inconsistent_files(model_dir):
    (model_dir / "vocabulary.txt").write_text("a\nb\n")
    _one_line_error(model_dir, "not a usable semnmf model")


def test_arrays_file_is_a_compressed_npz(model_dir):
    """arrays.npz is what np.savez_compressed writes (one deflated NAME.npy per array),
    so plain numpy reads it, pickles refused, with the shapes model.json records."""
    import zipfile

    record = json.loads((model_dir / "model.json").read_text())
    with zipfile.ZipFile(model_dir / "arrays.npz") as archive:
        infos = archive.infolist()
    assert infos and all(i.compress_type == zipfile.ZIP_DEFLATED for i in infos)
    assert all(i.filename.endswith(".npy") for i in infos)
    assert all(i.compress_size < i.file_size for i in infos if i.file_size > 4096)
    with np.load(model_dir / "arrays.npz", allow_pickle=False) as data:
        shapes = {name: list(data[name].shape) for name in data.files}
    assert shapes == {name: spec["shape"] for name, spec in record["arrays"].items()}


def test_object_arrays_are_refused(model_dir):
    with np.load(model_dir / "arrays.npz") as data:
        arrays = {k: data[k] for k in data.files}
    arrays["evil"] = np.array([{"a": 1}], dtype=object)
    np.savez(model_dir / "arrays.npz", **arrays)  # needs pickle to read
    _one_line_error(model_dir, "corrupt or not a numpy .npz of numbers")


def test_version_policy(model_dir):
    major = int(FORMAT_VERSION.split(".")[0])
    _edit_record(model_dir, format_version=f"{major}.99", a_future_key={"x": 1})
    assert load_model(model_dir).n_clusters == 3  # a newer minor: extra keys ignored
    _edit_record(model_dir, format_version=f"{major + 1}.0")
    _one_line_error(model_dir, f"format version {major + 1}.0, newer")
    _edit_record(model_dir, format_version="abc")
    _one_line_error(model_dir, "no valid format_version")


# -- the stored fixture: a model written by semnmf 0.1.0, format 1.0 ----------------------
FIXTURE_DOCS = {
    "the football team won the match with a late goal": "sport",
    "the coach praised the league season and the stadium": "sport",
    "bake the garlic sauce in the oven for dinner": "food",
    "a recipe with spice and flavor from the kitchen": "food",
    "the rocket launch put the telescope in orbit": "space",
    "astronauts saw the moon and a distant galaxy": "space",
    "the football team cooked garlic sauce after the match": "mixed",
}


def test_stored_fixture_loads_and_assigns_known_documents():
    model = load_model(FIXTURE)
    assert model.info["format_version"] == "1.0" and model.info["semnmf_version"] == "0.1.0"
    assert model.n_clusters == 3 and model.vectorizer.n_terms <= 40
    expected = json.loads((FIXTURE / "expected.json").read_text())
    labels, strength = model.assign(list(FIXTURE_DOCS))
    assert labels.tolist() == expected["labels"]
    np.testing.assert_allclose(strength, expected["memberships"], rtol=1e-6)
    # one cluster per topic
    by_topic = {}
    for label, topic in zip(labels, FIXTURE_DOCS.values()):
        if topic != "mixed":
                by_topic.setdefault(topic, set()).add(int(label))
    assert all(len(v) == 1 for v in by_topic.values()) and len(
        set.union(*by_topic.values())) == 3
    assert 0.5 < strength[-1] < 1  # a mixed document: a weaker membership
    assert sum(os.path.getsize(FIXTURE / f) for f in os.listdir(FIXTURE)) < 20_000


def make_fixture():  # pragma: no cover - run once by hand to (re)write the fixture
    """python -c 'import sys; sys.path[:0] = ["tests", "tests/pipelines"]; import test_saved; test_saved.make_fixture()'"""
    texts, labels = make_planted(docs_per_topic=10)
    corpus = Corpus(texts, labels, min_df=3)
    estimator = NMF(3, max_iter=100, random_state=0).fit(corpus.tfidf())
    if FIXTURE.exists():
        shutil.rmtree(FIXTURE)
    model = save_model(estimator, FIXTURE, corpus, method="nmf")
    labels, strength = model.assign(list(FIXTURE_DOCS))
    (FIXTURE / "expected.json").write_text(json.dumps(
        {"documents": list(FIXTURE_DOCS), "labels": labels.tolist(),
         "memberships": [round(float(s), 8) for s in strength]}, indent=1) + "\n")
