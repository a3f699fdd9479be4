import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.metrics import normalized_mutual_info_score
from sklearn.metrics.pairwise import cosine_similarity

from semnmf.models import skmeans as skmeans_module
from semnmf.models.skmeans import SphericalKMeans


def planted_corpus(n_docs=300, n_topics=4, words_per_topic=40, n_shared=40, doc_len=60,
                   purity=0.8, seed=0, dtype=np.float64):
    """Sparse count matrix whose documents mostly use the words of their own topic.

    Each document draws ``doc_len`` words: with probability ``purity`` from its topic's
    block of the vocabulary, otherwise from a block shared by all topics.
    """
    rng = np.random.RandomState(seed)
    n_terms = n_topics * words_per_topic + n_shared
    labels = rng.randint(n_topics, size=n_docs)
    rows, cols = [], []
    for i, t in enumerate(labels):
        own = rng.rand(doc_len) < purity
        words = np.where(
            own,
            t * words_per_topic + rng.randint(words_per_topic, size=doc_len),
            n_topics * words_per_topic + rng.randint(n_shared, size=doc_len),
        )
        rows.append(np.full(doc_len, i))
        cols.append(words)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    X = sp.csr_matrix((np.ones(rows.size, dtype=dtype), (rows, cols)), shape=(n_docs, n_terms))
    X.sum_duplicates()
    return X, labels


@pytest.fixture(scope="module")
def corpus():
    return planted_corpus()


# ---------------------------------------------------------------- quality
@pytest.mark.parametrize("init", ["k-means++", "random"])
def test_recovers_planted_clusters(corpus, init):
    X, labels = corpus
    model = SphericalKMeans(n_components=4, init=init, n_init=3, random_state=0).fit(X)
    assert normalized_mutual_info_score(labels, model.labels_) > 0.95
    assert model.labels_.shape == (X.shape[0],)
    assert set(np.unique(model.labels_)) == set(range(4))


@pytest.mark.parametrize("seed", range(4))
def test_objective_non_increasing(seed):
    # overlapping topics so that runs take several iterations
    X, _ = planted_corpus(n_docs=200, n_topics=6, purity=0.35, doc_len=30, seed=seed)
    model = SphericalKMeans(n_components=6, init="random", n_init=1, tol=0, max_iter=200,
                            random_state=seed).fit(X)
    history = model.objective_history_
    assert history.shape == (model.n_iter_ + 1,)
    assert model.n_iter_ >= 2
    # objective_ = -(cosine sum): lower is better, so the history never rises
    assert np.all(np.diff(history) <= 1e-9 * abs(history[-1]))
    assert history[-1] == pytest.approx(model.objective_)


def test_attributes_consistent(corpus):
    X, _ = corpus
    model = SphericalKMeans(n_components=4, n_init=2, random_state=0).fit(X)
    centers = model.cluster_centers_
    assert centers.shape == (4, X.shape[1])
    np.testing.assert_allclose(np.linalg.norm(centers, axis=1), 1.0, rtol=1e-12)
    assert np.all(centers >= 0)  # concept vectors of non-negative data
    # transform is the cosine similarity to the centroids
    S = model.transform(X)
    np.testing.assert_allclose(S, cosine_similarity(X, centers), atol=1e-12)
    # labels are the most similar centroid, and predict agrees with labels_
    np.testing.assert_array_equal(model.labels_, S.argmax(axis=1))
    np.testing.assert_array_equal(model.predict(X), model.labels_)
    # objective = sum of similarities to the own centroid
    own = S[np.arange(X.shape[0]), model.labels_].sum()
    assert model.similarity_ == pytest.approx(own)
    assert model.objective_ == pytest.approx(-own)
    assert model.score(X) == pytest.approx(model.similarity_)
    assert model.inertia_ == pytest.approx(X.shape[0] - model.similarity_)
    assert isinstance(model.objective_, float) and isinstance(model.n_iter_, int)
    assert 1 <= model.n_iter_ <= model.max_iter
    np.testing.assert_array_equal(model.fit_predict(X), model.labels_)


def test_best_of_n_init_is_kept(corpus, monkeypatch):
    X, _ = corpus
    seen = []
    original = skmeans_module._lloyd

    def spy(*args, **kwargs):
        result = original(*args, **kwargs)
        seen.append(result[2])
        return result

    monkeypatch.setattr(skmeans_module, "_lloyd", spy)
    model = SphericalKMeans(n_components=7, init="random", n_init=5, random_state=3).fit(X)
    assert len(seen) == 5
    assert model.objective_ == pytest.approx(-max(seen))


def test_deterministic_with_random_state(corpus):
    X, _ = corpus
    a = SphericalKMeans(n_components=5, n_init=3, random_state=42).fit(X)
    b = SphericalKMeans(n_components=5, n_init=3, random_state=42).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.objective_ == b.objective_
    # a RandomState instance is consumed, an int is not
    rng = np.random.RandomState(0)
    c = SphericalKMeans(n_components=5, n_init=1, init="random", random_state=rng).fit(X)
    d = SphericalKMeans(n_components=5, n_init=1, init="random", random_state=rng).fit(X)
    assert c.n_iter_ >= 1 and d.n_iter_ >= 1


@pytest.mark.parametrize("sparse", [True, False])
def test_float32_preserved(corpus, sparse):
    X, _ = corpus
    X32 = X.astype(np.float32)
    if not sparse:
        X32 = X32.toarray()
    model = SphericalKMeans(n_components=4, n_init=2, random_state=0).fit(X32)
    assert model.cluster_centers_.dtype == np.float32
    assert model.transform(X32).dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(model.cluster_centers_, axis=1), 1.0, rtol=1e-5)
    model64 = SphericalKMeans(n_components=4, n_init=2, random_state=0).fit(X)
    assert model64.cluster_centers_.dtype == np.float64
    assert normalized_mutual_info_score(model.labels_, model64.labels_) > 0.99


def test_sparse_and_dense_agree(corpus):
    X, _ = corpus
    sparse_model = SphericalKMeans(n_components=4, n_init=3, random_state=7).fit(X)
    dense_model = SphericalKMeans(n_components=4, n_init=3, random_state=7).fit(X.toarray())
    np.testing.assert_array_equal(sparse_model.labels_, dense_model.labels_)
    np.testing.assert_allclose(sparse_model.cluster_centers_, dense_model.cluster_centers_,
                               atol=1e-12)
    assert sparse_model.objective_ == pytest.approx(dense_model.objective_)
    # other sparse formats are accepted
    csc_model = SphericalKMeans(n_components=4, n_init=3, random_state=7).fit(X.tocsc())
    np.testing.assert_array_equal(sparse_model.labels_, csc_model.labels_)


def test_row_scaling_invariance(corpus):
    X, _ = corpus
    scale = sp.diags(np.random.RandomState(0).uniform(0.1, 10, size=X.shape[0]))
    a = SphericalKMeans(n_components=4, n_init=2, random_state=1).fit(X)
    b = SphericalKMeans(n_components=4, n_init=2, random_state=1).fit((scale @ X).tocsr())
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.objective_ == pytest.approx(b.objective_)


@pytest.mark.parametrize("dtype, scale", [(np.float64, 1e160), (np.float64, 1e-170),
                                          (np.float32, 1e20), (np.float32, 1e-20)])
def test_any_overall_scale_gives_the_same_clusters(corpus, dtype, scale):
    """Normalizing squares the values: at 1e160 or 1e-170 every row became zero or NaN
    and the fit returned one cluster."""
    X, _ = corpus
    X = X.astype(dtype)
    a = SphericalKMeans(n_components=4, n_init=2, random_state=1).fit(X)
    b = SphericalKMeans(n_components=4, n_init=2, random_state=1).fit(X * dtype(scale))
    np.testing.assert_array_equal(b.labels_, a.labels_)
    np.testing.assert_allclose(b.cluster_centers_, a.cluster_centers_, rtol=1e-4, atol=1e-6)


def test_input_not_modified(corpus):
    X, _ = corpus
    X_copy = X.copy()
    dense = X.toarray()
    dense_copy = dense.copy()
    SphericalKMeans(n_components=3, n_init=1, random_state=0).fit(X)
    SphericalKMeans(n_components=3, n_init=1, random_state=0).fit(dense)
    assert (X != X_copy).nnz == 0
    np.testing.assert_array_equal(dense, dense_copy)


def test_sparse_input_never_densified(corpus, monkeypatch):
    X, _ = corpus
    n_docs = X.shape[0]

    def guard(original):
        def wrapper(self, *args, **kwargs):
            if self.shape[0] >= n_docs:
                raise AssertionError("the document-term matrix was densified")
            return original(self, *args, **kwargs)
        return wrapper

    for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        monkeypatch.setattr(cls, "toarray", guard(cls.toarray))
        monkeypatch.setattr(cls, "todense", guard(cls.todense))
    model = SphericalKMeans(n_components=4, n_init=2, random_state=0).fit(X)
    model.transform(X)
    model.predict(X)


# ---------------------------------------------------------------- zero rows, empty clusters
def test_zero_rows_get_minus_one(corpus):
    X, _ = corpus
    X = sp.vstack([X[:50], sp.csr_matrix((2, X.shape[1])), X[50:]]).tocsr()
    # the same words as every other clusterer's (check_documents), not Python advice:
    # the command line shows it too
    with pytest.warns(UserWarning, match=r"2 document\(s\) passed to fit have no term "
                                         r"\(all-zero rows\); they get label -1"):
        model = SphericalKMeans(n_components=4, n_init=2, random_state=0).fit(X)
    np.testing.assert_array_equal(model.labels_[50:52], [-1, -1])
    assert np.all(model.labels_[np.r_[0:50, 52:X.shape[0]]] >= 0)
    assert model.inertia_ == pytest.approx(X.shape[0] - 2 - model.similarity_)
    with pytest.warns(UserWarning, match="2 document"):
        np.testing.assert_array_equal(model.predict(X), model.labels_)
    np.testing.assert_array_equal(model.transform(X)[50:52], 0.0)


def test_all_zero_input_rejected():
    with pytest.raises(ValueError, match="all-zero"):
        SphericalKMeans(n_components=2).fit(sp.csr_matrix((5, 3)))
    X = np.zeros((5, 3))
    X[0, 0] = 1
    with pytest.raises(ValueError, match="non-empty documents"):
        SphericalKMeans(n_components=2).fit(X)


def test_empty_cluster_is_reseeded():
    # two well-separated groups, and a starting centroid no document is close to
    X = np.array([[1.0, 0.1, 0, 0], [1.0, 0.2, 0, 0], [0.9, 0.1, 0, 0],
                  [0, 0, 1.0, 0.1], [0, 0, 1.0, 0.3], [0, 0, 0.8, 0.1]])
    init = np.array([[1.0, 0, 0, 0], [0, 0, 1.0, 0], [0, 1.0, 0, 1.0]])
    model = SphericalKMeans(n_components=3, init=init, n_init=1).fit(X)
    assert set(model.labels_) == {0, 1, 2}
    np.testing.assert_allclose(np.linalg.norm(model.cluster_centers_, axis=1), 1.0)
    assert np.all(np.diff(model.objective_history_) <= 1e-12)
    again = SphericalKMeans(n_components=3, init=init, n_init=1).fit(X)
    np.testing.assert_array_equal(model.labels_, again.labels_)


def test_explicit_init(corpus):
    X, labels = corpus
    # start from the (unnormalized) class means: already the optimum
    means = np.vstack([np.asarray(X[labels == t].mean(axis=0)) for t in range(4)])
    with pytest.warns(RuntimeWarning, match="only one init"):
        model = SphericalKMeans(n_components=4, init=means, n_init=5).fit(X)
    np.testing.assert_array_equal(model.labels_, SphericalKMeans(
        n_components=4, init=means, n_init=1).fit(X).labels_)
    assert normalized_mutual_info_score(labels, model.labels_) > 0.95
    with pytest.raises(ValueError, match="shape"):
        SphericalKMeans(n_components=3, init=means, n_init=1).fit(X)
    bad = means.copy()
    bad[1] = 0
    with pytest.raises(ValueError, match="all-zero"):
        SphericalKMeans(n_components=4, init=bad, n_init=1).fit(X)


def test_verbose(capsys):
    X, _ = planted_corpus(n_docs=40, seed=1)
    SphericalKMeans(n_components=2, n_init=1, verbose=1, random_state=0).fit(X)
    out, err = capsys.readouterr()
    assert "objective" in err and out == ""  # messages on stderr, stdout stays clean


# ---------------------------------------------------------------- errors
def test_bad_input_errors(corpus):
    X, _ = corpus
    with pytest.raises(ValueError, match="larger than the number of documents"):
        SphericalKMeans(n_components=10).fit(X[:5])
    with pytest.raises(ValueError, match="n_components"):
        SphericalKMeans(n_components=0).fit(X)
    with pytest.raises(ValueError, match="init"):
        SphericalKMeans(n_components=2, init="kmeans").fit(X)
    with pytest.raises(ValueError, match="max_iter"):
        SphericalKMeans(n_components=2, max_iter=0).fit(X)
    with pytest.raises(ValueError, match="tol"):
        SphericalKMeans(n_components=2, tol=-1).fit(X)
    negative = X.toarray()
    negative[0, 0] = -1
    with pytest.raises(ValueError, match="negative"):
        SphericalKMeans(n_components=2).fit(negative)
    nan = X.toarray()
    nan[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SphericalKMeans(n_components=2).fit(nan)
    with pytest.raises(NotFittedError):
        SphericalKMeans(n_components=2).predict(X)
    model = SphericalKMeans(n_components=2, n_init=1, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :10])
    with pytest.raises(ValueError, match="negative"):
        model.transform(negative)


def test_list_input():
    X = [[3, 1, 0, 0], [2, 1, 0, 0], [0, 0, 1, 4], [0, 0, 1, 2]]
    labels = SphericalKMeans(n_components=2, random_state=0).fit_predict(X)
    assert labels[0] == labels[1] != labels[2] == labels[3]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_row_squared_norms_are_scipys(dtype):
    """_row_sq_norms skips scipy's element-wise product, but its numbers must stay
    scipy's bit for bit (float32 k-means++ seeds from them): empty rows, a stored zero,
    duplicate entries and integer values included."""
    rng = np.random.default_rng(0)
    A = sp.random(60, 300, density=0.3, format="csr", random_state=1,
                  data_rvs=lambda n: rng.random(n) * 3 + 1e-3)
    A = (sp.diags((np.arange(60) != 5).astype(float)) @ A).tocsr().astype(dtype)
    A.eliminate_zeros()
    with_zero = A.copy()
    with_zero.data[3] = 0  # stored, not eliminated
    first = A.indptr[0]  # row 0 holds its first entry twice (not canonical)
    duplicated = sp.csr_matrix((np.insert(A.data, first, A.data[first]),
                                np.insert(A.indices, first, A.indices[first]),
                                np.r_[0, A.indptr[1:] + 1]), shape=A.shape)
    assert not duplicated.has_canonical_format
    for B in (A, with_zero, duplicated, sp.coo_matrix(A), sp.csr_array(A)):
        expected = np.asarray(B.multiply(B).sum(axis=1)).ravel()
        got = skmeans_module._row_sq_norms(B)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
    assert skmeans_module._row_sq_norms(A)[5] == 0
    dense = A.toarray().astype(np.float64)
    np.testing.assert_allclose(skmeans_module._row_sq_norms(dense), (dense ** 2).sum(axis=1))
