"""NPMI coherence and topic diversity: the fast sparse versions against slow, obvious
loops, and hand-computed tiny cases."""

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp

from semnmf.metrics import npmi_coherence, topic_diversity


def npmi_reference(top_words, docs):
    """Mean NPMI over the pairs of top words, from a list of sets of words (one per
    document), term by term."""
    n = len(docs)
    values = []
    for a, b in itertools.combinations(top_words, 2):
        pa = sum(a in d for d in docs) / n
        pb = sum(b in d for d in docs) / n
        pab = sum(a in d and b in d for d in docs) / n
        if pab == 0:
            values.append(-1.0)
        elif pab == 1:
            values.append(1.0)
        else:
            values.append(math.log(pab / (pa * pb)) / -math.log(pab))
    return sum(values) / len(values)


def diversity_reference(top_lists):
    words = [w for ws in top_lists for w in ws]
    unique = []
    for w in words:
        if w not in unique:
            unique.append(w)
    return len(unique) / len(words)


def _docs(X):
    X = sp.csr_matrix(X)
    return [set(X[i].indices.tolist()) for i in range(X.shape[0])]


def test_npmi_hand_computed():
    # 4 documents over words a b c d
    X = np.array([[1, 1, 0, 0],
                  [1, 1, 0, 0],
                  [1, 0, 1, 0],
                  [0, 0, 1, 1]])
    # a, b: P(a)=3/4, P(b)=1/2, P(ab)=1/2 -> log((1/2)/(3/8)) / -log(1/2) = log(4/3)/log 2
    assert npmi_coherence([[0, 1]], X) == pytest.approx(math.log(4 / 3) / math.log(2))
    # b, d never together -> -1
    assert npmi_coherence([[1, 3]], X) == pytest.approx(-1.0)
    # c, d: P(c)=1/2, P(d)=1/4, P(cd)=1/4 -> log 2 / log 4 = 1/2
    assert npmi_coherence([[2, 3]], X) == pytest.approx(0.5)
    # a topic of three words averages its three pairs
    expected = np.mean([math.log(4 / 3) / math.log(2), -1.0, -1.0])
    assert npmi_coherence([[0, 1, 3]], X) == pytest.approx(expected)
    # the same from weights (the heaviest positive terms) and from terms
    weights = np.array([[0.9, 0.5, 0.0, 0.0], [0.0, 0.0, 0.2, 0.7]])
    per_topic = npmi_coherence(weights, X, average=False)
    assert per_topic == pytest.approx([math.log(4 / 3) / math.log(2), 0.5])
    assert npmi_coherence([["a", "b"], ["d", "c"]], X, vocabulary="a b c d".split(),
                          average=False) == pytest.approx(per_topic)
    assert npmi_coherence(weights, X) == pytest.approx(np.mean(per_topic))


def test_npmi_always_together_and_independent():
    X = np.array([[1, 1, 1, 0], [1, 1, 0, 1], [1, 1, 1, 1], [1, 1, 0, 0]])
    assert npmi_coherence([[0, 1]], X) == pytest.approx(1.0)
    # c in docs 0, 2; d in docs 1, 2: P(cd)=1/4 = P(c)P(d): independent -> 0
    assert npmi_coherence([[2, 3]], X) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_npmi_matches_the_loops(seed):
    rng = np.random.default_rng(seed)
    X = sp.random(60, 40, density=0.15, random_state=seed, format="csr")
    components = rng.random((6, 40)) * (rng.random((6, 40)) < 0.5)
    fast = npmi_coherence(components, X * 3.7, n_terms=8, average=False)
    docs = _docs(X)
    for t in range(6):
        order = np.argsort(-components[t], kind="stable")[:8]
        order = [int(j) for j in order if components[t, j] > 0]
        assert fast[t] == pytest.approx(npmi_reference(order, docs), abs=1e-12)


def test_npmi_from_a_reference_corpus():
    from semnmf import Corpus

    texts = ["apple banana", "apple banana cherry", "cherry date", "date egg"]
    own = Corpus(texts, min_df=1, stop_words=None)
    vocab = list(own.vocabulary)
    # a reference with another vocabulary (an extra word, "apple" missing, other order)
    reference = Corpus(["banana cherry zebra", "banana cherry", "date egg zebra", "egg"],
                       min_df=1, stop_words=None)
    topic = [[vocab.index("apple"), vocab.index("banana"), vocab.index("cherry")]]
    value = npmi_coherence(topic, reference, vocabulary=vocab)
    ref_docs = [{"banana", "cherry", "zebra"}, {"banana", "cherry"}, {"date", "egg", "zebra"},
                {"egg"}]
    assert value == pytest.approx(npmi_reference(["apple", "banana", "cherry"], ref_docs))
    # a reference document-term matrix over the same vocabulary
    assert npmi_coherence(topic, own.counts()) == pytest.approx(
        npmi_reference([0, 1, 2], _docs(own.counts())))


def test_npmi_empty_topic_is_nan_and_errors():
    X = np.eye(3)
    per_topic = npmi_coherence(np.array([[1.0, 0, 0], [1.0, 1.0, 0]]), X, average=False)
    assert np.isnan(per_topic[0]) and per_topic[1] == pytest.approx(-1.0)
    assert npmi_coherence(np.array([[1.0, 0, 0], [1.0, 1.0, 0]]), X) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="same vocabulary"):
        npmi_coherence(np.ones((2, 4)), X)
    with pytest.raises(ValueError, match="vocabulary"):
        npmi_coherence([["a", "b"]], X)
    with pytest.raises(ValueError, match="n_terms"):
        npmi_coherence([[0, 1]], X, n_terms=1)
    with pytest.raises(ValueError, match="None"):
        npmi_coherence([[0, 1]], None)


def test_diversity_hand_computed():
    assert topic_diversity([["a", "b"], ["c", "d"]]) == 1.0
    assert topic_diversity([["a", "b"], ["a", "b"]]) == 0.5
    assert topic_diversity([["a", "b", "c"], ["a", "d", "e"]]) == pytest.approx(5 / 6)
    weights = np.array([[3.0, 2.0, 1.0, 0.0], [0.0, 2.0, 3.0, 1.0]])
    assert topic_diversity(weights, n_terms=2) == pytest.approx(3 / 4)  # {0,1} and {2,1}
    assert topic_diversity(weights, n_terms=25) == pytest.approx(4 / 6)  # zeros not listed


@pytest.mark.parametrize("seed", range(3))
def test_diversity_matches_the_loop(seed):
    rng = np.random.default_rng(seed)
    components = rng.random((7, 50))
    lists = [[int(j) for j in np.argsort(-row, kind="stable")[:25]] for row in components]
    assert topic_diversity(components) == pytest.approx(diversity_reference(lists))
    with pytest.raises(ValueError, match="n_terms"):
        topic_diversity(components, n_terms=0)


def test_top_terms_pairs_score_as_their_terms():
    """top_terms' (term, weight) pairs counted as distinct words (diversity 1.0) and broke
    the NPMI; they now score as the weights they came from."""
    from semnmf.metrics import top_terms

    rng = np.random.default_rng(0)
    weights = rng.random((4, 12)) * (rng.random((4, 12)) < 0.6)
    vocabulary = [f"w{j}" for j in range(12)]
    pairs = top_terms(weights, vocabulary, 8)
    assert any(w == 0 for topic in top_terms(weights, vocabulary, 12) for _, w in topic)
    assert topic_diversity(pairs, 8) == topic_diversity(weights, 8) < 1
    X = sp.csr_matrix((rng.random((30, 12)) < 0.4).astype(float))
    np.testing.assert_allclose(npmi_coherence(pairs, X, 8, vocabulary=vocabulary, average=False),
                               npmi_coherence(weights, X, 8, average=False))
