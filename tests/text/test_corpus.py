"""Tests of semnmf.text.corpus / vectorize: weightings against independent references
(scikit-learn, dense formulas), transform, the token stream, stemming and pruning."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import Stemmer
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

from semnmf import Corpus
from semnmf.datasets import load_dataset
from semnmf.text.vectorize import split_sentences

from conftest import FRENCH_SENTENCES, make_planted, write_csv, write_jsonl

# The documented preprocessing: alphabetic tokens of >= 2 letters, lower case,
# scikit-learn's English stop words (written out here, not imported from the code under test).
PATTERN = r"(?u)\b[a-zA-Z][a-zA-Z]+\b"
SETTINGS = dict(token_pattern=PATTERN, stop_words="english", lowercase=True)


@pytest.fixture
def texts_with_empty(planted_texts):
    """The planted texts plus one document with only stop words and one with only numbers."""
    return planted_texts[:15] + ["the and of it", "2024 42!"] + planted_texts[15:]


def row_norms(X):
    return np.sqrt(np.asarray(sp.csr_matrix(X).multiply(X).sum(axis=1)).ravel())


# -- weightings --------------------------------------------------------------------------

def test_tfidf_rows_have_unit_norm(texts_with_empty):
    X = Corpus(texts_with_empty).tfidf()
    assert sp.issparse(X) and X.format == "csr"
    norms = row_norms(X)
    empty = [15, 16]
    np.testing.assert_allclose(np.delete(norms, empty), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(norms[empty], 0.0)
    assert X.min() >= 0


@pytest.mark.parametrize("options", [{}, {"min_df": 1}, {"min_df": 3, "max_df": 0.9}])
def test_tfidf_equals_sklearn(texts_with_empty, options):
    corpus = Corpus(texts_with_empty, **options)
    reference = TfidfVectorizer(**SETTINGS, min_df=options.get("min_df", 2),
                                max_df=options.get("max_df", 1.0))
    X_ref = reference.fit_transform(texts_with_empty)
    assert list(corpus.vocabulary) == list(reference.get_feature_names_out())
    np.testing.assert_allclose(corpus.tfidf().toarray(), X_ref.toarray(), rtol=1e-12,
                               atol=1e-15)
    assert corpus.tfidf(dtype=np.float32).dtype == np.float32


def test_counts_weighting_is_raw_counts(texts_with_empty):
    corpus = Corpus(texts_with_empty)
    reference = CountVectorizer(**SETTINGS, min_df=2)
    C_ref = reference.fit_transform(texts_with_empty)
    assert list(corpus.vocabulary) == list(reference.get_feature_names_out())
    X = corpus.vectorize("counts")
    np.testing.assert_array_equal(X.toarray(), C_ref.toarray())
    np.testing.assert_array_equal(corpus.counts().toarray(), C_ref.toarray())
    # counts() is a copy: changing it does not change the corpus
    C = corpus.counts()
    C.data[:] = 0
    np.testing.assert_array_equal(corpus.counts().toarray(), C_ref.toarray())


def test_ncut_equals_dense_reference(texts_with_empty):
    corpus = Corpus(texts_with_empty)
    X = corpus.tfidf().toarray()
    degree = X @ X.T @ np.ones(X.shape[0])         # D = diag(X Xᵀ 1)
    scale = np.zeros_like(degree)
    scale[degree > 0] = degree[degree > 0] ** -0.5
    expected = scale[:, None] * X                  # D^{-1/2} X
    X_ncut = corpus.vectorize("ncut")
    assert sp.issparse(X_ncut)
    np.testing.assert_allclose(X_ncut.toarray(), expected, rtol=1e-12, atol=1e-15)
    assert np.isfinite(X_ncut.toarray()).all()


def test_unknown_weighting(planted_texts):
    with pytest.raises(ValueError, match="weighting must be one of"):
        Corpus(planted_texts).vectorize("bm25")


# -- transform ----------------------------------------------------------------------------

@pytest.mark.parametrize("weighting", ["tfidf", "counts", "ncut"])
def test_transform_training_texts_reproduces_vectorize(texts_with_empty, weighting):
    corpus = Corpus(texts_with_empty)  # fresh: transform before any vectorize call
    X_new = corpus.transform(texts_with_empty, weighting)
    X = corpus.vectorize(weighting)
    np.testing.assert_allclose(X_new.toarray(), X.toarray(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("weighting", ["tfidf", "ncut"])
def test_transform_uses_corpus_idf_before_vectorize(planted_texts, weighting):
    """The idf of transform is the corpus's, not one fitted on the new texts."""
    fresh, fitted = Corpus(planted_texts), Corpus(planted_texts)
    fitted.vectorize("tfidf")
    new = planted_texts[:4] + ["rocket orbit recipe"]
    np.testing.assert_allclose(fresh.transform(new, weighting).toarray(),
                               fitted.transform(new, weighting).toarray(), rtol=1e-12)


def test_transform_new_texts(planted_texts):
    corpus = Corpus(planted_texts)
    vocab = list(corpus.vocabulary)
    X = corpus.transform(["Rocket rocket ORBIT unknownword", "zzz qqq", "the of"], "counts")
    assert X.shape == (3, corpus.n_terms)
    expected = np.zeros(corpus.n_terms)
    expected[vocab.index("rocket")] = 2
    expected[vocab.index("orbit")] = 1
    np.testing.assert_array_equal(X.toarray()[0], expected)
    assert X[1].nnz == 0 and X[2].nnz == 0
    # a single string is one document; tf-idf rows use the corpus idf and unit norm
    x = corpus.transform("rocket orbit")
    assert x.shape == (1, corpus.n_terms)
    np.testing.assert_allclose(row_norms(x), 1.0)
    X_all = corpus.tfidf()
    doc = planted_texts[20]
    np.testing.assert_allclose(corpus.transform(doc).toarray(), X_all[20].toarray(), rtol=1e-12)


def test_transform_on_counts_only_corpus_with_auto_stem(planted_texts):
    stemmed = Corpus(planted_texts, stem="porter")
    counts_only = Corpus(counts=stemmed.counts(), vocabulary=stemmed.vocabulary, stem="auto")
    X = counts_only.transform(planted_texts, "counts")
    np.testing.assert_array_equal(X.toarray(), stemmed.counts().toarray())
    np.testing.assert_allclose(counts_only.transform(planted_texts).toarray(),
                               stemmed.tfidf().toarray(), rtol=1e-12)


# -- token stream ----------------------------------------------------------------------------

def test_split_sentences():
    assert split_sentences("One two. Three four! Five?  Six\n\nSeven\nEight") == [
        "One two.", "Three four!", "Five?", "Six", "Seven\nEight"]
    assert split_sentences("") == [] and split_sentences("  \n\n ") == []


def test_sequences_on_hand_made_text():
    texts = [
        "Apple banana. Cherry apple zzz!\n\nBanana the cherry",
        "Qqq. Apple cherry? Banana",
        "",
        "banana apple cherry\n\napple banana",
    ]
    corpus = Corpus(texts, min_df=2)  # zzz and qqq (one document each) are out of vocabulary
    assert sorted(corpus.vocabulary) == ["apple", "banana", "cherry"]
    a, b, c = (list(corpus.vocabulary).index(w) for w in ("apple", "banana", "cherry"))
    seq = corpus.sequences()
    np.testing.assert_array_equal(seq.tokens, [a, b, c, a, b, c,   # doc 0: 3 sentences
                                               a, c, b,            # doc 1: "Qqq." is empty
                                               b, a, c, a, b])     # doc 2 empty; doc 3
    np.testing.assert_array_equal(seq.doc_ptr, [0, 6, 9, 9, 14])
    np.testing.assert_array_equal(seq.sent_ptr, [0, 2, 4, 6, 8, 9, 12, 14])
    assert seq.n_terms == 3
    assert corpus.sequences() is seq  # built once


def test_sequences_match_counts(texts_with_empty):
    """Each document's tokens in the stream are exactly its counted terms."""
    for options in ({}, {"stem": "porter"}, {"max_features": 12}):
        corpus = Corpus(texts_with_empty, **options)
        seq = corpus.sequences()
        counts = corpus.counts().toarray()
        assert len(seq.doc_ptr) == len(texts_with_empty) + 1
        assert set(seq.doc_ptr) <= set(seq.sent_ptr)
        for i in range(len(texts_with_empty)):
            doc = seq.tokens[seq.doc_ptr[i]:seq.doc_ptr[i + 1]]
            np.testing.assert_array_equal(np.bincount(doc, minlength=corpus.n_terms), counts[i])


def test_sequences_need_text(planted_texts):
    corpus = Corpus(counts=Corpus(planted_texts).counts())
    with pytest.raises(ValueError, match="no raw text"):
        corpus.sequences()


# -- stemming and pruning ------------------------------------------------------------------------

STEM_TEXTS = [
    "The players played and are playing games.",
    "A player plays one game; connections connected.",
    "Connecting connection connects players generously.",
    "Generous games, generously connected.",
]


@pytest.mark.parametrize("stem", ["porter", "english"])
def test_stemming_merges_inflections(stem):
    plain = Corpus(STEM_TEXTS, min_df=1)
    stemmed = Corpus(STEM_TEXTS, min_df=1, stem=stem)
    stemmer = Stemmer.Stemmer(stem)
    stem_of = {w: stemmer.stemWord(w) for w in plain.vocabulary}
    assert set(stemmed.vocabulary) == set(stem_of.values())
    assert stemmed.n_terms < plain.n_terms
    assert "players" in plain.vocabulary and "players" not in stemmed.vocabulary
    # the stemmed counts are the plain counts summed over words with the same stem
    C, C_stem = plain.counts().toarray(), stemmed.counts().toarray()
    vocab = list(stemmed.vocabulary)
    expected = np.zeros_like(C_stem)
    for j, word in enumerate(plain.vocabulary):
        expected[:, vocab.index(stem_of[word])] += C[:, j]
    np.testing.assert_array_equal(C_stem, expected)


def test_porter_and_snowball_differ_and_bad_stem():
    porter = set(Corpus(STEM_TEXTS, min_df=1, stem="porter").vocabulary)
    snowball = set(Corpus(STEM_TEXTS, min_df=1, stem="english").vocabulary)
    assert porter != snowball  # "generously": porter "gener", Porter2 "generous"
    with pytest.raises(ValueError, match="stem must be one of"):
        Corpus(STEM_TEXTS, stem="lancaster")


@pytest.mark.parametrize("min_df, max_df", [(1, 1.0), (2, 1.0), (3, 1.0), (0.2, 1.0),
                                            (1, 0.9), (2, 14), (1, 0.5), (2, 15)])
def test_min_df_max_df_match_sklearn(planted_texts, min_df, max_df):
    corpus = Corpus(planted_texts, min_df=min_df, max_df=max_df)
    reference = CountVectorizer(**SETTINGS, min_df=min_df, max_df=max_df)
    C_ref = reference.fit_transform(planted_texts)
    assert list(corpus.vocabulary) == list(reference.get_feature_names_out())
    np.testing.assert_array_equal(corpus.counts().toarray(), C_ref.toarray())
    # the same pruning applied to a given count matrix keeps the same terms
    full = Corpus(planted_texts, min_df=1)
    from_counts = Corpus(counts=full.counts(), vocabulary=full.vocabulary, min_df=min_df,
                         max_df=max_df)
    assert list(from_counts.vocabulary) == list(corpus.vocabulary)
    np.testing.assert_array_equal(from_counts.counts().toarray(), C_ref.toarray())


def test_max_df_removes_common_words(planted_texts):
    vocab = set(Corpus(planted_texts).vocabulary)
    assert {"report", "people"} <= vocab
    assert "report" not in Corpus(planted_texts, max_df=0.9).vocabulary  # in every document
    assert "people" in Corpus(planted_texts, max_df=0.5).vocabulary      # in half of them
    assert "people" not in Corpus(planted_texts, max_df=0.49).vocabulary


@pytest.mark.parametrize("max_features", [1, 5, 12])
def test_max_features_keeps_most_frequent(planted_texts, max_features):
    full = Corpus(planted_texts)
    totals = dict(zip(full.vocabulary, np.asarray(full.counts().sum(axis=0)).ravel()))
    for corpus in (Corpus(planted_texts, max_features=max_features),
                   Corpus(counts=full.counts(), vocabulary=full.vocabulary,
                          max_features=max_features)):
        kept = set(corpus.vocabulary)
        assert len(kept) == max_features
        dropped = set(full.vocabulary) - kept
        assert min(totals[w] for w in kept) >= max(totals[w] for w in dropped)
        for w in kept:  # columns still hold the term's counts
            j = list(corpus.vocabulary).index(w)
            assert corpus.counts()[:, j].sum() == totals[w]


# -- construction ----------------------------------------------------------------------------------

def test_corpus_basic_facts(planted_texts, planted_labels):
    corpus = Corpus(planted_texts, planted_labels, name="planted")
    assert len(corpus) == corpus.n_documents == 30
    assert corpus.n_classes == 3
    assert corpus.n_terms == len(corpus.vocabulary) == corpus.counts().shape[1]
    assert "planted" in repr(corpus) and "30 documents" in repr(corpus)
    assert list(corpus.ids) == [str(i) for i in range(30)]


def test_counts_corpus_keeps_all_columns_by_default():
    counts = sp.csr_matrix(np.array([[1, 0, 2], [0, 3, 0]]))
    corpus = Corpus(counts=counts, vocabulary=["x", "y", "z"])
    assert corpus.n_terms == 3  # min_df defaults to 1 for a given matrix
    np.testing.assert_array_equal(corpus.counts().toarray(), counts.toarray())
    assert Corpus(counts=counts.toarray()).n_terms == 3  # dense input works too


@pytest.mark.parametrize("kwargs, message", [
    ({}, "needs texts or a count matrix"),
    ({"counts": -sp.eye(3, format="csr")}, "negative entries"),
    ({"counts": sp.eye(3, format="csr"), "vocabulary": ["a", "b"]},
     "vocabulary has 2 terms but the count matrix has 3 columns"),
    ({"texts": ["a b", "c d"], "counts": sp.eye(3, format="csr")},
     "2 texts but the count matrix has 3 rows"),
    ({"counts": sp.eye(3, format="csr"), "ids": ["a", "b"]}, "2 ids for 3 documents"),
    ({"counts": sp.eye(3, format="csr"), "labels": [1, 2]}, "2 labels for 3 documents"),
])
def test_corpus_construction_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Corpus(**kwargs)


def test_word_context_checks_context(planted_texts):
    corpus = Corpus(planted_texts)
    with pytest.raises(ValueError, match="context must be one of"):
        corpus.word_context(context="paragraph")
    M = corpus.word_context(context="document")
    assert M.shape == (corpus.n_terms, corpus.n_terms)
    assert abs(M - M.T).max() < 1e-12 and M.min() >= 0


# -- languages, labels, non-integer counts and small corpora ------------------------------

def test_accented_words_are_kept():
    corpus = Corpus(FRENCH_SENTENCES + ["The café is on the corner"], min_df=1)
    vocabulary = set(corpus.vocabulary)
    assert {"café", "réforme", "économique", "marché"} <= vocabulary
    assert "the" not in vocabulary and "is" not in vocabulary  # English stop list applies
    assert not any(ch.isdigit() or ch == "_" for term in vocabulary for ch in term)


def test_stop_words_none_and_token_pattern():
    kept = Corpus(["the cat and the dog", "the dog"], stop_words="none", min_df=1)
    assert "the" in kept.vocabulary and "and" in kept.vocabulary
    assert "the" not in Corpus(["the cat and the dog", "the dog"], min_df=1).vocabulary
    digits = Corpus(["covid19 in 2020", "covid19 again"], token_pattern=r"(?u)\b\w\w+\b",
                    min_df=1)
    assert "covid19" in digits.vocabulary and "2020" in digits.vocabulary
    with pytest.raises(ValueError, match="not a valid regular expression"):
        Corpus(["a b"], token_pattern="([a-z")


@pytest.mark.parametrize("bad, message", [
    ({"a": "sport"}, r"label of document 4 is a dict \(\{'a': 'sport'\}\): a label must be"),
    (["sport"], r"label of document 4 is a list \(\['sport'\]\): a label must be"),
    (7, r"document 0 has 'sport' \(str\), document 4 has 7 \(int\); give every label"),
])
def test_labels_that_cannot_name_classes_are_refused_before_the_vocabulary(
        tmp_path, monkeypatch, bad, message):
    texts, labels = make_planted()
    records = [{"text": t, "label": bad if i == 4 else y}
               for i, (t, y) in enumerate(zip(texts, labels))]
    path = write_jsonl(tmp_path / "p.jsonl", records)
    with pytest.raises(ValueError, match=message):
        load_dataset(path)
    import semnmf.text.corpus as corpus_module

    def no_vocabulary(*args, **kwargs):
        raise AssertionError("the vocabulary was built before the labels were checked")

    with monkeypatch.context() as patch:
        patch.setattr(corpus_module, "count_matrix", no_vocabulary)
        with pytest.raises(ValueError, match=message):
            Corpus(texts, labels=[bad if i == 4 else y for i, y in enumerate(labels)])
    # numbers of several types, tuples, and numbers alone still name classes
    assert Corpus(texts, labels=[1.0 if i % 3 else 2 for i in range(len(texts))]).n_classes == 2
    assert Corpus(texts, labels=[(y, 1) for y in labels]).n_classes == 3


def test_non_integer_counts_warn_unless_used_as_they_are(tmp_path):
    counts = Corpus(make_planted()[0]).counts()
    counts.data = counts.data * 0.37
    corpus = Corpus(counts=counts)
    with pytest.warns(UserWarning, match=r"non-integer values.*weighting='counts'"):
        corpus.vectorize("tfidf")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        corpus.vectorize("counts")
        Corpus(counts=Corpus(make_planted()[0]).counts()).vectorize("tfidf")


def test_min_df_adapts_to_small_corpora(tmp_path):
    four = ["apple banana cherry", "dates elder fig", "grape honeydew kiwi", "lemon mango"]
    corpus = load_dataset(write_csv(tmp_path / "four.csv", [[t] for t in four], ["text"]))
    assert corpus.min_df == 1 and corpus.min_df_automatic and corpus.n_terms == 11
    texts, _ = make_planted(docs_per_topic=20)  # 60 documents: min_df=2
    large = Corpus(texts)
    assert large.min_df == 2 and large.min_df_automatic
    given = Corpus(four, min_df=1)
    assert not given.min_df_automatic
