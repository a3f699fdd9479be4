"""Newcomer findings of issue 35 (item 6), each with the test that failed before its fix:
binary files, a full disk and a read-only report folder, one .txt document to assign,
column options on a folder, identical documents, redirected output, the -k auto curve,
French texts under the English stop list, cluster colours and wide tree pictures."""

import csv
import errno
import gzip
import json
import os
import re
import struct
import zlib

import pytest
import scipy.sparse as sp

from semnmf.cli import main

from conftest import make_planted, write_csv

FAST = ["--max-iter", "30", "-q"]


def one_error(capsys):
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("semnmf: error: "), lines
    return lines[0]


def read_run(out):
    with open(os.path.join(out, "run.json"), encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture
def planted_csv_path(tmp_path):
    texts, labels = make_planted()
    return str(write_csv(tmp_path / "planted.csv", zip(texts, labels), ["text", "label"]))


def _png():
    rows = b"".join(b"\x00" + bytes([i, 2 * i % 256, 3 * i % 256]) * 8 for i in range(8))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


# -- 1. a binary file is not UTF-16 -----------------------------------------------------

def test_binary_files_are_named_binary_not_utf16_and_no_encoding_circles(tmp_path, capsys,
                                                                         planted_csv_path):
    packed = tmp_path / "docs.csv"
    with gzip.open(packed, "wb") as f:
        f.write(open(planted_csv_path, "rb").read())
    folder = tmp_path / "texts"
    folder.mkdir()
    for i, text in enumerate(make_planted()[0][:6]):
        (folder / f"{i}.txt").write_text(text, encoding="utf-8")
    picture = folder / "picture.txt"
    picture.write_bytes(_png())
    assert main(["cluster", str(folder), "-k", "2", "--out", str(tmp_path / "o"), *FAST]) == 2
    assert "picture.txt looks like a binary file (PNG image), not text" in one_error(capsys)
    for source, kind in ((packed, "gzip"), (picture, "PNG image")):
        for extra in ([], ["--encoding", "utf-16"], ["--encoding", "latin-1"]):
            assert main(["cluster", str(source), "-k", "2", *extra,
                         "--out", str(tmp_path / "o"), *FAST]) == 2
            message = one_error(capsys)
            assert f"looks like a binary file ({kind}), not text" in message, message
            assert "UTF-16" not in message and "--encoding" not in message
    # a real UTF-16 file without byte-order mark is still told to be UTF-16
    texts, labels = make_planted()
    wide = tmp_path / "wide.csv"
    wide.write_bytes(("text,label\n" + "".join(f"{t},{y}\n" for t, y in zip(texts, labels)))
                     .encode("utf-16-le"))
    assert main(["cluster", str(wide), "-k", "3", "--out", str(tmp_path / "w"), *FAST]) == 2
    assert "--encoding utf-16" in one_error(capsys)


# -- 2. a full disk, a read-only report folder --------------------------------------------

def test_a_full_disk_names_the_folder_and_leaves_no_partial_run(tmp_path, capsys, monkeypatch,
                                                               planted_csv_path):
    from semnmf.pipelines.saved import SavedModel

    def full(self, path):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(SavedModel, "save", full)
    out = tmp_path / "runs" / "out"
    assert main(["cluster", planted_csv_path, "-k", "3", "--out", str(out), *FAST]) == 2
    message = one_error(capsys)
    assert str(out) in message and "No space left on device" in message
    assert not out.exists()
    assert os.listdir(out.parent) == []  # no temporary folder left either
    # over an earlier run (--overwrite): the earlier run stays whole
    monkeypatch.undo()
    assert main(["cluster", planted_csv_path, "-k", "3", "--out", str(out), *FAST]) == 0
    before = sorted(os.listdir(out))
    monkeypatch.setattr(SavedModel, "save", full)
    assert main(["cluster", planted_csv_path, "-k", "2", "--out", str(out), "--overwrite",
                 *FAST]) == 2
    assert str(out) in one_error(capsys)
    assert sorted(os.listdir(out)) == before and read_run(out)["cluster_sizes"].keys() == {
        "0", "1", "2"}
    assert sorted(os.listdir(out.parent)) == ["out"]


def test_report_into_a_read_only_folder_fails_before_reading_the_corpus(
        tmp_path, capsys, monkeypatch, planted_csv_path):
    import tempfile

    out = tmp_path / "run"
    assert main(["cluster", planted_csv_path, "-k", "3", "--out", str(out), *FAST]) == 0
    real = tempfile.TemporaryFile

    def read_only(*args, dir=None, **kwargs):
        if dir is not None and os.path.abspath(dir) == str(out):
            raise PermissionError(errno.EROFS, "Read-only file system")
        return real(*args, dir=dir, **kwargs)

    def no_reading(*args, **kwargs):
        raise AssertionError("the corpus was read before the folder was checked")

    monkeypatch.setattr(tempfile, "TemporaryFile", read_only)
    monkeypatch.setattr("semnmf.datasets.load_dataset", no_reading)
    assert main(["report", str(out), "-q"]) == 2
    message = one_error(capsys)
    assert str(out) in message and "Read-only file system" in message
    assert ".tmp" not in message


# -- 3. one .txt document ---------------------------------------------------------------

def test_assign_takes_one_txt_document(tmp_path, capsys, planted_csv_path):
    out = tmp_path / "run"
    assert main(["cluster", planted_csv_path, "-k", "3", "--out", str(out), *FAST]) == 0
    one = tmp_path / "one_doc.txt"
    one.write_text("the rocket and the telescope saw a galaxy near the moon", encoding="utf-8")
    assert main(["assign", str(out), str(one), "--out", str(tmp_path / "a"), "-q"]) == 0
    with open(tmp_path / "a" / "assignments.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [row["doc"] for row in rows] == ["one_doc.txt"]
    planted = {row["doc"]: row["cluster"] for row in csv.DictReader(
        open(out / "assignments.csv", newline="", encoding="utf-8"))}
    space = [doc for doc, label in zip(planted, make_planted()[1]) if label == "space"]
    assert rows[0]["cluster"] == planted[space[0]]


# -- 4. column options on a folder --------------------------------------------------------

@pytest.mark.parametrize("option", ["--text-column", "--label-column"])
def test_column_options_on_a_folder_are_refused(tmp_path, capsys, option):
    folder = tmp_path / "texts"
    folder.mkdir()
    for i, text in enumerate(make_planted()[0]):
        (folder / f"{i}.txt").write_text(text, encoding="utf-8")
    assert main(["cluster", str(folder), "-k", "3", option, "body",
                 "--out", str(tmp_path / "o"), *FAST]) == 2
    message = one_error(capsys)
    assert message.startswith(f"semnmf: error: {option} names a column") and "drop it" in message


# -- 5. identical documents ---------------------------------------------------------------

def test_identical_documents_are_said_once_and_the_result_is_called_degenerate(tmp_path,
                                                                               capsys):
    source = write_csv(tmp_path / "same.csv",
                       [["the football match ended with a late goal by the home team"]] * 20,
                       ["text"])
    out = tmp_path / "o"
    assert main(["cluster", str(source), "-k", "3", "--out", str(out), "--max-iter", "30"]) == 0
    captured = capsys.readouterr()
    warnings = [line for line in captured.err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == len(set(warnings)) == 2, warnings
    assert sum("19 of the 20 documents repeat another exactly" in w for w in warnings) == 1
    assert not any("n_components" in w or " X" in w for w in warnings)
    assert "NPMI 1.0000" not in captured.out and "NPMI" not in captured.out
    assert "the result is degenerate" in captured.out
    run = read_run(out)
    assert run["data"]["n_duplicate_documents"] == 19 and run["degenerate"]
    assert run["topic_quality"] is None


# -- 6. redirected output -----------------------------------------------------------------

def test_redirected_output_keeps_whole_lines(tmp_path, capsys, planted_csv_path):
    assert main(["cluster", planted_csv_path, "-k", "3", "--max-iter", "30", "--top", "30",
                 "--out", str(tmp_path / "o")]) == 0
    captured = capsys.readouterr()
    assert "…" not in captured.err and "…" not in captured.out
    assert re.search(r"the best of 5 starts.*converged after \d+ iterations", captured.err)
    rows = [line for line in captured.out.splitlines() if "food (" in line]
    assert len(rows) == 1 and all(word in rows[0] for word in ("garlic", "spice", "bake"))


# -- 7. -k auto shows the curve it chooses on ----------------------------------------------

def test_k_auto_prints_and_records_the_scores_it_chooses_on(tmp_path, capsys):
    texts, labels = make_planted(15)
    source = write_csv(tmp_path / "p.csv", zip(texts, labels), ["text", "label"])
    out = tmp_path / "auto"
    assert main(["cluster", str(source), "-k", "2:5", "--method", "nmf", "--max-iter", "20",
                 "--out", str(out)]) == 0
    err = capsys.readouterr().err
    selection = read_run(out)["k_selection"]
    assert "rescaled" in selection["name"] and "|log(k/8)|" in selection["name"]
    assert selection["name"] in err
    printed = {int(k): float(v) for k, v in re.findall(r"k=(\d+): score (-?[\d.]+)", err)}
    assert printed == {k: pytest.approx(s, abs=6e-4)
                       for k, s in zip(selection["candidates"], selection["scores"])}
    best = max(printed, key=printed.get)
    assert best == selection["chosen"] and f"k={best}: score" in err.split("<- chosen")[0]
    assert len(selection["curves"][selection["criterion"]]) == len(selection["candidates"])


# -- 8. French texts under the English stop list --------------------------------------------

FRENCH = {
    "sport": "football match but équipe joueur entraîneur ligue saison stade victoire".split(),
    "cuisine": "recette cuisine saveur sauce ail four dîner épice gâteau beurre".split(),
    "espace": "planète orbite fusée télescope galaxie astronaute lancement lune étoile nasa"
              .split(),
}
FUNCTION_WORDS = "la les le est une des par".split()


def _french_csv(tmp_path):
    import random

    rng = random.Random(0)
    rows = []
    for label, words in FRENCH.items():
        for _ in range(20):
            text = " ".join(rng.choice(words) if i % 3 == 0 else rng.choice(FUNCTION_WORDS)
                            for i in range(60))
            rows.append([text, label])
    return write_csv(tmp_path / "fr.csv", rows, ["text", "label"])


def test_french_function_words_get_a_hint_and_a_stop_word_file_removes_them(tmp_path, capsys):
    source = _french_csv(tmp_path)
    # the French list, detected: the function words are gone and no hint is needed
    assert main(["cluster", str(source), "-k", "3", "--out", str(tmp_path / "auto"),
                 "--method", "nmf", *FAST]) == 0
    captured = capsys.readouterr()
    assert "--max-df 0.3" not in captured.err
    assert read_run(tmp_path / "auto")["language"]["language"] == "fr"
    with open(tmp_path / "auto" / "topics.csv", newline="", encoding="utf-8") as f:
        assert not {row["term"] for row in csv.DictReader(f)} & set(FUNCTION_WORDS)
    # under the English list they dominate, and the run says what to do
    assert main(["cluster", str(source), "-k", "3", "--out", str(tmp_path / "a"),
                 "--method", "nmf", "--language", "english", *FAST]) == 0
    captured = capsys.readouterr()
    hints = [line for line in captured.err.splitlines() if "--max-df 0.3" in line]
    assert len(hints) == 1 and "--stop-words FILE" in hints[0]
    assert read_run(tmp_path / "a")["hints"]
    stop = tmp_path / "french.txt"
    stop.write_text("# mots vides\n" + "\n".join(FUNCTION_WORDS) + "\n", encoding="utf-8")
    for extra in (["--language", "english"], ["--language", "none"]):
        out = tmp_path / f"b{extra[1]}"
        assert main(["cluster", str(source), "-k", "3", "--out", str(out), "--method", "nmf",
                     "--stop-words", str(stop), *extra, *FAST]) == 0
        captured = capsys.readouterr()
        assert "--max-df" not in captured.err
        with open(out / "topics.csv", newline="", encoding="utf-8") as f:
            terms = {row["term"] for row in csv.DictReader(f)}
        assert not terms & set(FUNCTION_WORDS)
        assert read_run(out)["cli_arguments"]["stop_words_file"] == str(stop)
        # the saved model tokenizes new texts with the same stop words
        assert main(["assign", str(out), str(source), "--out", str(out / "again"), "-q"]) == 0
        with open(out / "assignments.csv", newline="", encoding="utf-8") as f, \
                open(out / "again" / "assignments.csv", newline="", encoding="utf-8") as g:
            assert ([r["cluster"] for r in csv.DictReader(f)]
                    == [r["cluster"] for r in csv.DictReader(g)])
    assert main(["cluster", str(source), "-k", "3", "--stop-words", str(tmp_path / "nope"),
                 "--out", str(tmp_path / "c"), *FAST]) == 2
    assert "--stop-words" in one_error(capsys)


def test_no_frequent_word_hint_on_ordinary_topics(tmp_path, capsys, planted_csv_path):
    assert main(["cluster", planted_csv_path, "-k", "3", "--out", str(tmp_path / "o"),
                 *FAST]) == 0
    assert "--max-df" not in capsys.readouterr().err


# -- 9. colours and tree pictures ----------------------------------------------------------

def test_cluster_colours_never_repeat():
    from semnmf.report._page import _colors

    for k in (5, 20, 21, 45, 100):
        colors = _colors(list(range(k)))
        assert len({colors[c] for c in range(k)}) == k


def test_a_wide_tree_picture_stays_under_3000_pixels():
    from semnmf import HierarchicalNMF
    from semnmf.report.tree import plot_tree

    blocks = [sp.random(12, 8, density=0.6, random_state=i, format="csr") for i in range(24)]
    X = sp.block_diag(blocks, format="csr") + sp.random(288, 192, density=0.01,
                                                         random_state=99)
    X = sp.csr_matrix(X)
    tree = HierarchicalNMF(n_components=23, random_state=0).fit(X)
    n_leaves = len(tree.leaves_)
    assert n_leaves >= 20
    vocabulary = [f"word{j}" for j in range(X.shape[1])]
    width, height = plot_tree(tree, vocabulary).get_size_inches() * 150
    assert width <= 3000 and height < 2000
    small = HierarchicalNMF(n_components=3, random_state=0).fit(X)
    assert plot_tree(small, vocabulary).get_size_inches()[0] * 150 < 1500
