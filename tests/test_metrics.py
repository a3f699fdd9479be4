import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from semnmf.datasets import load_dataset
from semnmf.metrics import accuracy, ari, clustering_scores, nmi, top_terms

from conftest import make_planted, write_csv


def brute_force_accuracy(labels_true, labels_pred):
    """Best one-to-one cluster -> class matching by enumerating all of them."""
    labels_true = np.asarray(labels_true)
    labels_pred = np.asarray(labels_pred)
    classes = np.unique(labels_true)
    clusters = np.unique(labels_pred)
    best = 0
    if len(clusters) <= len(classes):
        for targets in itertools.permutations(classes, len(clusters)):
            hits = sum(
                np.sum((labels_pred == c) & (labels_true == t))
                for c, t in zip(clusters, targets)
            )
            best = max(best, hits)
    else:
        for sources in itertools.permutations(clusters, len(classes)):
            hits = sum(
                np.sum((labels_pred == c) & (labels_true == t))
                for c, t in zip(sources, classes)
            )
            best = max(best, hits)
    return best / len(labels_true)


# ---------------------------------------------------------------- accuracy
@pytest.mark.parametrize("seed", range(30))
def test_accuracy_matches_brute_force(seed):
    rng = np.random.RandomState(seed)
    n = rng.randint(1, 25)
    n_classes = rng.randint(1, 5)
    n_clusters = rng.randint(1, 6)  # often != n_classes
    labels_true = rng.randint(n_classes, size=n)
    labels_pred = rng.randint(n_clusters, size=n) - 1  # includes -1
    assert accuracy(labels_true, labels_pred) == pytest.approx(
        brute_force_accuracy(labels_true, labels_pred)
    )


def test_accuracy_perfect_up_to_renaming():
    labels_true = np.array([0, 0, 1, 1, 2, 2])
    assert accuracy(labels_true, [5, 5, -1, -1, 9, 9]) == 1.0
    assert accuracy(labels_true, ["b", "b", "a", "a", "c", "c"]) == 1.0


def test_accuracy_invariant_to_label_permutation():
    rng = np.random.RandomState(0)
    labels_true = rng.randint(4, size=200)
    labels_pred = np.where(rng.rand(200) < 0.7, labels_true, rng.randint(5, size=200))
    reference = accuracy(labels_true, labels_pred)
    for _ in range(5):
        perm_pred = rng.permutation(5)
        perm_true = rng.permutation(4)
        assert accuracy(perm_true[labels_true], perm_pred[labels_pred]) == pytest.approx(reference)
    # order of the documents does not matter either
    order = rng.permutation(200)
    assert accuracy(labels_true[order], labels_pred[order]) == pytest.approx(reference)


def test_accuracy_string_labels_and_unequal_counts():
    labels_true = ["sport", "sport", "sport", "politics", "politics", "tech"]
    labels_pred = [0, 0, 1, 1, 1, 1]  # 2 clusters, 3 classes
    # best: cluster 0 -> sport (2), cluster 1 -> politics (2)
    assert accuracy(labels_true, labels_pred) == pytest.approx(4 / 6)
    # more clusters than classes: the extra cluster counts as errors
    assert accuracy([0, 0, 0, 0], [0, 1, 2, 3]) == pytest.approx(1 / 4)


def test_accuracy_value_in_unit_interval_and_type():
    rng = np.random.RandomState(1)
    value = accuracy(rng.randint(3, size=50), rng.randint(3, size=50))
    assert isinstance(value, float)
    assert 0.0 <= value <= 1.0


# ---------------------------------------------------------------- nmi / ari
@pytest.mark.parametrize("seed", range(3))
def test_scores_of_string_labels_with_missing_ones_equal_sklearns_on_the_known(seed):
    # the scores run on integer codes of the labels: the same numbers, bit for bit, as
    # scikit-learn's on the values, with the unlabelled documents left out
    rng = np.random.RandomState(seed)
    classes = np.array(["sport", "tech", "politics", "arts", "", None, float("nan")],
                       dtype=object)
    labels_true = classes[rng.randint(len(classes), size=300)]
    labels_pred = rng.randint(-1, 5, size=300)
    known = np.array([y is not None and y == y and y != "" for y in labels_true])
    y, p = labels_true[known].astype(str), labels_pred[known]
    scores = clustering_scores(labels_true, labels_pred)
    assert scores["nmi"] == normalized_mutual_info_score(y, p)
    assert scores["ari"] == adjusted_rand_score(y, p)
    assert scores["accuracy"] == pytest.approx(brute_force_accuracy(y, p), abs=1e-15)
    assert scores == {"nmi": nmi(labels_true, labels_pred), "ari": ari(labels_true, labels_pred),
                      "accuracy": accuracy(labels_true, labels_pred)}


@pytest.mark.parametrize("which", ["labels_true", "labels_pred"])
def test_an_infinite_label_is_refused(which):
    labels = {"labels_true": [0.0, 1.0, 1.0, 2.0], "labels_pred": [0, 1, 1, 0]}
    labels[which] = [np.inf, 1.0, 1.0, 2.0]
    with pytest.raises(ValueError, match=f"{which} contains infinity"):
        clustering_scores(labels["labels_true"], labels["labels_pred"])


@pytest.mark.parametrize("seed", range(5))
def test_nmi_ari_match_sklearn(seed):
    rng = np.random.RandomState(seed)
    labels_true = rng.randint(4, size=60)
    labels_pred = rng.randint(3, size=60)
    for method in ("arithmetic", "geometric", "min", "max"):
        assert nmi(labels_true, labels_pred, average_method=method) == pytest.approx(
            normalized_mutual_info_score(labels_true, labels_pred, average_method=method)
        )
    assert nmi(labels_true, labels_pred) == pytest.approx(
        normalized_mutual_info_score(labels_true, labels_pred)
    )
    assert ari(labels_true, labels_pred) == pytest.approx(
        adjusted_rand_score(labels_true, labels_pred)
    )


def test_nmi_geometric_is_strehl_ghosh():
    labels_true = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    labels_pred = np.array([0, 0, 1, 1, 1, 1, 1, 0])

    def entropy(labels):
        p = np.unique(labels, return_counts=True)[1] / len(labels)
        return -np.sum(p * np.log(p))

    joint = entropy([f"{a}-{b}" for a, b in zip(labels_true, labels_pred)])
    mutual_info = entropy(labels_true) + entropy(labels_pred) - joint
    expected = mutual_info / np.sqrt(entropy(labels_true) * entropy(labels_pred))
    assert nmi(labels_true, labels_pred, average_method="geometric") == pytest.approx(expected)


def test_nmi_bad_average_method():
    with pytest.raises(ValueError, match="average_method"):
        nmi([0, 1], [0, 1], average_method="harmonic")


def test_clustering_scores():
    labels_true = [0, 0, 1, 1, 2, 2]
    labels_pred = [1, 1, 0, 0, 0, 2]
    scores = clustering_scores(labels_true, labels_pred)
    assert set(scores) == {"nmi", "ari", "accuracy"}
    assert all(isinstance(v, float) for v in scores.values())
    assert scores["nmi"] == pytest.approx(nmi(labels_true, labels_pred))
    assert scores["ari"] == pytest.approx(ari(labels_true, labels_pred))
    assert scores["accuracy"] == pytest.approx(5 / 6)
    perfect = clustering_scores(labels_true, [3, 3, 1, 1, 0, 0])
    assert perfect == pytest.approx({"nmi": 1.0, "ari": 1.0, "accuracy": 1.0})


@pytest.mark.parametrize("func", [nmi, ari, accuracy, clustering_scores])
def test_label_errors(func):
    with pytest.raises(ValueError, match="same length"):
        func([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="empty"):
        func([], [])
    with pytest.raises(ValueError, match="1-D"):
        func(np.zeros((3, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="None"):
        func(None, [0, 1])


# ---------------------------------------------------------------- top_terms
def test_top_terms_order_and_weights():
    components = np.array([[0.1, 0.5, 0.0, 0.3], [2.0, 0.0, 1.0, 3.0]])
    vocab = ["apple", "banana", "cherry", "date"]
    result = top_terms(components, vocab, n_terms=3)
    assert result == [
        [("banana", 0.5), ("date", 0.3), ("apple", 0.1)],
        [("date", 3.0), ("apple", 2.0), ("cherry", 1.0)],
    ]
    for topic in result:
        weights = [w for _, w in topic]
        assert weights == sorted(weights, reverse=True)
        assert all(isinstance(t, str) and isinstance(w, float) for t, w in topic)


def test_top_terms_random_matches_argsort():
    rng = np.random.RandomState(0)
    components = rng.rand(5, 40)
    vocab = np.array([f"w{j}" for j in range(40)])
    result = top_terms(components, vocab, n_terms=7)
    assert len(result) == 5
    for i, topic in enumerate(result):
        expected = np.argsort(components[i])[::-1][:7]
        assert [t for t, _ in topic] == list(vocab[expected])
        assert [w for _, w in topic] == pytest.approx(components[i, expected])


def test_top_terms_defaults_and_variants():
    components = np.array([[0.0, 1.0, 3.0]])
    # no vocabulary: generic names
    assert top_terms(components, None) == [[("t2", 3.0), ("t1", 1.0), ("t0", 0.0)]]
    # n_terms larger than the vocabulary is capped
    assert len(top_terms(components, None, n_terms=50)[0]) == 3
    # a {term: column} mapping, as CountVectorizer.vocabulary_
    assert top_terms(components, {"c": 2, "a": 0, "b": 1}, n_terms=1) == [[("c", 3.0)]]
    # sparse components
    assert top_terms(sp.csr_matrix(components), ["a", "b", "c"], n_terms=2) == [
        [("c", 3.0), ("b", 1.0)]
    ]
    # ties keep column order
    assert top_terms(np.array([[1.0, 2.0, 2.0]]), None, n_terms=2) == [[("t1", 2.0), ("t2", 2.0)]]


def test_top_terms_errors():
    components = np.ones((2, 3))
    with pytest.raises(ValueError, match="n_terms"):
        top_terms(components, None, n_terms=0)
    with pytest.raises(ValueError, match="n_terms"):
        top_terms(components, None, n_terms=2.5)
    with pytest.raises(ValueError, match="2 terms but components has 3 columns"):
        top_terms(components, ["a", "b"])
    with pytest.raises(ValueError, match="2-D"):
        top_terms(np.ones(3), None)
    with pytest.raises(ValueError, match="empty"):
        top_terms(np.ones((0, 3)), None)
    with pytest.raises(ValueError, match="no term"):
        top_terms(components, {"a": 0, "b": 1})
    with pytest.raises(ValueError, match="outside"):
        top_terms(components, {"a": 0, "b": 1, "c": 7})


def test_missing_predicted_labels_are_refused():
    """None in labels_pred crashed inside numpy ("'<' not supported between NoneType and
    int"); NaN gave scikit-learn's "Input contains NaN"."""
    from semnmf import accuracy, ari, clustering_scores, nmi

    for metric in (nmi, ari, accuracy, clustering_scores):
        with pytest.raises(ValueError, match=r"labels_pred has 1 missing value\(s\) \(None or "
                                             r"NaN, the first at position 1\)"):
            metric([0, 1, 1, 0], [0, None, 1, 0])
        with pytest.raises(ValueError, match=r"labels_pred has 2 missing value\(s\)"):
            metric([0, 1, 1, 0], [0.0, np.nan, 1.0, np.nan])
    # a missing reference label still leaves its document out
    assert nmi([0, None, 1, 1], [0, None, 1, 1]) == 1.0
    assert nmi([0, 1, 1, 0], [0.0, 1.0, 1.0, 0.0]) == 1.0


# -- unlabelled documents ------------------------------------------------------------------

def test_unlabelled_documents_are_no_class(tmp_path):
    texts, labels = make_planted()
    labels = [("" if i % 5 == 0 else y) for i, y in enumerate(labels)]  # 6 unlabelled
    corpus = load_dataset(write_csv(tmp_path / "p.csv", zip(texts, labels), ["text", "label"]))
    assert corpus.n_classes == 3 and corpus.n_unlabelled == 6
    assert corpus.labelled.sum() == 24
    truth = make_planted()[1]
    clusters = np.asarray([["sport", "food", "space"].index(y) for y in truth])
    scores = clustering_scores(corpus.labels, clusters)
    assert scores == {"nmi": 1.0, "ari": 1.0, "accuracy": 1.0}
    assert nmi(labels, clusters) == 1.0 and ari(labels, clusters) == 1.0
    assert accuracy([None, "a", "b", float("nan")], [0, 1, 2, 0]) == 1.0
