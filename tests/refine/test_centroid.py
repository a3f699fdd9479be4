"""The centroid step (:func:`semnmf.refine.centroid_refine`): one assignment step of
spherical k-means from a given partition, against a slow and obvious reference; the
properties that make it a step of spherical k-means (the objective with the centroids
held fixed cannot decrease; a spherical k-means optimum is a fixed point); and what it
leaves alone (documents without a term, documents left out)."""

import numpy as np
import pytest
import scipy.sparse as sp

from semnmf import SphericalKMeans
from semnmf.refine import centroid_refine

from conftest import planted_corpus


def reference_step(X, labels, k):
    """Per document, per cluster: the cosine to the unit sum of the cluster's unit rows."""
    X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    unit = [row / np.linalg.norm(row) if np.linalg.norm(row) > 0 else row for row in X]
    centroids = []
    for j in range(k):
        total = sum((unit[i] for i in range(len(unit)) if labels[i] == j),
                    np.zeros(X.shape[1]))
        norm = np.linalg.norm(total)
        centroids.append(total / norm if norm > 0 else total)
    out, sims = [], []
    for i, u in enumerate(unit):
        if labels[i] < 0 or not u.any():
            out.append(-1)
            sims.append(0.0)
            continue
        cos = [float(u @ c) for c in centroids]
        out.append(int(np.argmax(cos)))
        sims.append(max(cos))
    return np.array(out), np.array(centroids), np.array(sims)


def noisy_problem(seed):
    rng = np.random.default_rng(seed)
    X = sp.random(60, 40, density=0.15, random_state=seed, format="csr")
    X.data = rng.random(X.nnz)
    labels = rng.integers(0, 4, 60)
    return X, labels


@pytest.mark.parametrize("seed", range(5))
def test_the_step_equals_the_reference(seed):
    X, labels = noisy_problem(seed)
    X = sp.diags(np.r_[np.ones(3), 0, np.ones(56)]) @ X  # document 3 has no term
    X = sp.csr_matrix(X)
    X.eliminate_zeros()
    labels[7] = -1  # a document left out
    new, centers, sims = centroid_refine(X, labels, 4)
    ref_labels, ref_centers, ref_sims = reference_step(X, labels, 4)
    np.testing.assert_array_equal(new, ref_labels)
    np.testing.assert_allclose(centers, ref_centers, atol=1e-12)
    np.testing.assert_allclose(sims, ref_sims, atol=1e-12)
    assert new[3] == -1 and new[7] == -1
    # the same from a dense X, and X itself is left as it was
    before = X.copy()
    dense = centroid_refine(X.toarray(), labels, 4)[0]
    np.testing.assert_array_equal(dense, new)
    assert (X != before).nnz == 0


@pytest.mark.parametrize("seed", range(5))
def test_the_spherical_objective_with_fixed_centroids_does_not_decrease(seed):
    X, labels = noisy_problem(seed)
    new, centers, sims = centroid_refine(X, labels, 4)
    unit = X.toarray() / np.linalg.norm(X.toarray(), axis=1, keepdims=True)
    before = np.sum(unit * centers[labels], axis=1)
    assert sims.sum() >= before.sum() - 1e-12
    assert np.all(sims >= before - 1e-12)  # each document's own cluster is a candidate
    assert np.any(new != labels)  # random labels: the step moves documents


@pytest.mark.parametrize("seed", range(3))
def test_a_minimum_gain_moves_only_the_documents_that_gain_that_much(seed):
    X, labels = noisy_problem(seed)
    ref_labels, ref_centers, _ = reference_step(X, labels, 4)
    unit = X.toarray() / np.linalg.norm(X.toarray(), axis=1, keepdims=True)
    sims = unit @ ref_centers.T
    own = sims[np.arange(len(labels)), labels]
    moved_before = None
    for gain in (0.0, 0.05, 0.2, 1.0, 1e9):
        new, _, similarity = centroid_refine(X, labels, 4, min_gain=gain)
        expected = np.where(sims.max(axis=1) > (1 + gain) * own, ref_labels, labels)
        np.testing.assert_array_equal(new, expected)
        np.testing.assert_allclose(similarity, sims[np.arange(len(new)), new], atol=1e-12)
        moved = set(np.flatnonzero(new != labels))
        assert moved_before is None or moved <= moved_before  # fewer as the gain grows
        moved_before = moved
    assert not moved_before  # nobody gains a billion-fold
    for bad in (-0.1, float("nan"), "0.05", None, True):
        with pytest.raises(ValueError, match="min_gain must be a finite number >= 0"):
            centroid_refine(X, labels, 4, min_gain=bad)


def test_a_spherical_kmeans_optimum_is_a_fixed_point():
    X, y = planted_corpus(n_per=25, k=3, noise=0.3, seed=1)
    km = SphericalKMeans(3, random_state=0, tol=0).fit(X)
    new, centers, _ = centroid_refine(X, km.labels_, 3)
    np.testing.assert_array_equal(new, km.labels_)
    np.testing.assert_allclose(centers, km.cluster_centers_, atol=1e-10)


def test_the_step_mends_a_partition_that_mixes_planted_clusters():
    X, y = planted_corpus(n_per=30, k=3, seed=2)
    labels = y.copy()
    labels[:10] = 1  # ten documents of topic 0 put with topic 1
    new, _, _ = centroid_refine(X, labels, 3)
    np.testing.assert_array_equal(new, y)


def test_an_empty_cluster_is_never_chosen():
    X, y = planted_corpus(n_per=20, k=3, seed=3)
    new, centers, _ = centroid_refine(X, y, 4)  # cluster 3 has no document
    assert not centers[3].any() and 3 not in set(new)


@pytest.mark.parametrize("labels, n_components, message", [
    (np.zeros(5, dtype=int), None, "one cluster per row of X"),
    (np.full(60, 4), 4, "labels go up to 4 but n_components is 4"),
])
def test_bad_labels_are_one_clear_error(labels, n_components, message):
    X, _ = planted_corpus(n_per=20, k=3)
    with pytest.raises(ValueError, match=message):
        centroid_refine(X, labels, n_components)
