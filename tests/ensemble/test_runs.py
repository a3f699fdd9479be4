"""ClusterEnsemble: runs fitted and kept as by hand, their consensus, recluster, seeds."""

import numpy as np
import pytest
import scipy.sparse as sp

from semnmf import GTNMF, NMF, ClusterEnsemble, HierarchicalNMF, SphericalKMeans
from semnmf.ensemble import consensus, mixture_consensus, pairwise_agreement
from semnmf.ensemble.runs import CONSENSUS_METHODS, MMM_STARTS, cluster_means, combine, run_seeds
from semnmf.metrics import ari

from conftest import planted_corpus


@pytest.fixture(scope="module")
def data():
    X, y = planted_corpus(n_per=20, k=3, noise=0.15, seed=1)
    return X, y


def by_hand(X, estimator, seeds, keep):
    """Fit every seed, keep the ``keep`` smallest objectives: (kept seeds, partitions)."""
    runs = []
    for seed in seeds:
        model = NMF(**{**estimator.get_params(), "random_state": seed}).fit(X)
        runs.append((model.objective_, seed, model.labels_))
    kept = sorted(runs, key=lambda r: r[0])[:keep]
    return [r[1] for r in kept], np.column_stack([r[2] for r in kept])


@pytest.mark.parametrize("method", ["mcla", "anmi", "mmm"])
def test_matches_runs_fitted_and_combined_by_hand(data, method):
    X, y = data
    estimator = NMF(3, init="random", max_iter=40)
    ensemble = ClusterEnsemble(estimator, n_runs=5, n_keep=3, consensus=method,
                               random_state=7).fit(X)
    seeds, partitions = by_hand(X, estimator, range(7, 12), 3)
    assert ensemble.kept_seeds_ == seeds
    np.testing.assert_array_equal(ensemble.partitions_, partitions)
    if method == "mmm":
        expected = mixture_consensus(partitions, 3, n_init=MMM_STARTS, random_state=7)
    else:
        expected = consensus(partitions, 3, method=method, random_state=7).labels
    np.testing.assert_array_equal(ensemble.labels_, expected)
    record = ensemble.consensus_
    assert record["method"] == method and record["kept_seeds"] == seeds
    assert [r["seed"] for r in ensemble.runs_] == list(range(7, 12))
    assert sum(r["kept"] for r in ensemble.runs_) == 3
    dropped = [r["objective"] for r in ensemble.runs_ if not r["kept"]]
    assert min(dropped) >= max(r["objective"] for r in ensemble.runs_ if r["kept"])
    agreement = pairwise_agreement(partitions, metric="nmi")
    assert record["mean_pairwise_nmi_of_kept"] == pytest.approx(
        agreement[~np.eye(3, dtype=bool)].mean())
    assert (record["anmi"] is None) == (method == "mmm")
    assert record.get("em_starts") == (MMM_STARTS if method == "mmm" else None)
    assert ari(y, ensemble.labels_) > 0.9


def test_combine_mmm_fits_each_model_from_mmm_starts_starts():
    """combine's "mmm" is mixture_consensus with MMM_STARTS EM starts per model, not its
    default of 5: on this noisy ensemble the two give different partitions."""
    rng = np.random.default_rng(2)
    truth = np.repeat(np.arange(3), 10)
    L = np.column_stack([np.where(rng.random(30) < 0.4, rng.integers(0, 3, 30), truth)
                         for _ in range(3)])
    starts = mixture_consensus(L, 3, n_init=MMM_STARTS, random_state=0)
    assert ari(starts, mixture_consensus(L, 3, n_init=5, random_state=0)) < 1
    np.testing.assert_array_equal(combine(L, 3, "mmm", random_state=0)[0], starts)


def test_recluster_equals_a_fresh_combine(data):
    X, _ = data
    ensemble = ClusterEnsemble(NMF(3, init="random", max_iter=40), n_runs=4,
                               consensus="mcla", random_state=0).fit(X)
    for method, k in [("hgpa", 3), ("mmm", 2), ("anmi", 4)]:
        labels = ensemble.recluster(consensus=method, n_components=k)
        expected, chosen, _ = combine(ensemble.partitions_, k, method, random_state=0)
        np.testing.assert_array_equal(labels, expected)
        np.testing.assert_array_equal(ensemble.labels_, expected)
        assert ensemble.consensus_["method"] == method
        assert ensemble.consensus_["chosen"] == chosen and ensemble.n_components_ == k
    # the last combination is the default of the next
    np.testing.assert_array_equal(ensemble.recluster(), combine(ensemble.partitions_, 4, "anmi",
                                                                random_state=0)[0])


def test_seeds_are_reproducible(data):
    X, _ = data
    make = lambda rs: ClusterEnsemble(NMF(3, init="random", max_iter=20), n_runs=3,
                                      consensus="mcla", random_state=rs).fit(X)
    a, b = make(3), make(3)
    assert a.runs_ == b.runs_
    np.testing.assert_array_equal(a.labels_, b.labels_)
    c, d = make(np.random.RandomState(5)), make(np.random.RandomState(5))
    assert c.runs_ == d.runs_
    np.testing.assert_array_equal(c.labels_, d.labels_)
    # an int gives consecutive seeds (semnmf cluster --seed S --runs R: S..S+R-1);
    # a generator draws them, runs first, then the consensus
    assert run_seeds(3, 3) == ([3, 4, 5], 3)
    # the last seed: it failed in the second run, with scikit-learn's message
    with pytest.raises(ValueError, match="random_state=4294967295 with n_runs=2 needs the "
                                         "seeds up to 4294967296"):
        run_seeds(2**32 - 1, 2)
    drawn = np.random.RandomState(5).randint(np.iinfo(np.int32).max, size=4)
    assert run_seeds(np.random.RandomState(5), 3) == (list(drawn[:3]), drawn[3])
    assert [r["seed"] for r in c.runs_] == list(drawn[:3])


def test_documents_without_terms_stay_apart(data):
    X, _ = data
    X = sp.vstack([X, sp.csr_matrix((1, X.shape[1]))]).tocsr()  # an empty document
    ensemble = ClusterEnsemble(NMF(3, init="random", max_iter=30), n_runs=3,
                               consensus="mmm", random_state=0).fit(X)
    assert (ensemble.partitions_[-1] == -1).all()
    assert ensemble.labels_[-1] == -1 and set(ensemble.labels_[:-1]) == {0, 1, 2}
    means = cluster_means(X, ensemble.labels_, 3)
    assert means.shape == (3, X.shape[1]) and np.isfinite(means).all()


def test_spherical_kmeans_keeps_its_best_runs(data):
    """objective_ is lower-is-better for spherical k-means too."""
    X, _ = data
    ensemble = ClusterEnsemble(SphericalKMeans(3, n_init=1), n_runs=4, n_keep=2,
                               consensus="mcla", random_state=0).fit(X)
    kept = [r["objective"] for r in ensemble.runs_ if r["kept"]]
    assert max(kept) <= min(r["objective"] for r in ensemble.runs_ if not r["kept"])


@pytest.mark.parametrize("params, message", [
    ({"n_runs": 1}, "n_runs must be at least 2"),
    ({"n_runs": 3, "n_keep": 4}, "n_keep must be between 2 and n_runs"),
    ({"consensus": "vote"}, "consensus must be one of"),
])
def test_bad_parameters(data, params, message):
    with pytest.raises(ValueError, match=message):
        ClusterEnsemble(NMF(3), **params).fit(data[0])


@pytest.mark.parametrize("make, message", [
    (lambda: "nmf", r"estimator must be an estimator instance such as NMF\(5\), got 'nmf'"),
    (lambda: NMF, "estimator must be an estimator instance"),
    (lambda: GTNMF(estimator=NMF(3)), "GTNMF has no random_state: its runs would all be the same"),
    (lambda: HierarchicalNMF(3), "lowest objective_, which HierarchicalNMF does not have"),
])
def test_estimators_that_cannot_be_ensembled(data, make, message):
    """They failed with AttributeError after the first run, or with 'str' has no get_params."""
    with pytest.raises(ValueError, match=message):
        ClusterEnsemble(make(), n_runs=2).fit(data[0])


def test_names():
    assert CONSENSUS_METHODS == ("anmi", "cspa", "hgpa", "mcla", "mmm", "medoid")
    with pytest.raises(ValueError, match="not fitted"):
        ClusterEnsemble(NMF(3)).recluster()
