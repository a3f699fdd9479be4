"""The medoid of an ensemble, ClusterEnsemble(consensus="medoid") and the KL consensus
made three times and combined by the MMM (the default for corpora without raw text)."""

import numpy as np
import pytest

from semnmf import NMF, ClusterEnsemble
from semnmf.ensemble import medoid
from semnmf.ensemble.portfolio import MEMBERS, kl_consensus
from semnmf.metrics import nmi

from conftest import planted_corpus


def medoid_ref(partitions):
    """The column with the largest mean NMI with the other columns (first of equals)."""
    r = partitions.shape[1]
    means = [np.mean([nmi(partitions[:, a], partitions[:, b]) for b in range(r) if b != a])
             for a in range(r)]
    return int(np.argmax(means)), np.array(means)


def test_medoid_is_the_partition_that_agrees_most_with_the_others():
    rng = np.random.RandomState(0)
    truth = rng.randint(4, size=200)
    noisy = [np.where(rng.rand(200) < p, rng.randint(4, size=200), truth)
             for p in (0.3, 0.05, 0.2, 0.9)]
    partitions = np.column_stack(noisy)
    index, agreement = medoid(partitions)
    expected, means = medoid_ref(partitions)
    assert index == expected == 1          # the least noisy copy sits in the middle
    np.testing.assert_allclose(agreement, means, rtol=1e-5)
    assert np.argmin(agreement) == 3        # the nearly random one agrees least


def test_medoid_ignores_cluster_names_and_missing_labels():
    rng = np.random.RandomState(1)
    truth = rng.randint(3, size=120)
    partitions = np.column_stack([truth, (truth + 1) % 3 * 10, rng.randint(3, size=120)])
    partitions[:5, 0] = -1
    index, agreement = medoid(partitions)
    assert index in (0, 1) and agreement[2] < 0.2 and agreement[index] > 0.5
    with pytest.raises(ValueError, match="at least 2 partitions"):
        medoid(partitions[:, :1])


def test_ensemble_medoid_keeps_one_of_its_runs(planted=planted_corpus):
    X, y = planted(n_per=20, k=3, noise=0.3, seed=4)
    ensemble = ClusterEnsemble(NMF(3, init="random", max_iter=40), n_runs=4,
                               consensus="medoid", random_state=3).fit(X)
    index, agreement = medoid(ensemble.partitions_)
    np.testing.assert_array_equal(ensemble.labels_, ensemble.partitions_[:, index])
    assert ensemble.consensus_["chosen"] == "medoid"
    assert ensemble.consensus_["anmi"] == pytest.approx(agreement[index])


def test_kl_consensus_combines_its_runs_by_the_mmm():
    """Three runs of the consensus (seeds s, s+1, s+2), each exactly a one-run consensus
    with its seed; the labels are the MMM of the three (seeded s), and the record names
    the runs, how they were combined and each one's NMI with the result."""
    from semnmf.ensemble import combine, mixture_consensus
    from semnmf.ensemble.runs import MMM_STARTS

    X, y = planted_corpus(n_per=25, k=3, noise=0.35, seed=2)
    fitted = kl_consensus(X, 3, random_state=5, max_iter=60)
    single = [kl_consensus(X, 3, random_state=s, max_iter=60, n_runs=1) for s in (5, 6, 7)]
    runs = np.column_stack([run.labels_ for run in single])
    np.testing.assert_array_equal(fitted.partitions_, runs)
    np.testing.assert_array_equal(fitted.members_,
                                  np.column_stack([run.members_ for run in single]))
    assert fitted.members_.shape == (X.shape[0], 3 * len(MEMBERS))
    np.testing.assert_array_equal(fitted.labels_,
                                  mixture_consensus(runs, 3, n_init=MMM_STARTS, random_state=5))
    np.testing.assert_array_equal(fitted.labels_, combine(runs, 3, "mmm", random_state=5)[0])
    assert fitted.kept_seeds_ == [5, 6, 7]
    record = fitted.consensus_
    assert [run["seed"] for run in record["runs"]] == [5, 6, 7]
    assert [run["nmi"] for run in record["runs"]] == pytest.approx(
        [nmi(column, fitted.labels_) for column in runs.T], abs=1e-4)
    assert "MMM" in record["combined"] and record["members"] == list(MEMBERS)
    assert record["em_starts"] == MMM_STARTS == 2
    # one run is its own consensus
    np.testing.assert_array_equal(single[0].partitions_[:, 0], single[0].labels_)
    assert single[0].consensus_["runs"] == [{"seed": 5, "nmi": 1.0}]
    assert single[0].consensus_["combined"] == "one run"


def test_combine_medoid_keeps_missing_labels_missing():
    """NaN and -1 are missing labels: the medoid column's stay -1, never a cast NaN."""
    from semnmf.ensemble import combine

    L = np.array([[0, 0, np.nan], [1, 1, 1], [0, 1, 0], [1, 0, 1.], [1, 1, 1.]])
    labels, chosen, agreement = combine(L, 2, "medoid")
    assert chosen == "medoid" and labels.dtype == np.int64
    assert labels.min() >= -1 and set(labels[labels >= 0]) <= {0, 1}
    index, _ = medoid(L)
    column = L[:, index]
    np.testing.assert_array_equal(labels == -1, np.isnan(column) | (column == -1))


def test_ensemble_medoid_refuses_another_number_of_clusters_and_names_its_run(
        planted=planted_corpus):
    X, _ = planted(n_per=20, k=3, noise=0.3, seed=4)
    with pytest.raises(ValueError, match="keeps one of the runs, with their 3 clusters"):
        ClusterEnsemble(NMF(3, init="random", max_iter=40), n_runs=3, consensus="medoid",
                        n_components=5, random_state=0).fit(X)
    ensemble = ClusterEnsemble(NMF(3, init="random", max_iter=40), n_runs=3,
                               consensus="medoid", random_state=0).fit(X)
    seed = ensemble.consensus_["medoid_seed"]
    column = ensemble.kept_seeds_.index(seed)
    assert ensemble.labels_.tolist() == ensemble.partitions_[:, column].tolist()


def _count_kmeans_fits(monkeypatch):
    """Count SphericalKMeans.fit calls (every reference to the class sees the patch)."""
    from semnmf.models.skmeans import SphericalKMeans

    calls, fit = [], SphericalKMeans.fit

    def counted(self, *args, **kwargs):
        calls.append(self.n_init)
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(SphericalKMeans, "fit", counted)
    return calls


def test_kl_consensus_fits_no_kmeans_besides_the_screened_starts(monkeypatch):
    """A run's k-means fits are its screened member's five starts (two restarts each):
    the k-means member and the one-start NMF-KL's start are the best of them."""
    from semnmf.ensemble.portfolio import SCREENED_STARTS

    X, _ = planted_corpus(n_per=25, k=4, noise=1.0, seed=9)
    calls = _count_kmeans_fits(monkeypatch)
    kl_consensus(X, 6, random_state=1, max_iter=30, n_runs=2)
    assert calls == [2] * SCREENED_STARTS * 2


def test_kl_consensus_fits_its_kmeans_when_the_engine_keeps_none(monkeypatch):
    """Without the screened member's k-means (an engine that keeps none), the KL consensus
    fits spherical k-means itself, with all ten restarts: the same members and labels."""
    import dataclasses

    from semnmf import SphericalKMeans
    from semnmf.models import nmf as nmf_module

    X, _ = planted_corpus(n_per=25, k=4, noise=1.0, seed=9)
    # the premise: each run's best restart is among the last five of ten, so a fallback
    # with fewer restarts (or another seed) gives another member
    for seed in (1, 2):
        rng = np.random.RandomState(seed)
        one = [SphericalKMeans(6, n_init=1, random_state=rng).fit(X).similarity_
               for _ in range(10)]
        assert np.argmax(one) >= 5
    kept = kl_consensus(X, 6, random_state=1, max_iter=30, n_runs=2)
    record = nmf_module.fit_record
    monkeypatch.setattr(nmf_module, "fit_record", lambda *a, **k: dataclasses.replace(
        record(*a, **k), start_kmeans=None))
    calls = _count_kmeans_fits(monkeypatch)
    fitted = kl_consensus(X, 6, random_state=1, max_iter=30, n_runs=2)
    assert calls == ([2] * 5 + [10]) * 2             # the fallback was taken, each run
    np.testing.assert_array_equal(fitted.members_, kept.members_)
    np.testing.assert_array_equal(fitted.labels_, kept.labels_)


def test_kl_consensus_refuses_no_runs():
    X, _ = planted_corpus(n_per=10, k=2, noise=0.2, seed=1)
    with pytest.raises(ValueError, match="n_runs must be a positive number of runs"):
        kl_consensus(X, 2, n_runs=0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kl_consensus_members_are_the_estimators_fitted_alone(dtype):
    """Each run's members are NMF-KL (5 screened starts), NMF-KL (one start) and spherical
    k-means with the run's seed, fitted alone: the one-start NMF-KL's spherical k-means
    start, which is the third member, is fitted once for both."""
    from semnmf import SphericalKMeans
    from semnmf.models.init import factors_from_skmeans, initialize
    from semnmf.models.nmf import fit_record

    X, y = planted_corpus(n_per=25, k=5, noise=0.8, seed=6)
    X = X.astype(dtype)
    fitted = kl_consensus(X, 5, random_state=2, max_iter=60, n_runs=1)
    alone = [NMF(5, loss="kl", n_init=5, screen_iter=1, max_iter=60, random_state=2),
             NMF(5, loss="kl", max_iter=60, random_state=2),
             SphericalKMeans(5, random_state=2)]
    for column, estimator in zip(fitted.members_.T, alone):
        np.testing.assert_array_equal(column, estimator.fit(X).labels_)
    # the premise: the k-means member is the best of the screened member's restarts
    km = fit_record(NMF(5, loss="kl", n_init=5, screen_iter=1, max_iter=60,
                        random_state=2), X).start_kmeans
    np.testing.assert_array_equal(km.cluster_centers_, alone[2].cluster_centers_)
    assert km.similarity_ == alone[2].similarity_
    # and the member's factors are the one-start NMF's own start, to the bit
    shared = factors_from_skmeans(alone[2], X.dtype)
    own = initialize(X, 5, "skmeans", np.random.RandomState(2))
    for a, b in zip(shared, own):
        assert a.dtype == b.dtype == X.dtype
        np.testing.assert_array_equal(a, b)
