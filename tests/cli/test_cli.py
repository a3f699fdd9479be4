"""Tests of the ``semnmf`` command line, called in-process as ``main([...])`` on the tiny
planted corpus: the three output files and their contract (DESIGN.md), every method and
context, quiet mode, the datasets command, help, and exit code 2 with one error line for
bad input (and no output written)."""

import csv
import json
import math
import os
import re

import pytest
import scipy.io
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

import semnmf
from semnmf import Corpus
from semnmf.cli import main

from conftest import make_planted, write_csv

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
