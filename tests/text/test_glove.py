"""Tests for semnmf.text.glove: the GloVe trainer and the PGLOVE context matrix.

The numba kernel is checked pair for pair against a slow Python transcription of the
``glove.c`` AdaGrad loop; the fitted vectors are checked on a planted co-occurrence matrix
whose words form three topics.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

from semnmf import Corpus, SemanticNMF
from semnmf.text.glove import GloVe, _adagrad_epoch, _loss, glove_context, glove_weights


# ------------------------------------------------------------------ references


def reference_epoch(rows, cols, X, order, W, Wc, bw, bc, GW, GWc, Gbw, Gbc, eta, x_max,
                    alpha, clip):
    """One AdaGrad epoch of glove.c written out plainly (modifies the arrays in place)."""
    k = W.shape[1]
    cost = 0.0
    for e in order:
        i, j, x = rows[e], cols[e], X[e]
        f = (x / x_max) ** alpha if x < x_max else 1.0
        diff = sum(W[i, b] * Wc[j, b] for b in range(k)) + bw[i] + bc[j] - np.log(x)
        cost += 0.5 * f * diff * diff
        grad_w = [min(max(f * diff * Wc[j, b], -clip), clip) * eta for b in range(k)]
        grad_c = [min(max(f * diff * W[i, b], -clip), clip) * eta for b in range(k)]
        for b in range(k):
            W[i, b] -= grad_w[b] / np.sqrt(GW[i, b])
            Wc[j, b] -= grad_c[b] / np.sqrt(GWc[j, b])
            GW[i, b] += grad_w[b] ** 2
            GWc[j, b] += grad_c[b] ** 2
        g = eta * f * diff
        bw[i] -= g / np.sqrt(Gbw[i])
        bc[j] -= g / np.sqrt(Gbc[j])
        Gbw[i] += g * g
        Gbc[j] += g * g
    return cost


def dense_loss(C, W, Wc, bw, bc, x_max, alpha):
    """J of GloVe eq. (8) over the positive entries of a dense C."""
    C = np.asarray(C, dtype=float)
    pos = C > 0
    f = np.where(C < x_max, (C / x_max) ** alpha, 1.0)
    diff = W @ Wc.T + bw[:, None] + bc[None, :] - np.log(np.where(pos, C, 1.0))
    return float(np.sum((f * diff ** 2)[pos]))


def planted_cooccurrence(n_topics=3, words_per_topic=8, seed=0):
    """Symmetric counts: large within a topic (Poisson 60), small across (Poisson 1)."""
    rng = np.random.default_rng(seed)
    topic = np.repeat(np.arange(n_topics), words_per_topic)
    same = topic[:, None] == topic[None, :]
    upper = np.triu(rng.poisson(np.where(same, 60.0, 1.0)), 1)
    return sp.csr_matrix((upper + upper.T).astype(float)), topic


def cosine(E):
    E = E / np.maximum(np.linalg.norm(E, axis=1, keepdims=True), 1e-12)
    return E @ E.T


def small_problem(dtype, seed=0):
    C, _ = planted_cooccurrence(2, 3, seed=seed)
    C = C.tocoo()
    rng = np.random.RandomState(seed)
    k, d = 4, C.shape[0]
    params = [((rng.random_sample(shape) - 0.5) / k).astype(dtype)
              for shape in [(d, k), (d, k), (d,), (d,)]]
    accumulators = [np.ones_like(p) + rng.random_sample(p.shape).astype(dtype) for p in params]
    order = rng.permutation(C.nnz).astype(np.int64)
    return C, params, accumulators, order


# ------------------------------------------------------------------ kernel == reference


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 2e-5)])
@pytest.mark.parametrize("clip", [100.0, 0.05])
def test_kernel_equals_reference_epoch(dtype, rtol, clip):
    C, params, accumulators, order = small_problem(dtype)
    eta, x_max, alpha = 0.15, 30.0, 0.75
    ref = [p.astype(np.float64) for p in params + accumulators]
    ref_cost = reference_epoch(C.row, C.col, C.data, order, *ref, eta, x_max, alpha, clip)

    got = [p.copy() for p in params + accumulators]
    log_x = np.log(C.data).astype(dtype)
    weight = glove_weights(C.data, x_max, alpha).astype(dtype)
    cost = _adagrad_epoch(C.row.astype(np.int32), C.col.astype(np.int32), log_x, weight, order,
                          0, C.nnz, *got, dtype(eta), dtype(clip))
    for a, b in zip(got, ref):
        assert a.dtype == dtype
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * 1e-3)
    assert cost == pytest.approx(ref_cost, rel=rtol * 10)
    # the epoch did move the parameters
    assert not np.allclose(got[0], params[0])


def test_kernel_visits_only_its_slice():
    C, params, accumulators, order = small_problem(np.float64)
    got = [p.copy() for p in params + accumulators]
    ref = [p.copy() for p in params + accumulators]
    log_x, weight = np.log(C.data), glove_weights(C.data, 30.0, 0.75)
    rows, cols = C.row.astype(np.int32), C.col.astype(np.int32)
    half = C.nnz // 2
    _adagrad_epoch(rows, cols, log_x, weight, order, 0, half, *got, 0.1, 100.0)
    _adagrad_epoch(rows, cols, log_x, weight, order, half, C.nnz, *got, 0.1, 100.0)
    _adagrad_epoch(rows, cols, log_x, weight, order, 0, C.nnz, *ref, 0.1, 100.0)
    for a, b in zip(got, ref):
        np.testing.assert_array_equal(a, b)


def test_loss_kernel_equals_dense_objective():
    C, params, _, _ = small_problem(np.float64)
    x_max, alpha = 30.0, 0.75
    C = C.tocsr().tocoo()
    got = _loss(C.row.astype(np.int32), C.col.astype(np.int32), np.log(C.data),
                glove_weights(C.data, x_max, alpha), *params)
    assert got == pytest.approx(dense_loss(C.toarray(), *params, x_max, alpha), rel=1e-12)


def test_fit_equals_reference_training():
    """Whole fit: glove.c's initialization and a fresh random order every epoch."""
    C, _ = planted_cooccurrence(2, 3)
    k, seed, epochs, eta, x_max, alpha = 3, 7, 3, 0.15, 20.0, 0.75
    model = GloVe(k, x_max=x_max, alpha=alpha, learning_rate=eta, max_iter=epochs,
                  random_state=seed).fit(C)

    coo = C.tocoo()
    rng = np.random.RandomState(seed)
    d = C.shape[0]
    W, Wc = (rng.random_sample((d, k)) - 0.5) / k, (rng.random_sample((d, k)) - 0.5) / k
    bw, bc = (rng.random_sample(d) - 0.5) / k, (rng.random_sample(d) - 0.5) / k
    acc = [np.ones_like(a) for a in (W, Wc, bw, bc)]
    losses = []
    for _ in range(epochs):
        reference_epoch(coo.row, coo.col, coo.data, rng.permutation(coo.nnz), W, Wc, bw, bc,
                        *acc, eta, x_max, alpha, 100.0)
        losses.append(dense_loss(C.toarray(), W, Wc, bw, bc, x_max, alpha))
    np.testing.assert_allclose(model.word_vectors_, W, rtol=1e-10)
    np.testing.assert_allclose(model.context_vectors_, Wc, rtol=1e-10)
    np.testing.assert_allclose(model.word_bias_, bw, rtol=1e-10)
    np.testing.assert_allclose(model.loss_history_, losses, rtol=1e-10)


def test_glove_weights():
    f = glove_weights([1.0, 50.0, 100.0, 250.0], x_max=100.0, alpha=0.75)
    np.testing.assert_allclose(f, [0.01 ** 0.75, 0.5 ** 0.75, 1.0, 1.0])


# ------------------------------------------------------------------ behaviour


@pytest.fixture(scope="module")
def planted_fit():
    C, topic = planted_cooccurrence(3, 8)
    model = GloVe(10, x_max=50.0, max_iter=40, random_state=0).fit(C)
    return C, topic, model


def test_loss_decreases_over_epochs(planted_fit):
    _, _, model = planted_fit
    history = np.asarray(model.loss_history_)
    assert model.n_iter_ == len(history) == 40
    assert model.loss_ == history[-1]
    assert history[-1] < 0.05 * history[0]
    # SGD is not monotone: the loss falls at every epoch while far from the optimum, then
    # fluctuates by a few percent near it
    assert np.all(np.diff(history[:15]) < 0)
    assert np.all(history[1:] < 1.1 * history[:-1])


def test_recovers_planted_topics(planted_fit):
    _, topic, model = planted_fit
    S = cosine(model.embedding("sum"))
    same = topic[:, None] == topic[None, :]
    off_diagonal = ~np.eye(len(topic), dtype=bool)
    within, across = S[same & off_diagonal], S[~same]
    assert within.mean() > across.mean() + 0.3
    # each word's nearest neighbour is in its topic
    np.fill_diagonal(S, -np.inf)
    assert np.all(topic[S.argmax(axis=1)] == topic)


def test_glove_context_is_nonnegative_positive_part(planted_fit):
    C, _, model = planted_fit
    M, fitted = glove_context(C, 10, x_max=50.0, max_iter=40, random_state=0,
                              return_model=True)
    assert M.shape == (C.shape[0], 10) and M.min() >= 0
    np.testing.assert_array_equal(M, np.maximum(model.word_vectors_ + model.context_vectors_, 0))
    assert 0 < np.count_nonzero(M) < M.size  # negatives were set to 0, positives kept
    M_word = glove_context(C, 10, x_max=50.0, max_iter=40, random_state=0, vectors="word")
    np.testing.assert_array_equal(M_word, np.maximum(fitted.word_vectors_, 0))


def test_determinism_under_random_state():
    C, _ = planted_cooccurrence(2, 4)
    a = GloVe(5, max_iter=3, random_state=3).fit(C)
    b = GloVe(5, max_iter=3, random_state=3).fit(C)
    c = GloVe(5, max_iter=3, random_state=4).fit(C)
    np.testing.assert_array_equal(a.word_vectors_, b.word_vectors_)
    np.testing.assert_array_equal(a.context_bias_, b.context_bias_)
    assert a.loss_history_ == b.loss_history_
    assert not np.allclose(a.word_vectors_, c.word_vectors_)


def test_hogwild_threads_train_too():
    C, topic = planted_cooccurrence(3, 8)
    model = GloVe(10, x_max=50.0, max_iter=30, n_jobs=2, random_state=0).fit(C)
    assert model.loss_history_[-1] < 0.2 * model.loss_history_[0]
    S = cosine(model.embedding())
    same = topic[:, None] == topic[None, :]
    assert S[same & ~np.eye(len(topic), dtype=bool)].mean() > S[~same].mean() + 0.3


def test_float32_and_dense_input():
    C, _ = planted_cooccurrence(2, 4)
    a = GloVe(4, max_iter=5, random_state=0, dtype=np.float32).fit(C.toarray())
    b = GloVe(4, max_iter=5, random_state=0).fit(C)
    assert a.word_vectors_.dtype == np.float32
    np.testing.assert_allclose(a.loss_history_, b.loss_history_, rtol=1e-4)


def test_tol_stops_early():
    C, _ = planted_cooccurrence(2, 4)
    model = GloVe(4, max_iter=200, tol=1e-2, random_state=0).fit(C)
    assert 1 < model.n_iter_ < 200
    h = model.loss_history_
    assert h[-2] - h[-1] < 1e-2 * h[0]


def test_rectangular_word_context_matrix():
    C = sp.random(6, 9, density=0.5, random_state=0, format="csr") * 20
    model = GloVe(3, max_iter=2, random_state=0).fit(C)
    assert model.word_vectors_.shape == (6, 3) and model.context_vectors_.shape == (9, 3)
    M = glove_context(C, 3, max_iter=2, random_state=0, vectors="word")
    assert M.shape == (6, 3)
    with pytest.raises(ValueError, match="square"):
        glove_context(C, 3, max_iter=2, vectors="sum")
    with pytest.raises(ValueError, match="square"):
        model.embedding("sum")


# ------------------------------------------------------------------ bad input


@parametrize_with_checks([GloVe(3, max_iter=2, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_bad_cooccurrences():
    C, _ = planted_cooccurrence(2, 3)
    negative = C.toarray()
    negative[0, 1] = -2
    with pytest.raises(ValueError, match="Negative values.*counts >= 0.*not PMI"):
        GloVe(2).fit(negative)
    nan = C.toarray()
    nan[0, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        GloVe(2).fit(nan)
    with pytest.raises(ValueError, match="no positive entry"):
        GloVe(2).fit(sp.csr_matrix((3, 3)))
    with pytest.raises(ValueError, match="2D array"):
        GloVe(2).fit(np.ones(4))


@pytest.mark.parametrize("params, match", [
    ({"n_components": 0}, "n_components"),
    ({"learning_rate": -0.1}, "learning_rate"),
    ({"x_max": 0}, "x_max"),
    ({"alpha": np.nan}, "alpha"),
    ({"max_iter": 1.5}, "max_iter"),
    ({"n_jobs": 0}, "n_jobs"),
    ({"dtype": np.int64}, "dtype"),
])
def test_bad_parameters(params, match):
    C, _ = planted_cooccurrence(2, 3)
    with pytest.raises(ValueError, match=match):
        GloVe(**{"n_components": 2, **params}).fit(C)


def test_unfitted_embedding():
    with pytest.raises(ValueError, match="not fitted"):
        GloVe(2).embedding()
    with pytest.raises(ValueError, match="vectors"):
        glove_context(np.eye(2), 2, vectors="both")


# ------------------------------------------------------------------ corpus and SemanticNMF


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_corpus_glove_context_feeds_semantic_nmf(planted_texts, planted_labels):
    corpus = Corpus(planted_texts, planted_labels)
    M, model = corpus.glove_context(n_components=6, window=3, max_iter=10, x_max=10.0,
                                    random_state=0, return_model=True)
    assert M.shape == (corpus.n_terms, 6) and M.min() >= 0
    assert model.loss_history_[-1] < model.loss_history_[0]
    M_doc = corpus.glove_context(n_components=6, context="document", max_iter=2,
                                 random_state=0)
    assert M_doc.shape == (corpus.n_terms, 6)
    nmf = SemanticNMF(3, max_iter=20, random_state=0).fit(corpus.tfidf(), M=M)
    assert nmf.context_components_.shape == (3, 6)
    assert len(set(nmf.labels_)) == 3
    with pytest.raises(ValueError, match="context"):
        corpus.glove_context(context="paragraph")
