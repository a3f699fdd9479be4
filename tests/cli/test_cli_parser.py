"""The parser: fast to build (no numpy, scikit-learn or numba), its choices and defaults
from the library, and the word-context / graph weights each method accepts."""

import os
import subprocess
import sys
import textwrap

import pytest

from semnmf.cli import build_parser, main
from semnmf.models.registry import CLI_METHODS, CONSENSUS_METHODS

from conftest import read_json

HEAVY = ("numpy", "scipy", "sklearn", "numba", "rich", "matplotlib")
SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")


def _modules_loaded(code):
    """The heavy modules in sys.modules after running ``code`` in a fresh interpreter."""
    script = textwrap.dedent(code) + textwrap.dedent(f"""
        import sys
        print("loaded:" + ",".join(m for m in {HEAVY!r} if m in sys.modules))
    """)
    env = {**os.environ, "PYTHONPATH": os.path.abspath(SRC)}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("loaded:"), result.stdout
    return [m for m in last[len("loaded:"):].split(",") if m]


def test_building_the_parser_imports_nothing_heavy():
    assert _modules_loaded("from semnmf.cli import build_parser; build_parser()") == []


@pytest.mark.parametrize("argv", [["--help"], ["cluster", "--help"], ["tree", "--help"],
                                  ["bench", "--help"], ["report", "--help"], ["--version"]])
def test_help_imports_nothing_heavy(argv):
    code = f"""
        import contextlib, io, runpy, sys
        sys.argv = ["semnmf", *{argv!r}]
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                runpy.run_module("semnmf", run_name="__main__")
            except SystemExit as exit:
                assert exit.code in (0, None), exit.code
    """
    assert _modules_loaded(code) == []


def test_choices_come_from_the_registry():
    parser = build_parser()
    cluster = parser._subparsers._group_actions[0].choices["cluster"]
    actions = {a.dest: a for a in cluster._actions}
    assert list(actions["method"].choices) == list(CLI_METHODS)
    assert tuple(actions["consensus"].choices) == CONSENSUS_METHODS


def test_consensus_names_agree_with_the_ensemble():
    from semnmf.ensemble.runs import CONSENSUS_METHODS as ensemble_names

    assert CONSENSUS_METHODS == ensemble_names


def test_default_weights_agree_with_the_estimators():
    """models/_defaults.py holds the defaults the help shows; the estimators agree."""
    from semnmf import GNMF, SemanticGNMF, SemanticNMF, SeNMF
    from semnmf.models._defaults import DEFAULT_GRAPH_LAM, DEFAULT_LAM

    assert SemanticNMF().lam == SeNMF().lam == SemanticGNMF().lam == DEFAULT_LAM
    assert GNMF().graph_lam == SemanticGNMF().graph_lam == DEFAULT_GRAPH_LAM


@pytest.mark.parametrize("method", ["nmf", "skmeans", "pnmf", "gnmf"])
def test_lam_refused_without_a_word_context_term(tmp_path, capsys, method):
    """Refused before any data is read (the source does not even exist)."""
    assert main(["cluster", str(tmp_path / "missing.csv"), "-k", "3", "--method", method,
                 "--lam", "5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--lam weighs the word-context term" in err[0]
    assert "snmf-robust, snmf, snmf-kl, senmf, sgnmf" in err[0]


@pytest.mark.parametrize("method", ["snmf", "nmf", "skmeans", "senmf", "pnmf"])
def test_graph_lam_refused_without_a_graph_term(tmp_path, capsys, method):
    assert main(["cluster", str(tmp_path / "missing.csv"), "-k", "3", "--method", method,
                 "--graph-lam", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--graph-lam weighs the document-graph term" in err[0]


def test_gnmf_uses_graph_lam_and_records_both_weights(planted45_csv, tmp_path):
    out = str(tmp_path / "gnmf")
    assert main(["cluster", planted45_csv, "-k", "3", "--method", "gnmf", "--graph-lam", "1.5",
                 "--max-iter", "30", "--out", out, "-q"]) == 0
    run = read_json(os.path.join(out, "run.json"))
    assert run["parameters"]["graph_lam"] == 1.5
    assert run["effective_lambda"] is None  # GNMF has no word-context term
    assert run["graph_lambda"] is not None and run["graph_lambda"] > 0


def test_snmf_records_its_word_context_weight_only(planted45_csv, tmp_path):
    out = str(tmp_path / "snmf")
    assert main(["cluster", planted45_csv, "-k", "3", "--lam", "2", "--max-iter", "30",
                 "--out", out, "-q"]) == 0
    run = read_json(os.path.join(out, "run.json"))
    assert run["parameters"]["lam"] == 2.0 and run["effective_lambda"] > 0
    assert run["graph_lambda"] is None


def test_sgnmf_takes_both_weights(planted45_csv, tmp_path):
    out = str(tmp_path / "sgnmf")
    assert main(["cluster", planted45_csv, "-k", "3", "--method", "sgnmf", "--lam", "2",
                 "--graph-lam", "0.5", "--max-iter", "30", "--out", out, "-q"]) == 0
    run = read_json(os.path.join(out, "run.json"))
    assert run["parameters"]["lam"] == 2.0 and run["parameters"]["graph_lam"] == 0.5
    assert run["effective_lambda"] > 0 and run["graph_lambda"] > 0


def test_an_unknown_option_is_told_by_its_command(capsys):
    """`semnmf tree SRC --leaves 4 --method nmf` printed semnmf's own usage line
    (`semnmf [-h] [--version] COMMAND ...`), not tree's."""
    with pytest.raises(SystemExit) as exit_:
        main(["tree", "bbc", "--leaves", "4", "--method", "nmf"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: semnmf tree ")
    assert err.rstrip().endswith("semnmf tree: error: unrecognized arguments: --method nmf")


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
