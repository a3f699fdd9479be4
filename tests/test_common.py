"""One contract for every public estimator, checked over one registry.

Every estimator of semnmf: scikit-learn's ``parametrize_with_checks`` (expected failures
only where a check cannot apply, each with its reason), then semnmf's own contract:
``n_components`` is k, ``objective_`` is finite and lower-is-better, ``labels_`` and the
document factors have the documented shapes, ``random_state`` makes fits repeatable,
float32 stays float32 where declared, a bad parameter is one clear ValueError before any
work, the names removed in 0.3 are refused as unknown ones, and the estimators that build
another estimator forward every argument to it.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import make_pipeline
from sklearn.utils import estimator_checks
from sklearn.utils.estimator_checks import parametrize_with_checks

from conftest import make_planted, planted_corpus
from semnmf import (GNMF, GTNMF, NMF, NMFS, Corpus, HierarchicalNMF, ProjectiveNMF,
                    SemanticGNMF, SemanticNMF, SeNMF, SphericalKMeans, SymNMF,
                    non_negative_factorization, semantic_nmf)
from semnmf.ensemble import MultinomialMixture
from semnmf.models import init as init_module
from semnmf.models.deep import DCN
from semnmf.pipelines import pretrained as pretrained_module
from semnmf.pipelines.pretrained import PretrainedSemanticNMF

try:
    import torch  # noqa: F401
    HAS_TORCH = True
except ImportError:
    HAS_TORCH = False

K = 3

# -- the registry: every public estimator, with small test-friendly parameters ---------------
# family: "mu" = multiplicative updates (objective_history_ non-increasing, transform),
#         "graph" = factorizes a document graph (fit_transform, no transform),
#         "other" = its own algorithm.
REGISTRY = {
    "NMF": (NMF(K, max_iter=50, random_state=0), "mu"),
    "NMF-kl": (NMF(K, loss="kl", max_iter=50, random_state=0), "mu"),
    "NMF-orthogonal": (NMF(K, orthogonal=True, max_iter=50, random_state=0), "mu"),
    "SemanticNMF": (SemanticNMF(K, max_iter=50, random_state=0), "mu"),
    "SemanticNMF-kl": (SemanticNMF(K, loss="kl", max_iter=50, random_state=0), "mu"),
    "SemanticNMF-orthogonal": (SemanticNMF(K, orthogonal=True, max_iter=50, random_state=0),
                               "mu"),
    "SeNMF": (SeNMF(K, max_iter=50, random_state=0), "mu"),
    "GNMF": (GNMF(K, max_iter=30, n_neighbors=3, random_state=0), "mu"),
    "SemanticGNMF": (SemanticGNMF(K, max_iter=30, n_neighbors=3, random_state=0), "mu"),
    "ProjectiveNMF": (ProjectiveNMF(K, max_iter=50, random_state=0), "mu"),
    "SymNMF": (SymNMF(K, max_iter=50, n_neighbors=3, random_state=0), "graph"),
    "NMFS": (NMFS(K, max_iter=50, n_neighbors=3, random_state=0), "graph"),
    "SphericalKMeans": (SphericalKMeans(K, n_init=2, random_state=0), "other"),
    "HierarchicalNMF": (HierarchicalNMF(K, max_iter=50, random_state=0), "other"),
    "DCN": (DCN(K, hidden_layer_sizes=(8,), latent_dim=2, pretrain_epochs=3, max_iter=2,
                batch_size=16, n_threads=1, random_state=0), "other"),
    "GTNMF": (GTNMF(estimator=NMF(K, max_iter=30, random_state=0), max_iter=200), "other"),
    "MultinomialMixture": (MultinomialMixture(K, n_init=2, random_state=0), "other"),
}
NEEDS_TORCH = {"DCN"}


def estimators(names=None, family=None):
    """pytest params over the registry (DCN skipped without PyTorch)."""
    out = []
    for name, (estimator, fam) in REGISTRY.items():
        if (names is not None and name not in names) or (family is not None and fam != family):
            continue
        marks = [pytest.mark.skipif(not HAS_TORCH, reason="DCN needs PyTorch")] \
            if name in NEEDS_TORCH else []
        out.append(pytest.param(name, id=name, marks=marks))
    return out


def fresh(name, **params):
    return clone(REGISTRY[name][0]).set_params(**params)


# -- scikit-learn's checks --------------------------------------------------------------------
_NEGATIVE_BLOBS = ("fits standardized Gaussian blobs, which have negative values; semnmf's "
                   "document clusterers only accept non-negative document-term data")
_TRANSFORM = {
    "NMF": "transform solves Z anew by multiplicative updates with W fixed, from a flat "
           "start: it equals fit_transform's Z only up to the convergence tolerance "
           "(checked in tests/models/test_nmf.py::test_transform_with_fixed_components)",
    "orthogonal": "transform solves Z anew by (7a) with W fixed; for orthogonal NMF that is "
                  "not fit's Z (which solves the orthogonal update)",
    "SeNMF": "transform solves Z anew by (7a) with W fixed, from a flat start: it equals "
             "fit_transform's Z only up to the convergence tolerance",
    "GNMF": "transform solves Z anew with W fixed and without the graph (new documents are "
            "not in it): it equals fit_transform's Z only up to the graph term",
    "ProjectiveNMF": "transform solves min ‖X − Z Wᵀ‖ for Z with the fitted W (PNMF defines "
                     "no projection for new documents), which is not fit's Z",
}


def _expected_failures(estimator):
    name = type(estimator).__name__
    failures = {}
    if name in ("NMF", "SemanticNMF", "SeNMF", "GNMF", "SemanticGNMF", "ProjectiveNMF",
                "SphericalKMeans", "HierarchicalNMF", "GTNMF"):
        failures["check_clustering"] = _NEGATIVE_BLOBS
    if name in ("NMF", "SemanticNMF", "SeNMF", "GNMF", "SemanticGNMF", "ProjectiveNMF"):
        key = "orthogonal" if getattr(estimator, "orthogonal", False) else {
            "SemanticNMF": "NMF", "SemanticGNMF": "GNMF"}.get(name, name)
        failures["check_transformer_general"] = _TRANSFORM[key]
        failures["check_transformer_data_not_an_array"] = "same reason as " \
                                                          "check_transformer_general"
    if name == "HierarchicalNMF":
        failures["check_fit2d_1sample"] = ("3 leaves from 1 document is refused with "
                                           "'n_components=3 is larger than the number of "
                                           "non-empty documents (1)'")
    if name == "GTNMF":
        failures["check_fit2d_1sample"] = ("games need at least 2 players: 1 document is "
                                           "refused with a clear message")
    if name == "MultinomialMixture":
        failures.update(MIXTURE_FAILURES)
    return failures


_LABELS_ONLY = ("feeds continuous random features; MultinomialMixture models a matrix of "
                "integer cluster labels (one column per partition) and refuses non-integer "
                "values with 'labels must hold integer cluster labels'")
MIXTURE_FAILURES = {name: _LABELS_ONLY for name in (
    "check_complex_data", "check_dict_unchanged", "check_dont_overwrite_parameters",
    "check_dtype_object", "check_estimators_dtypes", "check_estimators_empty_data_messages",
    "check_estimators_fit_returns_self", "check_estimators_overwrite_params",
    "check_estimators_pickle", "check_f_contiguous_array_estimator", "check_fit2d_1feature",
    "check_fit2d_1sample", "check_fit2d_predict1d", "check_fit_check_is_fitted",
    "check_fit_idempotent", "check_fit_score_takes_y", "check_methods_sample_order_invariance",
    "check_methods_subset_invariance", "check_n_features_in",
    "check_n_features_in_after_fitting", "check_non_transformer_estimators_n_iter",
    "check_pipeline_consistency", "check_positive_only_tag_during_fit",
    "check_readonly_memmap_input", "check_clustering")}
MIXTURE_FAILURES["check_estimators_nan_inf"] = ("NaN is a missing label (a partition that "
                                                "did not place the document), by design")


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore:.*(all-zero|no term|no neighbour|not seen in fit).*:UserWarning")
@parametrize_with_checks([est for name, (est, _) in REGISTRY.items() if name not in NEEDS_TORCH
                          or HAS_TORCH],
                         expected_failed_checks=_expected_failures)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# PretrainedSemanticNMF fits a corpus (texts), not a numeric matrix: scikit-learn's checks
# that fit numeric data cannot apply; the API checks that do not fit still do.
PRETRAINED_API_CHECKS = [
    "check_estimator_cloneable", "check_estimator_repr", "check_no_attributes_set_in_init",
    "check_parameters_default_constructible", "check_get_params_invariance",
    "check_set_params", "check_mixin_order", "check_valid_tag_types",
    "check_estimator_tags_renamed",
]


@pytest.mark.parametrize("check_name", PRETRAINED_API_CHECKS)
def test_pretrained_sklearn_api(check_name):
    check = getattr(estimator_checks, check_name)
    estimator = PretrainedSemanticNMF(K, semantics="corpus", random_state=0)
    check(type(estimator).__name__, estimator)


# -- data ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def data():
    X, y = planted_corpus(n_per=30, k=K, seed=0)
    return sp.csr_matrix(X, dtype=np.float64), y


def label_matrix(y, seed=0):
    rng = np.random.default_rng(seed)
    columns = [y, (y + 1) % K, np.where(rng.random(y.size) < 0.1, rng.integers(0, K, y.size), y)]
    return np.column_stack(columns)


def fit_input(name, data):
    """What ``fit`` takes for each estimator (labels for the mixture)."""
    X, y = data
    if name == "MultinomialMixture":
        return label_matrix(y)
    return X


def quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.filterwarnings("ignore", message=".*(no term|no neighbour).*")
        return function(*args, **kwargs)


# -- semnmf's own contract ----------------------------------------------------------------------
@pytest.mark.parametrize("name", estimators())
def test_n_components_is_k(name):
    params = REGISTRY[name][0].get_params()
    if name == "GTNMF":
        # refines given memberships: k is their number of columns, not a parameter
        assert "n_components" not in params
    else:
        assert "n_components" in params
    for old in ("n_clusters", "n_leaves"):  # the names of 0.1, removed in 0.3
        assert old not in params


@pytest.mark.parametrize("name", estimators())
def test_labels_and_objective(name, data):
    estimator = quiet(fresh(name).fit, fit_input(name, data))
    n = data[0].shape[0]
    assert estimator.labels_.shape == (n,)
    assert np.issubdtype(estimator.labels_.dtype, np.integer)
    assert estimator.labels_.min() >= -1
    if name == "HierarchicalNMF":
        assert not hasattr(estimator, "objective_")  # a tree of rank-2 splits: no single loss
        return
    assert np.isfinite(estimator.objective_)
    history = getattr(estimator, "objective_history_", None)
    if history is not None:
        assert estimator.objective_ == pytest.approx(history[-1])
    if (REGISTRY[name][1] == "mu" and not name.endswith("orthogonal")) \
            or name == "SphericalKMeans":
        # lower is better: the monotone algorithms never raise objective_ (the orthogonal
        # update descends a Lagrangian, not F: see semnmf.models._solvers.frobenius)
        assert np.all(np.diff(history) <= 1e-9 * abs(history[0]))
    if name == "MultinomialMixture":
        assert estimator.objective_ == min(estimator.bic_.values())


def _record_restarts(monkeypatch):
    """Record each restart's final objective (in objective_'s sign) where the estimators
    run one: the multiplicative updates (mu.run), Lloyd (spherical k-means: objective_ is
    the negated cosine sum) and SymNMF's ANLS."""
    from semnmf.models import skmeans, symnmf
    from semnmf.models._solvers import mu

    finals = []

    def wrap(module, attribute, final):
        original = getattr(module, attribute)

        def recorded(*args, **kwargs):
            result = original(*args, **kwargs)
            finals.append(final(result))
            return result

        monkeypatch.setattr(module, attribute, recorded)

    wrap(mu, "run", lambda result: result[1][-1])
    wrap(skmeans, "_lloyd", lambda result: -result[2])
    wrap(symnmf, "symnmf_anls", lambda result: result[3][-1])
    return finals


@pytest.mark.parametrize("name", [name for name, (estimator, _) in REGISTRY.items()
                                  if {"n_init", "init"} <= set(estimator.get_params())])
def test_objective_ranks_runs_the_same_way_everywhere(data, name, monkeypatch):
    """With n_init=3 the kept run is the restart with the lowest objective_: objective_
    equals the minimum of the three restarts' final objectives, recorded as they run.
    (MultinomialMixture's n_init is EM restarts under a BIC model choice: tested above.)"""
    X, _ = data
    finals = _record_restarts(monkeypatch)
    best = quiet(fresh(name, n_init=3, random_state=0, init="random").fit, X)
    assert len(finals) == 3, finals
    assert best.objective_ == pytest.approx(min(finals), rel=1e-12, abs=1e-12)
    assert len(set(np.round(finals, 12))) > 1 or name == "SphericalKMeans"


@pytest.mark.parametrize("name", estimators(family="mu") + estimators(family="graph")
                         + estimators(["SphericalKMeans", "DCN", "GTNMF"]))
def test_document_factors(name, data):
    X, _ = data
    estimator = fresh(name)
    Z = quiet(estimator.fit_transform, X)
    n = X.shape[0]
    # DCN's document factors are its autoencoder's latent codes (latent_dim columns)
    assert Z.shape == (n, getattr(estimator, "latent_dim", K))
    if REGISTRY[name][1] == "mu":
        assert np.all(Z >= 0)
        assert estimator.components_.shape == (K, X.shape[1])   # k x n_features
        assert np.array_equal(np.argmax(Z, axis=1), estimator.labels_)
    if REGISTRY[name][1] == "graph":
        assert not hasattr(estimator, "components_")            # no feature factor
        assert np.array_equal(Z, estimator.embedding_)
    if hasattr(estimator, "transform"):
        new = estimator.transform(X[:7])
        assert new.shape == (7, estimator.transform(X[:1]).shape[1])


@pytest.mark.parametrize("name", estimators())
def test_random_state_reproducible(name, data):
    X = fit_input(name, data)
    a = quiet(fresh(name, **_seed(name, 3)).fit, X)
    b = quiet(fresh(name, **_seed(name, 3)).fit, X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    if hasattr(a, "objective_"):
        assert a.objective_ == b.objective_


def _seed(name, seed):
    if name == "GTNMF":
        return {"estimator": NMF(K, max_iter=30, random_state=seed)}
    return {"random_state": seed}


@pytest.mark.parametrize("name", estimators())
def test_float32_preserved_where_declared(name, data):
    estimator = fresh(name)
    tags = estimator.__sklearn_tags__().transformer_tags
    if tags is None or "float32" not in tags.preserves_dtype:
        pytest.skip("float32 is not declared preserved")
    X32 = data[0].astype(np.float32)
    Z = quiet(estimator.fit_transform, X32)
    assert Z.dtype == np.float32
    if hasattr(estimator, "components_"):
        assert estimator.components_.dtype == np.float32


# One table of bad parameter values for every estimator (it replaces the tables each test
# file had). Each must raise one ValueError, on one line, naming the parameter, before
# any work (no fitted attribute set).
BAD_PARAMETERS = [
    (name, param, value)
    for name in REGISTRY
    for param, value in [("n_components", 0), ("n_components", 2.5), ("max_iter", -1),
                         ("tol", -1.0), ("n_init", 0), ("random_state", "seed"),
                         ("init", "svd")]
    if param in REGISTRY[name][0].get_params()
] + [
    ("NMF", "loss", "itakura"), ("NMF", "orthogonal", "yes"), ("NMF", "device", "gpu"),
    ("NMF", "device", "cuda:x"), ("SemanticNMF", "device", "tpu"),
    ("SemanticNMF", "lam", -1.0), ("SemanticNMF", "lam_scale", "raw"),
    ("SeNMF", "lam", -1.0), ("SeNMF", "shift", 0), ("SeNMF", "shift", -2.0),
    ("GNMF", "graph_lam", -1.0), ("GNMF", "n_neighbors", 0), ("GNMF", "weight", "gaussian"),
    ("GNMF", "metric", "manhattan"), ("GNMF", "lam_scale", "raw"), ("GNMF", "bandwidth", 0.0),
    ("SemanticGNMF", "graph_lam", -1.0), ("SemanticGNMF", "lam", -1.0),
    ("SymNMF", "n_neighbors", 0), ("SymNMF", "scaling", "sym"), ("SymNMF", "alpha", -1.0),
    ("SymNMF", "weight", "gaussian"), ("NMFS", "scaling", "sym"),
    ("SphericalKMeans", "init", "kmeans"),
    ("HierarchicalNMF", "beta", 1.0), ("HierarchicalNMF", "n_trials", 0),
    ("HierarchicalNMF", "splitter", "louvain"), ("HierarchicalNMF", "lam", -1.0),
    ("DCN", "cluster_weight", -1.0), ("DCN", "batch_size", 0), ("DCN", "solver", "lbfgs"),
    ("GTNMF", "n_neighbors", 0), ("GTNMF", "metric", "manhattan"),
    ("GTNMF", "symmetrize", "sum"), ("GTNMF", "smoothing", 1.0), ("GTNMF", "scaling", "sym"),
    ("GTNMF", "max_iter", 0), ("GTNMF", "estimator", "nmf"),
    ("MultinomialMixture", "criterion", "aic"), ("MultinomialMixture", "smoothing", -1.0),
]


@pytest.mark.parametrize("name, param, value", [
    pytest.param(*row, id=f"{row[0]}-{row[1]}={row[2]!r}",
                 marks=[pytest.mark.skipif(not HAS_TORCH, reason="DCN needs PyTorch")]
                 if row[0] in NEEDS_TORCH else [])
    for row in BAD_PARAMETERS])
def test_bad_parameter_is_one_clear_error(name, param, value, data):
    estimator = fresh(name, **{param: value})
    with pytest.raises(ValueError, match=param) as error:
        estimator.fit(fit_input(name, data))
    assert "\n" not in str(error.value)
    fitted = [a for a in vars(estimator) if a.endswith("_") and not a.startswith("_")]
    assert fitted == [], f"{name} did work before refusing {param}={value!r}: {fitted}"


def test_pretrained_bad_parameter():
    texts = [" ".join(["alpha beta"] * 3)] * 4
    estimator = PretrainedSemanticNMF(2, semantics="corpus", embed="everything")
    with pytest.raises(ValueError, match="embed") as error:
        estimator.fit(texts)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("estimator", ["SemanticNMF", "GNMF"])
def test_absurd_weight_is_refused(estimator):
    import semnmf

    X = Corpus(make_planted()[0]).tfidf()
    name = "lam" if estimator == "SemanticNMF" else "graph_lam"
    model = getattr(semnmf, estimator)(3, random_state=0, max_iter=20, **{name: 1e308})
    with pytest.raises(ValueError, match=rf"{name} must be between 0 and 1e\+06"):
        model.fit(X)


# The names of 0.1 that 0.2 kept with a FutureWarning, removed in 0.3 (CHANGELOG.md): an
# old keyword fails as any unknown parameter does (TypeError, as scikit-learn's estimators),
# init="custom" as any unknown strategy, GTNMF's positional memberships as no memberships.
REMOVED = [("SphericalKMeans", "n_clusters"), ("HierarchicalNMF", "n_leaves"),
           ("GNMF", "lam"), ("DCN", "lam"), ("SymNMF", "H_init"),
           *[(name.values[0], old) for name in estimators(family="mu")
             for old in ("Z_init", "W_init")]]


@pytest.mark.parametrize("name, old", [pytest.param(name, old, id=f"{name}-{old}")
                                       for name, old in dict.fromkeys(REMOVED)])
def test_removed_parameter_is_an_unknown_keyword(name, old):
    cls = type(REGISTRY[name][0])
    assert old not in cls().get_params()
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{old}'"):
        cls(**{old: 1})


@pytest.mark.parametrize("name", estimators(family="mu") + estimators(["SymNMF"]))
def test_init_custom_is_refused(name, data):
    estimator = fresh(name, init="custom")
    with pytest.raises(ValueError, match="'init' parameter .* Got 'custom'"):
        estimator.fit(fit_input(name, data))


def test_gtnmf_positional_memberships_are_refused(data):
    X, _ = data
    Z = quiet(NMF(K, random_state=0).fit_transform, X)
    with pytest.raises(ValueError, match=r"memberships=Z"):
        GTNMF().fit(X, Z)                      # y: ignored, so no memberships
    expected = GTNMF().fit(X, memberships=Z)
    assert expected.labels_.shape == (X.shape[0],)


# -- wrappers forward every argument (TensorLy's assert_class_wrapper_correctly_passes_arguments)
NON_DEFAULT = {
    "n_components": 2, "init": "random", "n_init": 2, "max_iter": 17, "tol": 3e-3,
    "random_state": 11, "verbose": 0, "lam": 2.5, "graph_lam": 0.7, "lam_scale": "absolute",
    "n_neighbors": 4, "weight": "cosine", "metric": "euclidean", "bandwidth": 0.5,
    "loss": "kl", "orthogonal": True, "shift": 3, "alpha": 0.3, "scaling": None,
    "score_threshold": 0.1, "beta": 5.0, "n_trials": 2, "splitter": "kmeans",
    "smoothing": 0.05, "symmetrize": "mean", "criterion": "icl", "models": "Binary_pk_Ekjh",
    "cluster_weight": 0.4, "latent_dim": 3, "batch_size": 8, "learning_rate": 0.01,
    "solver": "sgd", "n_threads": 1, "pretrain_epochs": 2, "hidden_layer_sizes": (4,),
}


@pytest.mark.parametrize("name", estimators())
def test_constructor_stores_every_argument(name):
    """Subclasses forward every argument to the base ``__init__`` (or store it): each
    parameter set to a non-default value comes back from ``get_params``."""
    estimator = REGISTRY[name][0]
    cls = type(estimator)
    for param, default in cls().get_params().items():
        if param not in NON_DEFAULT or param == "estimator":
            continue
        value = NON_DEFAULT[param]
        assert cls(**{param: value}).get_params()[param] == value, (name, param)


def test_nmfs_forwards_every_argument_to_its_nmf(data, monkeypatch):
    import semnmf.models.symnmf as symnmf

    seen = {}

    class Spy(NMF):
        def fit_transform(self, X, y=None, **params):
            seen.update(self.get_params())
            return super().fit_transform(X, y, **params)

    monkeypatch.setattr(symnmf, "NMF", Spy)
    values = dict(n_components=2, init="random", n_init=2, max_iter=17, tol=3e-3,
                  random_state=11, verbose=0)
    quiet(NMFS(n_neighbors=4, **values).fit, data[0])
    assert {key: seen[key] for key in values} == values


def test_hierarchical_forwards_every_argument_to_its_splitter(data, monkeypatch):
    import semnmf.models.semantic as semantic

    seen = []

    class Spy(SemanticNMF):
        def fit(self, X, y=None, **params):
            seen.append(self.get_params())
            return super().fit(X, y, **params)

    monkeypatch.setattr(semantic, "SemanticNMF", Spy)
    quiet(HierarchicalNMF(3, splitter="semantic", lam=2.5, max_iter=17, tol=3e-3,
                          random_state=0).fit, data[0])
    assert seen and all(p["lam"] == 2.5 and p["max_iter"] == 17 and p["tol"] == 3e-3
                        and p["n_components"] == 2 for p in seen)


def test_skmeans_start_forwards_its_arguments(data, monkeypatch):
    seen = {}
    original = init_module.SphericalKMeans

    class Spy(original):
        def fit(self, X, y=None):
            seen.update(self.get_params())
            return super().fit(X, y)

    monkeypatch.setattr(init_module, "SphericalKMeans", Spy)
    rng = np.random.RandomState(5)
    init_module.initialize(data[0], K, "skmeans", rng)
    assert seen["n_components"] == K and seen["random_state"] is rng
    assert seen["n_init"] == init_module.SKMEANS_RESTARTS


def test_pretrained_forwards_every_argument_to_its_model(monkeypatch):
    texts = [f"{w} {w} {w}x {w}y" for w in ("ship boat sea", "bank money loan", "goal ball team")
             for _ in range(8)]
    values = dict(lam=2.5, n_init=2, max_iter=17, tol=3e-3, random_state=11)
    model = quiet(PretrainedSemanticNMF(K, semantics="corpus", **values).fit, texts)
    got = model.model_.get_params()
    assert {key: got[key] for key in values} == values
    assert got["n_components"] == K
    assert model.objective_ == model.model_.objective_
    # with a document graph, SemanticGNMF gets graph_lam too
    inputs = pretrained_module.SemanticInputs.__new__(pretrained_module.SemanticInputs)
    X = model.inputs_.X
    inputs.X, inputs.A, inputs.start = X, sp.eye(X.shape[0], format="csr"), model.labels_
    inner = pretrained_module.semantic_model(K, inputs, graph_lam=0.7, **values)
    assert inner.get_params()["graph_lam"] == 0.7
    assert {key: inner.get_params()[key] for key in values} == values


def test_gtnmf_estimator_is_cloned_and_works_in_a_pipeline(data):
    X, _ = data
    nmf = NMF(K, max_iter=30, random_state=0)
    direct = GTNMF().fit(X, memberships=quiet(clone(nmf).fit_transform, X))
    pipe = quiet(make_pipeline(GTNMF(estimator=nmf)).fit, X)
    np.testing.assert_array_equal(pipe[-1].labels_, direct.labels_)
    assert not hasattr(nmf, "labels_")                  # the parameter was not fitted
    assert pipe[-1].estimator_.get_params() == nmf.get_params()
    with pytest.raises(ValueError, match="memberships"):
        GTNMF().fit(X)


# -- function twins ------------------------------------------------------------------------------
def test_non_negative_factorization_is_nmf(data):
    X, _ = data
    model = NMF(K, max_iter=40, random_state=2)
    Z_est = quiet(model.fit_transform, X)
    Z, W, n_iter = quiet(non_negative_factorization, X, K, max_iter=40, random_state=2)
    np.testing.assert_allclose(Z, Z_est)
    np.testing.assert_allclose(W, model.components_.T)
    assert n_iter == model.n_iter_


def test_semantic_nmf_is_semantic_nmf(data):
    X, _ = data
    model = SemanticNMF(K, lam=3.0, max_iter=40, random_state=2)
    Z_est = quiet(model.fit_transform, X)
    Z, W, Q, n_iter = quiet(semantic_nmf, X, None, K, lam=3.0, max_iter=40, random_state=2)
    np.testing.assert_allclose(Z, Z_est)
    np.testing.assert_allclose(W, model.components_.T)
    np.testing.assert_allclose(Q, model.context_components_.T)
    assert n_iter == model.n_iter_
    import semnmf
    assert semnmf.semantic_nmf is semantic_nmf
    assert semnmf.non_negative_factorization is non_negative_factorization
