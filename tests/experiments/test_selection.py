"""Label-free choice of k: parsing -k, the candidate grid, the curves and the choice, and
``semnmf cluster -k auto`` writing its curve into run.json."""

import json

import numpy as np
import pytest

from conftest import make_planted, planted_corpus, read_json, write_csv
from semnmf.models.selection import (CRITERIA, CRITERION_CURVES, CURVES, DEFAULT_CENTER,
                                          DEFAULT_CRITERION, DEFAULT_N_INIT, DEFAULT_PARAM,
                                          candidate_grid, criterion_scores, measure_candidates,
                                          select_n_components)
from semnmf.cli.cluster import parse_k
from semnmf.models.selection import _consensus_dispersion, _cosine_sum, _silhouette


def test_parse_k():
    assert parse_k("5") == 5
    assert parse_k("auto") == ("auto", None)
    assert parse_k("2:5") == ("grid", [2, 3, 4, 5])
    assert parse_k("2:10:4") == ("grid", [2, 6, 10])
    assert parse_k("10,5,20,5") == ("grid", [5, 10, 20])
    for bad in ("x", "5:2", "0:3", "2:3:0", ",", "1:2:3:4"):
        with pytest.raises(ValueError, match="-k must be"):
            parse_k(bad)


def test_candidate_grid():
    grid = candidate_grid(10_000)
    assert grid[:5] == [2, 3, 4, 5, 6] and grid[-1] == 24  # 3x the score's center, 8
    assert grid == sorted(set(grid)) and len(grid) <= 12
    assert candidate_grid(10_000, k_max=50)[-1] == 50
    assert candidate_grid(200) == [2, 3, 4, 5, 6, 8, 10, 12, 15, 20]
    assert candidate_grid(20) == [2]


@pytest.mark.parametrize("k", [3, 4, 5, 12, 20])
def test_planted_clusters_are_found(k):
    """The default's pull towards 8 clusters does not override a clear structure on either
    side of it (20 topics: 19, the grid's nearest candidate)."""
    for seed in (1, 2) if k < 20 else (1,):
        X, _ = planted_corpus(n_per=40, k=k, d_per=12, seed=seed)
        assert select_n_components(X, "auto", random_state=0).best == (k if k < 20 else 19)


def test_the_default_record():
    X, y = planted_corpus(n_per=40, k=4, d_per=12, seed=1)
    result = select_n_components(X, [2, 3, 4, 5, 6, 8], random_state=0)
    assert result.best == 4
    assert result.candidates == [2, 3, 4, 5, 6, 8] and len(result.scores) == 6
    record = result.record()
    assert record["criterion"] == DEFAULT_CRITERION and record["chosen"] == 4
    assert record["center"] == 8
    assert record["name"] == "stability rescaled to [0, 1] -0.7·|log(k/8)|"
    assert record["candidates"] == [2, 3, 4, 5, 6, 8] and len(record["scores"]) == 6


def test_the_largest_candidate_is_chosen_with_a_warning():
    """It was chosen without a word (300 BBC documents: k = 30, the top of the grid)."""
    import warnings

    X, y = planted_corpus(n_per=40, k=4, d_per=12, seed=1)
    with pytest.warns(UserWarning, match=r"the chosen k=4 is the largest candidate: .* -k 2:8"):
        assert select_n_components(X, [2, 3, 4], random_state=0).best == 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # found inside the range: no warning
        assert select_n_components(X, [2, 3, 4, 5, 6, 8], random_state=0).best == 4


def test_every_criterion_scores_every_candidate():
    X, _ = planted_corpus(n_per=20, k=3, d_per=10, seed=2)
    curves = measure_candidates(X, [2, 3, 4, 6], random_state=0)
    for criterion in CRITERIA:
        raw, scores = criterion_scores(curves, criterion, 0.05 if criterion == "gain" else 0)
        assert len(raw) == len(scores) == 4
        assert np.isfinite(scores).any()
    with pytest.raises(ValueError, match="Unknown criterion"):
        criterion_scores(curves, "nope")


@pytest.mark.filterwarnings("ignore:the chosen k=.* is the largest candidate")
def test_only_the_criterions_curves_are_measured_and_they_are_the_same():
    """-k auto measures the curves its criterion reads; a subset of the curves has the
    values the full measurement gives (the null sample of ``null_cosine`` draws from the
    random stream, so it is compared with a full measurement with or without it)."""
    X, _ = planted_corpus(n_per=20, k=3, d_per=10, seed=2)
    full = measure_candidates(X, [2, 3, 4, 6], random_state=4)
    assert set(full) == {*CURVES, "candidates", "n_sample"}
    without_null = measure_candidates(X, [2, 3, 4, 6], gap=False, random_state=4)
    assert set(without_null) == set(full) - {"null_cosine"}
    for criterion, names in CRITERION_CURVES.items():
        reference = full if "null_cosine" in names else without_null
        part = measure_candidates(X, [2, 3, 4, 6], curves=names, random_state=4)
        assert set(part) == {*names, "candidates", "n_sample"}
        for name in names:
            if name == "cluster_jaccard":                # one list per k, k·runs long
                assert part[name] == reference[name]
            else:
                np.testing.assert_array_equal(part[name], reference[name])
        param = {"gain": 0.05, "stable_clusters": 0.75}.get(criterion, 0)
        result = select_n_components(X, [2, 3, 4, 6], criterion=criterion, param=param,
                                     n_init=1, random_state=4)
        assert set(result.curves) == set(names)
        np.testing.assert_array_equal(result.scores,
                                      criterion_scores(reference, criterion, param)[1])
        json.dumps(result.record(), allow_nan=False)   # every criterion's record is JSON
    # the default: its penalty, center and starts reach the curves and the scores
    default = select_n_components(X, [2, 3, 4, 6], random_state=4)
    curves = measure_candidates(X, [2, 3, 4, 6], curves=[DEFAULT_CRITERION],
                                n_init=DEFAULT_N_INIT, random_state=4)
    assert default.curves[DEFAULT_CRITERION] == curves[DEFAULT_CRITERION]
    np.testing.assert_array_equal(default.scores, criterion_scores(
        curves, DEFAULT_CRITERION, DEFAULT_PARAM, DEFAULT_CENTER)[1])
    assert curves[DEFAULT_CRITERION] != measure_candidates(
        X, [2, 3, 4, 6], curves=[DEFAULT_CRITERION], random_state=4)[DEFAULT_CRITERION]
    with pytest.raises(ValueError, match="Unknown curve 'nope'"):
        measure_candidates(X, [2, 3], curves=["stability", "nope"])


def test_selection_is_reproducible_and_label_free():
    X, _ = planted_corpus(n_per=25, k=3, d_per=10, seed=3)
    a = select_n_components(X, [2, 3, 4], random_state=5)
    b = select_n_components(X, [2, 3, 4], random_state=5)
    assert a.scores == b.scores and a.best == b.best


def test_silhouette_and_dispersion_match_their_definitions():
    from sklearn.metrics import silhouette_score

    from semnmf.models.selection import _normalize_rows
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = _normalize_rows(sp.random(120, 30, density=0.3, random_state=0, format="csr"))[0]
    labels = rng.integers(0, 4, 120)
    _, sums = _cosine_sum(X, labels, 4)
    assert _silhouette(X, labels, 4, sums) == pytest.approx(
        silhouette_score(X.toarray(), labels, metric="cosine"))
    partitions = [rng.integers(0, 3, 120) for _ in range(4)]
    co = sum(np.eye(3)[p] @ np.eye(3)[p].T for p in partitions) / 4
    assert _consensus_dispersion(partitions, 3) == pytest.approx(np.mean(4 * (co - 0.5) ** 2))


def test_bad_candidates_refused():
    X, _ = planted_corpus(n_per=10, k=2, d_per=5)
    with pytest.raises(ValueError, match="needs more documents"):
        select_n_components(X, [2, 50])
    with pytest.raises(ValueError, match="Unknown criterion"):
        select_n_components(X, [2, 3], criterion="nope")
    with pytest.raises(ValueError, match="at least 2"):
        select_n_components(X, [1, 2, 3])
    with pytest.raises(ValueError, match="n_runs=1"):
        select_n_components(X, [2, 3], n_runs=1)
    with pytest.raises(ValueError, match="center=0"):
        select_n_components(X, [2, 3], center=0)
    with pytest.raises(ValueError, match="Jaccard threshold"):
        select_n_components(X, [2, 3], criterion="stable_clusters", param=-0.7)


def test_cli_k_auto_records_the_curve(tmp_path):
    from semnmf.cli import main

    texts, labels = make_planted(docs_per_topic=15)
    source = write_csv(tmp_path / "p.csv", zip(texts, labels), ["text", "label"])
    out = tmp_path / "auto"
    assert main(["cluster", str(source), "-k", "2:4", "--method", "nmf", "--out", str(out),
                 "--quiet", "--max-iter", "20"]) == 0
    run = read_json(out / "run.json")
    selection = run["k_selection"]
    assert selection["criterion"] == DEFAULT_CRITERION
    assert selection["candidates"] == [2, 3, 4]
    assert len(selection["scores"]) == 3
    assert selection["chosen"] == len(run["cluster_sizes"]) == 3
    assert run["cli_arguments"]["k"] == 3
    # the report draws the curve
    from semnmf.report.html import write_report

    page = open(write_report(out), encoding="utf-8").read()
    assert f"-k auto: {DEFAULT_CRITERION}" in page


def test_cli_k_refused_values(tmp_path):
    from semnmf.cli import main

    texts, labels = make_planted(docs_per_topic=5)
    source = write_csv(tmp_path / "p.csv", zip(texts, labels), ["text", "label"])
    with pytest.raises(SystemExit):
        main(["cluster", str(source), "-k", "two", "--quiet"])
    assert main(["cluster", str(source), "-k", "1:3", "--quiet"]) != 0
    assert main(["cluster", str(source), "-k", "2:40", "--quiet",
                 "--out", str(tmp_path / "x")]) != 0  # 15 documents


def test_the_penalty_pulls_towards_its_center():
    """``curve01 + a |log(k / c)|``: c = 1 is the ``a log k`` rule; the penalty is 0 at c and
    the same at c·r and c/r."""
    from semnmf.models.selection import penalized_scores

    ks = np.array([2, 4, 8, 16, 32])
    raw = np.array([0.0, 1.0, 0.5, 0.25, 0.0])
    np.testing.assert_allclose(penalized_scores(raw, ks, -0.3, center=1),
                               raw / raw.max() - 0.3 * np.log(ks))
    flat = penalized_scores(np.zeros(5), ks, -0.3, center=8)
    assert flat[2] == 0 and flat[1] == pytest.approx(flat[3]) and flat[0] == pytest.approx(flat[4])
    assert np.argmax(flat) == 2


def test_cluster_jaccards_and_the_stable_clusters_criterion():
    from semnmf.models.selection import _cluster_jaccards, stable_count

    rng = np.random.default_rng(0)
    labels = rng.integers(0, 4, 200)
    relabelled = np.array([2, 0, 3, 1])[labels]          # the same partition, other names
    assert _cluster_jaccards([labels, relabelled, labels], 4) == [1.0] * 12
    split = labels.copy()
    split[(labels == 0) & (rng.random(200) < 0.5)] = 3    # cluster 0 half merged into 3
    values = np.array(_cluster_jaccards([labels, split], 4)).reshape(2, 4)
    # reference: cluster 1 and 2 of the first run are matched exactly; 0 and 3 are not
    assert values[0, 1] == values[0, 2] == 1.0
    assert values[0, 0] < 0.75 and values[0, 3] < 1.0
    assert stable_count(values.ravel(), 4, 0.99) == pytest.approx(2.0)
    curves = {"candidates": [2, 4], "cluster_jaccard": [[1.0] * 4, values.ravel().tolist()]}
    raw, scores = criterion_scores(curves, "stable_clusters", 0.99)
    assert raw.tolist() == [2.0, 2.0] and np.argmax(scores) == 0   # ties: the smaller k


def test_on_partitions_sees_every_candidates_runs():
    X, _ = planted_corpus(n_per=20, k=3, d_per=10, seed=2)
    seen = []
    measure_candidates(X, [2, 3], curves=["stability"], n_runs=3, random_state=0,
                       on_partitions=lambda k, rows, parts: seen.append((k, rows, parts)))
    assert [k for k, _, _ in seen] == [2, 3]
    for k, rows, parts in seen:
        assert len(parts) == 3 and all(p.shape == rows.shape and p.max() < k for p in parts)
        assert rows.size == X.shape[0] and np.all(np.diff(rows) > 0)


def test_the_runs_on_threads_give_the_curves_of_runs_one_by_one(monkeypatch):
    from semnmf.models import selection

    X, _ = planted_corpus(n_per=30, k=4, seed=3)
    curves = {}
    for threads in (1, 2):
        monkeypatch.setattr(selection, "n_threads", lambda threads=threads: threads)
        curves[threads] = measure_candidates(X, [2, 3, 4, 6], n_runs=3, random_state=7)
    assert curves[1].keys() == curves[2].keys()
    for name in curves[1]:
        assert curves[1][name] == curves[2][name], name
