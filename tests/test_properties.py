"""Property-based tests (hypothesis) of the loaders and the command line on generated
inputs.

Tables in random encodings, with empty and repeated texts, odd CSV quoting and random
label columns; JSONL files; dataset folders with random sparse count matrices (empty rows
and columns included). Each load either gives a corpus with one row per document and
finite matrices, or raises a ValueError with a one-line message; each ``semnmf cluster``
run either succeeds with valid outputs (one row per document, no NaN, valid JSON) or exits
2 with one line on stderr and leaves no file behind.
"""

import contextlib
import csv
import io
import json
import math
import os
import tempfile
import warnings

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from semnmf.cli import main  # noqa: E402
from semnmf.datasets import load_dataset  # noqa: E402

# Few examples and a fixed search, so that the suite stays fast and repeatable; set
# SEMNMF_PROPERTY_EXAMPLES (e.g. 500) for a longer, random search.
EXAMPLES = int(os.environ.get("SEMNMF_PROPERTY_EXAMPLES", "12"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    derandomize="SEMNMF_PROPERTY_EXAMPLES" not in os.environ,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

WORDS = ["apple", "banana", "café", "réforme", "économique", "the", "and", "x", "über",
         "naïve", "straße", "42", "a_b", "", "goal", "team", "orbit", "moon", "ÉCOLE"]
ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "latin-1"]

text = st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join) | st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=20)
label = st.sampled_from(["", "sport", "food", "space", " ", "1", "é"])


def _encodable(value, encoding):
    try:
        value.encode(encoding)
        return True
    except UnicodeEncodeError:
        return False


def _check_corpus(corpus, n):
    assert len(corpus) == n == len(corpus.ids)
    X = corpus.vectorize("tfidf")
    assert X.shape[0] == n and np.isfinite(X.data).all()
    if corpus.labels is not None:
        assert len(corpus.labels) == n and corpus.n_classes >= 1


@contextlib.contextmanager
def _folder():
    with tempfile.TemporaryDirectory(prefix="semnmf-prop-") as root:
        yield root


def _run_cli(argv, out):
    """Run ``main(argv)``; check the contract of its outcome; return the exit code."""
    stderr, stdout = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stdout), \
            warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning not turned into a notice is a failure
        code = main(argv)
    event(f"exit {code}")
    if code == 2:
        lines = stderr.getvalue().strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("semnmf: error: "), lines
        assert not os.path.exists(out), "a failed run left files behind"
        return code
    assert code == 0, stderr.getvalue()
    with open(os.path.join(out, "run.json"), encoding="utf-8") as f:
        run = json.load(f, parse_constant=lambda c: pytest.fail(f"run.json holds {c}"))
    with open(os.path.join(out, "assignments.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == run["data"]["n_documents"]
    with open(os.path.join(out, "topics.csv"), newline="", encoding="utf-8") as f:
        weights = [float(r["weight"]) for r in csv.DictReader(f)]
    assert all(math.isfinite(w) for w in weights)
    for value in (run.get("scores") or {}).values():
        assert value is None or isinstance(value, (int, str)) or math.isfinite(value)
    return code


@st.composite
def tables(draw):
    n = draw(st.integers(1, 12))
    texts = draw(st.lists(text, min_size=n, max_size=n))
    if n > 2 and draw(st.booleans()):  # duplicate texts
        texts[1] = texts[0]
    labels = draw(st.none() | st.lists(label, min_size=n, max_size=n))
    encoding = draw(st.sampled_from(ENCODINGS))
    quoting = draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC]))
    delimiter = draw(st.sampled_from([",", "\t"]))
    read_as = draw(st.sampled_from([encoding, "utf-8"]))  # right or (maybe) wrong encoding
    texts = [t for t in texts if _encodable(t, encoding)] or ["apple"]
    if labels is not None:
        labels = labels[:len(texts)] + ["x"] * (len(texts) - len(labels))
    return texts, labels, encoding, quoting, delimiter, read_as


def _write_table(root, texts, labels, encoding, quoting, delimiter):
    path = os.path.join(root, "docs.tsv" if delimiter == "\t" else "docs.csv")
    with open(path, "w", newline="", encoding=encoding) as f:
        writer = csv.writer(f, delimiter=delimiter, quoting=quoting)
        writer.writerow(["text"] + (["label"] if labels is not None else []))
        for i, t in enumerate(texts):
            writer.writerow([t] + ([labels[i]] if labels is not None else []))
    return path


@SETTINGS
@given(tables())
def test_tables_load_or_fail_with_one_line(table):
    texts, labels, encoding, quoting, delimiter, read_as = table
    with _folder() as root:
        path = _write_table(root, texts, labels, encoding, quoting, delimiter)
        try:
            corpus = load_dataset(path, encoding=read_as)
        except ValueError as exc:
            assert str(exc) and "\n" not in str(exc).strip()
            return
        _check_corpus(corpus, len(texts))
        if labels is not None and corpus.labels is not None:
            assert corpus.n_unlabelled == sum(not y.strip() for y in labels)


@SETTINGS
@given(tables(), st.integers(1, 4), st.sampled_from(["nmf", "skmeans", "snmf"]))
def test_cli_on_generated_tables(table, k, method):
    texts, labels, encoding, quoting, delimiter, read_as = table
    with _folder() as root:
        path = _write_table(root, texts, labels, encoding, quoting, delimiter)
        out = os.path.join(root, "out")
        _run_cli(["cluster", path, "-k", str(k), "--method", method, "--encoding", read_as,
                  "--max-iter", "15", "-q", "--out", out], out)


@SETTINGS
@given(st.lists(st.one_of(
    st.fixed_dictionaries({"text": text}, optional={"label": label | st.none()}),
    st.fixed_dictionaries({"body": text}),
    st.lists(text, max_size=2), st.none(), text), min_size=1, max_size=8),
    st.sampled_from(["utf-8", "utf-16"]), st.booleans())
def test_cli_on_generated_jsonl(records, encoding, blank_lines):
    with _folder() as root:
        path = os.path.join(root, "docs.jsonl")
        lines = [json.dumps(r, ensure_ascii=False) for r in records]
        if blank_lines:
            lines.insert(len(lines) // 2, "")
        with open(path, "w", encoding=encoding) as f:
            f.write("\n".join(lines) + "\n")
        out = os.path.join(root, "out")
        _run_cli(["cluster", path, "-k", "2", "--method", "nmf", "--encoding", encoding,
                  "--max-iter", "15", "-q", "--out", out], out)


@st.composite
def count_folders(draw):
    n = draw(st.integers(1, 15))
    d = draw(st.integers(1, 12))
    density = draw(st.floats(0, 1))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    dense = rng.poisson(2.0, (n, d)) * (rng.random((n, d)) < density)
    if n > 1 and draw(st.booleans()):
        dense[0] = 0  # an empty row
    if d > 1 and draw(st.booleans()):
        dense[:, -1] = 0  # an empty column
    labels = draw(st.none() | st.lists(label, min_size=n, max_size=n))
    vocabulary = draw(st.none() | st.lists(st.sampled_from([w for w in WORDS if w]),
                                           min_size=d, max_size=d))
    return dense, labels, vocabulary


def _write_folder(root, dense, labels, vocabulary):
    folder = os.path.join(root, "data")
    os.mkdir(folder)
    scipy.io.mmwrite(os.path.join(folder, "counts.mtx"), sp.csr_matrix(dense))
    if labels is not None:
        with open(os.path.join(folder, "labels.txt"), "w", encoding="utf-8") as f:
            f.writelines(f"{y.strip()}\n" for y in labels)
    if vocabulary is not None:
        with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
            f.writelines(f"{t}\n" for t in vocabulary)
    return folder


@SETTINGS
@given(count_folders())
def test_count_folders_load_or_fail_with_one_line(folder_spec):
    dense, labels, vocabulary = folder_spec
    with _folder() as root:
        folder = _write_folder(root, dense, labels, vocabulary)
        try:
            corpus = load_dataset(folder)
        except ValueError as exc:
            assert str(exc) and "\n" not in str(exc).strip()
            if vocabulary is not None and len(set(vocabulary)) < len(vocabulary):
                assert "repeats" in str(exc)
            return
        _check_corpus(corpus, dense.shape[0])
        assert vocabulary is None or len(set(vocabulary)) == len(vocabulary)


@SETTINGS
@given(count_folders(), st.integers(1, 4), st.sampled_from(["nmf", "skmeans", "snmf"]))
def test_cli_on_generated_count_folders(folder_spec, k, method):
    dense, labels, vocabulary = folder_spec
    with _folder() as root:
        folder = _write_folder(root, dense, labels, vocabulary)
        out = os.path.join(root, "out")
        _run_cli(["cluster", folder, "-k", str(k), "--method", method, "--max-iter", "15",
                  "-q", "--out", out], out)
