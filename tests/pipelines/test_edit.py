"""Topic editing (semnmf.pipelines.edit): merge, split, drop, rename, stop words, on a saved
model; the edited model assigns new documents with the edits applied; edits replay on
another run of the same corpus."""

import warnings

import numpy as np
import pytest

from conftest import word_topic_texts
from semnmf import NMF, Corpus, SphericalKMeans
from semnmf.pipelines.edit import Edits, edit_model, match_clusters, replay_edits, top_words
from semnmf.pipelines.saved import SavedModel, load_model


def _corpus(n_per=25, seed=0):
    texts, labels = word_topic_texts(n_per, 12, seed)
    return Corpus(texts, labels=labels)


@pytest.fixture(scope="module")
def fitted():
    corpus = _corpus()
    X = corpus.tfidf()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = NMF(4, random_state=0).fit(X)
    saved = SavedModel.from_fit(model, corpus)
    return corpus, X, saved


def test_a_merge_is_the_union_of_the_clusters(fitted):
    corpus, X, saved = fitted
    before, _ = saved.assign_matrix(X)
    edited = edit_model(saved, Edits(merge=[[1, 3]]))
    after, strength = edited.assign_matrix(X)
    expected = np.array([{0: 0, 1: 1, 2: 2, 3: 1}[c] for c in before])
    np.testing.assert_array_equal(after, expected)
    assert edited.n_clusters == 3 and edited.topics.shape == (3, X.shape[1])
    assert np.all((strength > 0) & (strength <= 1 + 1e-12))
    # the merged cluster's strength is the two columns' shares added
    _, old_strength = saved.assign_matrix(X)
    assert np.all(strength[after == 1] >= old_strength[after == 1] - 1e-12)


def test_a_drop_sends_documents_to_their_next_best_cluster(fitted):
    corpus, X, saved = fitted
    before, _ = saved.assign_matrix(X)
    edited = edit_model(saved, Edits(drop=[2]))
    after, _ = edited.assign_matrix(X)
    assert edited.n_clusters == 3
    kept = before != 2
    np.testing.assert_array_equal(after[kept], np.array([{0: 0, 1: 1, 3: 2}[c]
                                                         for c in before[kept]]))
    factors = saved.estimator.transform(X[before == 2])
    factors[:, 2] = -np.inf
    second = np.argmax(factors, axis=1)
    np.testing.assert_array_equal(after[before == 2], [{0: 0, 1: 1, 3: 2}[c] for c in second])


def test_a_split_makes_two_clusters_of_one(fitted):
    corpus, X, saved = fitted
    labels, _ = saved.assign_matrix(X)
    edited = edit_model(saved, Edits(split=[0]), X=X, labels=labels)
    after, _ = edited.assign_matrix(X)
    assert edited.n_clusters == 5
    # the other clusters keep their documents; cluster 0's go to its two halves
    moved = labels == 0
    assert set(np.unique(after[moved])) <= {0, 4} and len(np.unique(after[moved])) == 2
    np.testing.assert_array_equal(after[~moved], labels[~moved])


def test_rename_stop_words_and_the_record(fitted, tmp_path):
    corpus, X, saved = fitted
    vocabulary = list(saved.vectorizer.vocabulary)
    top = top_words(saved.topics, vocabulary, 1)[0][0]
    edited = edit_model(saved, Edits(rename={0: "first"}, stop_words=[top]))
    assert edited.names[0] == "first"
    assert edited.topics[:, vocabulary.index(top)].max() == 0
    record = edited.edits[-1]
    assert record["rename"] == {"0": "first"} and record["stop_words"] == [top]
    assert record["words"]["0"][0] == top
    # saved and loaded: the same assignment, the same record
    path = edited.save(tmp_path / "model")
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.assign_matrix(X)[0], edited.assign_matrix(X)[0])
    assert loaded.names == edited.names and loaded.edits == edited.edits
    # new documents are assigned with the edits applied
    labels, _ = loaded.assign(["football goal cup league", "bank interest rate shares"])
    assert list(labels) == list(edited.assign(["football goal cup league",
                                                "bank interest rate shares"])[0])


def test_bad_edits_are_refused_in_one_line(fitted):
    _, X, saved = fitted
    with pytest.raises(ValueError, match=r"cluster 9 does not exist: the run has clusters 0..3"):
        edit_model(saved, Edits(drop=[9]))
    with pytest.raises(ValueError, match="a merge names at least two clusters"):
        edit_model(saved, Edits(merge=[[1]]))
    with pytest.raises(ValueError, match="named by two edits"):
        edit_model(saved, Edits(merge=[[0, 1]], drop=[1]))
    with pytest.raises(ValueError, match="drop every cluster"):
        edit_model(saved, Edits(drop=[0, 1, 2, 3]))
    with pytest.raises(ValueError, match="needs the run's documents"):
        edit_model(saved, Edits(split=[0]))


def test_edits_replay_on_another_run_by_the_clusters_words(fitted):
    corpus, X, saved = fitted
    edited = edit_model(saved, Edits(merge=[[0, 2]], rename={1: "named"}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        other = SavedModel.from_fit(NMF(4, random_state=7).fit(X), corpus)
    replayed = replay_edits(other, edited.edits)
    # the same documents end up together, whatever the other run's numbering
    a, b = edited.assign_matrix(X)[0], replayed.assign_matrix(X)[0]
    from semnmf import ari
    assert ari(a, b) > 0.95
    assert "named" in replayed.names


def test_match_clusters_by_words():
    assert match_clusters([["a", "b"], ["c", "d"]], [["c", "x"], ["b", "a"]]) == {0: 1, 1: 0}


def test_a_consensus_and_a_kmeans_model_are_edited_too(fitted):
    corpus, X, saved = fitted
    km = SphericalKMeans(4, random_state=0).fit(X)
    model = SavedModel.from_fit(km, corpus)
    before, _ = model.assign_matrix(X)
    after, strength = edit_model(model, Edits(merge=[[0, 1]])).assign_matrix(X)
    np.testing.assert_array_equal(after == 0, np.isin(before, [0, 1]))
    assert np.all(strength <= 1 + 1e-12)


def test_a_model_of_expanded_documents_expands_new_ones(fitted, tmp_path):
    """Runs with pretrained semantics (--embed words) fit on documents expanded by a word
    graph; their saved model keeps the graph and expands new documents the same way."""
    import scipy.sparse as sp

    from semnmf.text.pretrained import expand_documents

    corpus, X, saved = fitted
    d = X.shape[1]
    S = sp.random(d, d, density=0.05, random_state=1, format="csr")
    S = S + S.T
    expanded = expand_documents(X, S, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = NMF(4, random_state=0).fit(expanded)
    expansion = {"word_graph": S, "strength": 1.0, "semantics": "glove"}
    saved = SavedModel.from_fit(model, corpus, expansion=expansion)
    direct = np.argmax(model.transform(expanded), axis=1)
    np.testing.assert_array_equal(saved.assign_matrix(X)[0], direct)
    loaded = load_model(saved.save(tmp_path / "model"))
    assert loaded.info["expansion"]["semantics"] == "glove"
    np.testing.assert_array_equal(loaded.assign_matrix(X)[0], direct)
