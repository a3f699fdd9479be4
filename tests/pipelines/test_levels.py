"""Levels of one fit (semnmf.pipelines.levels): merges by the spherical k-means objective,
rank-2 splits, each level the saved model's own assignment after the level's edits, the
minimum cluster size at every level, and the recommended range."""

import itertools
import warnings

import numpy as np
import pytest

from conftest import word_topic_texts
from semnmf import NMF, Corpus, SphericalKMeans
from semnmf._utils.validation import unit_rows as _unit_rows
from semnmf.pipelines.levels import (RANGE_FACTOR, _merge_pair, _sums, apply_level,
                                     build_levels, k_range)
from semnmf.pipelines.saved import SavedModel


def _fitted(estimator, n_per=20, seed=0):
    texts, labels = word_topic_texts(n_per, 12, seed)
    corpus = Corpus(texts, labels=labels)
    X = corpus.tfidf()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = estimator.fit(X)
    saved = SavedModel.from_fit(model, corpus)
    return corpus, saved.vectorize(corpus), saved


@pytest.fixture(scope="module")
def nmf6():
    return _fitted(NMF(6, random_state=0))


def _objective(Xn, labels):
    """The spherical k-means objective of a partition, written out: the sum over clusters
    of the norm of the sum of their unit rows."""
    return sum(np.linalg.norm(np.asarray(Xn[labels == c].sum(axis=0)).ravel())
               for c in np.unique(labels[labels >= 0]))


def test_the_merge_is_the_pair_whose_merge_lowers_the_objective_least(nmf6):
    _, X, saved = nmf6
    Xn = _unit_rows(X)
    labels = saved.assign_matrix(X)[0]
    k = saved.n_clusters
    loss = {}
    for a, b in itertools.combinations(range(k), 2):  # the reference: every merge tried
        merged = np.where(labels == b, a, labels)
        loss[(a, b)] = _objective(Xn, labels) - _objective(Xn, merged)
    assert min(loss.values()) >= -1e-9  # a merge never raises the objective
    sizes = np.bincount(labels, minlength=k)
    assert _merge_pair(_sums(Xn, labels, k), sizes, None) == min(loss, key=loss.get)


def test_every_level_is_what_its_edits_assign_and_coarser_levels_nest(nmf6):
    _, X, saved = nmf6
    built = build_levels(saved, X, 3, 8, random_state=0)
    start, levels = built.start, built.levels
    assert start.k == 6 and start.steps == [] and built.merged == [] and built.model is saved
    np.testing.assert_array_equal(start.labels, saved.assign_matrix(X)[0])
    assert [level.k for level in levels] == list(range(3, 9))
    for level in levels:
        assert len(np.unique(level.labels)) == level.k
        edited = apply_level(saved, level.record()["steps"], X, random_state=0)
        np.testing.assert_array_equal(edited.assign_matrix(X)[0], level.labels)
    by_k = {level.k: level.labels for level in levels}
    for k in range(3, 6):  # a coarser level merges whole clusters of the next finer one
        finer, coarser = by_k[k + 1], by_k[k]
        for c in np.unique(finer):
            assert len(np.unique(coarser[finer == c])) == 1


def test_a_split_divides_the_cluster_of_largest_spherical_loss():
    _, X, saved = _fitted(SphericalKMeans(3, random_state=0))
    Xn = _unit_rows(X)
    labels = saved.assign_matrix(X)[0]
    sums = _sums(Xn, labels, 3)
    loss = np.bincount(labels, minlength=3) - np.linalg.norm(sums, axis=1)
    levels = build_levels(saved, X, 3, 4, random_state=0).levels
    assert levels[-1].record()["steps"] == [{"split": [int(np.argmax(loss))]}]


def test_no_cluster_under_the_minimum_size_at_any_level(nmf6):
    _, X, saved = nmf6
    sizes = np.bincount(saved.assign_matrix(X)[0])
    floor = int(np.sort(sizes)[1]) + 1  # at least two clusters of the fit are smaller
    built = build_levels(saved, X, 2, 10, min_cluster_size=floor, random_state=0)
    assert built.start.k < 6 and built.merged and all("merge" in s for s in built.merged)
    assert built.model.n_clusters == built.start.k
    for level in built.levels:
        assert np.bincount(level.labels).min() >= floor
        # each level's steps are made from the starting model (small clusters merged)
        edited = apply_level(built.model, level.record()["steps"], X, random_state=0)
        np.testing.assert_array_equal(edited.assign_matrix(X)[0], level.labels)
    assert built.levels[0].k == 2


@pytest.mark.parametrize("k", [2, 3, 5, 8, 13, 40])
def test_the_range_holds_k_and_its_ends_are_at_most_the_factor_apart(k):
    low, high = k_range(k, 10_000)
    assert 2 <= low <= k <= high and high / low <= RANGE_FACTOR
    assert k_range(k, k + 1)[1] <= k  # never more clusters than documents allow


def test_apply_level_with_no_steps_is_the_model(nmf6):
    _, X, saved = nmf6
    assert apply_level(saved, [], X) is saved


def test_the_run_labels_start_the_levels_and_map_through_the_merges(nmf6):
    _, X, saved = nmf6
    assigned = saved.assign_matrix(X)[0]
    split = build_levels(saved, X, 6, 7, random_state=0).levels[-1].record()["steps"]
    c = split[0]["split"][0]
    labels = assigned.copy()
    labels[np.flatnonzero(assigned != c)[:5]] = c  # a run whose clusters differ from its
    built = build_levels(saved, X, 4, 8, labels=labels, random_state=0)  # model's on 5
    np.testing.assert_array_equal(built.start.labels, labels)
    finer = {level.k: level.labels for level in built.levels}
    assert sorted(finer) == [4, 5, 6, 7, 8]
    for k in (4, 5):  # coarser levels merge whole clusters of the run's labels
        for c in np.unique(finer[k + 1]):
            assert len(np.unique(finer[k][finer[k + 1] == c])) == 1
    for level in built.levels:  # a finer level is what edit --level gives, exactly: its
        if level.k > 6:         # splits divide the model's own clusters, not the run's
            edited = apply_level(saved, level.record()["steps"], X, random_state=0)
            np.testing.assert_array_equal(edited.assign_matrix(X)[0], level.labels)
    none = build_levels(saved, X, None, None, random_state=0)
    assert [level.k for level in none.levels] == [6]


def test_cohesion_is_the_mean_cosine_to_the_cluster_direction_and_rises_with_k(nmf6):
    _, X, saved = nmf6
    levels = build_levels(saved, X, 2, 8, random_state=0).levels
    Xn = _unit_rows(X)
    for level in levels:
        expected = np.mean([Xn[i] @ (s := np.asarray(Xn[level.labels == level.labels[i]]
                                                      .sum(axis=0)).ravel()) / np.linalg.norm(s)
                            for i in range(X.shape[0])])
        assert level.cohesion == pytest.approx(float(np.ravel(expected)[0]), rel=1e-9)
    merged = [level.cohesion for level in levels if level.k <= 6]
    assert merged == sorted(merged)  # a merge never raises the objective
