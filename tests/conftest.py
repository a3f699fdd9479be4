"""Shared fixtures: a tiny planted corpus with three clear topics, and the shared datasets.

The planted corpus is generated with a fixed seed: each document is three sentences of
words drawn from its topic's ten words, plus one word ("report") that occurs in every
document and one ("people") in every second document, so document-frequency pruning
has something to remove.
"""

import csv
import json
import math
import os
import random
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATASETS = (REPO_ROOT / ".." / "shared" / "datasets").resolve()

TOPICS = {
    "sport": "football match goal team player coach league score season stadium".split(),
    "food": "recipe cook kitchen flavor sauce garlic oven bake dinner spice".split(),
    "space": "planet orbit rocket telescope galaxy astronaut launch moon star nasa".split(),
}
COMMON_WORD = "report"     # in every document
HALF_WORD = "people"       # in every second document
DOCS_PER_TOPIC = 10


def make_planted(docs_per_topic=DOCS_PER_TOPIC, seed=0):
    """(texts, labels): ``docs_per_topic`` documents per topic, topics in blocks."""
    rng = random.Random(seed)
    texts, labels = [], []
    for label, words in TOPICS.items():
        for i in range(docs_per_topic):
            sentences = [" ".join(rng.choices(words, k=6)) for _ in range(3)]
            sentences[0] = f"{COMMON_WORD.capitalize()} {sentences[0]}"
            if (len(texts)) % 2 == 0:
                sentences[-1] += f" {HALF_WORD}"
            texts.append(". ".join(sentences) + ".")
            labels.append(label)
    return texts, labels


# What makes a test slow (the `slow` marker, added at collection): a headless browser, a
# Dask cluster, the shared datasets, or another Python process. `python -m pytest` runs
# every test (CI); `python -m pytest -m "not slow and not golden"` is the quick loop.
SLOW_SIGNS = {
    "a headless browser": ("Browser(", "CHROMIUM"),
    "a Dask cluster": ("dask", "LocalCluster", "Client("),
    "the shared datasets": ("shared_dataset", "SHARED_DATASETS", "/shared/"),
    "another process": ("subprocess.",),
}


def slow_reason(item):
    """Why ``item`` is slow (a :data:`SLOW_SIGNS` key), or None: read from the source of
    the test function and of the fixtures it uses that this file defines."""
    import inspect

    sources = []
    for obj in [getattr(item, "function", None)] + [
            item.session._fixturemanager.getfixturedefs(name, item)
            for name in getattr(item, "fixturenames", ())]:
        if isinstance(obj, (list, tuple)):
            obj = obj[-1].func if obj else None
        try:
            sources.append(inspect.getsource(obj))
        except (TypeError, OSError):
            pass
    text = "\n".join(sources)
    for reason, signs in SLOW_SIGNS.items():
        if any(sign in text for sign in signs):
            return reason
    return None


def pytest_collection_modifyitems(config, items):
    for item in items:
        if slow_reason(item):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session", autouse=True)
def word_counts_by_default():
    """``semantics="auto"`` decides as without the [embeddings] extra (as in CI), so a
    test's run does not depend on what is installed here; the tests of the sentence path
    patch ``embeddings_installed`` back (tests/workflows/test_semantics_auto.py)."""
    from semnmf.workflows import semantics

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(semantics, "embeddings_installed", lambda: False)
        yield


@pytest.fixture(scope="session", autouse=True)
def own_cache_folder(tmp_path_factory):
    """The tests write no embedding or exported model into the user's cache folder:
    ``$SEMNMF_CACHE`` is a folder of the session's (subprocesses inherit it)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SEMNMF_CACHE", str(tmp_path_factory.mktemp("semnmf-cache")))
        yield


# French sentences with accented words and French function words.
FRENCH_SENTENCES = ["Le café et la réforme économique du marché",
                    "La réforme économique touche le café",
                    "Un café noir, une réforme, une économie économique"]


@pytest.fixture(scope="session")
def planted():
    """(texts, labels) of the planted corpus: 30 documents, 3 topics of 10."""
    texts, labels = make_planted()
    return list(texts), list(labels)


@pytest.fixture
def planted_texts(planted):
    return list(planted[0])


@pytest.fixture
def planted_labels(planted):
    return list(planted[1])


def planted_corpus(n_per=30, k=3, d_per=15, noise=0.02, seed=0):
    """(X, y): the NMF family's planted clusters (:func:`semnmf.datasets.make_planted`)."""
    from semnmf.datasets import make_planted

    return make_planted(k, n_per_topic=n_per, n_words_per_topic=d_per, noise=noise,
                        random_state=seed)


def at_offset(array, offset):
    """A C-contiguous copy of ``array`` starting ``offset`` bytes past a 64-byte boundary
    (numpy itself places arrays on any 16-byte boundary)."""
    buffer = np.empty(array.nbytes + 128, dtype=np.uint8)
    start = -buffer.ctypes.data % 64 + offset
    out = buffer[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    return out


def write_csv(path, rows, header, delimiter=","):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def write_jsonl(path, records, ensure_ascii=True):
    with open(path, "w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=ensure_ascii) + "\n")
    return path


@pytest.fixture
def planted_csv(tmp_path, planted):
    """The planted corpus as ``tmp_path/planted.csv`` with columns text, label."""
    texts, labels = planted
    return write_csv(tmp_path / "planted.csv", zip(texts, labels), ["text", "label"])


@pytest.fixture
def planted_csv_path(tmp_path):
    """The planted corpus as ``tmp_path/planted.csv`` (a str path, as on a command line)."""
    texts, labels = make_planted()
    return str(write_csv(tmp_path / "planted.csv", zip(texts, labels), ["text", "label"]))


@pytest.fixture(scope="session")
def planted45_csv(tmp_path_factory):
    """A larger planted corpus (45 documents, 3 topics of 15) as a labelled CSV path."""
    texts, labels = make_planted(docs_per_topic=15)
    path = tmp_path_factory.mktemp("planted45") / "planted.csv"
    return str(write_csv(path, zip(texts, labels), ["text", "label"]))


def one_error(capsys):
    """The one line a command wrote to stderr, checked to be a ``semnmf: error:`` line."""
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("semnmf: error: "), lines
    return lines[0]


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture
def planted_tree(tmp_path, planted):
    """The planted corpus as a folder of .txt files, one sub-folder per label."""
    texts, labels = planted
    root = tmp_path / "tree"
    for i, (text, label) in enumerate(zip(texts, labels)):
        (root / label).mkdir(parents=True, exist_ok=True)
        (root / label / f"{i:03d}.txt").write_text(text, encoding="utf-8")
    return root


def shared_dataset_path(name=None):
    """Path of ``../shared/datasets`` (or of one dataset in it); skips the test if absent."""
    path = SHARED_DATASETS if name is None else SHARED_DATASETS / name
    if not path.is_dir():
        pytest.skip(f"shared datasets not found at {path}")
    return path


@pytest.fixture(scope="session")
def shared_datasets():
    """Path of the shared benchmark datasets folder; the test is skipped when absent."""
    return shared_dataset_path()


@pytest.fixture
def no_semnmf_data(monkeypatch):
    """Run with $SEMNMF_DATA unset, whatever the caller's environment holds."""
    monkeypatch.delenv("SEMNMF_DATA", raising=False)
    return os.environ


def random_rank2_problem(seed, kind, *, n, max_m, density):
    """(B, Y) of a random rank-2 NNLS problem min ‖Y − B G‖ (B: m x 2, Y: m x n, m drawn in
    [2, max_m)), made degenerate as ``kind`` says: "generic", "collinear", "zero column",
    "zero columns", "zero rhs" (the first n // 2 right-hand sides), "orthogonal" or "near
    tie" (b2 = b1 rotated a hair, so eq. (11) of the rank-2 paper is decided by rounding)."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, max_m))
    B = rng.random((m, 2))
    Y = rng.random((m, n)) * (rng.random((m, n)) < density)
    if kind == "collinear":
        B[:, 1] = 3.0 * B[:, 0]
    elif kind == "zero column":
        B[:, rng.integers(2)] = 0.0
    elif kind == "zero columns":
        B[:] = 0.0
    elif kind == "zero rhs":
        Y[:, : n // 2] = 0.0
    elif kind == "orthogonal":
        B[: m // 2, 0] = 0.0
        B[m // 2:, 1] = 0.0
    elif kind == "near tie":
        B[:, 1] = B[:, 0] * (1 + 1e-9 * rng.random(m))
    return B, Y


# -- data of the graph and refinement tests (tests/graphs, tests/refine) ---------------
def blobs(n_per=100, k=3, dim=5, spread=0.3, seed=0):
    """k well-separated Gaussian blobs (centres 4 apart on the axes)."""
    rng = np.random.default_rng(seed)
    centres = 4.0 * np.eye(k, dim)
    X = np.vstack([c + spread * rng.standard_normal((n_per, dim)) for c in centres])
    y = np.repeat(np.arange(k), n_per)
    return X, y


def text_like(n_per=80, k=4, words_per=40, doc_len=25, noise=0.15, seed=0):
    """Sparse TF-IDF-like rows: each document draws its words from its topic's block of
    ``words_per`` terms, and a fraction ``noise`` of them from the whole vocabulary."""
    rng = np.random.default_rng(seed)
    n, d = n_per * k, words_per * k
    y = np.repeat(np.arange(k), n_per)
    own = y[:, None] * words_per + rng.integers(0, words_per, (n, doc_len))
    anywhere = rng.integers(0, d, (n, doc_len))
    cols = np.where(rng.random((n, doc_len)) < noise, anywhere, own)
    rows = np.repeat(np.arange(n), doc_len)
    X = sp.csr_matrix((np.ones(n * doc_len), (rows, cols.ravel())), shape=(n, d))
    X.sum_duplicates()
    X.data = np.log1p(X.data)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    return sp.csr_matrix(sp.diags(1 / norms) @ X), y


def random_symmetric_graph(n=60, density=0.15, seed=0):
    rng = np.random.default_rng(seed)
    B = sp.random(n, n, density=density, random_state=rng, format="csr")
    W = sp.triu(B, k=1)
    return sp.csr_matrix(W + W.T)


def transcribed_q(n):
    """GT eq. 8, as printed: q = ⌊log₂(n)⌋ + 1."""
    return math.floor(math.log2(n)) + 1


# Four topics of ten everyday words each: for the tests that name words (seed words, stop
# words, merged or renamed clusters).
WORD_TOPICS = {
    "sport": "football match goal team player league cup coach season stadium",
    "film": "film actor award oscar director movie cinema star festival screen",
    "money": "bank economy growth market interest rate inflation shares profit price",
    "tech": "phone mobile software computer internet digital users network chip device",
}


def word_topic_texts(n_per, words_per_text, seed=0):
    """``(texts, labels)``: ``n_per`` documents of each topic of :data:`WORD_TOPICS`, each
    ``words_per_text`` words drawn from its topic's ten."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for name, words in WORD_TOPICS.items():
        for _ in range(n_per):
            texts.append(" ".join(rng.choice(words.split(), size=words_per_text)))
            labels.append(name)
    return texts, labels
