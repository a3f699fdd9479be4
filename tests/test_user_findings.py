"""The library side of a new user's findings (issue "From a run to a result people use",
part 5): accented words, unlabelled documents, absurd weights, repeated vocabulary terms,
non-integer counts, UTF-16 files and JSON errors, a vocabulary for a counts-only folder,
small corpora, and progress bars of fits that converge early."""

import io
import json
import warnings

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from semnmf import Corpus
from semnmf.datasets import DatasetError, load_dataset
from semnmf.metrics import accuracy, ari, clustering_scores, nmi

from conftest import make_planted, write_csv, write_jsonl

FRENCH = ["Le café et la réforme économique du marché",
          "La réforme économique touche le café",
          "Un café noir, une réforme, une économie économique"]


# -- accented words -------------------------------------------------------------------
def test_accented_words_are_kept():
    corpus = Corpus(FRENCH + ["The café is on the corner"], min_df=1)
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


def test_load_dataset_passes_language_options(tmp_path):
    path = write_csv(tmp_path / "fr.csv", [[t] for t in FRENCH], ["text"])
    assert "économique" in load_dataset(path).vocabulary
    assert "le" in load_dataset(path, stop_words="none").vocabulary


# -- unlabelled documents ------------------------------------------------------------
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


def test_jsonl_and_labels_txt_missing_labels(tmp_path):
    texts, labels = make_planted()
    records = [{"text": t} if i < 3 else {"text": t, "label": y}
               for i, (t, y) in enumerate(zip(texts, labels))]
    corpus = load_dataset(write_jsonl(tmp_path / "p.jsonl", records))
    assert corpus.n_unlabelled == 3 and corpus.n_classes == 3
    folder = tmp_path / "folder"
    folder.mkdir()
    scipy.io.mmwrite(folder / "counts.mtx", Corpus(texts).counts())
    (folder / "labels.txt").write_text("".join(f"{'' if i == 7 else y}\n"
                                               for i, y in enumerate(labels)), encoding="utf-8")
    assert load_dataset(folder).n_unlabelled == 1


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


# -- weights ----------------------------------------------------------------------------
@pytest.mark.parametrize("estimator", ["SemanticNMF", "GNMF"])
def test_absurd_weight_is_refused(estimator):
    import semnmf

    X = Corpus(make_planted()[0]).tfidf()
    name = "lam" if estimator == "SemanticNMF" else "graph_lam"
    model = getattr(semnmf, estimator)(3, random_state=0, max_iter=20, **{name: 1e308})
    with pytest.raises(ValueError, match=rf"{name} must be between 0 and 1e\+06"):
        model.fit(X)


# -- vocabulary and counts ----------------------------------------------------------------
def _counts_folder(tmp_path, vocabulary=None, counts=None):
    texts, labels = make_planted()
    corpus = Corpus(texts)
    folder = tmp_path / "counts_folder"
    folder.mkdir()
    scipy.io.mmwrite(folder / "counts.mtx", corpus.counts() if counts is None else counts)
    (folder / "labels.txt").write_text("".join(f"{y}\n" for y in labels), encoding="utf-8")
    if vocabulary is not None:
        (folder / "vocab.txt").write_text("".join(f"{t}\n" for t in vocabulary),
                                          encoding="utf-8")
    return folder, corpus


def test_duplicate_vocabulary_terms_are_refused(tmp_path):
    terms = list(Corpus(make_planted()[0]).vocabulary)
    terms[4] = terms[1]  # line 5 repeats line 2
    folder, _ = _counts_folder(tmp_path, terms)
    with pytest.raises(DatasetError, match=rf"repeats 1 term\(s\): '{terms[1]}' on lines 2, 5"):
        load_dataset(folder)
    with pytest.raises(ValueError, match="repeats 1 term"):
        Corpus(counts=sp.identity(3, format="csr"), vocabulary=["a", "b", "a"])


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


def test_vocabulary_for_a_counts_only_folder(tmp_path):
    folder, corpus = _counts_folder(tmp_path)
    assert load_dataset(folder).vocabulary[0] == "t0"
    vocab = tmp_path / "terms.txt"
    vocab.write_text("".join(f"{t}\n" for t in corpus.vocabulary), encoding="utf-8")
    assert list(load_dataset(folder, vocabulary=vocab).vocabulary) == list(corpus.vocabulary)
    assert list(load_dataset(folder, vocab=str(vocab)).vocabulary) == list(corpus.vocabulary)
    assert list(load_dataset(folder, vocabulary=list(corpus.vocabulary)).vocabulary) == \
        list(corpus.vocabulary)
    with pytest.raises(DatasetError, match="has 2 terms but counts.mtx has"):
        load_dataset(folder, vocabulary=["a", "b"])
    with pytest.raises(DatasetError, match="texts make their own vocabulary"):
        load_dataset(write_csv(tmp_path / "t.csv", [["a b"]], ["text"]), vocabulary=vocab)


# -- files: encodings and JSON ------------------------------------------------------------
@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le"])
def test_utf16_file_is_named(tmp_path, encoding):
    texts, labels = make_planted()
    path = tmp_path / "wide.csv"
    path.write_text("text,label\n" + "".join(f"{t},{y}\n" for t, y in zip(texts, labels)),
                    encoding=encoding)
    with pytest.raises(DatasetError, match=r"UTF-16.*encoding='utf-16' \(CLI: --encoding "
                                           r"utf-16\)") as info:
        load_dataset(path)
    assert "latin-1" not in str(info.value)
    if encoding == "utf-16":
        assert len(load_dataset(path, encoding="utf-16")) == len(texts)


def test_json_errors_keep_line_and_column(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[{"text": "a b"},\n {"text": "c d" "label": 1}]', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad\.json, line 2, column 17: not valid JSON"):
        load_dataset(path)
    lines = tmp_path / "bad.jsonl"
    lines.write_text('{"text": "a b"}\n{"text": "c d",, }\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"line 2, column 16: not valid JSON"):
        load_dataset(lines)


def test_jsonl_record_that_is_a_list(tmp_path):
    path = tmp_path / "list.jsonl"
    path.write_text('{"text": "a b"}\n["c d", "x"]\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"record 2 is a JSON array, not an object") as info:
        load_dataset(path)
    assert "text_column=" not in str(info.value)
    missing = write_jsonl(tmp_path / "m.jsonl", [{"body": "a b"}])
    with pytest.raises(DatasetError, match=r"text_column= \(CLI: --text-column\)"):
        load_dataset(missing)


# -- small corpora ----------------------------------------------------------------------
def test_min_df_adapts_to_small_corpora(tmp_path):
    four = ["apple banana cherry", "dates elder fig", "grape honeydew kiwi", "lemon mango"]
    corpus = load_dataset(write_csv(tmp_path / "four.csv", [[t] for t in four], ["text"]))
    assert corpus.min_df == 1 and corpus.min_df_automatic and corpus.n_terms == 11
    texts, _ = make_planted(docs_per_topic=20)  # 60 documents: min_df=2
    large = Corpus(texts)
    assert large.min_df == 2 and large.min_df_automatic
    given = Corpus(four, min_df=1)
    assert not given.min_df_automatic


# -- progress bars --------------------------------------------------------------------------
def test_progress_bar_is_finished_when_a_fit_stops_early(monkeypatch):
    from rich.console import Console

    import semnmf._utils.progress as progress

    buffer = io.StringIO()
    monkeypatch.setattr(progress, "_console", Console(file=buffer, force_terminal=True,
                                                      width=150))
    with progress.progress("fit", total=200) as bar:
        for _ in range(37):
            bar.advance(1, status="objective 1")
    last = buffer.getvalue().rsplit("\r", 1)[-1]
    assert "37/37" in last and "/200" not in last


def test_converged_fit_leaves_no_bar_short_of_its_total(monkeypatch):
    from rich.console import Console

    import semnmf
    import semnmf._utils.progress as progress

    buffer = io.StringIO()
    monkeypatch.setattr(progress, "_console", Console(file=buffer, force_terminal=True,
                                                      width=200))
    X = Corpus(make_planted()[0]).tfidf()
    model = semnmf.NMF(3, max_iter=500, tol=1e-3, random_state=0, verbose=1).fit(X)
    assert model.n_iter_ < 500
    last = buffer.getvalue().rsplit("\r", 1)[-1]
    assert f"{model.n_iter_}/{model.n_iter_}" in last and "converged" in last
    json.dumps(last)  # plain text
