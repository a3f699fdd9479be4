"""The language of a corpus and its stop words (semnmf.text.language).

The fixtures in tests/fixtures/languages/ are short news items in six languages (three
topics, 24 documents each), each with a stop-word list written by hand for the test.
"""

import json
from pathlib import Path

import numpy as np
import pytest

import semnmf
from semnmf import Corpus
from semnmf.cli import main
from semnmf.text import language as lang
from semnmf.text.vectorize import check_stop_words

from conftest import make_planted

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "languages"
CODES = ("fr", "es", "de", "tr", "ru", "ar")


def fixture(code):
    rows = [json.loads(line) for line in (FIXTURES / f"{code}.jsonl").read_text(
        encoding="utf-8").splitlines() if line.strip()]
    return [r["text"] for r in rows], [r["label"] for r in rows]


def hand_list(code):
    lines = (FIXTURES / f"{code}_stopwords.txt").read_text(encoding="utf-8").splitlines()
    return [w.strip() for w in lines if w.strip() and not w.startswith("#")]


@pytest.mark.parametrize("code", CODES)
def test_the_language_of_each_fixture_is_detected(code):
    texts, _ = fixture(code)
    detected, share = lang.detect_language(texts)
    assert detected == code and share >= 0.9


@pytest.mark.parametrize("code", CODES)
def test_auto_removes_the_languages_stop_words(code):
    texts, _ = fixture(code)
    corpus = Corpus(texts, stop_words="auto", min_df=1)
    assert corpus.language["language"] == code and corpus.language["how"] == "detected"
    listed = set(lang.stop_words_for(code))
    assert corpus.language["n_stop_words"] == len(listed) > 100
    assert not listed & set(corpus.vocabulary.tolist())
    # and the hand-written list's words are mostly gone too (a list is not the list)
    hand = set(hand_list(code))
    left = hand & set(corpus.vocabulary.tolist())
    assert len(left) <= 0.35 * len(hand & set(Corpus(texts, stop_words=None,
                                                     min_df=1).vocabulary.tolist()))
    # naming the language gives the same list as detecting it
    assert Corpus(texts, stop_words=code, min_df=1).vocabulary.tolist() == \
        corpus.vocabulary.tolist()


@pytest.mark.parametrize("code", CODES)
def test_auto_clusters_as_well_as_a_hand_written_list(code, tmp_path):
    """NMI with the detected language's list is within 0.02 of the same run with the
    hand-written list (mean over three seeds), and above keeping every word."""
    texts, labels = fixture(code)
    words = tmp_path / "stop.txt"
    words.write_text("\n".join(hand_list(code)), encoding="utf-8")

    def mean_nmi(**settings):
        return np.mean([semnmf.cluster(texts, 3, labels=labels, random_state=seed,
                                       **settings).scores["nmi"] for seed in range(3)])

    auto = mean_nmi()
    hand = mean_nmi(stop_words="none", stop_words_file=str(words))
    assert auto >= hand - 0.02
    assert auto > mean_nmi(stop_words="none")


def test_english_keeps_scikit_learns_list():
    texts, _ = make_planted()
    auto = Corpus(texts, stop_words="auto")
    assert auto.language["language"] == "en" and auto._options["stop_words"] == "english"
    assert auto.vocabulary.tolist() == Corpus(texts).vocabulary.tolist()


def test_a_corpus_without_a_majority_language_keeps_the_english_list():
    texts = fixture("fr")[0][:30] + fixture("es")[0][:25] + fixture("de")[0][:25]
    corpus = Corpus(texts, stop_words="auto", min_df=1)
    assert corpus.language["how"] == "mixed" and corpus.language["language"] == "en"
    assert corpus.language["detected"] == "fr" and corpus.language["share"] < lang.MAJORITY
    assert "no language holds" in corpus.language.line


def test_a_stop_word_file_is_added_to_the_detected_list(tmp_path):
    texts, labels = fixture("fr")
    words = tmp_path / "extra.txt"
    words.write_text("match\nrecette\n", encoding="utf-8")
    run = semnmf.cluster(texts, 3, labels=labels, stop_words_file=str(words))
    vocabulary = set(run.corpus.vocabulary.tolist())
    assert not {"match", "recette"} & vocabulary
    assert not set(lang.stop_words_for("fr")) & vocabulary
    assert run.extra["language"]["language"] == "fr"
    assert run.extra["language"]["n_stop_words"] == len(set(lang.stop_words_for("fr"))
                                                        | {"match", "recette"})


def test_counts_only_corpora_need_no_language():
    counts = Corpus(make_planted()[0]).counts()
    corpus = Corpus(counts=counts, stop_words="auto")
    assert corpus.language["language"] is None and corpus.n_terms == counts.shape[1]


def test_unknown_languages_are_refused_in_one_line(tmp_path, capsys):
    with pytest.raises(ValueError, match="no stop-word list for the language 'xx'"):
        check_stop_words("xx")
    with pytest.raises(ValueError, match="ISO 639-1"):
        Corpus(["un texte"], stop_words="klingon")
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_info:
        main(["cluster", "bbc", "-k", "5", "--language", "xx", "--out", str(out)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "--language" in err[-1] and "'xx'" in err[-1] and not out.exists()


def test_the_run_says_and_records_the_language(tmp_path, capsys):
    texts, labels = fixture("es")
    source = tmp_path / "es.jsonl"
    source.write_text("\n".join(json.dumps({"text": t, "label": y}, ensure_ascii=False)
                                for t, y in zip(texts, labels)), encoding="utf-8")
    out = tmp_path / "run"
    assert main(["cluster", str(source), "-k", "3", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.count("language es (detected in 100% of the documents sampled)") == 1
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["language"]["language"] == "es" and run["language"]["how"] == "detected"
    assert run["language"]["stop_words"] == "stopwordsiso, es"
    # --language none keeps every word, and says so
    out = tmp_path / "none"
    assert main(["cluster", str(source), "-k", "3", "--language", "none", "--out",
                 str(out), "-q"]) == 0
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["language"] == {"language": None, "how": "given", "stop_words": None,
                               "n_stop_words": 0}
    # the saved model keeps the list it used: new documents lose the same words
    model = semnmf.load_model(tmp_path / "run" / "model")
    assert model.assign(texts)[0].shape == (len(texts),)
