"""Tests of semnmf.ensemble: Strehl & Ghosh consensus functions and the latent class model."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from semnmf.ensemble import (MODELS, MultinomialMixture, anmi, consensus, cspa, hgpa,
                             hypergraph_incidence, mcla, mixture_consensus, n_parameters,
                             pairwise_agreement)
from semnmf.metrics import ari, nmi

FAST_MODELS = ("Binary_pk_Ekjh", "Binary_pk_E")


def planted_ensemble(n_per_group=40, n_groups=3, n_partitions=10, noise=0.2, missing=0.0,
                     seed=0):
    """(truth, labels): ``n_partitions`` noisy copies of a planted partition.

    In every partition each document keeps its group with probability ``1 - noise`` and
    otherwise gets a uniformly random group; the groups of every partition are then
    renamed with arbitrary distinct integers (never -1), and a fraction ``missing`` of
    the labels is replaced by -1.
    """
    rng = np.random.RandomState(seed)
    n = n_per_group * n_groups
    truth = rng.permutation(np.repeat(np.arange(n_groups), n_per_group))
    names_pool = np.setdiff1d(np.arange(-500, 500), [-1])
    columns = []
    for _ in range(n_partitions):
        lab = truth.copy()
        flip = rng.rand(n) < noise
        lab[flip] = rng.randint(n_groups, size=flip.sum())
        column = rng.choice(names_pool, size=n_groups, replace=False)[lab]
        column[rng.rand(n) < missing] = -1
        columns.append(column)
    return truth, np.column_stack(columns)


def rename_clusters(labels, seed):
    """Rename the clusters of every column by a random bijection to new integers."""
    rng = np.random.RandomState(seed)
    out = labels.copy()
    for q in range(labels.shape[1]):
        values = np.unique(labels[labels[:, q] != -1, q])
        new = rng.choice(np.arange(1000, 5000), size=values.size, replace=False)
        for old, value in zip(values, new):
            out[labels[:, q] == old, q] = value
    return out


def run_mixture(labels, k, random_state):
    return mixture_consensus(labels, k, models=FAST_MODELS, n_init=2,
                             random_state=random_state)


METHODS = {
    "cspa": lambda L, k, rs: cspa(L, k, random_state=rs),
    "hgpa": lambda L, k, rs: hgpa(L, k, random_state=rs),
    "mcla": lambda L, k, rs: mcla(L, k, random_state=rs),
    "consensus": lambda L, k, rs: consensus(L, k, random_state=rs).labels,
    "mixture": run_mixture,
}


# --------------------------------------------------------------- slow references
def entropy_ref(labels):
    n = len(labels)
    counts = {}
    for x in labels:
        counts[x] = counts.get(x, 0) + 1
    return -sum(c / n * math.log(c / n) for c in counts.values())


def nmi_ref(a, b):
    """I(a; b) / sqrt(H(a) H(b)) from counts, with plain loops."""
    n = len(a)
    joint, pa, pb = {}, {}, {}
    for x, y in zip(a, b):
        joint[(x, y)] = joint.get((x, y), 0) + 1
        pa[x] = pa.get(x, 0) + 1
        pb[y] = pb.get(y, 0) + 1
    mi = sum(c / n * math.log((c / n) / ((pa[x] / n) * (pb[y] / n)))
             for (x, y), c in joint.items())
    ha, hb = entropy_ref(a), entropy_ref(b)
    if ha == 0 and hb == 0:
        return 1.0
    if ha == 0 or hb == 0:
        return 0.0
    return mi / math.sqrt(ha * hb)


def anmi_ref(candidate, labels, weighted=False):
    total, weight = 0.0, 0
    for q in range(labels.shape[1]):
        rows = [i for i in range(labels.shape[0]) if labels[i, q] != -1]
        score = nmi_ref([candidate[i] for i in rows], [labels[i, q] for i in rows])
        w = len(rows) if weighted else 1
        total += w * score
        weight += w
    return total / weight


def log_likelihood_ref(model, labels):
    """log f(M; Θ) of SN eq. 13 with a loop over documents, components, partitions."""
    total = 0.0
    for i in range(labels.shape[0]):
        mix = 0.0
        for k in range(model.n_components_):
            p = model.weights_[k]
            for q in range(labels.shape[1]):
                if labels[i, q] == -1:
                    continue
                h = list(model.categories_[q]).index(labels[i, q])
                p *= model.category_probs_[q][k, h]
            mix += p
        total += math.log(mix)
    return total


# ------------------------------------------------------------------- hypergraph
def test_hypergraph_incidence_by_hand():
    labels = np.array([[5, 0], [5, -1], [7, 1], [7, 0]])
    H, offsets = hypergraph_incidence(labels, return_offsets=True)
    assert sp.issparse(H) and H.format == "csr"
    expected = np.array([[1, 0, 1, 0], [1, 0, 0, 0], [0, 1, 0, 1], [0, 1, 1, 0]])
    np.testing.assert_array_equal(H.toarray(), expected)
    np.testing.assert_array_equal(offsets, [0, 2, 4])


def test_hypergraph_incidence_nan_means_missing():
    _, labels = planted_ensemble(missing=0.3, seed=4)
    as_float = np.where(labels == -1, np.nan, labels.astype(float))
    H = hypergraph_incidence(labels)
    np.testing.assert_array_equal(hypergraph_incidence(as_float).toarray(), H.toarray())
    # one 1 per labelled (document, partition), none where the label is missing
    np.testing.assert_array_equal(np.asarray(H.sum(axis=1)).ravel(), (labels != -1).sum(1))


# ----------------------------------------------------------- consensus functions
@pytest.mark.parametrize("method", METHODS)
def test_agreeing_partitions_give_back_the_partition(method):
    truth, labels = planted_ensemble(n_per_group=20, n_groups=4, n_partitions=6, noise=0.0,
                                     seed=1)
    # the columns are the same partition under different names
    assert len({tuple(np.unique(labels[:, q])) for q in range(6)}) > 1
    out = METHODS[method](labels, 4, 0)
    assert ari(truth, out) == 1.0
    np.testing.assert_array_equal(np.unique(out), np.arange(4))


@pytest.mark.parametrize("method", METHODS)
def test_invariant_to_renaming_clusters(method):
    _, labels = planted_ensemble(noise=0.35, missing=0.1, seed=2)
    renamed = rename_clusters(labels, seed=3)
    assert not np.array_equal(renamed, labels)
    first = METHODS[method](labels, 3, 0)
    second = METHODS[method](renamed, 3, 0)
    # same partition, and even the same cluster numbers (0..g-1 by first appearance)
    np.testing.assert_array_equal(first, second)
    assert np.array_equal(first, METHODS[method](labels, 3, 0))  # reproducible


@pytest.mark.parametrize("method", METHODS)
def test_missing_labels(method):
    truth, labels = planted_ensemble(n_per_group=50, noise=0.2, missing=0.25, seed=5)
    assert (labels == -1).mean() > 0.2
    out = METHODS[method](labels, 3, 0)
    assert ari(truth, out) > 0.9
    as_float = np.where(labels == -1, np.nan, labels.astype(float))
    np.testing.assert_array_equal(METHODS[method](as_float, 3, 0), out)


@pytest.mark.parametrize("method", METHODS)
def test_consensus_beats_the_average_input_partition(method):
    truth, labels = planted_ensemble(n_per_group=50, n_groups=4, noise=0.5, seed=6)
    mean_input = np.mean([ari(truth, labels[:, q]) for q in range(labels.shape[1])])
    assert mean_input < 0.45
    out = METHODS[method](labels, 4, 0)
    assert ari(truth, out) > mean_input + 0.3


def test_consensus_keeps_the_candidate_of_largest_anmi():
    _, labels = planted_ensemble(n_groups=4, noise=0.5, missing=0.1, seed=7)
    result = consensus(labels, 4, random_state=0)
    assert set(result.scores) == {"cspa", "hgpa", "mcla"}
    for name, candidate in result.candidates.items():
        assert result.scores[name] == pytest.approx(anmi(candidate, labels))
    assert result.anmi == max(result.scores.values())
    assert result.scores[result.method] == result.anmi
    np.testing.assert_array_equal(result.labels, result.candidates[result.method])
    single = consensus(labels, 4, method="mcla", random_state=0)
    assert single.method == "mcla" and list(single.scores) == ["mcla"]


def test_cspa_refuses_more_documents_than_max_samples():
    _, labels = planted_ensemble(n_per_group=20, seed=8)  # 60 documents
    with pytest.raises(ValueError, match=r"n=60 .*max_samples=50.*Use mcla or hgpa"):
        cspa(labels, 3, max_samples=50)
    with pytest.raises(ValueError, match="max_samples=50"):
        consensus(labels, 3, method="cspa", max_samples=50)
    result = consensus(labels, 3, max_samples=50, random_state=0)
    assert "cspa" in result.skipped and "cspa" not in result.scores
    assert set(result.scores) == {"hgpa", "mcla"}
    assert cspa(labels, 3, max_samples=60).shape == (60,)


# ------------------------------------------------------------------------ ANMI
@pytest.mark.parametrize("weighted", [False, True])
def test_anmi_matches_slow_reference(weighted):
    rng = np.random.RandomState(9)
    _, labels = planted_ensemble(n_per_group=15, noise=0.5, missing=0.2, seed=9)
    labels[:, 0] = np.where(labels[:, 0] == -1, -1, 42)  # a one-cluster partition
    candidate = rng.randint(4, size=labels.shape[0])
    expected = anmi_ref(candidate, labels, weighted=weighted)
    assert anmi(candidate, labels, weighted=weighted) == pytest.approx(expected, abs=1e-12)
    assert anmi(candidate, labels) != pytest.approx(anmi(candidate, labels, weighted=True))


def test_anmi_is_one_on_the_agreed_partition():
    truth, labels = planted_ensemble(noise=0.0, seed=10)
    assert anmi(truth, labels) == pytest.approx(1.0)
    assert anmi(np.arange(labels.shape[0]) % 2, labels) < 0.1


# ----------------------------------------------------------- pairwise agreement
def test_pairwise_agreement():
    _, labels = planted_ensemble(n_per_group=20, n_partitions=4, noise=0.4, missing=0.2,
                                 seed=11)
    for metric, score in (("nmi", lambda a, b: nmi(a, b, average_method="geometric")),
                          ("ari", ari)):
        table = pairwise_agreement(labels, metric=metric)
        assert table.shape == (4, 4)
        np.testing.assert_allclose(table, table.T)
        np.testing.assert_allclose(np.diag(table), 1.0)
        both = (labels[:, 1] != -1) & (labels[:, 3] != -1)
        assert table[1, 3] == pytest.approx(score(labels[both, 1], labels[both, 3]))
        assert np.all(table[np.triu_indices(4, 1)] < 0.9)
    disjoint = np.array([[0, -1], [1, -1], [-1, 0], [-1, 1]])
    assert np.isnan(pairwise_agreement(disjoint)[0, 1])


# ----------------------------------------------------------------- mixture model
def test_n_parameters_by_hand():
    m = [3, 3, 1, 4]  # d = 3 informative partitions, sum(m - 1) = 7
    expected = {"Ekjh": 2 * 7, "Ekj": 2 * 3, "Ek": 2, "Ej": 3, "E": 1}
    for dispersion, count in expected.items():
        assert n_parameters(f"Binary_pk_{dispersion}", 2, m) == count + 1
        assert n_parameters(f"Binary_p_{dispersion}", 2, m) == count
        assert n_parameters(f"pk_{dispersion}", 2, m) == count + 1
    assert len(MODELS) == 10


@pytest.mark.parametrize("model,smoothing", [
    ("Binary_pk_Ekjh", 1.0), ("Binary_pk_Ekjh", 0.0), ("Binary_pk_Ekj", 1.0),
    ("Binary_pk_Ek", 1.0), ("Binary_p_Ej", 1.0), ("Binary_pk_E", 0.5),
])
def test_em_never_decreases_the_penalized_log_likelihood(model, smoothing):
    _, labels = planted_ensemble(n_per_group=40, noise=0.6, missing=0.15, seed=12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter may be reached with tol=0
        fitted = MultinomialMixture(n_components=5, models=[model], n_init=1, tol=0.0,
                                    max_iter=60, smoothing=smoothing,
                                    random_state=0).fit(labels)
    history = fitted.log_likelihood_history_
    assert history.size >= 10
    assert history[-1] > history[0]
    assert np.all(np.diff(history) >= -1e-9 * np.abs(history[:-1]))


def test_log_likelihood_and_bic_match_slow_reference():
    _, labels = planted_ensemble(n_per_group=15, noise=0.3, missing=0.2, seed=13)
    model = MultinomialMixture(n_components=[2, 3], models=["Binary_pk_Ekjh", "Binary_p_Ekj"],
                               n_init=2, random_state=0).fit(labels)
    assert model.log_likelihood_ == pytest.approx(log_likelihood_ref(model, labels), rel=1e-10)
    m = [np.unique(labels[labels[:, q] != -1, q]).size for q in range(labels.shape[1])]
    nu = n_parameters(model.model_, model.n_components_, m)
    expected_bic = -2 * model.log_likelihood_ + nu * np.log(labels.shape[0])
    assert model.bic_[(model.model_, model.n_components_)] == pytest.approx(expected_bic)
    assert model.bic_[(model.model_, model.n_components_)] == min(model.bic_.values())
    assert len(model.bic_) == 4
    for probs in model.category_probs_:
        np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert model.score(labels) == pytest.approx(model.log_likelihood_ / labels.shape[0])


def kmodes_start_ref(codes, K, rng):
    """k-modes++ over the documents, one by one (the start before distinct rows)."""
    n = codes.shape[0]
    labelled = codes >= 0

    def distance(i):
        return np.sum((codes != codes[i]) & labelled & labelled[i], axis=1).astype(float)

    seeds = [int(rng.randint(n))]
    dist = [distance(seeds[0])]
    closest = dist[0] ** 2
    while len(seeds) < K:
        total = closest.sum()
        if total > 0:
            candidates = rng.choice(n, size=2 + int(np.log(K)), p=closest / total)
        else:
            candidates = [rng.choice(np.setdiff1d(np.arange(n), seeds))]
        best = None
        for c in candidates:
            d = distance(c)
            potential = np.minimum(closest, d ** 2).sum()
            if best is None or potential < best[0]:
                best = (potential, int(c), d)
        seeds.append(best[1])
        dist.append(best[2])
        closest = np.minimum(closest, best[2] ** 2)
    return np.argmin(np.column_stack(dist), axis=1)


def em_ref(codes, start, K, n_iter, smoothing=1.0):
    """EM of the full latent class model (Binary_pk_Ekjh) over every document with plain
    loops: the log-likelihood after each iteration and the last responsibilities."""
    n, r = codes.shape
    m = codes.max(axis=0) + 1
    resp = np.zeros((n, K))
    resp[np.arange(n), start] = 1.0
    history = []
    for _ in range(n_iter):
        nk = resp.sum(axis=0)
        weights = nk / n
        alpha = []
        for q in range(r):
            a = np.zeros((K, m[q]))
            for k in range(K):
                counts = np.zeros(m[q])
                for i in range(n):
                    if codes[i, q] >= 0:
                        counts[codes[i, q]] += resp[i, k]
                a[k] = (counts + smoothing / m[q]) / (counts.sum() + smoothing)
            alpha.append(a)
        log_joint = np.tile(np.log(weights), (n, 1))
        for i in range(n):
            for q in range(r):
                if codes[i, q] >= 0:
                    log_joint[i] += np.log(alpha[q][:, codes[i, q]])
        top = log_joint.max(axis=1, keepdims=True)
        log_lik = (top + np.log(np.exp(log_joint - top).sum(axis=1, keepdims=True))).ravel()
        resp = np.exp(log_joint - log_lik[:, None])
        history.append(log_lik.sum())
    return np.array(history), resp


def test_em_on_distinct_rows_is_em_on_every_document():
    """EM runs on the distinct rows of labels, weighted by their documents: the same
    start, likelihoods and responsibilities as EM over the documents one by one."""
    from semnmf.ensemble._labels import check_label_matrix
    from semnmf.ensemble.mixture import _Data, _e_step, _init_start, _m_step

    _, labels = planted_ensemble(n_per_group=30, n_groups=3, n_partitions=4, noise=0.3,
                                 missing=0.1, seed=21)
    codes, _ = check_label_matrix(labels)
    data = _Data(codes)
    assert data.rows.shape[0] < codes.shape[0]          # rows are shared
    K = 4
    start = kmodes_start_ref(codes, K, np.random.RandomState(5))
    seeds = _init_start(data, K, np.random.RandomState(5))
    np.testing.assert_array_equal(seeds[data.inverse], start)
    resp = np.eye(K)[seeds]

    expected, expected_resp = em_ref(codes, start, K, n_iter=15)
    history = []
    for _ in range(15):
        log_weights, log_alpha = _m_step(resp, data, True, "Ekjh", 1.0)
        resp, log_lik = _e_step(data.X, log_weights, log_alpha)
        history.append(data.counts @ log_lik)
    np.testing.assert_allclose(history, expected, rtol=1e-12)
    np.testing.assert_allclose(resp[data.inverse], expected_resp, atol=1e-12)


@pytest.mark.parametrize("seed", [14, 15, 16])
def test_bic_picks_the_planted_number_of_clusters(seed):
    # 600 documents: with 150, BIC overshoots for some seeds (see MultinomialMixture Notes)
    truth, labels = planted_ensemble(n_per_group=200, n_groups=3, n_partitions=10,
                                     noise=0.2, seed=seed)
    model = MultinomialMixture(n_components=range(1, 7), n_init=2,
                               random_state=0).fit(labels)
    assert len(model.bic_) == 6 * len(MODELS)
    assert min(model.bic_, key=model.bic_.get) == (model.model_, model.n_components_)
    assert model.n_components_ == 3
    assert min(model.icl_, key=model.icl_.get)[1] == 3
    assert ari(truth, model.labels_) > 0.9


def test_icl_criterion():
    _, labels = planted_ensemble(n_per_group=50, noise=0.3, seed=19)
    model = MultinomialMixture(n_components=range(1, 5), models=FAST_MODELS, n_init=1,
                               criterion="icl", random_state=0).fit(labels)
    assert min(model.icl_, key=model.icl_.get) == (model.model_, model.n_components_)
    assert all(model.icl_[key] >= model.bic_[key] for key in model.bic_)
    # one component: every responsibility is 1, no entropy
    assert model.icl_[("Binary_pk_E", 1)] == pytest.approx(model.bic_[("Binary_pk_E", 1)])
    assert model.icl_[("Binary_pk_E", 3)] > model.bic_[("Binary_pk_E", 3)]


def test_mixture_recovers_planted_partition():
    truth, labels = planted_ensemble(n_per_group=60, n_groups=4, n_partitions=8, noise=0.3,
                                     missing=0.2, seed=17)
    out, model = mixture_consensus(labels, n_components=4, random_state=0,
                                   return_model=True)
    assert model.converged_
    assert ari(truth, out) > 0.9
    proba = model.predict_proba(labels)
    assert proba.shape == (labels.shape[0], model.n_components_)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.predict(labels), model.labels_)


def test_mixture_predict_on_new_labels():
    _, labels = planted_ensemble(n_per_group=30, noise=0.1, seed=18)
    model = MultinomialMixture(n_components=3, models=FAST_MODELS, random_state=0).fit(labels)
    unseen = labels[:5].copy()
    unseen[0, 0] = 99999
    with pytest.warns(UserWarning, match="not seen in fit"):
        out = model.predict(unseen)
    masked = labels[:5].copy()
    masked[0, 0] = -1
    np.testing.assert_array_equal(out, model.predict(masked))
    with pytest.raises(ValueError, match="fitted on 10"):
        model.predict(labels[:, :4])


# ------------------------------------------------------------------ bad input
GOOD = np.array([[0, 1], [0, 1], [1, 0], [1, 0]])


@pytest.mark.parametrize("call,match", [
    (lambda: cspa(np.arange(5), 2), "must be 2-D .*got an array of shape \\(5,\\).*reshape"),
    (lambda: hgpa(np.zeros((0, 3), int), 1), "empty"),
    (lambda: mcla(np.array([[0.5, 1.0], [1.0, 0.0]]), 2), "non-integer values such as \\[0.5\\]"),
    (lambda: mcla(np.array([["a", "b"], ["b", "a"]]), 2), "integer cluster labels"),
    (lambda: mcla(np.array([[0, 1.0], [1, np.inf]]), 2), "infinite"),
    (lambda: cspa(np.array([[0, -1], [1, -1], [1, -1]]), 2), "\\(column\\(s\\)\\) \\[1\\] label no document"),
    (lambda: hgpa(np.array([[0, 1], [-1, -1], [1, 0]]), 2),
     "rows \\[1\\]\\) have no label in any partition"),
    (lambda: mcla(GOOD, 0), "n_components must be at least 1"),
    (lambda: hgpa(GOOD, 5),
     "n_components=5 is larger than the number of documents \\(4\\)"),
    (lambda: cspa(sp.csr_matrix(GOOD), 2), "not a sparse matrix"),
    (lambda: cspa(GOOD, 2, max_samples=0), "max_samples must be a positive integer"),
    (lambda: consensus(GOOD, 2, method="kmeans"), "method must be one of"),
    (lambda: anmi([0, 1, 1], GOOD), "3 labels but labels has 4 documents"),
    (lambda: anmi([0, 1, -1, 0], GOOD), "labels_candidate has missing labels"),
    (lambda: pairwise_agreement(GOOD, metric="rand"), "metric must be 'nmi' or 'ari'"),
    (lambda: MultinomialMixture(models=["Binary_pk_Foo"]).fit(GOOD), "unknown model"),
    (lambda: MultinomialMixture(n_components=[0, 2]).fit(GOOD),
     "n_components must be at least 1"),
    (lambda: MultinomialMixture(n_components=[]).fit(GOOD), "empty sequence"),
    (lambda: mixture_consensus(GOOD, 9), "larger than the number of documents"),
])
def test_bad_input_is_refused_with_a_clear_message(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_a_list_of_label_vectors_is_a_list_of_partitions():
    """[m.labels_ for m in runs] read as documents x partitions gave one label per run."""
    truth, labels = planted_ensemble(n_per_group=20, n_groups=4, n_partitions=6, noise=0.2,
                                     seed=3)
    runs = [labels[:, q].copy() for q in range(labels.shape[1])]
    np.testing.assert_array_equal(consensus(runs, 4, random_state=0).labels,
                                  consensus(labels, 4, random_state=0).labels)
    np.testing.assert_array_equal(mixture_consensus(runs, 4, random_state=0),
                                  mixture_consensus(labels, 4, random_state=0))
    with pytest.raises(ValueError, match=r"label vectors have different lengths \[79, 80\]"):
        consensus([runs[0], runs[1][:-1]], 4)


def test_logsumexp_rows_is_scipys():
    """The E-step's row-wise log-sum-exp gives scipy's numbers exactly (ties at the row
    maximum and -inf entries included), so the consensus labels do not change."""
    from scipy.special import logsumexp

    from semnmf.ensemble.mixture import logsumexp_rows

    rng = np.random.default_rng(0)
    a = rng.normal(size=(200, 13)) * 30
    a[rng.random(a.shape) < 0.3] = -np.inf
    a[0, :3] = 100.0                       # three entries tie at the maximum
    a[1] = -np.inf                         # a row without any finite entry
    a[2, 5] = np.inf
    np.testing.assert_array_equal(logsumexp_rows(a), logsumexp(a, axis=1))
    assert logsumexp_rows(a)[1] == -np.inf


@pytest.mark.parametrize("missing", [0.0, 0.2])
def test_k_modes_start_is_the_label_by_label_reference(missing):
    """The start's distances, read off the one-hot columns of the distinct rows, are the
    Hamming distances counted label by label over the documents (missing labels ignored,
    :func:`kmodes_start_ref`): the same seeds, the same start."""
    from sklearn.utils import check_random_state

    from semnmf.ensemble._labels import check_label_matrix
    from semnmf.ensemble.mixture import _Data, _init_start

    rng = np.random.default_rng(1)
    truth = rng.integers(0, 6, 300)
    L = np.column_stack([np.where(rng.random(300) < 0.3, rng.integers(0, 6, 300), truth)
                         for _ in range(4)]).astype(float)
    L[rng.random(L.shape) < missing] = np.nan
    codes, _ = check_label_matrix(L, require_labelled_rows=False)
    data = _Data(codes)
    for K in (2, 6, 9):
        fast = _init_start(data, K, check_random_state(K))
        slow = kmodes_start_ref(codes, K, check_random_state(K))
        np.testing.assert_array_equal(fast[data.inverse], slow)


def test_mixture_runs_on_threads_are_the_runs_one_by_one(monkeypatch):
    """The EM runs of a (model, K) go to the package's threads after their starts are drawn
    in turn from the one generator: the fit on 1, 2 or 4 threads is the same fit, to the
    bit (labels, BIC of every candidate, parameters of the kept model)."""
    _, labels = planted_ensemble(n_per_group=60, n_groups=4, n_partitions=3, noise=0.5,
                                 missing=0.05, seed=8)
    fits = []
    for threads in ("1", "2", "4"):
        monkeypatch.setenv("SEMNMF_NUM_THREADS", threads)
        fits.append(MultinomialMixture(n_components=[3, 4, 5], n_init=4,
                                       random_state=2).fit(labels))
    one = fits[0]
    for other in fits[1:]:
        np.testing.assert_array_equal(other.labels_, one.labels_)
        assert other.bic_ == one.bic_ and other.model_ == one.model_
        np.testing.assert_array_equal(other.weights_, one.weights_)
        np.testing.assert_array_equal(other.log_likelihood_history_,
                                      one.log_likelihood_history_)


@pytest.mark.parametrize("smoothing, block", [(1.0, 1 << 15), (0.0, 1 << 15), (0.0, 100)])
def test_compiled_e_step_is_the_numpy_e_step_to_the_bit(monkeypatch, smoothing, block):
    """The E-step's kernel (one pass for the log joint, its maximum, count and shifted
    entries, by blocks of rows) gives numpy's numbers exactly, -inf entries (smoothing 0,
    an empty component) and a row of -inf included, in one block or in several (100
    entries: blocks of 16 rows); so does the whole fit."""
    from semnmf.ensemble import mixture
    from semnmf.ensemble._labels import check_label_matrix
    from semnmf.ensemble.mixture import _Data, _e_step, _init_start, _m_step

    monkeypatch.setattr(mixture, "_E_STEP_BLOCK", block)

    _, labels = planted_ensemble(n_per_group=40, n_groups=4, n_partitions=5, noise=0.4,
                                 missing=0.1, seed=3)
    codes, _ = check_label_matrix(labels)
    data = _Data(codes)
    K = 6
    resp = np.eye(K)[_init_start(data, K, np.random.RandomState(0))]
    resp[:, -1] = 0.0                                      # an empty component: log π = -inf
    log_weights, log_alpha = _m_step(resp, data, True, "Ekjh", smoothing)
    log_alpha[0, :] = -np.inf                              # a component no row can take
    log_alpha[1:, data.offsets[1]] = -np.inf               # ... and rows no component takes
    assert np.isneginf(log_weights).any()
    out = {}
    for kernels in ("1", "0"):
        monkeypatch.setenv("SEMNMF_KERNELS", kernels)
        out[kernels] = _e_step(data.X, log_weights, log_alpha)
    np.testing.assert_array_equal(out["1"][0], out["0"][0])
    np.testing.assert_array_equal(out["1"][1], out["0"][1])
    assert np.isneginf(out["0"][1]).any()                  # some row is -inf throughout
    fits = []
    for kernels in ("1", "0"):
        monkeypatch.setenv("SEMNMF_KERNELS", kernels)
        fits.append(MultinomialMixture(n_components=[3, 4], n_init=2, smoothing=smoothing,
                                       random_state=1).fit(labels))
    np.testing.assert_array_equal(fits[0].labels_, fits[1].labels_)
    assert fits[0].bic_ == fits[1].bic_
    np.testing.assert_array_equal(fits[0].log_likelihood_history_,
                                  fits[1].log_likelihood_history_)
