"""The papers' experimental protocols, resumable: every finished run is cached on disk.

Two protocols (Neurocomputing §5.4-5.5, and what a user gets):

- ``"paper"``: ``runs`` spherical k-means solutions (one restart each, seeds 1000 + r);
  every NMF-like method starts from each of them (``init=(Z, W)``); for every method the
  ``best`` runs by its own objective are kept and NMI / ARI are reported as mean ± sd.
  Methods that are not NMF-like (DCN) run with ``random_state = r``; the Skmeans row is
  the shared k-means solutions themselves.
- ``"seeds"``: each method with its own default start and ``random_state`` 0..seeds-1;
  the plain mean ± sd, which is what a user gets.

k is the number of classes; X is TF-IDF with L2-normalized rows.
"""

import contextlib
import json
import logging
import os
import time
import warnings

import numpy as np

from .._utils.io import atomic_write
from ..metrics import clustering_scores
from ..models.registry import get_method

_logger = logging.getLogger(__name__)

PROTOCOLS = ("paper", "seeds")
START_SEED = 1000


class ResultCache:
    """A JSON file of finished runs, ``"dataset|protocol|method|run" -> record``.

    Saved atomically after every run (a temporary file renamed over the old one), so an
    interrupted benchmark loses at most the run in progress and resumes where it stopped.
    """

    def __init__(self, path=None):
        self.path = path
        self.records = {}
        self._written = set()  # keys put by this object: what it adds to the file
        if path and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                self.records = json.load(f)

    @staticmethod
    def key(dataset, protocol, method, run):
        return f"{dataset}|{protocol}|{method}|{run}"

    def get(self, dataset, protocol, method, run):
        return self.records.get(self.key(dataset, protocol, method, run))

    def put(self, dataset, protocol, method, run, record):
        key = self.key(dataset, protocol, method, run)
        self.records[key] = record
        self._written.add(key)
        self.save()

    def save(self):
        """Write the records atomically, merged with what is on disk now: the file's
        records plus the ones this object put, so two benchmarks sharing one cache (say
        one per corpus, on two cores) keep each other's runs.
        The read-merge-write holds an exclusive lock on ``path + ".lock"`` where the
        platform has ``fcntl``."""
        if not self.path:
            return
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        with _locked(self.path + ".lock"):
            if os.path.exists(self.path):
                try:
                    with open(self.path, encoding="utf-8") as f:
                        on_disk = json.load(f)
                    if isinstance(on_disk, dict):
                        on_disk.update({key: self.records[key] for key in self._written})
                        self.records = on_disk
                except (OSError, ValueError):
                    pass  # unreadable: replaced by ours
            records = self.records
            atomic_write(self.path, lambda f: json.dump(records, f, indent=0, sort_keys=True))

    def runs(self, dataset, protocol, method, n):
        """The finished records of runs 0..n-1 (missing runs left out)."""
        found = (self.get(dataset, protocol, method, r) for r in range(n))
        return [r for r in found if r is not None]


@contextlib.contextmanager
def _locked(path):
    """An exclusive advisory lock on the file ``path`` (none without ``fcntl`` or where
    the file system refuses locks: the merge alone then)."""
    try:
        import fcntl
    except ImportError:  # Windows: no lock, the merge alone
        yield
        return
    try:  # a read-only descriptor is enough for flock, and works on another user's file
        fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd closes
        except OSError:  # file systems without locks (some NFS mounts): merge only
            pass
        yield
    finally:
        os.close(fd)


class Contexts:
    """The word-context matrices of one corpus, built once and only when a method asks.

    "ppmi": PPMI over a 10-word window when raw text exists, else over documents
    (Neurocomputing eq. 3); "sppmi": the SIGIR paper's shifted PPMI, N = 2, same
    context; "pglove": PGLOVE on the same co-occurrences (:mod:`semnmf.text.glove`), kept
    on disk in ``cache_dir`` when given (training takes minutes).
    """

    def __init__(self, corpus, random_state=0, cache_dir=None, name=None):
        self.corpus = corpus
        self.random_state = random_state
        self.cache_dir = cache_dir
        self.name = name
        self.context = corpus.default_context()
        self.built = {}
        self.seconds = {}

    def __getitem__(self, kind):
        if kind not in self.built:
            t = time.perf_counter()
            self.built[kind] = self._build(kind)
            self.seconds[kind] = time.perf_counter() - t
        return self.built[kind]

    def _pglove(self):
        """GloVe training costs minutes, so its M is also kept on disk (``cache_dir``)."""
        path = None
        if self.cache_dir and self.name:
            path = os.path.join(self.cache_dir,
                                f"pglove_{self.name}_{self.context}_seed{self.random_state}.npy")
            if os.path.exists(path):
                M = np.load(path)
                if M.shape[0] == self.corpus.n_terms:
                    return M
        M = self.corpus.glove_context(context=self.context, random_state=self.random_state)
        if path:
            os.makedirs(self.cache_dir, exist_ok=True)
            atomic_write(path, lambda f: np.save(f, M), binary=True)
        return M

    def graph(self, X, model):
        """GNMF's kNN document graph for ``model``'s settings, built once per setting."""
        from ..graphs import document_graph

        key = ("graph", model.n_neighbors, model.weight, model.metric, model.bandwidth)
        if key not in self.built:
            t = time.perf_counter()
            self.built[key] = document_graph(X, model.n_neighbors, weight=model.weight,
                                             metric=model.metric, bandwidth=model.bandwidth)
            self.seconds["graph"] = time.perf_counter() - t
        return self.built[key]

    def _build(self, kind):
        corpus = self.corpus
        if kind == "ppmi":
            return corpus.word_context(context=self.context)
        if kind == "sppmi":
            return corpus.word_context(context=self.context, association="sppmi", shift=2)
        if kind == "pglove":
            return self._pglove()
        raise ValueError(f"unknown word-context kind {kind!r}")


def fit_one(method, X, k, run_seed, contexts, start=None, **overrides):
    """Fit one run of ``method``; returns (labels, objective, seconds, n_iter).

    Graph methods get the document graph built once per corpus (``contexts.graph(...)``),
    with the estimator's own neighbour settings, so the kNN search is not repeated per run.
    """
    fit_params = {"M": contexts[method.association]} if method.association else {}
    model = method.build(k, run_seed, start, **overrides)
    if method.graph:
        fit_params["A"] = contexts.graph(X, model)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, **fit_params)
    seconds = time.perf_counter() - t
    return (np.asarray(model.labels_), method.objective(model), seconds,
            int(getattr(model, "n_iter_", 0) or 0))


def shared_start(X, k, run):
    """The shared start of run ``run``: one spherical k-means, as (Z0, W0) and its labels."""
    from ..models.init import factors_from_skmeans
    from ..models.skmeans import SphericalKMeans

    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        km = SphericalKMeans(k, n_init=1, random_state=START_SEED + run).fit(X)
    Z0, W0 = factors_from_skmeans(km, X.dtype)
    return (Z0, W0), km, time.perf_counter() - t


def _record(y, labels, objective, seconds, n_iter):
    scores = clustering_scores(y, labels)
    return {**{k: float(v) for k, v in scores.items()},
            "objective": None if not np.isfinite(objective) else float(objective),
            "seconds": float(seconds), "n_iter": n_iter}


def method_available(method):
    """None if the method's estimator imports, else the reason it cannot run here."""
    try:
        method.estimator_class()
    except ImportError as error:
        extra = f' (pip install "semnmf[{method.extra}]")' if method.extra else ""
        return f"{method.label} is not available: {error}{extra}"
    return None


def run_dataset(name, corpus, X, methods, cache, *, protocols=PROTOCOLS, runs=50, seeds=10,
                log=None):
    """Run every missing cell of one dataset; finished cells are read from ``cache``.

    ``log(message)`` receives one line per finished run and per skipped or failed method
    (default: the ``semnmf.experiments.protocol`` logger, level INFO).
    """
    if log is None:
        log = _logger.info
    y = corpus.labels
    k = corpus.n_classes
    cache_dir = os.path.dirname(os.path.abspath(cache.path)) if cache.path else None
    contexts = Contexts(corpus, cache_dir=cache_dir, name=name)
    methods = [get_method(m) if isinstance(m, str) else m for m in methods]
    ready = []
    for method in methods:
        reason = method_available(method)
        if reason:
            log(f"{name}: skipping {method.name}: {reason}")
        else:
            ready.append(method)
    failed = set()

    def attempt(method, *args, **kwargs):
        """fit_one, or None after logging why the method failed (it is then left out)."""
        try:
            return fit_one(method, *args, **kwargs)
        except (KeyboardInterrupt, MemoryError):
            raise
        except Exception as error:  # one broken method must not end an hours-long run
            failed.add(method.name)
            log(f"{name}: {method.name} failed and is left out: {type(error).__name__}: {error}")
            return None

    if "seeds" in protocols:
        for method in ready:
            for seed in range(seeds):
                if method.name in failed or cache.get(name, "seeds", method.name, seed):
                    continue
                result = attempt(method, X, k, seed, contexts)
                if result is None:
                    break
                record = _record(y, *result)
                cache.put(name, "seeds", method.name, seed, record)
                log(f"{name} seeds {method.name} {seed}: NMI {record['nmi']:.3f} "
                    f"({result[2]:.1f} s)")
    if "paper" in protocols:
        for run in range(runs):
            missing = [m for m in ready if m.name not in failed
                       and cache.get(name, "paper", m.name, run) is None]
            if not missing:
                continue
            start, km, km_seconds = shared_start(X, k, run)
            for method in missing:
                if method.name == "skmeans":  # objective_: lower is better, as for all
                    record = _record(y, km.labels_, km.objective_, km_seconds, km.n_iter_)
                elif not method.shared_start and (
                        seeded := cache.get(name, "seeds", method.name, run)):
                    record = seeded  # its own start (DCN): the very fit of seed ``run``
                else:
                    result = attempt(method, X, k, run, contexts,
                                     start=start if method.shared_start else None)
                    if result is None:
                        continue
                    record = _record(y, *result)
                cache.put(name, "paper", method.name, run, record)
            log(f"{name} paper run {run + 1}/{runs} done")
    return contexts


def summarize(records, best=None, key="nmi"):
    """mean, sd of ``key`` over ``records`` (the ``best`` smallest objectives if given)."""
    if best is not None:
        ranked = [r for r in records if r.get("objective") is not None]
        ranked.sort(key=lambda r: r["objective"])
        records = ranked[:best] if ranked else records[:best]
    values = np.array([r[key] for r in records], dtype=float)
    if values.size == 0:
        return None
    return float(values.mean()), float(values.std()), int(values.size)
