"""Tests of the ``semnmf`` command line, called in-process as ``main([...])`` on the tiny
planted corpus: the three output files and their contract (DESIGN.md), every method and
context, quiet mode, the datasets command, help, and exit code 2 with one error line for
bad input (and no output written); languages and unlabelled documents, the output folder
(--out, --overwrite, a full disk), counts-only folders, binary and UTF-16 sources, and what
a run prints."""

import csv
import errno
import gzip
import json
import math
import os
import re
import struct
import zlib

import pytest
import scipy.io
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

import semnmf
import semnmf.datasets
from semnmf import Corpus
from semnmf.cli import main

from conftest import make_planted, one_error, write_csv, write_jsonl

FAST = ["--max-iter", "50", "-q"]


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return reader.fieldnames, list(reader)


def read_run(out):
    with open(os.path.join(out, "run.json"), encoding="utf-8") as f:
        return json.load(f, parse_constant=lambda c: pytest.fail(f"run.json holds {c}"))


@pytest.fixture(scope="module")
def corpus_files(tmp_path_factory):
    """The planted corpus as a labelled CSV, a CSV without labels and a label-folder tree."""
    root = tmp_path_factory.mktemp("cli_data")
    texts, labels = make_planted()
    labelled = write_csv(root / "planted.csv", zip(texts, labels), ["text", "label"])
    unlabelled = write_csv(root / "nolabels.csv", [[t] for t in texts], ["text"])
    tree = root / "tree"
    for i, (text, label) in enumerate(zip(texts, labels)):
        (tree / label).mkdir(parents=True, exist_ok=True)
        (tree / label / f"{i:03d}.txt").write_text(text, encoding="utf-8")
    counts_only = root / "countsonly"
    counts_only.mkdir()
    scipy.io.mmwrite(counts_only / "counts.mtx", Corpus(texts).counts())
    (counts_only / "labels.txt").write_text("".join(f"{y}\n" for y in labels), encoding="utf-8")
    return dict(texts=texts, labels=labels, csv=str(labelled), nolabels=str(unlabelled),
                tree=str(tree), counts_only=str(counts_only))


@pytest.fixture(scope="module")
def default_run(corpus_files, tmp_path_factory):
    """One default (Semantic-NMF) run on the labelled CSV; several tests read its output."""
    out = str(tmp_path_factory.mktemp("cli_out") / "run")
    code = main(["cluster", corpus_files["csv"], "-k", "3", "--out", out, *FAST])
    return code, out


# -- the output contract ---------------------------------------------------------------

def test_default_run_succeeds(default_run):
    code, out = default_run
    assert code == 0
    assert sorted(os.listdir(out)) == ["assignments.csv", "model", "run.json", "topics.csv"]
    assert sorted(os.listdir(os.path.join(out, "model"))) == ["arrays.npz", "model.json",
                                                               "vocabulary.txt"]


def test_assignments_csv(default_run, corpus_files):
    _, out = default_run
    columns, rows = read_csv(os.path.join(out, "assignments.csv"))
    assert columns == ["doc", "cluster", "strength", "label"]
    assert len(rows) == len(corpus_files["texts"])
    assert all(0 < float(r["strength"]) <= 1 for r in rows)
    assert [r["doc"] for r in rows] == [str(i) for i in range(len(rows))]
    assert [r["label"] for r in rows] == corpus_files["labels"]
    assert {int(r["cluster"]) for r in rows} <= {0, 1, 2}


def test_topics_csv(default_run, corpus_files):
    _, out = default_run
    columns, rows = read_csv(os.path.join(out, "topics.csv"))
    assert columns == ["cluster", "rank", "term", "weight"]
    vocabulary = set(Corpus(corpus_files["texts"]).vocabulary)
    clusters = sorted({int(r["cluster"]) for r in rows})
    assert clusters == [0, 1, 2]
    for c in clusters:
        mine = [r for r in rows if int(r["cluster"]) == c]
        assert [int(r["rank"]) for r in mine] == list(range(1, len(mine) + 1))
        assert len(mine) >= 10  # at least --top terms
        assert {r["term"] for r in mine} <= vocabulary
        weights = [float(r["weight"]) for r in mine]
        assert all(w >= 0 for w in weights)
        assert weights == sorted(weights, reverse=True)


def test_run_json(default_run, corpus_files):
    _, out = default_run
    run = read_run(out)
    reference = Corpus(corpus_files["texts"])
    assert run["method"] == "snmf-robust"  # the default (benchmarks/results/defaults.md)
    params = run["parameters"]
    assert params["loss"] == "kl" and params["lam"] == 1.0
    assert params["n_init"] == 5 and params["screen_iter"] == 1  # screened starts
    assert params["n_components"] == 3 and params["max_iter"] == 50
    assert params["random_state"] == 0
    assert run["data"]["n_documents"] == len(corpus_files["texts"])
    assert run["data"]["n_terms"] == reference.n_terms
    assert run["data"]["nnz"] == reference.counts().nnz
    assert run["data"]["labelled"] is True
    assert run["data"]["dtype"] == "float32" == run["cli_arguments"]["dtype"]  # snmf-robust's
    assert run["context"]["context"] == "window"  # auto: raw text exists
    assert run["context"]["shape"] == [reference.n_terms, reference.n_terms]
    assert isinstance(run["objective"], float) and math.isfinite(run["objective"])
    assert isinstance(run["n_iter"], int) and 1 <= run["n_iter"] <= 50
    timings = run["timings_seconds"]
    assert {"load", "vectorize", "context", "fit", "total"} <= set(timings)
    assert all(t >= 0 for t in timings.values())
    assert timings["total"] >= timings["fit"]
    assert run["versions"]["semnmf"] == semnmf.__version__
    assert {"python", "numpy"} <= set(run["versions"])


def test_run_json_scores_match_assignments(default_run):
    _, out = default_run
    run = read_run(out)
    _, rows = read_csv(os.path.join(out, "assignments.csv"))
    true = [r["label"] for r in rows]
    pred = [int(r["cluster"]) for r in rows]
    scores = run["scores"]
    assert set(scores) >= {"nmi", "ari", "accuracy"}
    assert all(0 <= scores[s] <= 1 for s in ("nmi", "ari", "accuracy"))
    assert scores["nmi"] == pytest.approx(normalized_mutual_info_score(true, pred))
    assert scores["ari"] == pytest.approx(adjusted_rand_score(true, pred))
    sizes = {str(c): pred.count(c) for c in set(pred)}
    assert run["cluster_sizes"] == sizes
    # three planted topics with disjoint words: the clusters must find them
    assert scores["accuracy"] >= 0.9


@pytest.mark.parametrize("method, context", [("snmf", "document"), ("snmf", "window"),
                                             ("snmf", "sentence"), ("nmf", None),
                                             ("skmeans", None)])
def test_methods_and_contexts(corpus_files, tmp_path, method, context):
    out = tmp_path / "out"
    args = ["cluster", corpus_files["csv"], "-k", "3", "--method", method, "--out", str(out),
            *FAST]
    if context:
        args += ["--context", context] + (["--window", "3"] if context == "window" else [])
    assert main(args) == 0
    run = read_run(out)
    assert run["method"] == method
    assert run["estimator"] == {"snmf": "SemanticNMF", "nmf": "NMF",
                                "skmeans": "SphericalKMeans"}[method]
    if context is None:
        assert run["context"] is None
    else:
        assert run["context"]["context"] == context
        assert run["context"]["window"] == (3 if context == "window" else None)
    _, rows = read_csv(out / "assignments.csv")
    assert len(rows) == len(corpus_files["texts"])
    assert 0 <= run["scores"]["nmi"] <= 1 and 0 <= run["scores"]["accuracy"] <= 1
    assert run["scores"]["accuracy"] >= 0.9
    _, topics = read_csv(out / "topics.csv")
    assert {int(r["cluster"]) for r in topics} == {0, 1, 2}


def test_same_seed_same_result(corpus_files, tmp_path):
    outputs = []
    for name in ("a", "b"):
        out = tmp_path / name
        assert main(["cluster", corpus_files["csv"], "-k", "3", "--seed", "7", "--init",
                     "random", "--out", str(out), *FAST]) == 0
        outputs.append((out / "assignments.csv").read_text(encoding="utf-8"))
    assert outputs[0] == outputs[1]


def test_folder_source_and_options(corpus_files, tmp_path):
    out = tmp_path / "tree"
    assert main(["cluster", corpus_files["tree"], "-k", "3", "--method", "nmf", "--weighting",
                 "ncut", "--stem", "porter", "--min-df", "1", "--out", str(out), *FAST]) == 0
    run = read_run(out)
    assert run["corpus"] == "tree"
    assert run["data"]["weighting"] == "ncut"
    assert run["data"]["n_terms"] == Corpus(corpus_files["texts"], min_df=1, stem="porter").n_terms
    _, rows = read_csv(out / "assignments.csv")
    assert [r["doc"].split("/")[0] for r in rows] == [r["label"] for r in rows]


def test_counts_only_folder_uses_document_context(corpus_files, tmp_path):
    out = tmp_path / "counts"
    assert main(["cluster", corpus_files["counts_only"], "-k", "3", "--method", "snmf-robust",
                 "--out", str(out), *FAST]) == 0
    run = read_run(out)
    assert run["context"]["context"] == "document"
    # the default method's rule without raw text: shifted PPMI, 50 contexts per word
    assert run["context"]["association"] == "sppmi" and run["context"]["top_k"] == 50
    assert run["data"]["n_documents"] == len(corpus_files["texts"])
    _, topics = read_csv(out / "topics.csv")
    assert all(r["term"].startswith("t") for r in topics)  # no vocab.txt: t0, t1, ...


def test_paper_method_keeps_its_context_without_text(corpus_files, tmp_path):
    """--method snmf is the papers' SNMF: unpruned document PPMI without raw text."""
    out = tmp_path / "counts_snmf"
    assert main(["cluster", corpus_files["counts_only"], "-k", "3", "--method", "snmf",
                 "--out", str(out), *FAST]) == 0
    run = read_run(out)
    assert run["context"]["association"] == "ppmi" and run["context"]["top_k"] is None
    assert run["parameters"]["lam"] == 10.0 and run["parameters"]["loss"] == "frobenius"
    # the papers' settings: one start (the default's screened starts are its own)
    assert run["parameters"]["n_init"] == 1 and run["parameters"]["screen_iter"] is None


def test_n_init_overrides_the_default_starts(corpus_files, tmp_path):
    out = tmp_path / "one_start"
    assert main(["cluster", corpus_files["csv"], "-k", "3", "--n-init", "1",
                 "--out", str(out), *FAST]) == 0
    params = read_run(out)["parameters"]
    assert params["n_init"] == 1 and params["loss"] == "kl"


def test_dtype_option(corpus_files, tmp_path, default_run):
    """The default fits in float32; --dtype float64 fits the same data in float64 (the
    same clusters here), and a method without a dtype of its own fits in float64."""
    _, out32 = default_run
    out64 = tmp_path / "float64"
    assert main(["cluster", corpus_files["csv"], "-k", "3", "--dtype", "float64",
                 "--out", str(out64), *FAST]) == 0
    assert read_run(out64)["data"]["dtype"] == "float64"
    labels = [[row["cluster"] for row in read_csv(os.path.join(out, "assignments.csv"))[1]]
              for out in (out32, out64)]
    assert adjusted_rand_score(*labels) == 1.0
    out = tmp_path / "nmf"
    assert main(["cluster", corpus_files["csv"], "-k", "3", "--method", "nmf",
                 "--out", str(out), *FAST]) == 0
    assert read_run(out)["data"]["dtype"] == "float64"


def test_default_method_on_each_engine_and_with_semantics():
    """Without --method both engines run the default (snmf-robust); --semantics, which
    runs the Frobenius updates only, takes Semantic-NMF. --method snmf-kl is the
    registry's snmf-kl (no longer the default's name of 0.1)."""
    from semnmf.cli.cluster_options import method_name

    assert method_name(None, "corpus")[0] == "snmf-robust"
    assert method_name(None, "minilm") == ("snmf", None)
    assert method_name("nmf", "corpus") == ("nmf", None)
    assert method_name("snmf-kl", "corpus") == ("snmf-kl", None)


def test_snmf_kl_is_the_slides_snmf_kl_everywhere(corpus_files, tmp_path, capsys):
    """One meaning of snmf-kl (since 0.3): semnmf cluster --method snmf-kl runs the
    registry's SNMF-KL (Semantic-NMF, KL loss, lam 10, one start), as semnmf bench and
    get_method do, without a warning; its loss is its own (--loss is refused)."""
    from semnmf.models.registry import CLI_METHODS, get_method

    assert CLI_METHODS["snmf-kl"] is get_method("snmf-kl")
    out = tmp_path / "snmf_kl"
    assert main(["cluster", corpus_files["csv"], "-k", "3", "--method", "snmf-kl",
                 "--out", str(out), *FAST]) == 0
    assert "warning" not in capsys.readouterr().err.lower()
    run = read_run(out)
    assert run["method"] == "snmf-kl" and run["estimator"] == "SemanticNMF"
    params = run["parameters"]
    assert (params["loss"], params["lam"], params["n_init"]) == ("kl", 10.0, 1)
    assert run["data"]["dtype"] == "float64"
    assert main(["cluster", corpus_files["csv"], "-k", "3", "--method", "snmf-kl",
                 "--loss", "frobenius", "--out", str(tmp_path / "refused")]) == 2
    assert "--loss and --orthogonal apply to --method nmf or snmf only" in (
        capsys.readouterr().err)


def test_unlabelled_source(corpus_files, tmp_path):
    out = tmp_path / "nolabels"
    assert main(["cluster", corpus_files["nolabels"], "-k", "3", "--method", "skmeans",
                 "--out", str(out), *FAST]) == 0
    columns, rows = read_csv(out / "assignments.csv")
    assert columns == ["doc", "cluster", "strength"] and len(rows) == len(corpus_files["texts"])
    run = read_run(out)
    assert run["scores"] is None and run["data"]["labelled"] is False


def test_documents_without_terms_get_label_minus_one(corpus_files, tmp_path):
    texts = corpus_files["texts"] + ["the and of it", "1234 5678"]
    labels = corpus_files["labels"] + ["sport", "food"]
    source = write_csv(tmp_path / "with_empty.csv", zip(texts, labels), ["text", "label"])
    out = tmp_path / "out"
    assert main(["cluster", str(source), "-k", "3", "--method", "nmf", "--out", str(out),
                 *FAST]) == 0
    _, rows = read_csv(out / "assignments.csv")
    assert len(rows) == len(texts)
    assert [int(r["cluster"]) for r in rows[-2:]] == [-1, -1]
    run = read_run(out)
    assert run["cluster_sizes"]["-1"] == 2
    assert sum(run["cluster_sizes"].values()) == len(texts)
    assert 0 <= run["scores"]["accuracy"] <= 1


def test_default_output_folder(corpus_files, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["cluster", corpus_files["csv"], "-k", "2", "--method", "skmeans", *FAST]) == 0
    out = tmp_path / "semnmf_results" / "planted_skmeans_k2"
    assert sorted(os.listdir(out)) == ["assignments.csv", "model", "run.json", "topics.csv"]
    # run twice without --out: the earlier run is kept, the new one goes beside it
    before = (out / "run.json").read_bytes()
    assert main(["cluster", corpus_files["csv"], "-k", "2", "--method", "skmeans", *FAST]) == 0
    again = tmp_path / "semnmf_results" / "planted_skmeans_k2-2"
    assert (out / "run.json").read_bytes() == before
    assert sorted(os.listdir(again)) == ["assignments.csv", "model", "run.json", "topics.csv"]
    assert main(["cluster", corpus_files["csv"], "-k", "2", "--method", "skmeans", *FAST]) == 0
    assert (tmp_path / "semnmf_results" / "planted_skmeans_k2-3" / "run.json").exists()


def test_an_interrupted_compilation_ends_as_an_interrupt(monkeypatch, capsys):
    """Ctrl-C while numba compiled a kernel could end in numba's RuntimeError ("no compiled
    object yet") and a traceback; it ends as any interrupt: one line, status 130."""
    import importlib

    entry = importlib.import_module("semnmf.cli.main")

    def compiling(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("no compiled object yet for <Library 'ratio_block'>")

    monkeypatch.setattr(entry.COMMANDS["datasets"], "run", compiling)
    assert main(["datasets"]) == 130
    assert capsys.readouterr().err.strip() == "semnmf: interrupted"

    def broken(args):
        raise RuntimeError("a real bug")

    monkeypatch.setattr(entry.COMMANDS["datasets"], "run", broken)
    with pytest.raises(RuntimeError, match="a real bug"):
        main(["datasets"])


# -- console output ----------------------------------------------------------------------

def test_quiet_and_verbose(corpus_files, tmp_path, capsys):
    assert main(["cluster", corpus_files["csv"], "-k", "3", "--method", "skmeans", "--out",
                 str(tmp_path / "q"), "--max-iter", "50", "-q"]) == 0
    quiet = capsys.readouterr()
    assert "loading" not in quiet.err
    assert "NMI" in quiet.out and "results written to" in quiet.out
    assert main(["cluster", corpus_files["csv"], "-k", "3", "--method", "skmeans", "--out",
                 str(tmp_path / "v"), "--max-iter", "50"]) == 0
    verbose = capsys.readouterr()
    assert "loading" in verbose.err
    assert "results written to" in verbose.out


def test_datasets_command(capsys, monkeypatch, tmp_path, planted):
    monkeypatch.delenv("SEMNMF_DATA", raising=False)
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "bbc" in out and "[built-in]" in out and "SEMNMF_DATA" in out
    Corpus(*planted).to_folder(tmp_path / "mini")
    monkeypatch.setenv("SEMNMF_DATA", str(tmp_path))
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert any(line.startswith("mini") and "[found]" in line for line in out.splitlines())


@pytest.mark.parametrize("argv", [["--help"], ["cluster", "--help"]])
def test_help(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "usage: semnmf" in out
    assert "examples:" in out and "semnmf cluster bbc -k 5" in out


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert semnmf.__version__ in capsys.readouterr().out


# -- bad input ------------------------------------------------------------------------------

BAD_RUNS = {
    "missing file": (["{missing}", "-k", "3"], r"no dataset named or found at"),
    "k larger than n": (["{csv}", "-k", "31"], r"-k 31 is larger than the number of documents \(30\)"),
    "k zero": (["{csv}", "-k", "0"], r"-k must be at least 1, got 0"),
    "missing text column": (["{csv}", "-k", "3", "--text-column", "body"],
                            r"no column 'body'; its columns are \['text', 'label'\]"),
    "missing label column": (["{csv}", "-k", "3", "--label-column", "topic"],
                             r"no label column 'topic'"),
    "window without text": (["{counts_only}", "-k", "3", "--context", "window"], r"no raw text"),
    "unknown encoding": (["{csv}", "-k", "3", "--encoding", "klingon"], r"unknown encoding"),
    "latin-1 file": (["{latin}", "-k", "3"], r"not valid utf-8 .*it looks like cp1252: pass .*--encoding cp1252"),
}


@pytest.fixture
def bad_sources(corpus_files, tmp_path):
    latin = tmp_path / "latin.csv"
    latin.write_bytes("text,label\ncafé crème,x\n".encode("latin-1"))
    return dict(corpus_files, missing=str(tmp_path / "nope.csv"), latin=str(latin))


@pytest.mark.parametrize("quiet", [True, False], ids=["quiet", "verbose"])
@pytest.mark.parametrize("case", sorted(BAD_RUNS))
def test_bad_input_exit_code_2(case, quiet, bad_sources, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    template, pattern = BAD_RUNS[case]
    args = [a.format(**bad_sources) for a in template]
    out = tmp_path / "should_not_exist"
    argv = ["cluster", *args, "--out", str(out), "--max-iter", "50"] + (["-q"] if quiet else [])
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    errors = [line for line in lines if line.startswith("semnmf: error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0]
    if quiet:
        assert len(lines) == 1
    assert re.search(pattern, errors[0]), errors[0]
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["latin.csv"])  # nothing written: no --out folder, no semnmf_results/


@pytest.mark.parametrize("argv", [["cluster", "x.csv"],                       # no -k
                                  ["cluster", "x.csv", "-k", "2", "--method", "lda"],
                                  ["cluster", "x.csv", "-k", "two"], []])
def test_argument_errors_exit_2(argv, capsys):
    try:  # argparse exits; a missing -k is refused by the options' own check
        code = main(argv)
    except SystemExit as exit_info:
        code = exit_info.code
    assert code == 2
    assert "semnmf" in capsys.readouterr().err


@pytest.mark.parametrize("method, extra, estimator, params", [
    ("senmf", [], "SeNMF", {}),
    ("gnmf", [], "GNMF", {}),
    ("sgnmf", [], "SemanticGNMF", {}),
    ("pnmf", [], "ProjectiveNMF", {}),
    ("nmf", ["--loss", "kl"], "NMF", {"loss": "kl"}),
    ("snmf", ["--orthogonal"], "SemanticNMF", {"orthogonal": True}),
])
def test_model_family_methods(corpus_files, tmp_path, method, extra, estimator, params):
    out = tmp_path / "out"
    assert main(["cluster", corpus_files["csv"], "-k", "3", "--method", method, "--out",
                 str(out), *FAST, *extra]) == 0
    run = read_run(out)
    assert run["estimator"] == estimator
    assert params.items() <= run["parameters"].items()
    if method == "senmf":  # SeNMF's word context defaults to the SIGIR paper's shifted PPMI
        assert run["context"]["association"] == "sppmi"
    assert run["scores"]["accuracy"] >= 0.9


@pytest.mark.parametrize("extra, message", [
    (["--method", "gnmf", "--loss", "kl"], "--loss and --orthogonal apply to --method nmf"),
    (["--method", "skmeans", "--orthogonal"], "--loss and --orthogonal apply"),
    (["--method", "snmf", "--loss", "kl", "--orthogonal"],
     "--orthogonal is derived for the Frobenius loss"),
    (["--loss", "kl"], "--loss and --orthogonal apply to --method nmf"),  # the default fixes it
])
def test_variant_options_checked_before_loading(tmp_path, capsys, extra, message):
    assert main(["cluster", str(tmp_path / "missing.csv"), "-k", "3", *extra]) == 2
    assert message in capsys.readouterr().err


def test_a_counts_only_corpus_gets_the_kl_consensus_and_says_why(corpus_files, tmp_path):
    """Without --method, a corpus of counts only runs kl-consensus (chosen by
    leave-one-corpus-out on the shared counts-only corpora), printed and recorded; asking
    for a word-context setting keeps snmf-robust."""
    from semnmf.cli.cluster_options import method_name

    out = tmp_path / "counts"
    assert main(["cluster", corpus_files["counts_only"], "-k", "3", "--out", str(out),
                 *FAST]) == 0
    run = read_run(out)
    assert run["method"] == "kl-consensus" and "no raw text" in run["method_choice"]["why"]
    assert run["consensus"]["members"] == ["nmf-kl-screened", "nmf-kl", "skmeans"]
    runs = run["consensus"]["runs"]  # made three times, combined by the MMM
    assert [r["seed"] for r in runs] == [0, 1, 2] and "MMM" in run["consensus"]["combined"]
    assert all(0 <= r["nmi"] <= 1 for r in runs)
    assert run["scores"]["nmi"] > 0.5 and (out / "partitions.csv").exists()
    header = (out / "partitions.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header == "doc,seed_0,seed_1,seed_2"  # the three runs' consensus partitions
    assert method_name(None, "corpus", corpus_files["counts_only"])[0] == "kl-consensus"
    assert method_name(None, "corpus", corpus_files["counts_only"],
                       given=["top_k"])[0] == "snmf-robust"
    assert method_name(None, "corpus", corpus_files["csv"])[0] == "snmf-robust"
    assert method_name(None, "corpus", corpus_files["counts_only"], engine="dask")[0] == \
        "snmf-robust"


def read_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# -- languages, labels and small corpora ----------------------------------------------------

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


# -- the output folder ---------------------------------------------------------------------

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
    """`cluster .` names its results after the folder the dot stands for (not a hidden
    ._nmf_k3), and --out "" is refused rather than taken as the default folder."""
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
    # assign's default folder names the dot's folder too
    assert main(["assign", run, ".", "-q"]) == 0
    assert "assigned_news" in os.listdir(run)


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


# -- counts-only folders ----------------------------------------------------------------------

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


# -- reading the source: binary files, encodings, columns ---------------------------------------

def _png():
    rows = b"".join(b"\x00" + bytes([i, 2 * i % 256, 3 * i % 256]) * 8 for i in range(8))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


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
    # the other way round: --encoding utf-16 on a UTF-8 file is named as UTF-8
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


# -- what a run prints ----------------------------------------------------------------------

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


def test_redirected_output_keeps_whole_lines(tmp_path, capsys, planted_csv_path):
    assert main(["cluster", planted_csv_path, "-k", "3", "--max-iter", "30", "--top", "30",
                 "--out", str(tmp_path / "o")]) == 0
    captured = capsys.readouterr()
    assert "…" not in captured.err and "…" not in captured.out
    assert re.search(r"the best of 5 starts.*converged after \d+ iterations", captured.err)
    rows = [line for line in captured.out.splitlines() if "food (" in line]
    assert len(rows) == 1 and all(word in rows[0] for word in ("garlic", "spice", "bake"))


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


def test_summary_never_prints_nan_topic_quality(capsys):
    """With every topic empty (the NPMI of no word is NaN) the summary says so and never
    prints "NPMI nan"."""
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
