"""The command-line side of a new user's findings (issue "From a run to a result people
use", part 5): accented words and --language, unlabelled documents, --lam bounds,
--out / --overwrite, every option checked before any data is read, options that do not
apply refused, --vocab, repeated vocabulary terms, non-integer counts, UTF-16 files,
defaults in --help, small corpora."""

import csv
import json
import os

import pytest
import scipy.io
from sklearn.metrics import normalized_mutual_info_score

import semnmf.datasets
from semnmf import Corpus
from semnmf.cli import main
from semnmf.cli.main import build_parser

from conftest import make_planted, write_csv, write_jsonl

FAST = ["--max-iter", "30", "-q"]


def read_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def read_run(out):
    with open(os.path.join(out, "run.json"), encoding="utf-8") as f:
        return json.load(f, parse_constant=lambda c: pytest.fail(f"run.json holds {c}"))


def one_error(capsys):
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("semnmf: error: "), lines
    return lines[0]


@pytest.fixture
def planted_csv_path(tmp_path):
    texts, labels = make_planted()
    return str(write_csv(tmp_path / "planted.csv", zip(texts, labels), ["text", "label"]))


def test_accented_words_reach_the_topics(tmp_path):
    words = {"a": "café réforme économique marché".split(),
             "b": "élève école été forêt".split()}
    texts = [" ".join(words[y] * 3) + " le la" for y in "ab" * 6]
    path = write_csv(tmp_path / "fr.csv", [[t] for t in texts], ["text"])
    out = tmp_path / "out"
    assert main(["cluster", str(path), "-k", "2", "--method", "nmf", "--out", str(out),
                 *FAST]) == 0
    terms = {row["term"] for row in read_rows(out / "topics.csv")}
    assert {"café", "réforme", "économique", "école", "forêt"} <= terms
    assert main(["cluster", str(path), "-k", "2", "--method", "nmf", "--language", "none",
                 "--out", str(tmp_path / "none"), *FAST]) == 0
    assert "le" in {row["term"] for row in read_rows(tmp_path / "none" / "topics.csv")}
    assert read_run(tmp_path / "none")["cli_arguments"]["language"] == "none"


def test_unlabelled_documents_are_left_out_of_the_scores(tmp_path):
    texts, labels = make_planted()
    labels = [("" if i % 5 == 0 else y) for i, y in enumerate(labels)]  # 6 unlabelled
    path = write_csv(tmp_path / "p.csv", zip(texts, labels), ["text", "label"])
    out = tmp_path / "out"
    assert main(["cluster", str(path), "-k", "3", "--out", str(out), *FAST]) == 0
    run = read_run(out)
    rows = read_rows(out / "assignments.csv")
    known = [(r["label"], r["cluster"]) for r in rows if r["label"]]
    assert len(known) == 24 and run["data"]["n_unlabelled"] == 6
    expected = normalized_mutual_info_score(*zip(*known))
    assert run["scores"]["nmi"] == pytest.approx(expected)
    assert run["scores"]["nmi"] > 0.9


def test_huge_lam_is_refused_before_any_work(planted_csv_path, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["cluster", planted_csv_path, "-k", "3", "--lam", "1e308",
                 "--out", str(out), *FAST]) == 2
    assert "--lam must be between 0 and 1e+06" in one_error(capsys)
    assert not out.exists()


def test_out_folder_with_an_earlier_run(planted_csv_path, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["cluster", planted_csv_path, "-k", "3", "--method", "nmf", "--consensus",
                 "mmm", "--runs", "3", "--out", str(out), *FAST]) == 0
    assert (out / "partitions.csv").exists()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    before = (out / "run.json").read_bytes()
    assert main(["cluster", planted_csv_path, "-k", "3", "--out", str(out), *FAST]) == 2
    message = one_error(capsys)
    assert "already holds the results of another run" in message and "--overwrite" in message
    assert (out / "run.json").read_bytes() == before  # untouched
    assert main(["cluster", planted_csv_path, "-k", "3", "--out", str(out), "--overwrite",
                 *FAST]) == 0
    assert not (out / "partitions.csv").exists()      # the earlier run's file is gone
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"  # not ours: kept
    assert read_run(out)["method"] == "snmf-robust"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["cluster", planted_csv_path, "-k", "3", "--out", str(empty), *FAST]) == 0


def test_tree_out_folder_needs_overwrite(planted_csv_path, tmp_path, capsys):
    out = tmp_path / "tree"
    assert main(["cluster", planted_csv_path, "-k", "3", "--out", str(out), *FAST]) == 0
    assert main(["tree", planted_csv_path, "--leaves", "3", "--out", str(out), "-q"]) == 2
    assert "--overwrite" in one_error(capsys)
    assert main(["tree", planted_csv_path, "--leaves", "3", "--out", str(out), "-q",
                 "--overwrite"]) == 0
    assert not (out / "topics.csv").exists() and (out / "tree.json").exists()


BAD_OPTIONS = {
    "out is a file": (["--out", "{file}"], "--out {file} is a file"),
    "top 0": (["--top", "0"], "--top must be at least 1"),
    "negative seed": (["--seed", "-5"], "--seed must be between 0 and"),
    "huge seed": (["--seed", str(2**40)], "--seed must be between 0 and"),
    "last seeds of runs": (["--seed", str(2**32 - 1), "--consensus", "mmm", "--runs", "3"],
                           "--seed 4294967295 with --runs 3 needs the seeds up to 4294967297"),
    "negative lam": (["--lam", "-1"], "--lam must be between 0 and"),
    "nan lam": (["--lam", "nan"], "--lam must be a finite number"),
    "graph lam": (["--method", "gnmf", "--graph-lam", "-2"], "--graph-lam must be between"),
    "max-iter": (["--max-iter", "0"], "--max-iter must be at least 1"),
    "tol": (["--tol", "-1"], "--tol must be at least 0"),
    "n-init": (["--n-init", "0"], "--n-init must be at least 1"),
    "min-df": (["--min-df", "0"], "--min-df must be at least 1"),
    "max-df": (["--max-df", "1.5"], "--max-df is a fraction"),
    "window": (["--window", "0"], "--window must be at least 1"),
    "min-count": (["--min-count", "0"], "--min-count must be at least 1"),
    "top-k": (["--top-k", "0"], "--top-k must be at least 1"),
    "encoding": (["--encoding", "klingon"], "--encoding: unknown encoding"),
    "token pattern": (["--token-pattern", "([a-z"], "--token-pattern"),
    "vocab file": (["--vocab", "{missing}"], "--vocab"),
    "runs": (["--consensus", "mmm", "--runs", "1"], "--runs must be at least 2"),
    "refine one cluster": (["-k", "1", "--refine", "gt"], "--refine gt needs at least 2 "
                                                           "clusters"),
    "k candidates below 2": (["-k", "1,3"], "-k: the candidates must be at least 2 (one "
                                             "cluster needs no choice); got 1, 3."),
}


@pytest.mark.parametrize("case", sorted(BAD_OPTIONS))
def test_options_are_checked_before_loading(case, planted_csv_path, tmp_path, capsys,
                                            monkeypatch):
    def no_loading(*args, **kwargs):
        raise AssertionError("the data was loaded before the options were checked")

    monkeypatch.setattr(semnmf.datasets, "load_dataset", no_loading)
    monkeypatch.chdir(tmp_path)
    file = tmp_path / "a_file"
    file.write_text("x", encoding="utf-8")
    names = {"file": str(file), "missing": str(tmp_path / "missing.txt")}
    options, pattern = BAD_OPTIONS[case]
    options = [o.format(**names) for o in options]
    if "--out" not in options:
        options += ["--out", str(tmp_path / "out")]
    assert main(["cluster", planted_csv_path, "-k", "3", *options, "-q"]) == 2
    assert pattern.format(**names) in one_error(capsys)
    assert sorted(os.listdir(tmp_path)) == ["a_file", "planted.csv"]


NOT_APPLYING = {
    "init with skmeans": (["--method", "skmeans", "--init", "random"], "--init"),
    "runs without consensus": (["--runs", "5"], "--runs applies to many runs"),
    "keep without consensus": (["--keep", "3"], "--keep applies to many runs"),
    "loss with skmeans": (["--method", "skmeans", "--loss", "frobenius"], "--loss"),
    "context with nmf": (["--method", "nmf", "--context", "window"], "--context"),
    "window with nmf": (["--method", "nmf", "--window", "5"], "--window"),
    "window with document": (["--context", "document", "--window", "5"], "--window"),
    "lam-scale with nmf": (["--method", "nmf", "--lam-scale", "absolute"], "--lam-scale"),
    "embed without semantics": (["--semantics", "none", "--embed", "words"], "--embed"),
    "lam with nmf": (["--method", "nmf", "--lam", "1"], "--lam"),
}


@pytest.mark.parametrize("case", sorted(NOT_APPLYING))
def test_options_that_do_not_apply_are_refused(case, planted_csv_path, tmp_path, capsys):
    options, option = NOT_APPLYING[case]
    out = tmp_path / "out"
    assert main(["cluster", planted_csv_path, "-k", "3", *options, "--out", str(out),
                 *FAST]) == 2
    assert option in one_error(capsys)
    assert not out.exists()


@pytest.mark.parametrize("options, option", [(["--lam", "1"], "--lam"),
                                             (["--window", "3"], "--window"),
                                             (["--association", "ppmi"], "--association")])
def test_tree_refuses_semantic_options_without_the_semantic_splitter(
        options, option, planted_csv_path, tmp_path, capsys):
    assert main(["tree", planted_csv_path, "--leaves", "3", *options,
                 "--out", str(tmp_path / "out"), "-q"]) == 2
    assert option in one_error(capsys)
    assert main(["tree", planted_csv_path, "--leaves", "3", "--splitter", "semantic",
                 *options, "--out", str(tmp_path / "ok"), "-q"]) == 0


def _counts_folder(tmp_path, vocabulary=None, scale=1):
    texts, labels = make_planted()
    corpus = Corpus(texts)
    folder = tmp_path / "counts_folder"
    folder.mkdir()
    counts = corpus.counts()
    counts.data = counts.data * scale
    scipy.io.mmwrite(folder / "counts.mtx", counts)
    (folder / "labels.txt").write_text("".join(f"{y}\n" for y in labels), encoding="utf-8")
    if vocabulary is not None:
        (folder / "vocab.txt").write_text("".join(f"{t}\n" for t in vocabulary),
                                          encoding="utf-8")
    return folder, corpus


def test_vocab_option_names_the_terms_of_a_counts_only_folder(tmp_path, capsys):
    folder, corpus = _counts_folder(tmp_path)
    vocab = tmp_path / "terms.txt"
    vocab.write_text("".join(f"{t}\n" for t in corpus.vocabulary), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["cluster", str(folder), "-k", "3", "--vocab", str(vocab), "--out", str(out),
                 *FAST]) == 0
    terms = {row["term"] for row in read_rows(out / "topics.csv")}
    assert terms <= set(corpus.vocabulary) and "football" in terms


def test_duplicate_vocabulary_terms_are_refused(tmp_path, capsys):
    terms = list(Corpus(make_planted()[0]).vocabulary)
    terms[6], terms[9] = terms[0], terms[2]
    folder, _ = _counts_folder(tmp_path, terms)
    out = tmp_path / "out"
    assert main(["cluster", str(folder), "-k", "3", "--out", str(out), *FAST]) == 2
    message = one_error(capsys)
    assert f"repeats 2 term(s): '{terms[0]}' on lines 1, 7; '{terms[2]}' on lines 3, 10" in message
    assert not out.exists()


def test_non_integer_counts_are_warned(tmp_path, capsys):
    folder, corpus = _counts_folder(tmp_path, list(Corpus(make_planted()[0]).vocabulary),
                                    scale=0.37)
    assert main(["cluster", str(folder), "-k", "3", "--out", str(tmp_path / "a"),
                 "--max-iter", "30"]) == 0
    err = capsys.readouterr().err
    assert "non-integer values" in err and "--weighting counts" in err
    assert main(["cluster", str(folder), "-k", "3", "--weighting", "counts",
                 "--out", str(tmp_path / "b"), "--max-iter", "30"]) == 0
    assert "non-integer" not in capsys.readouterr().err


def test_window_on_a_counts_only_corpus_is_warned(tmp_path, capsys):
    folder, corpus = _counts_folder(tmp_path, list(Corpus(make_planted()[0]).vocabulary))
    out = tmp_path / "out"
    assert main(["cluster", str(folder), "-k", "3", "--window", "5", "--out", str(out),
                 "--max-iter", "30"]) == 0
    err = capsys.readouterr().err
    assert "--window 5 has no effect" in err and "document contexts" in err
    run = read_run(out)
    assert run["context"]["context"] == "document"
    assert not any(key.startswith("_") for key in run["cli_arguments"])
    # without --window, no notice
    assert main(["cluster", str(folder), "-k", "3", "--out", str(tmp_path / "b"),
                 "--max-iter", "30"]) == 0
    assert "has no effect" not in capsys.readouterr().err


def test_utf16_and_json_advice_names_the_cli_options(tmp_path, capsys):
    texts, labels = make_planted()
    wide = tmp_path / "wide.csv"
    wide.write_text("text,label\n" + "".join(f"{t},{y}\n" for t, y in zip(texts, labels)),
                    encoding="utf-16")
    assert main(["cluster", str(wide), "-k", "3", "--out", str(tmp_path / "o"), *FAST]) == 2
    message = one_error(capsys)
    assert "UTF-16" in message and "--encoding utf-16" in message and "latin-1" not in message
    assert main(["cluster", str(wide), "-k", "3", "--encoding", "utf-16",
                 "--out", str(tmp_path / "o"), *FAST]) == 0
    body = write_jsonl(tmp_path / "b.jsonl", [{"body": t} for t in texts])
    assert main(["cluster", str(body), "-k", "3", "--out", str(tmp_path / "p"), *FAST]) == 2
    assert "--text-column" in one_error(capsys)
    # the other way round: --encoding utf-16 on a UTF-8 file (a bare "UTF-16 stream does
    # not start with BOM" before)
    assert main(["cluster", str(body), "-k", "3", "--encoding", "utf-16",
                 "--out", str(tmp_path / "p"), *FAST]) == 2
    assert one_error(capsys) == (f"semnmf: error: {body} is not valid utf-16 but is valid "
                                 "UTF-8: drop encoding= (CLI: --encoding).")
    plain = tmp_path / "plain.csv"
    plain.write_text("text,label\n" + "".join(f"{t},{y}\n" for t, y in zip(texts, labels)),
                     encoding="utf-8")
    assert main(["cluster", str(plain), "-k", "3", "--encoding", "utf-16",
                 "--out", str(tmp_path / "p"), *FAST]) == 2
    assert one_error(capsys) == (f"semnmf: error: {plain} is not valid utf-16 but is valid "
                                 "UTF-8: drop encoding= (CLI: --encoding).")


def _options(command):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return sub, [a for a in sub._actions if a.option_strings and a.nargs != 0
                 and not a.required and a.dest != "help"]


@pytest.mark.parametrize("command", ["cluster", "tree"])
def test_help_shows_every_default(command):
    sub, options = _options(command)
    missing = [a.option_strings[-1] for a in options if "default" not in (a.help or "")]
    assert not missing, f"no default in the help of {missing}"
    for name in ("--max-iter", "--tol", "--min-count", "--top-k", "--top"):
        assert any(name in a.option_strings for a in options)


def test_cluster_help_says_how_to_choose_k(capsys):
    with pytest.raises(SystemExit):
        main(["cluster", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Choosing K" in text and "too small a K" in text and "(default 200)" in text


def test_small_corpus_clusters_and_records_min_df(tmp_path):
    four = ["apple banana cherry apple", "banana apple cherry", "grape kiwi lemon grape",
            "lemon kiwi grape"]
    path = write_csv(tmp_path / "four.csv", [[t] for t in four], ["text"])
    out = tmp_path / "out"
    assert main(["cluster", str(path), "-k", "2", "--method", "nmf", "--out", str(out),
                 *FAST]) == 0
    run = read_run(out)
    assert run["data"]["min_df"] == 1 and run["data"]["min_df_automatic"] is True
    assert len(read_rows(out / "assignments.csv")) == 4
    assert main(["cluster", str(path), "-k", "2", "--method", "nmf", "--min-df", "1",
                 "--out", str(tmp_path / "given"), *FAST]) == 0
    assert read_run(tmp_path / "given")["data"]["min_df_automatic"] is False


def test_texts_that_never_match_the_vocabulary_warn_on_one_line(tmp_path, capsys):
    """A counts folder whose docs.jsonl words are not its vocabulary (no vocab.txt: the
    terms are t0, t1, ...) gives an empty M: the run says so, as one line, instead of
    quietly fitting without the word-context term."""
    texts, labels = make_planted()
    folder = tmp_path / "novocab"
    folder.mkdir()
    scipy.io.mmwrite(folder / "counts.mtx", Corpus(texts).counts())
    write_jsonl(folder / "docs.jsonl", [{"text": t, "label": y} for t, y in zip(texts, labels)])
    out = tmp_path / "out"
    assert main(["cluster", str(folder), "-k", "3", "--out", str(out), *FAST]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "warning: the word-context matrix M is empty" in err
    assert "--context document" in err
    assert "UserWarning" not in err and ".py:" not in err  # not Python's own format
    assert read_run(out)["context"]["nnz"] == 0


def test_an_unwritable_out_is_refused_before_the_data_is_read(tmp_path, capsys, monkeypatch,
                                                               planted_csv_path):
    """An --out where no file can be made (permissions, an immutable or read-only folder:
    faked here, since root ignores permissions) is one error line before the corpus is
    loaded, not an OSError after the fit."""
    import tempfile

    def cannot_write(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")

    def not_loaded(*args, **kwargs):
        pytest.fail("the corpus was loaded before --out was checked")

    monkeypatch.setattr(tempfile, "TemporaryFile", cannot_write)
    monkeypatch.setattr(semnmf.datasets, "load_dataset", not_loaded)
    for out in (tmp_path / "out", tmp_path / "new" / "sub"):
        assert main(["cluster", planted_csv_path, "-k", "3", "--out", str(out), *FAST]) == 2
        error = one_error(capsys)
        assert f"--out {out} cannot be written: Operation not permitted" in error
        assert not os.path.exists(out)


def test_dot_source_names_its_folder_and_empty_out_is_refused(tmp_path, capsys, monkeypatch):
    """`cluster .` wrote to the hidden folder semnmf_results/._nmf_k3; --out "" silently
    meant the default folder."""
    texts, labels = make_planted(30, seed=2)
    folder = tmp_path / "news"
    Corpus(texts, labels).to_folder(folder)
    monkeypatch.chdir(folder)
    assert main(["cluster", ".", "-k", "3", "--method", "nmf", "-q"]) == 0
    assert os.listdir(folder / "semnmf_results") == ["news_nmf_k3"]
    assert read_run(folder / "semnmf_results" / "news_nmf_k3")["corpus"] == "news"
    capsys.readouterr()
    run = str(folder / "semnmf_results" / "news_nmf_k3")
    for command in (["cluster", ".", "-k", "3"], ["tree", ".", "--leaves", "2"],
                    ["assign", run, "."], ["report", run]):
        assert main([*command, "--out", "", "-q"]) == 2
        assert one_error(capsys) == ("semnmf: error: --out is empty: name a folder for the "
                                     "results, or leave --out out for the default.")
    assert os.listdir(folder / "semnmf_results") == ["news_nmf_k3"]
    # assign's default folder names the dot's folder too (it was "assigned_source")
    assert main(["assign", run, ".", "-q"]) == 0
    assert "assigned_news" in os.listdir(run)


def test_summary_never_prints_nan_topic_quality(capsys):
    """Empty topics everywhere (the NPMI of no word is NaN) printed "NPMI nan"."""
    from types import SimpleNamespace

    import numpy as np

    from semnmf.cli.cluster import _print_summary

    texts, _ = make_planted(12, seed=1)
    quality = {"npmi": float("nan"), "diversity": float("nan"), "npmi_top_n": 10,
               "diversity_top_n": 25}
    run = SimpleNamespace(corpus=Corpus(texts), labels=np.zeros(12, dtype=int), k=2,
                          topics=[[], []], scores=None, extra={"topic_quality": quality},
                          method="nmf", settings=SimpleNamespace(n_top=5), degenerate=None)
    _print_summary(run, "out", ["run.json"])
    printed = capsys.readouterr().out
    assert "nan" not in printed.lower()
    assert "every topic is empty" in printed
