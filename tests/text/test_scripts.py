"""Words of every script with the default tokenizer: letters that carry combining marks
(Devanagari and the other Indic scripts, Thai) stay one word, and runs of the scripts
written without spaces (Chinese, Japanese; Korean words with their particles) are cut into
character bigrams, so that such texts cluster without a word segmenter."""

import re
import sys
import unicodedata

import numpy as np
import pytest

from semnmf import NMF, Corpus, nmi
from semnmf.text._marks import MARKS, UNICODE_VERSION
from semnmf.text.vectorize import TOKEN_PATTERN, cjk_bigrams, make_analyzer

# Three topics, each a pool of Chinese words; a document is a run of them with no space,
# as Chinese is written, cut into clauses by "，" and "。".
TOPICS = [
    ["足球", "比赛", "球队", "进球", "教练", "联赛", "冠军", "球员"],
    ["股票", "市场", "投资", "银行", "利率", "基金", "经济", "价格"],
    ["电脑", "软件", "网络", "手机", "芯片", "数据", "程序", "系统"],
]


def chinese_corpus(n_per=20, seed=0):
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for label, words in enumerate(TOPICS):
        for _ in range(n_per):
            clauses = ["".join(rng.choice(words, 4)) for _ in range(3)]
            texts.append("，".join(clauses) + "。")
            labels.append(label)
    return texts, labels


def reference_bigrams(run):
    """The overlapping bigrams of a run of characters, written out."""
    return [run[i] + run[i + 1] for i in range(len(run) - 1)]


def test_runs_become_overlapping_bigrams():
    assert cjk_bigrams(["北京天安门"]) == reference_bigrams("北京天安门")
    # Japanese kana and kanji, Korean syllables with their particle
    assert cjk_bigrams(["東京タワー"]) == ["東京", "京タ", "タワ", "ワー"]
    assert cjk_bigrams(["서울에서"]) == ["서울", "울에", "에서"]
    # halfwidth katakana, the iteration mark, a supplementary-plane ideograph
    assert cjk_bigrams(["ﾃｽﾄ", "時々", "𠀀𠀁"]) == ["ﾃｽ", "ｽﾄ", "時々", "𠀀𠀁"]
    # letters of other scripts in the same token stay one word; one-character runs go
    assert cjk_bigrams(["iphone手机", "好", "café"]) == ["iphone", "手机", "café"]


def test_the_default_analyzer_cuts_only_these_scripts():
    analyze = make_analyzer()
    assert analyze("我爱北京天安门，the café in Paris") == (
        reference_bigrams("我爱北京天安门") + ["café", "paris"])
    # an English text gives what scikit-learn's analyzer gives
    text = "The quick brown fox jumps over the lazy dog"
    from sklearn.feature_extraction.text import CountVectorizer

    plain = CountVectorizer(stop_words="english", token_pattern=TOKEN_PATTERN).build_analyzer()
    assert analyze(text) == plain(text)


def test_another_token_pattern_keeps_a_segmentation_of_ones_own():
    analyze = make_analyzer(token_pattern=r"(?u)\b\w+\b", stop_words=None)
    assert analyze("我 爱 北京 天安门") == ["我", "爱", "北京", "天安门"]


def test_unsegmented_chinese_clusters():
    texts, labels = chinese_corpus()
    corpus = Corpus(texts, labels)
    # every topic word is in the vocabulary as its bigram (and so are the junctions)
    assert {w for words in TOPICS for w in words} <= set(corpus.vocabulary)
    X = corpus.tfidf()
    model = NMF(3, random_state=0).fit(X)
    assert nmi(labels, model.labels_) > 0.95


def test_without_bigrams_documents_share_almost_nothing():
    """What the bigrams mend: with the default pattern alone, each clause is one token,
    and almost no clause occurs in two documents."""
    texts, _ = chinese_corpus()
    corpus = Corpus(texts, token_pattern=r"(?u)\b[^\W\d_][^\W\d_]+\b(?#no bigrams)", min_df=1)
    assert corpus.counts().shape[1] > 2.5 * len(texts)  # about one term per clause
    assert np.mean(np.diff(corpus.counts().tocsc().indptr) > 1) < 0.05


# ---------------------------------------------------------------- combining marks
def test_the_marks_table_is_unicodes():
    table = re.compile(f"[{MARKS}]")
    marks = {cp for cp in range(sys.maxunicode + 1)
             if unicodedata.category(chr(cp)).startswith("M")}
    in_table = {cp for cp in range(sys.maxunicode + 1) if table.match(chr(cp))}
    if unicodedata.unidata_version == UNICODE_VERSION:
        assert in_table == marks
    else:  # another Unicode: the table may only lag or lead by the marks added since
        assert len(in_table ^ marks) < 0.05 * len(marks)


@pytest.mark.parametrize("text, words", [
    ("नमस्ते दुनिया भारत सरकार", ["नमस्ते", "दुनिया", "भारत", "सरकार"]),   # Hindi
    ("স্বাগতম বাংলা ভাষা", ["স্বাগতম", "বাংলা", "ভাষা"]),                 # Bengali
    ("வணக்கம் தமிழ்", ["வணக்கம்", "தமிழ்"]),                          # Tamil
    # decomposed accents: composed first (NFC); a mark with no composed form stays on
    ("cafe\u0301 re\u0301forme na\u0131\u0308ve", ["café", "réforme", "na\u0131\u0308ve"]),
])
def test_letters_with_combining_marks_stay_one_word(text, words):
    assert make_analyzer(stop_words=None)(text) == words


def test_text_without_marks_gives_the_patterns_own_tokens():
    """The marks change nothing elsewhere: for text without them (and without CJK), the
    default analyzer gives exactly what TOKEN_PATTERN gives scikit-learn."""
    from sklearn.feature_extraction.text import CountVectorizer

    rng = np.random.default_rng(0)
    alphabet = list("abcXYZ éüßøçñ ελλην кирил עבר عرب 0123_-.,'") + [" "] * 6
    plain = CountVectorizer(stop_words=None, token_pattern=TOKEN_PATTERN).build_analyzer()
    analyze = make_analyzer(stop_words=None)
    for _ in range(300):
        text = "".join(rng.choice(alphabet, 60))
        assert analyze(text) == plain(text)
    # and a mark anywhere does not change the words elsewhere in the text
    assert analyze("abc123def naïve q_r नमस्ते the end") == ["naïve", "नमस्ते", "the", "end"]
