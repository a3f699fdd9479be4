"""A planted corpus of disjoint topics, for tests and examples."""

import numpy as np



def make_planted(n_topics=3, *, n_per_topic=30, n_words_per_topic=15, noise=0.02,
                 random_state=0):
    """A synthetic corpus with planted topics, as scikit-learn's ``make_blobs``.

    Each topic owns ``n_words_per_topic`` words of its own. Each of its ``n_per_topic``
    documents draws Poisson(2) counts of those words, and every word of the vocabulary
    turns up with probability ``noise``. Rows are scaled to unit length.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_topics * n_per_topic,
        n_topics * n_words_per_topic)
    y : ndarray of shape (n_topics * n_per_topic,)
        The topic of each row, documents grouped by topic.
    """
    import scipy.sparse as sp

    rng = np.random.default_rng(random_state)
    d = n_topics * n_words_per_topic
    rows = []
    for c in range(n_topics):
        block = np.zeros((n_per_topic, d))
        block[:, c * n_words_per_topic:(c + 1) * n_words_per_topic] = rng.poisson(
            2.0, (n_per_topic, n_words_per_topic))
        block += rng.random((n_per_topic, d)) < noise
        rows.append(block)
    X = np.vstack(rows)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return sp.csr_matrix(X), np.repeat(np.arange(n_topics), n_per_topic)
