"""The fitted state of an estimator as plain data: JSON-ready parameters and scalars, and
named numpy arrays; and the estimator rebuilt from them (no pickle).

This is the models-floor half of a saved model (:mod:`semnmf.pipelines.saved` adds the
vectorizer and writes the files). :data:`STATE` says, for every estimator that can be
saved, which fitted arrays it needs to ``predict`` / ``transform`` new documents; the
scalars of :data:`SCALARS` are kept when present. Per-document attributes (``labels_``,
the training Z, a document graph) are not part of the state: a loaded model assigns new
documents. A :class:`~semnmf.HierarchicalNMF` is saved as its tree, one row per node
(``node_*`` arrays, ``leaves`` and ``splits``), without the nodes' training documents.
"""

import numbers

import numpy as np

__all__ = ["STATE", "SCALARS", "SAVABLE", "check_savable", "get_state", "set_state", "json_params"]

# estimator class -> (arrays needed to predict, optional arrays)
STATE = {
    **dict.fromkeys(("NMF", "SemanticNMF", "SeNMF", "GNMF", "SemanticGNMF", "ProjectiveNMF"),
                    (("components_",), ("context_components_", "context_core_"))),
    "SphericalKMeans": (("cluster_centers_",), ()),
    "HierarchicalNMF": (("components_",), ()),  # + the tree (see the module docstring)
}
SAVABLE = tuple(STATE)

# fitted scalars kept when the estimator has them (JSON numbers; NaN/inf as null)
SCALARS = ("n_components_", "n_features_in_", "n_iter_", "objective_", "lambda_",
           "graph_lambda_", "reconstruction_err_", "context_err_", "similarity_",
           "inertia_", "n_leaves_", "n_documents_", "n_factorizations_", "n_damped_")

_TREE_ARRAYS = ("node_parent", "node_children", "node_depth", "node_score",
                "node_term_weights", "leaves", "splits")


def _json_value(value):
    """``(ok, value)``: whether a parameter value is plain JSON data (as it is)."""
    if value is None or isinstance(value, (bool, str)):
        return True, value
    if isinstance(value, numbers.Integral):
        return True, int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        return bool(np.isfinite(value)), value
    if isinstance(value, (list, tuple)):
        items = [_json_value(v) for v in value]
        if all(ok for ok, _ in items):
            return True, [v for _, v in items]
    return False, None


def json_params(estimator):
    """``(params, dropped)``: the estimator's ``get_params(deep=False)`` that are plain
    JSON data, and a description of the others (start matrices, RandomState instances,
    nested estimators), which a loaded model gets at their defaults."""
    params, dropped = {}, {}
    for name, value in estimator.get_params(deep=False).items():
        ok, plain = _json_value(value)
        if ok:
            params[name] = plain
        elif hasattr(value, "shape"):
            dropped[name] = f"array {tuple(int(n) for n in value.shape)}"
        elif isinstance(value, tuple) and any(hasattr(v, "shape") for v in value):
            dropped[name] = [f"array {tuple(int(n) for n in v.shape)}" for v in value]
        else:
            dropped[name] = type(value).__name__
    return params, dropped


def _class_name(estimator):
    name = type(estimator).__name__
    if name not in STATE:
        raise ValueError(f"cannot save a {name}: saved models support {', '.join(SAVABLE)}.")
    return name


def check_savable(estimator):
    """Raise a ValueError unless ``estimator`` is a fitted estimator of :data:`SAVABLE`."""
    name = _class_name(estimator)
    missing = [a for a in STATE[name][0] if not hasattr(estimator, a)]
    if missing:
        raise ValueError(f"this {name} is not fitted (no {missing[0]}); fit it before saving.")
    return name


def get_state(estimator):
    """The fitted state of ``estimator`` as ``(record, arrays)``.

    ``record`` (JSON-ready): ``class``, ``params``, ``params_not_saved`` and ``fitted``
    (scalars); ``arrays``: name -> ndarray (numbers only, never objects)."""
    name = check_savable(estimator)
    required, optional = STATE[name]
    arrays = {a: np.asarray(getattr(estimator, a)) for a in required + optional
              if getattr(estimator, a, None) is not None}
    if name == "HierarchicalNMF":
        arrays.update(_tree_arrays(estimator))
    scalars = {}
    for attr in SCALARS:
        value = getattr(estimator, attr, None)
        if isinstance(value, (numbers.Real, np.number)) and not isinstance(value, bool):
            value = value.item() if hasattr(value, "item") else value
            scalars[attr] = value if np.isfinite(value) else None
    params, dropped = json_params(estimator)
    return {"class": name, "params": params, "params_not_saved": dropped,
            "fitted": scalars}, arrays


def _tree_arrays(model):
    nodes = model.nodes_
    children = np.full((len(nodes), 2), -1, dtype=np.int64)
    for node in nodes:
        if node.children:
            children[node.id] = node.children
    return {
        "node_parent": np.array([-1 if n.parent is None else n.parent for n in nodes],
                                dtype=np.int64),
        "node_children": children,
        "node_depth": np.array([n.depth for n in nodes], dtype=np.int64),
        "node_score": np.array([n.score for n in nodes], dtype=np.float64),
        "node_term_weights": np.vstack([n.term_weights for n in nodes]),
        "node_scale": np.array([getattr(n, "scale", 1.0) for n in nodes], dtype=np.float64),
        "leaves": np.asarray(model.leaves_, dtype=np.int64),
        "splits": np.asarray(model.splits_, dtype=np.int64),
    }


def _estimator_class(name):
    from importlib import import_module

    from . import _NAMES

    if name not in STATE:
        raise ValueError(f"unknown estimator {name!r}: saved models support "
                         f"{', '.join(SAVABLE)}.")
    return getattr(import_module(_NAMES[name], __package__), name)


def set_state(record, arrays):
    """The estimator of ``record`` and ``arrays`` (as :func:`get_state` made them), ready
    to ``predict`` and ``transform``. Unknown parameters and scalars are ignored."""
    name = record.get("class")
    cls = _estimator_class(name)
    valid = cls().get_params(deep=False)
    params = {k: v for k, v in (record.get("params") or {}).items() if k in valid}
    if name == "HierarchicalNMF" and "assign_labels" not in params:
        # saved before the option existed: its labels were the tree's own partition
        params["assign_labels"] = "tree"
    for key, value in params.items():  # JSON has lists where the estimator had tuples
        if isinstance(value, list) and isinstance(valid[key], tuple):
            params[key] = tuple(value)
    estimator = cls(**params)
    required, optional = STATE[name]
    needed = required + (_TREE_ARRAYS if name == "HierarchicalNMF" else ())
    missing = [a for a in needed if a not in arrays]
    if missing:
        raise ValueError(f"the saved {name} lacks the array {missing[0]!r}.")
    for attr in required + optional:
        if attr in arrays:
            setattr(estimator, attr, np.asarray(arrays[attr]))
    for attr, value in (record.get("fitted") or {}).items():
        if attr in SCALARS:
            setattr(estimator, attr, np.nan if value is None else value)
    if name == "HierarchicalNMF":
        _set_tree(estimator, arrays)
    n_terms = arrays[required[0]].shape[-1]
    if getattr(estimator, "n_features_in_", None) is None:
        estimator.n_features_in_ = n_terms
    estimator.n_features_in_ = int(estimator.n_features_in_)
    if int(estimator.n_features_in_) != n_terms:
        raise ValueError(f"the saved {name} is inconsistent: n_features_in_ = "
                         f"{estimator.n_features_in_} but its arrays have {n_terms} terms.")
    return estimator


def _set_tree(model, arrays):
    from .hierarchical import Node

    parent, children = arrays["node_parent"], arrays["node_children"]
    depth, score, weights = arrays["node_depth"], arrays["node_score"], arrays["node_term_weights"]
    n = len(parent)
    if not (children.shape == (n, 2) and len(depth) == n and len(score) == n
            and weights.shape[0] == n):
        raise ValueError("the saved HierarchicalNMF is inconsistent: its node arrays differ "
                         "in length.")
    nodes = []
    empty = np.empty(0, dtype=np.int64)
    for i in range(n):
        node = Node(i, None if parent[i] < 0 else int(parent[i]), int(depth[i]), empty,
                    np.asarray(weights[i]))
        if children[i, 0] >= 0:
            if not (0 <= children[i, 0] < n and 0 <= children[i, 1] < n):
                raise ValueError("the saved HierarchicalNMF is inconsistent: a child id is "
                                 "out of range.")
            node.children = (int(children[i, 0]), int(children[i, 1]))
        node.score = float(score[i])
        if "node_scale" in arrays:
            node.scale = float(arrays["node_scale"][i])
        nodes.append(node)
    model.nodes_ = nodes
    model.leaves_ = [int(i) for i in arrays["leaves"]]
    model.splits_ = [int(i) for i in arrays["splits"]]
    model.n_leaves_ = len(model.leaves_)
    model.n_components_ = model.n_leaves_
    model.outliers_ = empty
    if any(not 0 <= i < n or nodes[i].children for i in model.leaves_):
        raise ValueError("the saved HierarchicalNMF is inconsistent: a leaf id is not a leaf.")
