"""Guided topics (semnmf.models.guided): seeded starts and seed pseudo-documents.

Measured on BBC (k = 5, seed lists football/match/club, film/award/star,
election/labour/party, game/mobile/phone, bank/economy/growth), strength 0.02: KL NMF keeps
all 15 seed words in their topics' top ten, NMI 0.876 (0.877 from the seeded start alone,
0.877 unseeded); the Frobenius loss keeps 14 of 15 (NMI 0.777 against 0.797)."""

import warnings

import numpy as np
import pytest

from conftest import planted_corpus
from semnmf import NMF, SemanticNMF
from semnmf.models.guided import fit_guided, seed_documents
from semnmf.models.init import seeded_start, topic_drift


@pytest.fixture(scope="module")
def planted():
    # 3 topics of 15 words each: topic c owns terms 15c .. 15c + 14
    return planted_corpus(n_per=30, k=3, d_per=15, seed=4)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def test_a_seeded_start_puts_each_seed_list_on_top_of_its_topic(planted):
    X, y = planted
    seeds = [[31, 32], [3]]                     # words of topics 2 and 0
    Z, W = seeded_start(X, 3, seeds, random_state=0)
    assert Z.shape == (X.shape[0], 3) and W.shape == (X.shape[1], 3)
    for j, terms in enumerate(seeds):
        assert set(terms) <= set(np.argsort(-W[:, j])[:len(terms)])
    # the documents start in the seeded topic of their planted class
    assert np.mean(np.argmax(Z, axis=1)[y == 2] == 0) > 0.9
    assert np.mean(np.argmax(Z, axis=1)[y == 0] == 1) > 0.9


def test_seeds_are_checked(planted):
    X, _ = planted
    with pytest.raises(ValueError, match="seed list 0 is empty"):
        seeded_start(X, 3, [[]])
    with pytest.raises(ValueError, match="outside 0..44"):
        seeded_start(X, 3, [[99]])
    with pytest.raises(ValueError, match="between 1 and n_components=3"):
        seeded_start(X, 3, [[1], [2], [3], [4]])


def test_a_seed_no_document_holds_starts_from_its_words(planted):
    X, _ = planted
    X = X.tolil()
    X[:, 44] = 0                               # no document holds term 44
    Z, W = seeded_start(X.tocsr(), 3, [[44]], random_state=0)
    assert np.argmax(W[:, 0]) == 44


@pytest.mark.parametrize("loss", ["frobenius", "kl"])
def test_guided_topics_keep_their_seeds_and_the_clusters(planted, loss):
    X, y = planted
    seeds = [[16, 17], [40]]
    model = NMF(3, loss=loss, random_state=0)
    found = _quiet(fit_guided, model, X, seeds, strength=0.1, random_state=0)
    assert model.labels_.shape == (X.shape[0],)          # the seed rows get no label
    assert model.init == "skmeans"                       # the parameter is left as set
    assert list(found.seeded) == [True, True, False]
    for j, terms in enumerate(seeds):
        assert {f"t{t}" for t in terms} <= {t for t, _ in model.top_terms(10)[j]}
    # the seeded topics are the planted topics 1 and 2
    assert np.mean(model.labels_[y == 1] == 0) > 0.9 and np.mean(model.labels_[y == 2] == 1) > 0.9
    assert found.drift.shape == (3,) and np.all((found.drift >= 0) & (found.drift <= 1))


def test_seed_documents_weigh_a_share_of_a_cluster(planted):
    X, _ = planted
    n, k = X.shape[0], 3
    rows = seed_documents(X, [[1, 2], [3]], k, strength=0.1)
    np.testing.assert_allclose(np.asarray(rows.multiply(rows).sum(axis=1)).ravel(),
                               0.1 * n / k)                  # Frobenius: squared norm
    rows = seed_documents(X, [[1, 2]], k, strength=0.1, loss="kl")
    assert rows.sum() == pytest.approx(0.1 * n / k * X.sum() / n)  # KL: mass


def test_drift_is_zero_for_an_unmoved_topic():
    W = np.abs(np.random.default_rng(0).random((10, 3)))
    np.testing.assert_allclose(topic_drift(W, 2 * W), 0, atol=1e-12)
    assert topic_drift(np.eye(3), np.eye(3)[:, ::-1])[0] == pytest.approx(1.0)


def test_guided_semantic_nmf_takes_its_word_context_matrix(planted):
    X, _ = planted
    model = SemanticNMF(3, random_state=0)
    _quiet(fit_guided, model, X, [[0, 1]], random_state=0)
    assert "t0" in {t for t, _ in model.top_terms(10)[0]}
