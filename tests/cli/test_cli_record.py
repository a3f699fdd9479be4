"""run.json's ``cli_arguments``: the keys and values that ``semnmf report``, ``semnmf edit``
and earlier run folders read, pinned for a ``semnmf cluster`` run, a ``semnmf tree`` run
and a run made in Python (``result.save``)."""

import json

from conftest import make_planted, write_csv
from semnmf.cli import main

# the keys of a `semnmf cluster` run, as run folders have always recorded them
CLUSTER_KEYS = {
    "association", "cache_dir", "command", "consensus", "context", "delimiter", "device",
    "dtype", "embed", "encoding", "engine", "graph_lam", "id_column", "init", "k", "k_candidates", "keep",
    "label_column", "lam", "lam_scale", "language", "loss", "max_df", "max_iter", "max_nnz",
    "method", "method_reason", "min_cluster_size", "min_count", "min_df", "n_init",
    "on_bad_lines", "orthogonal", "out", "overwrite", "partition", "pooling", "quiet", "refine", "report",
    "runs", "scheduler", "seed", "seed_words", "semantics", "semantics_reason", "source",
    "stem", "stop_words_file", "text_column", "time_column", "time_period", "date_format",
    "token_pattern",
    "tol", "top", "top_k", "vocab", "weighting", "window", "workers"}
# a run made in Python records its settings under the same names, without the command
# line's own (the command, the output folder, the engine)
PYTHON_KEYS = CLUSTER_KEYS - {"command", "out", "overwrite", "quiet", "report", "engine",
                              "workers", "scheduler"}
TREE_KEYS = {
    "out", "overwrite", "top", "quiet", "context", "window", "association", "min_count",
    "top_k", "max_nnz", "language", "token_pattern", "vocab", "min_df", "max_df", "stem",
    "weighting", "stop_words_file", "source", "text_column", "label_column", "id_column",
    "encoding", "delimiter", "on_bad_lines", "command", "leaves", "splitter", "lam", "beta", "trials", "score_threshold",
    "max_iter", "tol", "stop", "assign_labels", "seed", "report"}


def _arguments(folder):
    with open(folder / "run.json", encoding="utf-8") as f:
        return json.load(f)["cli_arguments"]


def _csv(tmp_path):
    texts, labels = make_planted(10)
    return str(write_csv(tmp_path / "c.csv", list(zip(texts, labels)), ["text", "label"]))


def test_cluster_records_its_options_under_the_names_run_folders_use(tmp_path):
    source, stop = _csv(tmp_path), tmp_path / "stop.txt"
    stop.write_text("report\n", encoding="utf-8")
    out = tmp_path / "run"
    assert main(["cluster", source, "-k", "3", "--method", "nmf", "--consensus", "mmm",
                 "--runs", "2", "--keep", "2", "--seed", "4", "--top", "6", "--language",
                 "none", "--stop-words", str(stop), "--max-iter", "20", "-q",
                 "--out", str(out)]) == 0
    arguments = _arguments(out)
    assert set(arguments) == CLUSTER_KEYS
    assert {key: arguments[key] for key in (
        "command", "source", "out", "k", "k_candidates", "method", "seed", "runs", "keep",
        "top", "language", "vocab", "stop_words_file", "max_iter", "tol", "loss", "init",
        "dtype", "context", "window", "min_count", "max_nnz", "lam", "engine", "workers",
        "quiet", "overwrite", "report", "semantics")} == {
        "command": "cluster", "source": source, "out": str(out), "k": 3, "k_candidates": None,
        "method": "nmf", "seed": 4, "runs": 2, "keep": 2, "top": 6, "language": "none",
        "vocab": None, "stop_words_file": str(stop), "max_iter": 20, "tol": 1e-4,
        "loss": "frobenius", "init": "skmeans", "dtype": "float64", "context": "auto",
        "window": 10, "min_count": 1, "max_nnz": 5_000_000, "lam": None, "engine": "local",
        "workers": None, "quiet": True, "overwrite": False, "report": False,
        "semantics": "corpus"}


def test_cluster_records_the_choices_of_k_and_the_default_method(tmp_path):
    source = _csv(tmp_path)
    assert main(["cluster", source, "-k", "2:4", "-q", "--max-iter", "20",
                 "--out", str(tmp_path / "run")]) == 0
    arguments = _arguments(tmp_path / "run")
    assert set(arguments) == CLUSTER_KEYS
    assert arguments["k_candidates"] == [2, 3, 4] and arguments["k"] in (2, 3, 4)
    assert (arguments["method"], arguments["lam"], arguments["lam_scale"],
            arguments["association"], arguments["seed"], arguments["top"]) == (
        "snmf-robust", 1.0, "relative", "ppmi", 0, 10)
    assert arguments["method_reason"].startswith("the default")


def test_tree_records_its_options_under_the_names_run_folders_use(tmp_path):
    source = _csv(tmp_path)
    assert main(["tree", source, "--leaves", "3", "--seed", "2", "--top", "6", "--language",
                 "none", "-q", "--out", str(tmp_path / "tree")]) == 0
    arguments = _arguments(tmp_path / "tree")
    assert set(arguments) == TREE_KEYS
    assert (arguments["command"], arguments["leaves"], arguments["seed"], arguments["top"],
            arguments["language"], arguments["trials"], arguments["max_iter"]) == (
        "tree", 3, 2, 6, "none", 3, 500)


def test_a_python_run_records_the_command_lines_names(tmp_path):
    import semnmf

    texts, _ = make_planted(10)
    result = semnmf.cluster(texts, 3, method="nmf", max_iter=20, random_state=5, n_top=7,
                            stop_words="none")
    result.save(tmp_path / "py")
    arguments = _arguments(tmp_path / "py")
    assert set(arguments) == PYTHON_KEYS
    assert (arguments["seed"], arguments["top"], arguments["language"], arguments["source"],
            arguments["max_iter"], arguments["tol"], arguments["context"]) == (
        5, 7, "none", None, 20, 1e-4, None)
