"""Tests of semnmf.datasets: every source type of load_dataset, dataset folders, named
datasets ($SEMNMF_DATA), the built-in BBC corpus, the shared benchmark folders, and a
clear error for every kind of bad input."""

import json
import os
import re
import warnings

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from semnmf import Corpus, list_datasets, load_dataset
from semnmf.datasets import BUILTIN, DatasetError

from conftest import (FRENCH_SENTENCES, make_planted, shared_dataset_path, write_csv,
                      write_jsonl)


def assert_same_matrix(A, B):
    A, B = sp.csr_matrix(A), sp.csr_matrix(B)
    assert A.shape == B.shape
    assert (A != B).nnz == 0


def assert_same_corpus(corpus, texts, labels):
    """``corpus`` holds ``texts`` / ``labels`` in order and vectorizes them like Corpus does."""
    reference = Corpus(texts, labels)
    assert len(corpus) == len(texts)
    assert corpus.texts == list(texts)
    if labels is None:
        assert corpus.labels is None
    else:
        assert list(corpus.labels) == list(labels)
    assert list(corpus.vocabulary) == list(reference.vocabulary)
    assert_same_matrix(corpus.counts(), reference.counts())


# -- sources ----------------------------------------------------------------------------

def test_list_of_strings(planted):
    texts, _ = planted
    corpus = load_dataset(texts)
    assert isinstance(corpus, Corpus)
    assert_same_corpus(corpus, texts, None)
    assert list(corpus.ids) == [str(i) for i in range(len(texts))]
    # a tuple works the same, and vectorizing options are passed through
    small = load_dataset(tuple(texts), min_df=1, max_features=5)
    assert len(small) == len(texts) and small.n_terms == 5


def test_text_tree_with_label_folders(planted_tree, planted):
    texts, labels = planted
    (planted_tree / "sport" / ".DS_Store").write_bytes(b"\x00\x01 not text")  # hidden: skipped
    corpus = load_dataset(planted_tree)
    assert corpus.name == "tree"
    # documents come label folder by label folder (sorted), files sorted within a folder
    order = sorted(range(len(texts)), key=lambda i: (labels[i], i))
    assert_same_corpus(corpus, [texts[i] for i in order], [labels[i] for i in order])
    assert corpus.n_classes == 3
    assert list(corpus.ids) == [f"{labels[i]}/{i:03d}.txt" for i in order]


def test_flat_text_folder_has_no_labels(tmp_path, planted):
    texts, _ = planted
    folder = tmp_path / "flat"
    folder.mkdir()
    for i, text in enumerate(texts):
        (folder / f"doc{i:02d}.txt").write_text(text, encoding="utf-8")
    (folder / "README.md").write_text("not a document", encoding="utf-8")
    corpus = load_dataset(folder)
    assert_same_corpus(corpus, texts, None)
    assert corpus.labels is None and corpus.n_classes is None
    assert list(corpus.ids) == [f"doc{i:02d}.txt" for i in range(len(texts))]


def test_results_written_inside_a_text_folder_are_not_documents(tmp_path, planted):
    """`semnmf cluster flat/ --out flat/results` made the next run read the results
    folder as the only label folder (3 documents: its csv and json files), the 120
    texts unread without a word; a labelled folder gained a class "results"."""
    import warnings

    texts, labels = planted
    flat = tmp_path / "flat"
    flat.mkdir()
    for i, text in enumerate(texts):
        (flat / f"doc{i:02d}.txt").write_text(text, encoding="utf-8")
    for run in ("results", "semnmf_results/flat_nmf_k2", ".hidden"):
        (flat / run).mkdir(parents=True)
        (flat / run / "run.json").write_text("{}", encoding="utf-8")
    (flat / "semnmf_results" / "flat_nmf_k2" / "model").mkdir()
    (flat / "semnmf_results" / "flat_nmf_k2" / "model" / "model.json").write_text("{}")
    with pytest.warns(UserWarning, match=r"results, semnmf_results are not read: they hold "
                                         "semnmf results"):
        corpus = load_dataset(flat)
    assert_same_corpus(corpus, texts, None)
    # a label folder beside loose .txt files: the loose files are not read, and it says so
    (flat / "sport").mkdir()
    (flat / "sport" / "a.txt").write_text(texts[0], encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        corpus = load_dataset(flat)
    assert len(corpus) == 1 and list(corpus.labels) == ["sport"]
    assert any("doc00.txt" in str(w.message) and "one sub-folder of texts per label"
               in str(w.message) for w in caught)


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".json"])
def test_tables(tmp_path, planted, suffix):
    texts, labels = planted
    path = tmp_path / f"table{suffix}"
    if suffix in (".csv", ".tsv"):
        write_csv(path, zip(texts, labels), ["text", "label"],
                  delimiter="\t" if suffix == ".tsv" else ",")
    elif suffix == ".jsonl":
        write_jsonl(path, [{"text": t, "label": y} for t, y in zip(texts, labels)])
    else:  # a JSON array of records
        path.write_text(json.dumps([{"text": t, "label": y} for t, y in zip(texts, labels)]),
                        encoding="utf-8")
    corpus = load_dataset(path)
    assert corpus.name == "table"
    assert_same_corpus(corpus, texts, labels)


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_custom_columns_and_ids(tmp_path, planted, suffix):
    texts, labels = planted
    ids = [f"d{i}" for i in range(len(texts))]
    path = tmp_path / f"custom{suffix}"
    if suffix == ".csv":
        write_csv(path, zip(ids, labels, texts, labels[::-1]), ["id", "topic", "body", "label"])
    else:
        write_jsonl(path, [{"id": i, "topic": y, "body": t, "label": z}
                           for i, y, t, z in zip(ids, labels, texts, labels[::-1])])
    corpus = load_dataset(path, text_column="body", label_column="topic")
    assert_same_corpus(corpus, texts, labels)
    assert list(corpus.ids) == ids
    # without label_column, the "label" column is the default
    assert list(load_dataset(path, text_column="body").labels) == labels[::-1]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_table_without_label_column(tmp_path, planted, suffix):
    texts, _ = planted
    path = tmp_path / f"nolabel{suffix}"
    if suffix == ".csv":
        write_csv(path, [[t] for t in texts], ["text"])
    else:
        write_jsonl(path, [{"text": t} for t in texts])
    assert_same_corpus(load_dataset(path), texts, None)


def test_csv_fields_with_separators_quotes_and_line_breaks(tmp_path, planted):
    texts, labels = planted
    tricky = list(texts)
    tricky[0] = tricky[0] + ', "quoted", and\na second line'
    # form feed, U+2028 and NEL are not quoted by csv.writer: they must not split a row
    tricky[1] = tricky[1].replace(". ", ".\x0c", 1)
    tricky[2] = tricky[2].replace(". ", ".\u2028", 1)
    tricky[3] = tricky[3].replace(". ", ".\x85", 1)
    path = write_csv(tmp_path / "tricky.csv", zip(tricky, labels), ["text", "label"])
    corpus = load_dataset(path)
    assert len(corpus) == len(texts)
    assert corpus.texts == tricky
    assert list(corpus.labels) == labels


def test_csv_quote_never_closed_or_columns_named_twice(tmp_path):
    """An unmatched quote made the rest of the file one document (then "-k 2 is larger
    than the number of documents (1)"); a second "text" column silently won."""
    path = tmp_path / "open.csv"
    path.write_text('text,label\n"first row\nstill the first",a\nsecond,b\n'
                    '"never closed,c\nfourth,d\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"open.csv: the row that starts on line 5 opens a "
                                           r"quoted field that is never closed"):
        load_dataset(path)
    # a stray quote after a closed one is refused: the text would not be read as written
    path.write_text('text,label\n"apple" pie,a\napple tart,b\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"open.csv, line 2: not valid CSV"):
        load_dataset(path)
    path.write_text("text,text,label\nx,y,a\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"has 2 columns named 'text' \(columns 1, 2\): "
                                           "rename all but one"):
        load_dataset(path)
    path.write_text("text,note,note\napple pie,y,z\napple tart,v,w\n",
                    encoding="utf-8")  # a repeated column that is not read: fine
    assert load_dataset(path).texts == ["apple pie", "apple tart"]


def test_jsonl_with_raw_unicode_line_separators(tmp_path, planted):
    texts, labels = planted
    tricky = list(texts)
    tricky[0] = tricky[0].replace(". ", ".\u2028", 1)
    tricky[1] = tricky[1].replace(". ", ".\u2029\x85", 1)
    path = write_jsonl(tmp_path / "raw.jsonl", [{"text": t, "label": y}
                                                for t, y in zip(tricky, labels)],
                       ensure_ascii=False)
    corpus = load_dataset(path)
    assert corpus.texts == tricky


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_utf8_byte_order_mark_is_ignored(tmp_path, planted, suffix):
    texts, labels = planted
    path = tmp_path / f"bom{suffix}"
    if suffix == ".csv":
        write_csv(path, zip(texts, labels), ["text", "label"])
    else:
        write_jsonl(path, [{"text": t, "label": y} for t, y in zip(texts, labels)])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert_same_corpus(load_dataset(path), texts, labels)


# -- dataset folders ----------------------------------------------------------------------

def test_to_folder_round_trip(tmp_path, planted):
    texts, labels = planted
    original = Corpus(texts, labels, ids=[f"doc-{i}" for i in range(len(texts))],
                      stem="porter")
    folder = tmp_path / "planted"
    original.to_folder(folder)
    assert sorted(os.listdir(folder)) == ["counts.mtx", "docs.jsonl", "labels.txt", "vocab.txt"]
    loaded = load_dataset(folder)
    assert loaded.name == "planted"
    assert_same_matrix(loaded.counts(), original.counts())
    assert list(loaded.vocabulary) == list(original.vocabulary)
    assert list(loaded.labels) == list(original.labels)
    assert loaded.texts == original.texts
    assert list(loaded.ids) == list(original.ids)
    np.testing.assert_allclose(loaded.tfidf().toarray(), original.tfidf().toarray(), rtol=1e-12)
    # the token stream is rebuilt with the stemmer that matches the stored vocabulary
    seq_loaded, seq_original = loaded.sequences(), original.sequences()
    assert loaded.stem == "porter"
    np.testing.assert_array_equal(seq_loaded.tokens, seq_original.tokens)
    np.testing.assert_array_equal(seq_loaded.sent_ptr, seq_original.sent_ptr)
    # use_counts=False re-vectorizes the raw text (unstemmed by default)
    raw = load_dataset(folder, use_counts=False)
    assert list(raw.vocabulary) == list(Corpus(texts).vocabulary)


def test_to_folder_numeric_labels(tmp_path, planted):
    texts, labels = planted
    numeric = np.array([sorted(set(labels)).index(y) for y in labels])  # numpy int64
    Corpus(texts, numeric).to_folder(tmp_path / "numeric")
    loaded = load_dataset(tmp_path / "numeric")
    assert list(loaded.labels) == [str(y) for y in numeric]  # labels.txt holds text
    with open(tmp_path / "numeric" / "docs.jsonl", encoding="utf-8") as f:
        assert [json.loads(line)["label"] for line in f] == numeric.tolist()


@pytest.fixture
def counts_only_folder(tmp_path, planted):
    """A dataset folder with only counts.mtx (and labels.txt), from the planted corpus."""
    texts, labels = planted
    corpus = Corpus(texts, labels)
    folder = tmp_path / "countsonly"
    folder.mkdir()
    scipy.io.mmwrite(folder / "counts.mtx", corpus.counts())
    return folder, corpus


def test_counts_only_folder(counts_only_folder):
    folder, original = counts_only_folder
    corpus = load_dataset(folder)
    assert corpus.texts is None and corpus.labels is None
    assert corpus.n_terms == original.n_terms  # min_df=1: kept as distributed
    assert list(corpus.vocabulary) == [f"t{j}" for j in range(original.n_terms)]
    assert_same_matrix(corpus.counts(), original.counts())
    X = corpus.tfidf()
    np.testing.assert_allclose(X.toarray(), original.tfidf().toarray(), rtol=1e-12, atol=1e-15)
    M = corpus.word_context(context="document")
    M_ref = original.word_context(context="document")
    assert M.shape == (original.n_terms, original.n_terms)
    np.testing.assert_allclose(M.toarray(), M_ref.toarray(), rtol=1e-12, atol=1e-15)
    for context in ("window", "sentence"):
        with pytest.raises(ValueError, match=r"no raw text.*context='document'"):
            corpus.word_context(context=context)


def test_counts_only_folder_with_labels(counts_only_folder, planted):
    folder, _ = counts_only_folder
    _, labels = planted
    (folder / "labels.txt").write_text("".join(f"{y}\n" for y in labels), encoding="utf-8")
    corpus = load_dataset(folder)
    assert list(corpus.labels) == labels and corpus.n_classes == 3


def test_labels_length_mismatch(counts_only_folder, planted):
    folder, _ = counts_only_folder
    _, labels = planted
    (folder / "labels.txt").write_text("\n".join(labels[:-2]) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=rf"labels\.txt has {len(labels) - 2} lines but "
                                           rf"counts\.mtx has {len(labels)} rows"):
        load_dataset(folder)


def test_vocab_length_mismatch(counts_only_folder):
    folder, original = counts_only_folder
    (folder / "vocab.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"vocabulary has 2 terms .* {original.n_terms} columns"):
        load_dataset(folder)


def test_docs_jsonl_row_mismatch(counts_only_folder, planted):
    folder, _ = counts_only_folder
    texts, labels = planted
    # with or without labels, the message names both files (not the labels)
    for records in ([{"text": t} for t in texts[:5]],
                    [{"text": t, "label": y} for t, y in zip(texts, labels)][:5]):
        write_jsonl(folder / "docs.jsonl", records)
        with pytest.raises(DatasetError, match=rf"docs\.jsonl has 5 records but counts\.mtx "
                                               rf"has {len(texts)} rows: one record per"):
            load_dataset(folder)
    # a Corpus given both directly says the same in its own terms
    with pytest.raises(ValueError, match=rf"5 texts but the count matrix has {len(texts)} rows"):
        Corpus(texts[:5], counts=sp.random(len(texts), 4, density=0.5, format="csr",
                                           random_state=0))


def test_broken_matrix_market(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "counts.mtx").write_text("this is not matrix market\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="Matrix Market"):
        load_dataset(folder)


def test_counts_mtx_dense_or_refused_with_its_file_named(tmp_path, planted):
    texts, _ = planted
    counts = Corpus(texts).counts()
    folder = tmp_path / "dense"
    folder.mkdir()
    scipy.io.mmwrite(folder / "counts.mtx", counts.toarray())  # "array" format
    assert "array" in (folder / "counts.mtx").read_text().splitlines()[0]
    assert (load_dataset(folder).counts() != counts).nnz == 0

    def refused(matrix, message):
        scipy.io.mmwrite(folder / "counts.mtx", matrix)
        with pytest.raises(DatasetError, match=message):
            load_dataset(folder)

    where = re.escape(str(folder / "counts.mtx"))
    bad = counts.astype(float).tolil()
    bad[3, 1], bad[5, 2] = np.nan, np.inf
    refused(bad.tocsr(), rf"{where} holds 2 NaN or infinite value\(s\) \(the first in row 4\)")
    refused(sp.csr_matrix(counts.shape), rf"{where} holds no non-zero count: every one of its "
                                         rf"{counts.shape[0]} documents is empty")
    refused(counts.astype(complex) * 1j, rf"{where} holds complex values")
    huge = counts.astype(float)
    huge.data[-1] = 1e300
    refused(huge, rf"{where} holds values up to 1e\+300: too large to weight")


# -- named datasets -------------------------------------------------------------------------

def test_named_datasets_from_semnmf_data(tmp_path, monkeypatch, planted):
    texts, labels = planted
    root_a, root_b = tmp_path / "a", tmp_path / "b"
    Corpus(texts, labels).to_folder(root_a / "mini")
    Corpus(texts[:12]).to_folder(root_b / "other")
    (root_a / "not_a_dataset").mkdir()
    monkeypatch.setenv("SEMNMF_DATA", os.pathsep.join([str(root_a), str(tmp_path / "missing"),
                                                        str(root_b)]))
    monkeypatch.chdir(tmp_path)
    corpus = load_dataset("mini")
    assert corpus.name == "mini" and len(corpus) == len(texts)
    assert list(corpus.labels) == labels
    assert len(load_dataset("other")) == 12
    found = list_datasets()
    assert set(found) == set(BUILTIN) | {"mini", "other"}
    assert str(root_a / "mini") in found["mini"]
    with pytest.raises(DatasetError, match=r"no dataset named or found at 'not_a_dataset'"):
        load_dataset("not_a_dataset")


def test_list_datasets_without_semnmf_data(no_semnmf_data):
    found = list_datasets()
    assert set(found) == set(BUILTIN)
    assert "bbc" in found and "2225" in found["bbc"]


def test_shared_datasets_by_name(monkeypatch, shared_datasets):
    monkeypatch.setenv("SEMNMF_DATA", str(shared_datasets))
    names = set(list_datasets())
    expected = {d for d in os.listdir(shared_datasets)
                if os.path.exists(os.path.join(shared_datasets, d, "counts.mtx"))}
    assert expected <= names
    if "cstr" in names:
        assert load_dataset("cstr").n_documents == 475


# -- built-in and shared corpora --------------------------------------------------------------

@pytest.fixture(scope="module")
def bbc():
    return load_dataset("bbc")


def test_builtin_bbc(bbc):
    assert bbc.name == "bbc"
    assert len(bbc) == 2225
    assert sorted(set(bbc.labels)) == ["business", "entertainment", "politics", "sports", "tech"]
    assert bbc.n_classes == 5
    assert len(set(bbc.ids)) == 2225
    assert all(text.strip() for text in bbc.texts)
    X = bbc.tfidf()
    assert X.shape == (2225, bbc.n_terms) and bbc.n_terms > 10000
    assert load_dataset("BBC", min_df=100).n_terms < bbc.n_terms  # case and options


def test_builtin_bbc_matches_shared_folder(bbc):
    """The shared bbc folder was built from the same files with the same preprocessing."""
    shared = load_dataset(shared_dataset_path("bbc"))
    assert list(shared.vocabulary) == list(bbc.vocabulary)
    assert_same_matrix(shared.counts(), bbc.counts())
    assert list(shared.labels) == list(bbc.labels)
    assert list(shared.ids) == list(bbc.ids)
    assert [t.strip() for t in shared.texts] == [t.strip() for t in bbc.texts]


def test_shared_cstr():
    corpus = load_dataset(shared_dataset_path("cstr"))
    assert (corpus.n_documents, corpus.n_terms) == (475, 1000)  # kept as distributed
    raw = scipy.io.mmread(shared_dataset_path("cstr") / "counts.mtx")
    assert_same_matrix(corpus.counts(), raw)
    assert corpus.texts is None and corpus.n_classes == 4
    X = corpus.tfidf()
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    np.testing.assert_allclose(norms[norms > 0], 1.0)
    assert corpus.word_context(context="document").shape == (1000, 1000)
    with pytest.raises(ValueError, match="no raw text"):
        corpus.word_context(context="window")


def test_shared_classic4_porter_stream():
    corpus = load_dataset(shared_dataset_path("classic4"))
    assert corpus.n_documents == 7095 and corpus.n_classes == 4
    assert corpus.texts is not None and corpus.stem == "auto"
    seq = corpus.sequences()
    assert corpus.stem == "porter"  # the vocabulary is made of Porter stems
    counts = corpus.counts()
    total = counts.sum()
    # the stream rebuilt from the raw text covers (almost) all counted tokens
    assert 0.9 * total <= len(seq.tokens) <= 1.1 * total
    per_doc = np.diff(seq.doc_ptr)
    row_sums = np.asarray(counts.sum(axis=1)).ravel()
    assert len(per_doc) == 7095
    assert np.mean(np.abs(per_doc - row_sums) <= 0.1 * row_sums + 1) > 0.95


# -- bad input ---------------------------------------------------------------------------------

def test_empty_list():
    with pytest.raises(ValueError, match="empty: no documents"):
        load_dataset([])


@pytest.mark.parametrize("texts", [["", "  ", "\n"], ["the and of", "is it was", "of the"],
                                   ["123 456", "!!! ...", "42"]])
def test_empty_vocabulary(texts):
    with pytest.raises(ValueError, match="empty vocabulary"):
        load_dataset(texts)


def test_min_df_prunes_everything(planted):
    texts, _ = planted
    with pytest.raises(ValueError, match=r"no term is left after pruning with min_df=31"):
        load_dataset(texts, min_df=31)
    # every word in one document only: min_df=2 removes them all
    with pytest.raises(ValueError, match="no term is left after pruning"):
        load_dataset(["alpha beta", "gamma delta", "epsilon zeta"], min_df=2)


def test_min_df_prunes_everything_in_a_count_folder(counts_only_folder, planted):
    folder, _ = counts_only_folder
    with pytest.raises(ValueError, match="no term is left after pruning"):
        load_dataset(folder, min_df=len(planted[0]) + 1)


def test_missing_text_column_csv(planted_csv):
    with pytest.raises(DatasetError, match=r"no column 'body'; its columns are \['text', 'label'\]"):
        load_dataset(planted_csv, text_column="body")


def test_missing_text_column_jsonl(tmp_path, planted):
    texts, labels = planted
    path = write_jsonl(tmp_path / "t.jsonl", [{"content": t, "label": y}
                                              for t, y in zip(texts, labels)])
    with pytest.raises(DatasetError, match=r"record 1 has no field 'text' \(it has \['content', "
                                           r"'label'\]\)"):
        load_dataset(path)
    assert len(load_dataset(path, text_column="content")) == len(texts)


def test_missing_label_column(planted_csv, tmp_path, planted):
    with pytest.raises(DatasetError, match=r"no label column 'topic'; its columns are "
                                           r"\['text', 'label'\]"):
        load_dataset(planted_csv, label_column="topic")
    texts, labels = planted
    path = write_jsonl(tmp_path / "t.jsonl", [{"text": t, "label": y}
                                              for t, y in zip(texts, labels)])
    with pytest.raises(DatasetError, match="no label field 'topic'"):
        load_dataset(path, label_column="topic")


def test_invalid_json_line(tmp_path, planted):
    texts, _ = planted
    path = tmp_path / "bad.jsonl"
    lines = [json.dumps({"text": t}) for t in texts[:5]]
    lines[2] = lines[2][:-1]  # drop the closing brace of the third record
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad\.jsonl, line 3, column \d+: not valid JSON"):
        load_dataset(path)


def test_non_utf8_file(tmp_path, planted):
    texts, labels = planted
    path = tmp_path / "latin.csv"
    rows = [[t + " café", y] for t, y in zip(texts, labels)]
    with open(path, "w", newline="", encoding="latin-1") as f:
        f.write("text,label\n" + "".join(f"{t},{y}\n" for t, y in rows))
    with pytest.raises(DatasetError, match=r"not valid utf-8 \(byte 0xe9 at position 146\); it "
                                           r"looks like cp125[02]: pass encoding='cp125[02]'"):
        load_dataset(path)
    corpus = load_dataset(path, encoding="latin-1")
    assert corpus.texts == [t for t, _ in rows] and "café" in corpus.texts[0]
    with pytest.raises(DatasetError, match="unknown encoding 'no-such-codec'"):
        load_dataset(path, encoding="no-such-codec")


def test_non_utf8_text_tree(planted_tree):
    """A file of a folder that is not UTF-8 is read in the encoding found for it, and the
    run says so (it stopped the whole folder before)."""
    (planted_tree / "food" / "999.txt").write_bytes("crème brûlée recipe".encode("latin-1"))
    with pytest.warns(UserWarning, match=r"1 of 31 files are not UTF-8 and were read as "
                                         r"cp125[02] \(1\)"):
        corpus = load_dataset(planted_tree)
    assert "crème brûlée recipe" in corpus.texts
    assert "crème brûlée recipe" in load_dataset(planted_tree, encoding="latin-1").texts


def test_nonexistent_path_or_name(tmp_path, no_semnmf_data):
    with pytest.raises(DatasetError, match=r"no dataset named or found at 'no-such-corpus'.*"
                                           r"Built-in: bbc"):
        load_dataset("no-such-corpus")
    with pytest.raises(DatasetError, match="no dataset named or found"):
        load_dataset(tmp_path / "missing.csv")


def test_unknown_file_type_and_empty_folder(tmp_path):
    (tmp_path / "data.xlsx").write_bytes(b"PK\x03\x04")
    with pytest.raises(DatasetError, match=r"don't know how to read .*data\.xlsx"):
        load_dataset(tmp_path / "data.xlsx")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match="holds no text files"):
        load_dataset(tmp_path / "empty")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="file permissions do not stop root")
def test_unreadable_file(planted_csv):
    os.chmod(planted_csv, 0)
    try:
        with pytest.raises(DatasetError, match="cannot read .*planted.csv: Permission denied"):
            load_dataset(planted_csv)
    finally:
        os.chmod(planted_csv, 0o644)


def test_unreadable_file_message(planted_csv, monkeypatch):
    import semnmf.datasets.encodings

    def denied(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    # every text file is read through semnmf.datasets.encodings._read_text
    monkeypatch.setattr(semnmf.datasets.encodings, "open", denied, raising=False)
    with pytest.raises(DatasetError, match=r"cannot read .*planted\.csv: Permission denied"):
        load_dataset(planted_csv)


def test_empty_tables(tmp_path):
    (tmp_path / "header.csv").write_text("text,label\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="has no data rows"):
        load_dataset(tmp_path / "header.csv")
    (tmp_path / "empty.jsonl").write_text("\n\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="holds no records"):
        load_dataset(tmp_path / "empty.jsonl")


def test_non_string_texts(tmp_path):
    with pytest.raises(ValueError, match=r"texts must all be strings; document 1 is int"):
        load_dataset(["apple banana", 3, "banana apple"])
    with pytest.raises(ValueError, match="not a single string"):
        Corpus("apple banana apple banana")
    path = write_jsonl(tmp_path / "numbers.jsonl",
                       [{"text": "apple banana"}, {"text": "banana apple"}, {"text": 7.5}])
    with pytest.raises(ValueError, match="document 2 is float"):
        load_dataset(path)


def _counts_folder(path, labels=True, vocab=True):
    scipy.io.mmwrite(str(path / "counts.mtx"), sp.csr_matrix(np.eye(3)))
    if labels:
        (path / "labels.txt").write_text("a\nb\nc\n")
    if vocab:
        (path / "vocab.txt").write_text("x\ny\nz\n")
    return path


def test_check_source_options_refuses_raw_text_options_on_a_counts_folder(tmp_path):
    """A counts-only folder (counts.mtx, no docs.jsonl): the table and encoding options
    are refused from its file names alone, naming the option; other sources pass."""
    from semnmf.datasets import check_source_options

    folder = _counts_folder(tmp_path)
    check_source_options(folder)  # nothing given: nothing refused
    check_source_options(folder, encoding="latin-1")  # labels.txt / vocab.txt decoded
    from semnmf.cli.flags import CLI_WORDS

    for option, flag, given in [("text_column", "--text-column", {"text_column": "body"}),
                                ("label_column", "--label-column", {"label_column": "topic"})]:
        with pytest.raises(DatasetError, match=f"counts only.*: {option} applies"):
            check_source_options(folder, **given)
        with pytest.raises(DatasetError, match=f"counts only.*: {flag} applies"):
            check_source_options(folder, **given, words=CLI_WORDS)
    bare = tmp_path / "bare"
    bare.mkdir()
    _counts_folder(bare, labels=False, vocab=False)
    with pytest.raises(DatasetError, match="counts only.*encoding applies.*or vocabulary file"):
        check_source_options(bare, encoding="latin-1")
    with pytest.raises(DatasetError, match="counts only.*--encoding applies.*or --vocab file"):
        check_source_options(bare, encoding="latin-1", words=CLI_WORDS)
    check_source_options(bare, encoding="latin-1", vocabulary=str(folder / "vocab.txt"))
    (folder / "docs.jsonl").write_text('{"text": "x y"}\n{"text": "y"}\n{"text": "z"}\n')
    check_source_options(folder, text_column="body", label_column="topic",
                         encoding="latin-1")  # raw text: not this check's business
    write_csv(tmp_path / "t.csv", [["a b", "1"], ["c d", "2"]], ["text", "label"])
    check_source_options(tmp_path / "t.csv", text_column="text", encoding="latin-1")


def test_repeated_document_ids_are_warned(tmp_path, planted):
    texts, labels = planted
    ids = [f"d{i}" for i in range(len(texts))]
    ids[4] = ids[9] = "same"
    path = write_jsonl(tmp_path / "ids.jsonl", [{"text": t, "id": i}
                                                for t, i in zip(texts, ids)])
    with pytest.warns(UserWarning, match=r"1 document id\(s\) are used more than once "
                                         r"\('same'\); the results name documents by id"):
        assert list(load_dataset(path).ids) == ids
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_dataset(write_jsonl(tmp_path / "own.jsonl", [{"text": t} for t in texts]))


# -- language options, missing labels, vocabularies, encodings and JSON --------------------

def test_load_dataset_passes_language_options(tmp_path):
    path = write_csv(tmp_path / "fr.csv", [[t] for t in FRENCH_SENTENCES], ["text"])
    assert "économique" in load_dataset(path).vocabulary
    assert "le" in load_dataset(path, stop_words="none").vocabulary


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


def _planted_counts_folder(tmp_path, vocabulary=None, counts=None):
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
    folder, _ = _planted_counts_folder(tmp_path, terms)
    with pytest.raises(DatasetError, match=rf"repeats 1 term\(s\): '{terms[1]}' on lines 2, 5"):
        load_dataset(folder)
    with pytest.raises(ValueError, match="repeats 1 term"):
        Corpus(counts=sp.identity(3, format="csr"), vocabulary=["a", "b", "a"])


def test_vocabulary_for_a_counts_only_folder(tmp_path):
    folder, corpus = _planted_counts_folder(tmp_path)
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
