"""Guided topics through semnmf.cluster and ``semnmf cluster --seed-words``."""

import json

import pytest

import semnmf
from conftest import word_topic_texts
from semnmf.cli import main


def _texts(n_per=20, seed=0):
    return word_topic_texts(n_per, 10, seed)


def test_seeded_topics_keep_their_words_and_are_recorded():
    texts, labels = _texts()
    seeds = [["goal", "coach"], ["oscar", "cinema"]]
    result = semnmf.cluster(texts, 4, labels=labels, seed_words=seeds, max_iter=50)
    record = result.extra["seed_words"]["topics"]
    assert [t["words"] for t in record] == seeds
    assert all(t["in_top_words"] for t in record)
    assert all(0 <= t["drift"] <= 1 for t in record)
    for j, words in enumerate(seeds):
        assert set(words) <= {w for w, _ in result.topics[j]}
    assert result.scores["nmi"] > 0.9


def test_seed_words_are_checked_before_the_fit(tmp_path, capsys):
    texts, labels = _texts()
    with pytest.raises(ValueError, match=r"seed list 1 \(zzz qqq\) has no word in the corpus"):
        semnmf.cluster(texts, 4, seed_words=[["zzz", "qqq"]], max_iter=5)
    with pytest.raises(ValueError, match="more than the 4 clusters"):
        semnmf.cluster(texts, 4, seed_words=[["goal"]] * 5, max_iter=5)
    with pytest.raises(ValueError, match="seed_words start and hold the word factors"):
        semnmf.cluster(texts, 4, method="skmeans", seed_words=[["goal"]])


def test_the_command_line_reads_a_seed_word_file(tmp_path, capsys):
    texts, labels = _texts()
    source = tmp_path / "docs.csv"
    source.write_text("text,label\n" + "\n".join(f"{t},{l}" for t, l in zip(texts, labels)),
                      encoding="utf-8")
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("# one topic per line\nbank, inflation\n\nchip network\n", encoding="utf-8")
    out = tmp_path / "run"
    assert main(["cluster", str(source), "-k", "4", "--seed-words", str(seeds), "--out",
                 str(out), "--max-iter", "50", "-q", "--report"]) == 0
    record = json.loads((out / "run.json").read_text(encoding="utf-8"))
    topics = record["seed_words"]["topics"]
    assert [t["words"] for t in topics] == [["bank", "inflation"], ["chip", "network"]]
    assert all(t["in_top_words"] for t in topics)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "seeded: bank inflation (moved" in page and "seeded: chip network (moved" in page


def test_five_seed_lists_on_bbc_give_five_topics_with_their_seeds():
    """The command line's default with five seed lists on BBC."""
    seeds = [["football", "match", "club"], ["film", "award", "star"],
             ["election", "labour", "party"], ["mobile", "phone", "software"],
             ["bank", "economy", "growth"]]
    result = semnmf.cluster("bbc", 5, seed_words=seeds)
    for j, words in enumerate(seeds):
        assert set(words) <= {w for w, _ in result.topics[j]}, (j, result.topics[j])
    assert all(t["in_top_words"] for t in result.extra["seed_words"]["topics"])
    assert result.scores["nmi"] > 0.85
