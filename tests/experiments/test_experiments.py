"""The experiments module and `semnmf bench`: protocols, cache/resume, tables, λ sweep."""

import json
import os

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import make_planted
from semnmf import NMF, Corpus, SemanticNMF
from semnmf.cli import main
from semnmf.experiments import (PAPER, ResultCache, lambda_sweep, plot_sweep, run_dataset,
                                summarize, table2_markdown)
from semnmf.experiments import protocol
from semnmf.models.registry import METHODS, TABLE2_ORDER, Method, get_method
from semnmf.experiments.tables import beats_baselines
from semnmf.metrics import nmi

FAST = ["skmeans", "nmf", "snmf"]


@pytest.fixture(scope="module")
def corpus():
    texts, labels = make_planted(docs_per_topic=12)
    return Corpus(texts, labels=labels)


@pytest.fixture
def dataset_folder(tmp_path, corpus):
    root = tmp_path / "data"
    corpus.to_folder(root / "planted")
    return root


def test_cache_saves_atomically_and_resumes(tmp_path):
    path = tmp_path / "sub" / "cache.json"
    cache = ResultCache(str(path))
    cache.put("d", "paper", "nmf", 0, {"nmi": 0.5, "objective": 2.0})
    cache.put("d", "paper", "nmf", 2, {"nmi": 0.7, "objective": 1.0})
    again = ResultCache(str(path))
    assert again.get("d", "paper", "nmf", 0) == {"nmi": 0.5, "objective": 2.0}
    assert [r["nmi"] for r in again.runs("d", "paper", "nmf", 3)] == [0.5, 0.7]
    assert not [f for f in os.listdir(path.parent) if f.startswith(".cache-")]


def test_two_benchmarks_sharing_a_cache_keep_each_others_runs(tmp_path):
    """Each process holds the records it loaded; saving merges with the file instead of
    overwriting it, so a run saved by the other process is not lost."""
    path = str(tmp_path / "cache.json")
    first, second = ResultCache(path), ResultCache(path)
    first.put("cstr", "paper", "nmf", 0, {"nmi": 0.5, "objective": 2.0})
    second.put("ng5", "paper", "nmf", 0, {"nmi": 0.6, "objective": 3.0})
    first.put("cstr", "paper", "nmf", 1, {"nmi": 0.7, "objective": 1.0})
    merged = ResultCache(path)
    assert merged.get("ng5", "paper", "nmf", 0) == {"nmi": 0.6, "objective": 3.0}
    assert [r["nmi"] for r in merged.runs("cstr", "paper", "nmf", 2)] == [0.5, 0.7]
    # a record removed from the file by hand is not written back by a process that only
    # read it
    with open(path, encoding="utf-8") as f:
        records = json.load(f)
    del records[ResultCache.key("ng5", "paper", "nmf", 0)]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(records, f)
    merged.put("cstr", "paper", "nmf", 2, {"nmi": 0.8, "objective": 0.5})
    assert ResultCache(path).get("ng5", "paper", "nmf", 0) is None
    assert ResultCache(path).get("cstr", "paper", "nmf", 2)["nmi"] == 0.8


def test_summarize_keeps_the_best_runs_by_objective():
    records = [{"nmi": v, "objective": o} for v, o in [(0.1, 5.0), (0.9, 1.0), (0.5, 2.0),
                                                       (0.3, 3.0)]]
    mean, sd, n = summarize(records, best=2)
    assert n == 2 and mean == pytest.approx(0.7) and sd == pytest.approx(0.2)
    assert summarize(records)[0] == pytest.approx(0.45)
    assert summarize([], best=2) is None


def test_method_registry():
    assert get_method("snmf").association == "ppmi"
    assert get_method("senmf").association == "sppmi"
    assert not hasattr(get_method("senmf"), "context")  # its name of 0.1, removed in 0.3
    assert not get_method("dcn").shared_start
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        get_method("nope")
    # every published number belongs to a registered method
    assert {m for table in PAPER.values() for m in table} <= set(METHODS)


def test_one_meaning_per_method_name():
    """The papers' methods keep their paper names in the registry, bench, the tables and
    the command line (snmf-kl is the slides' SNMF-KL on the command line too, since 0.3);
    the command line's default is snmf-robust everywhere."""
    from semnmf.models.registry import CLI_METHODS, DEFAULT_CLI_METHOD

    snmf, slides, robust = get_method("snmf"), get_method("snmf-kl"), get_method("snmf-robust")
    assert snmf.params.get("loss", "frobenius") == "frobenius" and "lam" not in snmf.params
    assert slides.params == {"loss": "kl"} and "n_init" not in slides.params  # λ 10, 1 start
    assert robust.params["lam"] == 1.0 and robust.params["n_init"] == 5
    assert DEFAULT_CLI_METHOD == "snmf-robust" and CLI_METHODS["snmf-robust"] is robust
    assert CLI_METHODS["snmf"] is snmf and CLI_METHODS["snmf-kl"] is slides
    assert all(CLI_METHODS[name].name == name for name in CLI_METHODS)  # one name
    assert "snmf" in TABLE2_ORDER and "snmf-ppmi" not in METHODS
    assert len({m.label for m in METHODS.values()}) == len(METHODS)


def test_names_of_0_1_are_unknown():
    """snmf-ppmi, snmf's name in 0.1, was removed in 0.3 (CHANGELOG.md): it is an unknown
    method, and a cache's runs under it are not read as snmf's."""
    with pytest.raises(ValueError, match="unknown method 'snmf-ppmi'; choose from skmeans"):
        get_method("snmf-ppmi")
    cache = ResultCache()
    cache.records["planted|paper|snmf-ppmi|0"] = {"nmi": 0.8}
    assert cache.get("planted", "paper", "snmf", 0) is None


def test_paper_protocol_starts_from_the_shared_kmeans(corpus):
    X = corpus.tfidf()
    cache = ResultCache()
    run_dataset("planted", corpus, X, FAST, cache, protocols=("paper",), runs=2,
                log=lambda m: None)
    start, km, _ = protocol.shared_start(X, corpus.n_classes, 1)
    expected = NMF(corpus.n_classes, init=tuple(start),
                   random_state=1).fit(X)
    record = cache.get("planted", "paper", "nmf", 1)
    assert record["objective"] == pytest.approx(expected.objective_)
    assert record["nmi"] == pytest.approx(nmi(corpus.labels, expected.labels_))
    assert cache.get("planted", "paper", "skmeans", 1)["nmi"] == pytest.approx(
        nmi(corpus.labels, km.labels_))
    assert cache.get("planted", "paper", "snmf", 0)["nmi"] > 0.9


def test_finished_cells_are_not_recomputed(corpus, monkeypatch):
    X = corpus.tfidf()
    cache = ResultCache()
    run_dataset("planted", corpus, X, FAST, cache, runs=2, seeds=2, log=lambda m: None)
    assert len(cache.records) == 2 * 3 + 2 * 3

    def refuse(*args, **kwargs):
        raise AssertionError("a cached run was recomputed")

    monkeypatch.setattr(protocol, "fit_one", refuse)
    monkeypatch.setattr(protocol, "shared_start", refuse)
    run_dataset("planted", corpus, X, FAST, cache, runs=2, seeds=2, log=lambda m: None)


def test_a_method_with_its_own_start_reuses_its_seed_runs(corpus, monkeypatch):
    """Without the shared start, paper run r is the seed-r fit (DCN: 11 min a fit on
    CLASSIC4): it is taken from the seeds protocol, not fitted twice."""
    own = Method("own", "Own", "semnmf.models.nmf:NMF", {"init": "random"},
                 shared_start=False)
    calls = []
    original = protocol.fit_one

    def counting(method, *args, **kwargs):
        calls.append((method.name, kwargs.get("start") is not None))
        return original(method, *args, **kwargs)

    monkeypatch.setattr(protocol, "fit_one", counting)
    cache = ResultCache()
    run_dataset("planted", corpus, corpus.tfidf(), [own, "nmf"], cache, runs=3, seeds=2,
                log=lambda m: None)
    assert calls.count(("own", False)) == 3  # seeds 0, 1 and paper run 2
    assert calls.count(("nmf", True)) == 3  # the shared start: every paper run is a fit
    for run in (0, 1):
        assert cache.get("planted", "paper", "own", run) == cache.get("planted", "seeds", "own", run)
    fresh = ResultCache()  # fitted directly, paper run 2 is what a seed-2 fit gives
    run_dataset("planted", corpus, corpus.tfidf(), [own], fresh, protocols=("seeds",), seeds=3,
                log=lambda m: None)
    assert cache.get("planted", "paper", "own", 2)["nmi"] == fresh.get("planted", "seeds", "own", 2)["nmi"]


def test_a_failing_method_is_left_out_and_the_rest_runs(corpus, monkeypatch):
    messages = []
    original = protocol.fit_one

    def flaky(method, *args, **kwargs):
        if method.name == "nmf":
            raise FloatingPointError("boom")
        return original(method, *args, **kwargs)

    monkeypatch.setattr(protocol, "fit_one", flaky)
    cache = ResultCache()
    run_dataset("planted", corpus, corpus.tfidf(), FAST, cache, runs=2, seeds=1,
                log=messages.append)
    assert sum("nmf failed and is left out: FloatingPointError: boom" in m
               for m in messages) == 1
    assert cache.get("planted", "paper", "nmf", 0) is None
    assert cache.get("planted", "paper", "snmf", 1) is not None


def test_missing_extra_is_reported_not_raised(corpus, monkeypatch):
    method = get_method("dcn")

    def no_torch():
        raise ImportError("No module named 'torch'")

    monkeypatch.setattr(type(method), "estimator_class", lambda self: no_torch())
    reason = protocol.method_available(method)
    assert "semnmf[deep]" in reason and "torch" in reason


def test_table_has_published_numbers_and_the_claim(corpus):
    cache = ResultCache()
    for run in range(3):
        for name, value in [("skmeans", 0.6), ("nmf", 0.5), ("snmf", 0.8)]:
            cache.put("cstr", "paper", name, run, {"nmi": value + run / 100, "ari": value,
                                                    "objective": float(run)})
    text = table2_markdown(cache, {"cstr": "n = 3"}, FAST, runs=3, best=2, seeds=2)
    assert "| SNMF (PPMI) | 0.805 ± 0.005 |" in text
    assert "| 2 of 3 / 0 |" in text
    assert "0.76 / 0.80" in text  # the published CSTR numbers
    assert "| cstr | yes | not run |" in text


def test_fewer_runs_keep_the_same_proportion():
    from semnmf.experiments.tables import kept_runs
    assert kept_runs(50, 50, 10) == 10
    assert kept_runs(20, 50, 10) == 4
    assert kept_runs(2, 50, 10) == 1
    assert kept_runs(0, 50, 10) == 0


def test_beats_baselines():
    summary = {"snmf": {("paper", "nmi"): (0.7, 0, 10)},
               "nmf": {("paper", "nmi"): (0.6, 0, 10)},
               "gnmf": {("paper", "nmi"): (0.75, 0, 10)}}
    assert beats_baselines(summary) is False
    summary["gnmf"][("paper", "nmi")] = (0.65, 0, 10)
    assert beats_baselines(summary) is True
    assert beats_baselines({"nmf": summary["nmf"]}) is None


def test_lambda_sweep_at_zero_is_nmf(corpus, tmp_path):
    X = corpus.tfidf()
    M = corpus.word_context("window")
    result = lambda_sweep(X, corpus.labels, 3, M, lambdas=(0, 10), seeds=2)
    expected = nmi(corpus.labels, NMF(3, random_state=1).fit_predict(X))
    assert result["nmi"][0][1] == pytest.approx(expected)
    snmf = nmi(corpus.labels, SemanticNMF(3, lam=10, random_state=0).fit_predict(X, M=M))
    assert result["nmi"][1][0] == pytest.approx(snmf)
    path = tmp_path / "sweep.png"
    fig = plot_sweep({("planted", "ppmi"): result, ("other", "ppmi"): result}, str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 2


def test_cli_bench_writes_table_and_resumes(dataset_folder, tmp_path, capsys):
    out, cache = tmp_path / "results", tmp_path / "cache.json"
    argv = ["bench", "planted", "--data", str(dataset_folder), "--methods", "skmeans,nmf",
            "--runs", "2", "--best", "1", "--seeds", "1", "--out", str(out),
            "--cache", str(cache), "--quiet"]
    assert main(argv) == 0
    text = (out / "table2.md").read_text(encoding="utf-8")
    assert "## planted (n = 36" in text and "| NMF |" in text
    records = json.loads(cache.read_text(encoding="utf-8"))
    assert len(records) == 2 * 2 + 2
    stamp = cache.stat().st_mtime_ns
    assert main(argv) == 0
    assert cache.stat().st_mtime_ns == stamp  # nothing recomputed, nothing rewritten
    (out / "table2.md").unlink()
    assert main(argv[:4] + ["--report-only", "--methods", "skmeans,nmf,onmf"] + argv[6:]) == 0
    assert "| ONMF | – |" in (out / "table2.md").read_text(encoding="utf-8")
    assert cache.stat().st_mtime_ns == stamp


def test_cli_bench_refuses_a_name_of_0_1(dataset_folder, tmp_path, capsys):
    """--methods snmf-ppmi (snmf's name in 0.1, removed in 0.3) is refused as any unknown
    method is, before anything runs."""
    out = tmp_path / "results"
    assert main(["bench", "planted", "--data", str(dataset_folder), "--methods", "snmf-ppmi",
                 "--runs", "2", "--best", "2", "--seeds", "1", "--out", str(out),
                 "--report-only", "--quiet"]) == 2
    assert "unknown method 'snmf-ppmi'" in capsys.readouterr().err
    assert not out.exists()


def test_cli_bench_sweep_figures(dataset_folder, tmp_path, monkeypatch):
    monkeypatch.setattr("semnmf.experiments.sweep.LAMBDAS", (0, 1))

    def build(self, kind):  # PGLOVE's training is tested in test_glove.py; a stand-in here
        if kind == "pglove":
            return sp.csr_matrix(np.ones((self.corpus.n_terms, 4)))
        return self.corpus.word_context("window")

    monkeypatch.setattr(protocol.Contexts, "_build", build)
    out = tmp_path / "results"
    assert main(["bench", "planted", "--data", str(dataset_folder), "--methods", "nmf",
                 "--protocol", "seeds", "--seeds", "1", "--sweep", "--sweep-seeds", "1",
                 "--out", str(out), "--cache", str(tmp_path / "c.json"), "--quiet"]) == 0
    for kind in ("ppmi", "pglove"):
        assert (out / f"lambda_sweep_{kind}.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("extra, message", [
    (["--methods", "nope"], "unknown method 'nope'"),
    (["--runs", "2", "--best", "3"], "--best (3) cannot exceed --runs (2)"),
    (["--seeds", "0"], "--seeds must be at least 1"),
])
def test_cli_bench_bad_arguments(dataset_folder, tmp_path, capsys, extra, message):
    argv = ["bench", "planted", "--data", str(dataset_folder), "--out", str(tmp_path / "o"),
            "--cache", str(tmp_path / "c.json")] + extra
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_cli_bench_missing_dataset_is_skipped(tmp_path, capsys, no_semnmf_data):
    assert main(["bench", "no_such_corpus", "--data", str(tmp_path), "--out",
                 str(tmp_path / "o"), "--cache", str(tmp_path / "c.json")]) == 0
    output = capsys.readouterr()
    assert "skipping no_such_corpus" in output.out + output.err
    assert "nothing to run" in output.out + output.err


def test_graph_methods_share_one_document_graph(corpus, monkeypatch):
    from semnmf import graphs

    calls = []
    original = graphs.document_graph

    def counted(*args, **kwargs):
        calls.append(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(graphs, "document_graph", counted)
    cache = ResultCache()
    run_dataset("planted", corpus, corpus.tfidf(), ["gnmf", "sgnmf"], cache, runs=2, seeds=2,
                log=lambda m: None)
    assert len(cache.records) == 8
    assert len(calls) == 1
    assert cache.get("planted", "seeds", "sgnmf", 1)["nmi"] > 0.9


def test_pglove_matrix_is_kept_on_disk(corpus, tmp_path, monkeypatch):
    calls = []

    def fake_glove(self, **kwargs):
        calls.append(kwargs)
        return np.full((self.n_terms, 4), 0.5)

    monkeypatch.setattr(Corpus, "glove_context", fake_glove)
    first = protocol.Contexts(corpus, cache_dir=str(tmp_path), name="planted")["pglove"]
    second = protocol.Contexts(corpus, cache_dir=str(tmp_path), name="planted")["pglove"]
    assert len(calls) == 1 and calls[0]["context"] == "window"
    np.testing.assert_array_equal(first, second)


def test_table2_states_its_nmi_convention(tmp_path):
    """The preamble names the NMI normalization the tables use (metrics.nmi's default) and
    the paper's (Strehl & Ghosh's geometric one)."""
    import inspect

    from semnmf.experiments.tables import write_table2

    path = write_table2(str(tmp_path / "table2.md"), ResultCache(), {}, ["nmf"], runs=2,
                        best=1, seeds=1)
    text = open(path, encoding="utf-8").read()
    average = inspect.signature(nmi).parameters["average_method"].default
    assert f'average_method="{average}"' in text
    assert "Strehl & Ghosh's geometric normalization" in text
    assert f"The tables report the {average} one" in text
