"""Saved models: a fitted clustering (estimator + vectorizer) as a folder of arrays and
JSON, and the assignment of new documents to its clusters. Never a pickle.

The folder (format ``semnmf-model``, version :data:`FORMAT_VERSION`; the fields, kinds,
assignment rules and version policy are described in ``docs/guide/saved-models.md``, the
``strength`` column in ``docs/guide/outputs.md``)::

    model/
      model.json       format, versions, kind, method, estimator and vectorizer settings,
                       consensus / refine (or null), files, arrays (shape and dtype)
      arrays.npz       numeric arrays only (read with ``allow_pickle=False``)
      vocabulary.txt   one term per line, in column order

A new document is assigned by the estimator's own rule on its row of X (``"estimator"``
kind) or to the most cosine-similar training cluster mean (``"consensus"``), then moved
as the run's centroid step moved its documents (``refine.centers``).
"""

import json
import os
import shutil
import tempfile
import time
import zipfile

import numpy as np
import scipy.sparse as sp

from .._utils.io import atomic_write, write_json
from .._utils.renamed import renamed
from .._utils.version import __version__
from .._utils.labels import argmax_labels, cluster_means, strengths_from_factors
from ..models._state import SAVABLE, check_savable, get_state, json_params, set_state
from ..text.state import VectorizerState

__all__ = ["SavedModel", "save_model", "load_model", "FORMAT", "FORMAT_VERSION",
           "strengths_from_factors", "run_agreement"]

FORMAT = "semnmf-model"
FORMAT_VERSION = "1.2"  # 1.1: an edited model's column map, cluster names and edits;
                        # 1.2: the centroid step's centroids (refine.centers)
_MAJOR = 1
MODEL_FILE, ARRAYS_FILE, VOCABULARY_FILE = "model.json", "arrays.npz", "vocabulary.txt"

RULES = {
    "SphericalKMeans": "the most cosine-similar centroid (cluster_centers_)",
    "HierarchicalNMF": {  # by its assign_labels
        "topics": "the leaf whose unit-norm term vector gets the largest NNLS coefficient "
                  "over all leaves (-1 when no term of the document weighs in any leaf)",
        "tree": "descend the tree: at each split the child whose term vector gets the "
                "larger rank-2 NNLS coefficient"},
    "consensus": "the most cosine-similar cluster mean (mean training row of X)",
}
_NMF_RULE = ("argmax of the document factors solved with the term factors W fixed "
             "(transform); graph terms do not apply to new documents")


# -- strengths ----------------------------------------------------------------------------
def run_agreement(partitions, labels):
    """Fraction of runs (columns of ``partitions``) that put each document in its cluster
    of ``labels``, after matching every run's clusters to the clusters of ``labels``
    (Hungarian matching on the contingency table)."""
    from scipy.optimize import linear_sum_assignment

    partitions = np.asarray(partitions)
    labels = np.asarray(labels)
    if partitions.ndim != 2 or partitions.shape[0] != labels.size or partitions.shape[1] == 0:
        raise ValueError("partitions must be (n_documents, n_runs) with one row per label.")
    agree = np.zeros(labels.size)
    for run in partitions.T:
        valid = (run >= 0) & (labels >= 0)
        if not valid.any():
            continue
        a, ia = np.unique(run[valid], return_inverse=True)
        b, ib = np.unique(labels[valid], return_inverse=True)
        table = np.zeros((a.size, b.size))
        np.add.at(table, (ia, ib), 1)
        rows, cols = linear_sum_assignment(-table)
        mapping = dict(zip(a[rows].tolist(), b[cols].tolist()))
        mapped = np.array([mapping.get(int(c), -2) for c in run])
        agree += (mapped == labels) & valid
    return agree / partitions.shape[1]


def _cosine_to(X, centers):
    """Cosine of every row of X to every (unit-norm) row of ``centers``."""
    X = sp.csr_matrix(X, dtype=np.float64)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    S = np.asarray(X @ centers.T)
    return S / np.where(norms > 0, norms, 1.0)[:, None]


def _unit_rows(A):
    A = np.asarray(A, dtype=np.float64)
    norms = np.linalg.norm(A, axis=1)
    return A / np.where(norms > 0, norms, 1.0)[:, None]


# -- the model ----------------------------------------------------------------------------
class SavedModel:
    """A fitted clustering that assigns new documents: a vectorizer and an estimator (or a
    consensus's cluster means), saved as a folder (module docstring). Build one with
    :func:`save_model` / :meth:`from_fit`, read one with :func:`load_model` / :meth:`load`.

    Attributes
    ----------
    kind : {"estimator", "consensus"}
    estimator : estimator or None
        The fitted (or loaded) estimator; None for a consensus.
    vectorizer : semnmf.text.state.VectorizerState
    topics : ndarray (n_clusters, n_terms)
        Term weights of each cluster (topics.csv).
    centers : ndarray (n_clusters, n_terms) or None
        Unit-norm cluster means of a consensus.
    info : dict
        ``method``, ``n_clusters``, ``consensus``, ``refine`` and, once loaded or saved,
        the rest of model.json.
    """

    @renamed("n_clusters", "n_components")
    def __init__(self, vectorizer, *, estimator=None, centers=None, topics=None,
                 method=None, n_components=None, consensus=None, refine=None,
                 expansion=None):
        if estimator is None and centers is None:
            raise ValueError("a saved model needs an estimator or consensus cluster means.")
        if estimator is not None:
            check_savable(estimator)
        self.kind = "estimator" if estimator is not None else "consensus"
        self.estimator = estimator
        self.vectorizer = vectorizer
        self.centers = None if centers is None else _unit_rows(centers)
        if topics is None:
            topics = self._default_topics()
        self.topics = np.asarray(topics, dtype=np.float64)
        if self.topics.ndim != 2 or self.topics.shape[1] != vectorizer.n_terms:
            raise ValueError(
                f"the model has {self.topics.shape[-1]} terms but the vocabulary has "
                f"{vectorizer.n_terms}: save the model with the corpus (and weighting) it "
                "was fitted on.")
        if n_components is None:
            n_components = self.topics.shape[0]
        # model.json keeps the key n_clusters (files of earlier versions read the same)
        self.info = {"method": method, "n_clusters": int(n_components),
                     "consensus": consensus, "refine": refine}
        # an edited model (semnmf.pipelines.edit): the cluster of each column of the
        # factors (-1: a dropped column, never chosen), None for the identity
        self.columns = None
        self.names = None
        self.edits = None
        # pretrained semantics (--semantics ... --embed words): the word graph S that
        # expanded the training documents, x <- x + a x D^-1 S (text.pretrained.
        # expand_documents); new documents are expanded the same way. The pretrained
        # vectors themselves are not needed to assign.
        self.expansion = expansion
        # the centroid step of the run (semnmf.refine.centroid_refine): {"centers": unit
        # rows (n_clusters x n_terms), "min_gain"}, or None
        self.step = None

    def _default_topics(self):
        if self.centers is not None:
            return self.centers
        est = self.estimator
        return est.cluster_centers_ if hasattr(est, "cluster_centers_") else est.components_

    @classmethod
    def from_fit(cls, estimator, corpus, weighting="tfidf", *, labels=None, X=None,
                 consensus=None, method=None, topics=None, refine=None, expansion=None,
                 step=None):
        """The saved model of one fit on ``corpus.vectorize(weighting)``.

        ``consensus`` (a dict describing the consensus) makes a consensus model: the
        cluster means of ``X`` over ``labels`` are kept; ``estimator`` is then only
        recorded (its class and parameters). ``step`` (``{"centers", "min_gain"}``: a
        centroid step's centroids and margin) adds the run's centroid step; ``labels``
        are then those before the step."""
        model = cls._from_fit(estimator, corpus, weighting, labels=labels, X=X,
                              consensus=consensus, method=method, topics=topics,
                              refine=refine, expansion=expansion)
        if step is not None:
            model.step = {"centers": _unit_rows(step["centers"]),
                          "min_gain": float(step["min_gain"])}
        return model

    @classmethod
    def _from_fit(cls, estimator, corpus, weighting, *, labels, X, consensus, method,
                  topics, refine, expansion):
        vectorizer = VectorizerState.from_corpus(corpus, weighting)
        if consensus is not None:
            if labels is None or X is None:
                raise ValueError("a consensus model needs the labels and X.")
            k = int(consensus.get("n_clusters") or (np.max(labels) + 1))
            means = cluster_means(X, labels, k)
            model = cls(vectorizer, centers=means, topics=topics if topics is not None
                        else means, method=method, n_components=k,
                        consensus=dict(consensus),
                        refine=refine)
            if estimator is not None:
                params, _ = json_params(estimator)
                model.info["consensus"]["estimator"] = {"class": type(estimator).__name__,
                                                        "params": params}
            return model
        return cls(vectorizer, estimator=estimator, topics=topics, method=method,
                   refine=refine, expansion=expansion)

    # -- new documents -------------------------------------------------------------------
    def read_source(self, source, *, text_column=None, label_column=None, id_column=None,
                    encoding="utf-8", delimiter=None, on_bad_lines="error"):
        """Open ``source`` as ``semnmf cluster`` does (:func:`semnmf.load_dataset`), with
        this model's tokenizer and no vocabulary pruning: a Corpus."""
        from ..datasets import load_dataset

        options = self.vectorizer.tokenizer_options()
        stem = self.vectorizer.stem
        return load_dataset(source, text_column=text_column, label_column=label_column,
                            id_column=id_column, encoding=encoding, delimiter=delimiter,
                            on_bad_lines=on_bad_lines, min_df=1, max_df=1.0,
                            stem=stem, **options)

    def vectorize(self, data):
        """The weighted document-term matrix of ``data`` over the saved vocabulary.

        ``data``: a list of raw texts; a :class:`~semnmf.Corpus` (its texts are tokenized
        as the training corpus was; a corpus of counts only is mapped by term onto the
        saved vocabulary, unknown terms dropped); a dataset name or path (read with
        :meth:`read_source`); or a matrix of counts over the saved vocabulary in its order
        (n_documents x n_terms)."""
        from ..text.corpus import Corpus

        if isinstance(data, (str, os.PathLike)):
            data = self.read_source(data)
        if isinstance(data, Corpus):
            if data.texts is not None and not getattr(data, "from_counts", False):
                return self.vectorizer.transform_texts(data.texts)
            return self.vectorizer.transform_counts(data.counts(), data.vocabulary)
        if sp.issparse(data) or isinstance(data, np.ndarray):
            if data.shape[1] != self.vectorizer.n_terms:
                raise ValueError(f"a count matrix must have one column per saved term "
                                 f"({self.vectorizer.n_terms}); it has {data.shape[1]}.")
            if data.shape[0] == 0:
                raise ValueError("no documents to assign: the matrix has no row.")
            return self.vectorizer.transform_counts(data)
        if isinstance(data, bytes) or not hasattr(data, "__iter__"):
            raise ValueError("data must be a list of texts, a Corpus, a dataset name or path, "
                             f"or a count matrix; got {type(data).__name__}.")
        data = list(data)
        if not data:
            raise ValueError("no documents to assign: the list of texts is empty.")
        return self.vectorizer.transform_texts(data)

    def assign(self, data):
        """``(labels, strengths)`` of new documents (see :meth:`vectorize` for ``data``
        and the module docstring for the rules). Documents without a saved term get -1
        and membership 0."""
        return self.assign_matrix(self.vectorize(data))

    def assign_matrix(self, X):
        """``(labels, strengths)`` of rows of a weighted X over the saved vocabulary."""
        X = sp.csr_matrix(X, dtype=np.float64)
        empty = np.diff(X.indptr) == 0
        if empty.all():
            terms = ", ".join(map(str, self.vectorizer.vocabulary[:5]))
            raise ValueError(
                f"none of the {X.shape[0]} documents has a term of the model's vocabulary "
                f"({self.vectorizer.n_terms} terms: {terms}, ...), so none can be assigned; "
                "check the documents (language, text column) and that this is their model.")
        if self.kind == "consensus":
            factors, cosine = _cosine_to(X, self.centers), True
        else:
            est = self.estimator
            name = type(est).__name__
            if self.expansion is not None:
                from ..text.pretrained import expand_documents
                X = expand_documents(X, self.expansion["word_graph"],
                                     self.expansion["strength"])
            if name == "HierarchicalNMF":
                return est.predict_membership(X)
            factors, cosine = np.asarray(est.transform(X)), name == "SphericalKMeans"
        if self.columns is not None and self.step is None:
            return _edited_assignment(factors, self.columns, empty, cosine)
        if self.columns is not None:  # an edit of a run refined by the centroid step
            return self._edited_step(X, factors, empty, cosine)
        labels = argmax_labels(factors, empty)
        if self.step is not None:
            return self._step(X, labels)
        return labels, strengths_from_factors(factors, labels, cosine=cosine)

    def _edited_step(self, X, factors, empty, cosine):
        """An edited model of a run refined by the centroid step (merges, drops, renames:
        its columns are the run's clusters): the run's own rule and step give each
        document its cluster of the run, which the edit maps to its new cluster; only the
        documents of a dropped cluster go to their best kept column. So an edit moves only
        the documents it names."""
        labels, strengths = self._step(X, argmax_labels(factors, empty))
        edited, edited_strengths = _edited_assignment(factors, self.columns, empty, cosine)
        mapped = np.where(labels >= 0, self.columns[np.maximum(labels, 0)], -1)
        dropped = (labels >= 0) & (mapped < 0)
        mapped[dropped] = edited[dropped]
        strengths = np.where(dropped, edited_strengths, strengths)
        return mapped.astype(np.int64), strengths

    def _step(self, X, labels):
        """The run's centroid step after the model's rule: (labels, cosine strengths)."""
        from ..refine.centroid import centroid_step

        return centroid_step(_cosine_to(X, self.step["centers"]), labels,
                             self.step["min_gain"])

    # -- files ---------------------------------------------------------------------------
    def save(self, path):
        """Write the model folder ``path`` atomically (a temporary folder renamed into
        place; an existing model there is replaced). Returns ``path``."""
        path = os.fspath(path)
        for term in self.vectorizer.vocabulary:
            if "\n" in term or "\r" in term:
                raise ValueError(f"cannot save the term {term!r}: terms hold no line break.")
        record, arrays = self._record()
        parent = os.path.dirname(os.path.abspath(path))
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(dir=parent, prefix=".tmp-model-")
        try:
            atomic_write(os.path.join(tmp, ARRAYS_FILE),
                         lambda f: _write_arrays(f, arrays), binary=True)
            atomic_write(os.path.join(tmp, VOCABULARY_FILE), lambda f: f.writelines(
                f"{t}\n" for t in self.vectorizer.vocabulary))
            write_json(os.path.join(tmp, MODEL_FILE), record)
            os.chmod(tmp, 0o777 & ~_umask())
            old = None
            if os.path.exists(path):
                old = tempfile.mkdtemp(dir=parent, prefix=".old-model-")
                os.rename(path, os.path.join(old, "model"))
            os.rename(tmp, path)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self.info.update({k: record[k] for k in ("format", "format_version", "semnmf_version",
                                                 "created")})
        return path

    def _record(self):
        arrays = {"topics": self.topics}
        vec_record, vec_arrays = self.vectorizer.to_record()
        arrays.update({f"vectorizer.{k}": v for k, v in vec_arrays.items()})
        estimator = None
        if self.step is not None:
            arrays["refine.centers"] = self.step["centers"]
        if self.kind == "estimator":
            estimator, est_arrays = get_state(self.estimator)
            arrays.update({f"estimator.{k}": v for k, v in est_arrays.items()})
            rule = RULES.get(estimator["class"], _NMF_RULE)
            if isinstance(rule, dict):
                rule = rule[estimator["params"]["assign_labels"]]
        else:
            arrays["consensus.centers"] = self.centers
            rule = RULES["consensus"]
        expansion = None
        if self.expansion is not None:
            S = sp.csr_matrix(self.expansion["word_graph"])
            arrays.update({"expansion.data": S.data, "expansion.indices": S.indices,
                           "expansion.indptr": S.indptr})
            expansion = {"strength": float(self.expansion["strength"]),
                         "semantics": self.expansion.get("semantics"),
                         "rule": "new documents are expanded by the saved word graph "
                                 "before they are assigned"}
        refine = self.info.get("refine")
        if refine and self.step is not None:
            rule += ("; then the centroid step: to the refined centroid the document is "
                     f"more than {self.step['min_gain']:.0%} more cosine-similar to than "
                     "its cluster's")
            refine = {**refine, "min_gain": self.step["min_gain"],
                      "assigned_with": "the model's rule, then the run's centroid step"}
        elif refine and refine.get("method") == "centroid":
            refine = {**refine, "assigned_with": "the model's rule alone (an edit that "
                      "splits a cluster drops the centroid step)"}
        elif refine:
            refine = {**refine, "assigned_with": "the underlying model (before refinement): "
                      "new documents are not players of the refinement's games"}
        record = {
            "format": FORMAT, "format_version": FORMAT_VERSION,
            "semnmf_version": __version__, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "kind": self.kind, "method": self.info.get("method"),
            "n_clusters": self.info["n_clusters"], "assignment": rule,
            "estimator": estimator, "vectorizer": vec_record,
            "consensus": self.info.get("consensus"), "refine": refine,
            "columns": None if self.columns is None else [int(c) for c in self.columns],
            "names": self.names, "edits": self.edits, "expansion": expansion,
            "files": {"arrays": ARRAYS_FILE, "vocabulary": VOCABULARY_FILE},
            "arrays": {k: {"shape": list(np.shape(v)), "dtype": str(np.asarray(v).dtype)}
                       for k, v in arrays.items()},
        }
        return record, arrays

    @classmethod
    def load(cls, path):
        """Read a model folder (or a run folder holding ``model/``). Raises a one-line
        ValueError for a missing, corrupt or newer-major-version model."""
        path = os.fspath(path)
        if os.path.isdir(os.path.join(path, "model")) and not os.path.exists(
                os.path.join(path, MODEL_FILE)):
            path = os.path.join(path, "model")
        record = _read_record(path)
        arrays = _read_arrays(os.path.join(path, ARRAYS_FILE))
        vocabulary = _read_vocabulary(os.path.join(path, VOCABULARY_FILE))
        try:
            vectorizer = VectorizerState.from_record(
                record.get("vectorizer") or {},
                {k.split(".", 1)[1]: v for k, v in arrays.items() if k.startswith("vectorizer.")},
                vocabulary)
            kind = record.get("kind")
            if kind == "estimator":
                state = {k.split(".", 1)[1]: v for k, v in arrays.items()
                         if k.startswith("estimator.")}
                if not isinstance(record.get("estimator"), dict):
                    raise ValueError("model.json has no estimator record")
                estimator = set_state(record["estimator"], state)
                if estimator.n_features_in_ != len(vocabulary):
                    raise ValueError(f"the estimator has {estimator.n_features_in_} terms, "
                                     f"the vocabulary {len(vocabulary)}")
                model = cls(vectorizer, estimator=estimator, topics=arrays.get("topics"))
            elif kind == "consensus":
                if "consensus.centers" not in arrays:
                    raise ValueError("arrays.npz lacks consensus.centers")
                model = cls(vectorizer, centers=arrays["consensus.centers"],
                            topics=arrays.get("topics"))
            else:
                raise ValueError(f"unknown kind {kind!r}")
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise ValueError(f"{path} is not a usable semnmf model: "
                             f"{' '.join(str(exc).split())}") from None
        if model.topics.ndim != 2 or model.topics.shape[1] != len(vocabulary):
            raise ValueError(f"{path} is not a usable semnmf model: its topics do not match "
                             "its vocabulary.")
        model.info = {**record, "path": path}
        model.info.setdefault("n_clusters", model.topics.shape[0])
        if record.get("columns") is not None:
            model.columns = np.asarray(record["columns"], dtype=np.int64)
        model.names, model.edits = record.get("names"), record.get("edits")
        if "refine.centers" in arrays and (record.get("refine") or {}).get("min_gain") is not None:
            model.step = {"centers": np.asarray(arrays["refine.centers"], dtype=np.float64),
                          "min_gain": float(record["refine"]["min_gain"])}
        if record.get("expansion") and "expansion.data" in arrays:
            n = len(vocabulary)
            model.expansion = {
                **record["expansion"],
                "word_graph": sp.csr_matrix((arrays["expansion.data"],
                                             arrays["expansion.indices"],
                                             arrays["expansion.indptr"]), shape=(n, n))}
        return model

    @property
    def n_clusters(self):
        return int(self.info.get("n_clusters") or self.topics.shape[0])

    def __repr__(self):
        what = type(self.estimator).__name__ if self.estimator is not None else "consensus"
        return (f"SavedModel({what}, {self.n_clusters} clusters, "
                f"{self.vectorizer.n_terms} terms, {self.vectorizer.weighting})")


def _edited_assignment(factors, columns, empty, cosine):
    """``(labels, strengths)`` of an edited model: the argmax over the kept columns (a
    dropped column, cluster -1, is never chosen), mapped to its cluster; the strength is
    the cluster's share of the row over the kept columns (merged columns add up), or the
    best column's cosine."""
    F = np.asarray(factors, dtype=np.float64)
    kept = columns >= 0
    if not kept.any():
        raise ValueError("the edited model keeps no cluster: every cluster was dropped.")
    scores = np.where(kept, F, -np.inf)
    best = np.argmax(scores, axis=1)
    labels = columns[best].astype(np.int64)
    labels[empty] = -1
    n_clusters = int(columns.max()) + 1
    if cosine:
        strengths = F[np.arange(F.shape[0]), best]
    else:
        per_cluster = np.zeros((F.shape[0], n_clusters))
        for j in np.flatnonzero(kept):
            per_cluster[:, columns[j]] += F[:, j]
        total = per_cluster.sum(axis=1)
        picked = per_cluster[np.arange(F.shape[0]), np.maximum(labels, 0)]
        strengths = np.divide(picked, total, out=np.zeros_like(picked), where=total > 0)
    strengths[empty] = 0.0
    return labels, strengths


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _model_not_saved(path):
    """The reason a run folder's run.json gives for saving no model, or None."""
    try:
        with open(os.path.join(path, "run.json"), encoding="utf-8") as f:
            why = json.load(f).get("model_not_saved")
    except (OSError, ValueError, AttributeError):
        return None
    return " ".join(str(why).split()).rstrip(".") if why else None


def _read_record(path):
    file = os.path.join(path, MODEL_FILE)
    if not os.path.isdir(path):
        raise ValueError(f"no saved model at {path} (expected a folder with {MODEL_FILE}, "
                         f"{ARRAYS_FILE} and {VOCABULARY_FILE}, or a run folder with model/).")
    try:
        with open(file, encoding="utf-8") as f:
            record = json.load(f)
    except FileNotFoundError:
        why = _model_not_saved(path)
        if why:
            raise ValueError(f"no saved model at {path}: the run saved none ({why}).") from None
        raise ValueError(f"no saved model at {path}: {MODEL_FILE} is missing (a run of an "
                         "older semnmf, or not a run folder).") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{file} is not readable JSON: {' '.join(str(exc).split())}") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise ValueError(f"{file} is not a semnmf model (format is not {FORMAT!r}).")
    version = str(record.get("format_version", ""))
    try:
        major = int(version.split(".")[0])
    except ValueError:
        raise ValueError(f"{file} has no valid format_version ({version!r}).") from None
    if major > _MAJOR:
        raise ValueError(f"{file} has format version {version}, newer than this semnmf "
                         f"({__version__}) reads ({_MAJOR}.x); upgrade semnmf to use it.")
    if major < 1:
        raise ValueError(f"{file} has an unknown format version {version}.")
    return record


def _write_arrays(f, arrays):
    """``np.savez_compressed(f, **arrays)`` at zlib's fastest level (numpy's is 6; level 1
    is several times faster, ``benchmarks/results/design_notes.md``)."""
    with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_DEFLATED,
                         compresslevel=1) as archive:
        for name, value in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)


def _read_arrays(file):
    try:
        with np.load(file, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except FileNotFoundError:
        raise ValueError(f"the saved model lacks {file}.") from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, KeyError) as exc:
        raise ValueError(f"{file} is corrupt or not a numpy .npz of numbers: "
                         f"{' '.join(str(exc).split())}") from None
    for name, value in arrays.items():
        if value.dtype.kind not in "biuf":
            raise ValueError(f"{file}: array {name!r} is not numeric ({value.dtype}).")
    return arrays


def _read_vocabulary(file):
    try:
        with open(file, encoding="utf-8", newline="") as f:
            content = f.read()
    except FileNotFoundError:
        raise ValueError(f"the saved model lacks {file}.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {file}: {' '.join(str(exc).split())}") from None
    terms = content.split("\n")
    if terms and terms[-1] == "":
        terms.pop()
    if not terms:
        raise ValueError(f"{file} holds no term.")
    return terms


def save_model(model, path, corpus, *, weighting="tfidf", method=None):
    """Save a fitted estimator with the corpus it was fitted on (``X =
    corpus.vectorize(weighting)``) as a model folder; returns the :class:`SavedModel`.

    ``model``: one of {savable} fitted on that X, or a fitted
    :class:`~semnmf.ClusterEnsemble` (saved as its consensus: cluster means of X)."""
    if hasattr(model, "partitions_") and hasattr(model, "consensus_"):
        X = corpus.vectorize(weighting)
        saved = SavedModel.from_fit(model.estimator, corpus, weighting, labels=model.labels_,
                                    X=X, method=method,
                                    consensus={**model.consensus_,
                                               "n_clusters": int(model.n_components_)})
    else:
        saved = SavedModel.from_fit(model, corpus, weighting, method=method)
    saved.save(path)
    return saved


save_model.__doc__ = save_model.__doc__.format(savable=", ".join(SAVABLE))


def load_model(path):
    """Read a saved model folder (or a ``semnmf cluster`` / ``semnmf tree`` run folder):
    a :class:`SavedModel` whose ``assign(texts_or_corpus_or_source)`` gives
    ``(labels, strengths)``."""
    return SavedModel.load(path)
