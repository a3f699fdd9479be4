"""One set of checks for semnmf.cluster(...) and semnmf cluster (workflows.checks).

Every setting that cannot work is refused by both, before any data is read, in one line
that names the setting in the caller's words: the library's parameter, the flag on the
command line. Before the checks were one, the library read the corpus before refusing
most of these, and the command line ran ``--method kl-consensus --n-init 3`` with its
``--n-init`` silently ignored.
"""

import sys

import pytest

import semnmf
from semnmf._utils.words import LIBRARY, Words, check_number
from semnmf.cli import main
from semnmf.cli.flags import CLI_WORDS
from semnmf.workflows.checks import check_settings
from semnmf.workflows.result import ClusterSettings

import semnmf.workflows.cluster  # noqa: F401  (the module, not the function)

WORKFLOW = sys.modules["semnmf.workflows.cluster"]


class DataRead(Exception):
    pass


@pytest.fixture
def no_reading(monkeypatch):
    """Reading the source fails the test: every refusal must come before it."""
    def read_corpus(*args, **kwargs):
        raise DataRead("the source was read before the settings were refused")

    monkeypatch.setattr(WORKFLOW, "read_corpus", read_corpus)


# (library settings, command-line flags, the library name and the flag the message names)
CASES = [
    ({"max_iter": 0}, ["--max-iter", "0"], "max_iter", "--max-iter"),
    ({"lam": -1}, ["--lam", "-1"], "lam", "--lam"),
    ({"tol": -1}, ["--tol", "-1"], "tol", "--tol"),
    ({"n_init": 0}, ["--n-init", "0"], "n_init", "--n-init"),
    ({"random_state": -1}, ["--seed", "-1"], "random_state", "--seed"),
    ({"method": "nmf", "lam_scale": "relative"}, ["--method", "nmf", "--lam-scale", "relative"],
     "lam_scale", "--lam-scale"),
    ({"method": "snmf", "loss": "kl", "orthogonal": True},
     ["--method", "snmf", "--loss", "kl", "--orthogonal"], "orthogonal", "--orthogonal"),
    ({"method": "skmeans", "loss": "kl"}, ["--method", "skmeans", "--loss", "kl"], "loss",
     "--loss"),
    ({"method": "nmf", "consensus": "mmm", "n_runs": 1},
     ["--method", "nmf", "--consensus", "mmm", "--runs", "1"], "n_runs", "--runs"),
    ({"method": "nmf", "consensus": "mmm", "n_runs": 3, "n_keep": 5},
     ["--method", "nmf", "--consensus", "mmm", "--runs", "3", "--keep", "5"], "n_keep",
     "--keep"),
    ({"method": "nmf", "n_runs": 3}, ["--method", "nmf", "--runs", "3"], "n_runs", "--runs"),
    ({"method": "skmeans", "refine": "gt"}, ["--method", "skmeans", "--refine", "gt"],
     "refine='gt'", "--refine gt"),
    ({"method": "nmf", "window": 5}, ["--method", "nmf", "--window", "5"], "window",
     "--window"),
    ({"min_df": 0}, ["--min-df", "0"], "min_df", "--min-df"),
    ({"max_df": 2.0}, ["--max-df", "2"], "max_df", "--max-df"),
    ({"n_top": 0}, ["--top", "0"], "n_top", "--top"),
    ({"method": "kl-consensus", "n_init": 3}, ["--method", "kl-consensus", "--n-init", "3"],
     "n_init", "--n-init"),
    ({"time_column": "year"}, ["--time-column", "year"], "time_column", "--time-column"),
    ({"semantics": "none", "embed": "both"}, ["--semantics", "none", "--embed", "both"],
     "embed", "--embed"),
    ({"semantics": "corpus", "pooling": "first"}, ["--semantics", "corpus", "--pooling",
                                                   "first"], "pooling", "--pooling"),
    ({"semantics": "none", "partition": "documents"}, ["--semantics", "none", "--partition",
                                                       "documents"], "partition", "--partition"),
]


@pytest.mark.parametrize("settings, argv, name, flag", CASES,
                         ids=[" ".join(case[1]) for case in CASES])
def test_library_and_command_line_refuse_the_same_before_reading(
        no_reading, tmp_path, capsys, settings, argv, name, flag):
    with pytest.raises(ValueError) as refused:
        semnmf.cluster("bbc", 5, **settings)
    library = str(refused.value)
    assert name in library and "\n" not in library
    assert flag not in library  # the library's words, not the flags

    out = tmp_path / "out"
    assert main(["cluster", "bbc", "-k", "5", "--out", str(out), *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("semnmf: error: ") and flag in err[0]
    assert not out.exists()
    # the command line's refusal is the library's check, in the flags' words
    with pytest.raises(ValueError) as same:
        check_settings(ClusterSettings(source="bbc", k=5, **settings), CLI_WORDS)
    assert cli_message(err[0]) == str(same.value)


def cli_message(line):
    return line.removeprefix("semnmf: error: ")


def test_the_command_line_no_longer_ignores_n_init_of_kl_consensus(no_reading, tmp_path, capsys):
    """It ran before, without its starts: now refused like the library refuses it."""
    assert main(["cluster", "bbc", "-k", "5", "--method", "kl-consensus", "--n-init", "3",
                 "--out", str(tmp_path / "out")]) == 2
    assert "kl-consensus runs its three members" in capsys.readouterr().err


def test_settings_that_work_pass_and_are_not_rewritten():
    settings = ClusterSettings(source="bbc", k=5, method="snmf", lam=10.0, window=5,
                               consensus="mmm", n_runs=4, n_keep=3)
    assert check_settings(settings) is None
    assert check_settings(settings, CLI_WORDS) is None


def test_other_spellings_of_corpus_are_the_corpus(no_reading):
    """"Corpus" is the corpus' own semantics (no pretrained source, no partition)."""
    with pytest.raises(DataRead):
        semnmf.cluster("bbc", 5, semantics=" Corpus ")


def test_check_number_says_what_is_wrong_in_the_callers_words():
    words = Words({"max_iter": "--max-iter"})
    with pytest.raises(ValueError, match=r"^--max-iter must be an integer, got 2\.5\.$"):
        check_number(2.5, "max_iter", words, low=1, integer=True)
    with pytest.raises(ValueError, match=r"^tol must be a finite number, got nan\.$"):
        check_number(float("nan"), "tol", low=0)
    with pytest.raises(ValueError, match=r"^lam must be a number, got 'x'\.$"):
        check_number("x", "lam")
    with pytest.raises(ValueError, match=r"^n_init must be an integer, got True\.$"):
        check_number(True, "n_init", integer=True)
    check_number(None, "lam", low=0)  # not given
    check_number(3, "n_init", low=1, integer=True)
    assert words.set("max_iter", 5) == "--max-iter 5"
    assert LIBRARY.set("max_iter", 5) == "max_iter=5"


TEXTS = ["rocket moon orbit launch", "bread flour oven bake", "moon orbit planet star",
         "oven bake cake sugar"] * 8


@pytest.mark.parametrize("settings", [
    {"method": "nmf", "consensus": "mmm", "n_runs": 3, "random_state": None},
    {"method": "nmf", "consensus": "mmm", "n_runs": 3,
     "random_state": __import__("numpy").random.RandomState(0)},
    {"method": "nmf", "min_df": 0.2},   # a share of the documents, as CountVectorizer
    {"method": "nmf", "max_df": 30},    # a number of documents
])
def test_the_library_keeps_accepting_what_it_accepted(settings):
    """Seeds that are not integers and CountVectorizer's forms of min_df / max_df run."""
    result = semnmf.cluster(TEXTS, 2, max_iter=20, **settings)
    assert len(result.labels) == len(TEXTS)


@pytest.mark.parametrize("settings, message", [
    ({"method": "nmf", "consensus": "bogus"}, "consensus must be one of anmi"),
    ({"method": "nmf", "init": "bogus"}, "init must be one of skmeans, random, nndsvda"),
    ({"lam_scale": "bogus"}, "lam_scale must be one of relative, absolute"),
    ({"dtype": "float16"}, "dtype must be one of float32, float64"),
    ({"method": "nmf", "seed_words": "/no/such/seeds.txt"}, "seed_words /no/such/seeds.txt: "
                                                             "no such file"),
    ({"method": "nmf", "min_df": 1.5}, "min_df is a number of documents"),
    ({"method": "kl-consensus", "init": "random"}, "it takes no n_init, init, consensus, "
                                                   "n_runs"),
    ({"method": "kl-consensus", "n_runs": 5}, "it takes no n_init, init, consensus, n_runs"),
    ({"method": "skmeans", "loss": "kl"}, "apply to method='nmf' or 'snmf' only"),
])
def test_named_choices_and_files_are_refused_before_reading(no_reading, settings, message):
    with pytest.raises(ValueError, match=message):
        semnmf.cluster("bbc", 5, **settings)


def test_a_counts_folder_refuses_raw_text_settings_before_reading(no_reading, tmp_path, capsys):
    """text_column on a counts-only folder: refused by both, from its file names."""
    from conftest import shared_dataset_path

    folder = str(shared_dataset_path("cluto_mm"))
    with pytest.raises(ValueError, match="counts only.*: text_column applies"):
        semnmf.cluster(folder, 2, text_column="body")
    assert main(["cluster", folder, "-k", "2", "--text-column", "body",
                 "--out", str(tmp_path / "out")]) == 2
    assert "--text-column applies" in capsys.readouterr().err
