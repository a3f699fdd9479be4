"""The typed command line: parsing gives the library's frozen ClusterSettings (the parser
writes each option under the library's name; every default filled in one place) and the
command's own options, running gives one ClusterResult (the library's) on either engine,
saving writes it; one table maps library parameters to flags; cli/ has no import circle,
no mutated Namespace and no long function; bad options and options that do not apply are
refused before any data is read."""

import ast
import dataclasses
import glob
import os

import pytest

import semnmf.datasets
from conftest import make_planted, one_error, write_csv
from semnmf.cli import build_parser, main
from semnmf.cli.cluster_options import ClusterCommand, cluster_options
from semnmf.cli.flags import FLAGS, cli_message
from semnmf.workflows import ClusterSettings

FAST = ["--max-iter", "30", "-q"]
CLI = os.path.join(os.path.dirname(__file__), "..", "..", "src", "semnmf", "cli")


def _options(*argv):
    return cluster_options(build_parser().parse_args(["cluster", "bbc", *argv]))


def test_defaults_are_filled_for_the_method():
    default, command = _options("-k", "5")
    assert isinstance(default, ClusterSettings) and isinstance(command, ClusterCommand)
    assert (default.method, default.k, default.k_candidates) == ("snmf-robust", 5, None)
    assert (default.lam, default.lam_scale, default.init, default.dtype) == (
        1.0, "relative", "skmeans", "float32")
    assert default.loss is None and default.graph_lam is None  # not options of snmf-robust
    assert (default.context, default.window, default.min_count, default.max_nnz) == (
        "auto", 10, 1, 5_000_000)
    assert (default.max_iter, default.tol, default.random_state, default.n_top) == (
        200, 1e-4, 0, 10)
    assert (default.verbose, command.engine, command.out) == (1, "local", None)
    assert command.folder_name(default) == "bbc_snmf-robust_k5"
    nmf, command = _options("-k", "auto", "--method", "nmf", "--consensus", "mmm")
    assert (nmf.loss, nmf.lam, nmf.lam_scale, nmf.dtype, nmf.n_runs) == (
        "frobenius", None, None, "float64", 10)
    assert (nmf.k, nmf.k_candidates, command.folder_name(nmf)) == (
        None, "auto", "bbc_nmf_kauto")
    gnmf, command = _options("-k", "2:4", "--method", "gnmf", "--lam-scale", "absolute")
    assert (gnmf.graph_lam, gnmf.lam_scale, gnmf.k_candidates) == (3.0, "absolute", (2, 3, 4))
    assert command.k_label == "2-4"


def test_the_parser_writes_the_library_names():
    """Each option is parsed under the setting it sets (FLAGS' name), the command's own
    options apart."""
    args = build_parser().parse_args([
        "cluster", "bbc", "-k", "5", "--seed", "3", "--runs", "4", "--keep", "2", "--top",
        "7", "--language", "none", "--consensus", "mmm", "-q", "--out", "x"])
    settings, command = cluster_options(args)
    assert (settings.random_state, settings.n_runs, settings.n_keep, settings.n_top,
            settings.stop_words, settings.verbose) == (3, 4, 2, 7, "none", 0)
    assert (command.out, command.quiet) == ("x", True)
    given = set(vars(args)) - {"command", "source", "k", "quiet", "out"}
    assert given <= set(FLAGS) and given <= set(ClusterSettings.__dataclass_fields__)


def test_options_are_frozen():
    settings, command = _options("-k", "5")
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.k = 6
    with pytest.raises(dataclasses.FrozenInstanceError):
        command.out = "elsewhere"


def test_options_given_are_kept_and_absent_ones_left_to_the_settings():
    args = build_parser().parse_args(["cluster", "bbc", "-k", "5", "--lam", "3"])
    assert args.lam == 3.0 and not hasattr(args, "max_iter")  # the parser fills nothing
    settings, _ = cluster_options(args)
    assert settings.lam == 3.0 and settings.max_iter == 200
    assert vars(args) == vars(build_parser().parse_args(["cluster", "bbc", "-k", "5",
                                                         "--lam", "3"]))  # not changed


def test_flags_table_names_existing_flags():
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    flags = {s for sub in commands.values() for a in sub._actions for s in a.option_strings}
    assert set(FLAGS.values()) <= flags


@pytest.mark.parametrize("message, expected", [
    ("max_iter must be an integer >= 1, got 0.", "--max-iter must be an integer >= 1, got 0."),
    ("`lam_scale` must be 'relative'", "--lam-scale must be 'relative'"),
    ("n_components 7 is larger", "-k 7 is larger"),
    ("X is empty (shape (0, 3))", "X is empty (shape (0, 3))"),        # not a parameter
    ("maximum iterations reached", "maximum iterations reached"),      # not a name
])
def test_library_errors_are_said_with_flags(message, expected):
    assert cli_message(message) == expected


def test_a_library_error_reaches_the_user_with_the_flag(tmp_path, capsys, monkeypatch):
    """A parameter error of the library (here the registry's estimator refusing a value)
    is printed naming the flag."""
    texts, labels = make_planted(10)
    path = write_csv(tmp_path / "c.csv", list(zip(texts, labels)), ["text", "label"])

    def refuse(self, *args, **kwargs):
        raise ValueError("n_init must be at most 3, got 5.")

    monkeypatch.setattr("semnmf.models.nmf.NMF.fit_transform", refuse)
    assert main(["cluster", str(path), "-k", "3", "--method", "nmf", "--n-init", "5", "-q",
                 "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.strip() == "semnmf: error: --n-init must be at most 3, got 5."


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_each_engine_makes_one_cluster_result(tmp_path, monkeypatch, engine):
    if engine == "dask":
        pytest.importorskip("distributed", reason="--engine dask needs the [dask] extra")
    from semnmf.workflows import ClusterResult

    made = []
    save = ClusterResult.save
    monkeypatch.setattr(ClusterResult, "save", lambda run, out, **kw: made.append(run)
                        or save(run, out, **kw))
    texts, labels = make_planted(15)
    path = write_csv(tmp_path / "c.csv", list(zip(texts, labels)), ["text", "label"])
    extra = ["--workers", "1"] if engine == "dask" else []
    assert main(["cluster", str(path), "-k", "3", "--method", "nmf", "--engine", engine,
                 *extra, "-q", "--max-iter", "50", "--out", str(tmp_path / "out")]) == 0
    (run,) = made
    assert type(run) is ClusterResult and run.settings.method == "nmf"
    assert (run.extra.get("engine", {}).get("name") == "dask") == (engine == "dask")
    assert run.k == 3 and len(run.labels) == len(run.strength) == 45
    assert run.scores["nmi"] > 0.9 and len(run.topics) == 3


def _cli_modules():
    for path in sorted(glob.glob(os.path.join(CLI, "*.py"))):
        with open(path, encoding="utf-8") as f:
            yield os.path.basename(path)[:-3], ast.parse(f.read())


def test_no_import_circle_in_cli():
    graph = {}
    for name, tree in _cli_modules():
        graph[name] = {(node.module or "").split(".")[0] for node in ast.walk(tree)
                       if isinstance(node, ast.ImportFrom) and node.level == 1}
    state = {}

    def visit(name, path):
        assert state.get(name) != "open", f"import circle: {' -> '.join(path + [name])}"
        if state.get(name) is None:
            state[name] = "open"
            for other in graph.get(name, ()):
                visit(other, path + [name])
            state[name] = "done"

    for name in graph:
        visit(name, [])
    assert "engine" in graph["cluster"] and "cluster" not in graph["engine"]


def test_no_namespace_is_changed_and_no_function_is_long():
    for name, tree in _cli_modules():
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    assert not (isinstance(target, ast.Attribute)
                                and isinstance(target.value, ast.Name)
                                and target.value.id in ("args", "options")), \
                        f"cli/{name}.py:{node.lineno} sets {target.value.id}.{target.attr}"
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setattr":
                assert getattr(node.args[0], "id", None) not in ("args", "options"), \
                    f"cli/{name}.py:{node.lineno} setattr on the options"
            if isinstance(node, ast.FunctionDef):
                length = node.end_lineno - node.lineno + 1
                assert length <= 80, f"cli/{name}.py: {node.name} has {length} lines"


# -- options refused before any work ---------------------------------------------------------

def test_huge_lam_is_refused_before_any_work(planted_csv_path, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["cluster", planted_csv_path, "-k", "3", "--lam", "1e308",
                 "--out", str(out), *FAST]) == 2
    assert "--lam must be between 0 and 1e+06" in one_error(capsys)
    assert not out.exists()


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
