"""The keywords renamed in 0.3: the number of clusters is ``n_components`` in
the public API; ``n_clusters=`` and ``k=`` still work for 0.3 with a FutureWarning and give
the same result; positional calls stay silent."""

import inspect
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import make_planted

import semnmf
from semnmf._utils.labels import cluster_means
from semnmf._utils.renamed import renamed, renamed_keyword
from semnmf.ensemble.consensus import consensus, cspa, hgpa, mcla
from semnmf.ensemble.mixture import mixture_consensus
from semnmf.ensemble.runs import combine
from semnmf.pipelines.levels import k_range
from semnmf.pipelines.pretrained import document_partition
from semnmf.refine.centroid import centroid_refine
from semnmf.report.results import empty_clusters

MESSAGE = "n_clusters was renamed n_components in 0.3 and will be removed in 0.4"


@renamed("n_clusters", "n_components")
def _f(labels, n_components=None):
    return n_components


def test_the_decorator_moves_the_old_keyword_with_a_future_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # the new name and positional calls: silent
        assert _f([0], 3) == _f([0], n_components=3) == 3
    with pytest.warns(FutureWarning, match=MESSAGE) as record:
        assert _f([0], n_clusters=3) == 3
    assert record[0].filename == __file__   # points at the caller
    with pytest.raises(TypeError, match="name the same argument"):
        _f([0], n_clusters=3, n_components=3)
    with pytest.raises(TypeError, match="multiple values"), pytest.warns(FutureWarning):
        _f([0], 3, n_clusters=3)
    assert _f.__name__ == "_f" and "n_components" in str(inspect.signature(_f))


def test_renamed_keyword_edits_the_keywords_in_place():
    kwargs = {"k": 4, "other": 1}
    with pytest.warns(FutureWarning, match="k was renamed n_components in 0.3"):
        assert renamed_keyword(kwargs, "k", "n_components") is kwargs
    assert kwargs == {"n_components": 4, "other": 1}
    assert renamed_keyword({"x": 1}, "k", "n_components") == {"x": 1}   # nothing to move


L = np.array([[0, 0, 1], [0, 0, 1], [0, 1, 1], [1, 1, 0], [1, 1, 0], [1, 2, 0]])
X = sp.csr_matrix(np.array([[3., 1, 0], [2, 1, 0], [3, 0, 1], [0, 1, 3], [0, 2, 3],
                            [1, 0, 2]]))
LABELS = np.array([0, 0, 0, 1, 1, 1])


@pytest.mark.parametrize("call, old, value", [
    (lambda **kw: consensus(L, random_state=0, **kw).labels, "n_clusters", 2),
    (lambda **kw: cspa(L, random_state=0, **kw), "n_clusters", 2),
    (lambda **kw: hgpa(L, random_state=0, **kw), "n_clusters", 2),
    (lambda **kw: mcla(L, random_state=0, **kw), "n_clusters", 2),
    (lambda **kw: mixture_consensus(L, random_state=0, n_init=1, **kw), "n_clusters", 2),
    (lambda **kw: combine(L, method="mcla", random_state=0, **kw)[0], "n_clusters", 2),
    (lambda **kw: centroid_refine(X, LABELS, **kw)[0], "n_clusters", 2),
    (lambda **kw: cluster_means(X, LABELS, **kw), "n_clusters", 2),
    (lambda **kw: empty_clusters(LABELS, **kw), "n_clusters", 3),
    (lambda **kw: document_partition(1e6, **kw), "n_clusters", 5),
    (lambda **kw: k_range(n_documents=1000, **kw), "k", 10),
], ids=["consensus", "cspa", "hgpa", "mcla", "mixture_consensus", "combine",
        "centroid_refine", "cluster_means", "empty_clusters", "document_partition",
        "k_range"])
def test_the_old_keyword_warns_and_gives_the_same_result(call, old, value):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        new = call(n_components=value)
    with pytest.warns(FutureWarning, match=f"{old} was renamed n_components in 0.3"):
        before = call(**{old: value})
    np.testing.assert_array_equal(np.asarray(before), np.asarray(new))


def test_semnmf_cluster_takes_n_components_and_warns_on_k():
    texts, _ = make_planted(8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        positional = semnmf.cluster(texts, 3, method="nmf", max_iter=10)
        named = semnmf.cluster(texts, n_components=3, method="nmf", max_iter=10)
    with pytest.warns(FutureWarning, match="k was renamed n_components in 0.3"):
        old = semnmf.cluster(texts, k=3, method="nmf", max_iter=10)
    assert positional.labels.tolist() == named.labels.tolist() == old.labels.tolist()
    assert old.k == 3
    with pytest.raises(TypeError), pytest.warns(FutureWarning):
        semnmf.cluster(texts, 3, k=3)


def test_saved_model_takes_n_components():
    from semnmf.pipelines.saved import SavedModel
    from semnmf.text.state import VectorizerState

    corpus = semnmf.Corpus(["bank money loan", "bank loan", "match goal", "goal team"])
    vectorizer = VectorizerState.from_corpus(corpus, "tfidf")
    centers = np.eye(2, vectorizer.n_terms)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        new = SavedModel(vectorizer, centers=centers, n_components=2)
    with pytest.warns(FutureWarning, match=MESSAGE):
        old = SavedModel(vectorizer, centers=centers, n_clusters=2)
    # model.json's key stays n_clusters (files of earlier versions read the same)
    assert new.info["n_clusters"] == old.info["n_clusters"] == new.n_clusters == 2


def test_the_command_line_takes_n_components_and_n_clusters():
    from semnmf.cli.main import build_parser

    parser = build_parser()
    for flag in ("-k", "--n-components", "--n-clusters"):
        assert parser.parse_args(["cluster", "bbc", flag, "4"]).k == 4
    assert "--n-components" in parser._subparsers._group_actions[0].choices[
        "cluster"].format_help()
