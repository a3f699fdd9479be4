"""The language of a corpus, and the stop words of that language.

:func:`detect_language` names the language most documents are written in (py3langid
voting over a sample); :func:`stop_words_for` gives that language's stop words
(scikit-learn's list for English, ``stopwordsiso``'s for the others, none where no list
exists); :func:`resolve_stop_words` turns the ``stop_words`` setting into the list a
vectorizer takes, and says what it chose.
"""

import functools
import random
import unicodedata

__all__ = ["detect_language", "stop_words_for", "resolve_stop_words", "stop_word_languages",
           "LanguageChoice", "SAMPLE", "MAJORITY"]

#: Documents read to detect the language (a random sample when the corpus has more) and
#: characters read of each: enough for a stable vote, a fraction of a second.
SAMPLE = 300
CHARS = 600
#: Share of the sampled documents that must be in one language for it to be the corpus's;
#: below it the corpus counts as mixed and keeps the English list (the default before
#: detection existed), and the choice says so.
MAJORITY = 0.5

#: The names accepted besides ISO 639-1 codes.
NAMES = {"english": "en"}


@functools.lru_cache(maxsize=1)
def stop_word_languages():
    """The ISO 639-1 codes ``stopwordsiso`` has a list for, sorted."""
    import stopwordsiso

    return tuple(sorted(stopwordsiso.langs()))


class LanguageChoice(dict):
    """What :func:`resolve_stop_words` chose, as run.json records it: ``language`` (a
    code, or None), ``how`` ("detected", "given", "mixed"), ``share`` (of the sampled
    documents detected in that language, when detected), ``stop_words`` (where the list
    comes from) and ``n_stop_words``."""

    @property
    def line(self):
        """One line for the log."""
        if self["how"] == "list":
            return f"stop words: your list of {self['n_stop_words']} words"
        words = (f"{self['n_stop_words']} stop words ({self['stop_words']})"
                 if self["n_stop_words"] else "no stop words (none listed for it)")
        if self["how"] == "given":
            return (f"language {self['language'] or 'none'} (given): {words}"
                    if self["language"] else "language none (given): every word kept")
        if self["how"] == "mixed":
            return (f"language: no language holds {MAJORITY:.0%} of the documents (most: "
                    f"{self['detected']}, {self['share']:.0%}): {words}; name one with "
                    "--language (language= in Python)")
        return (f"language {self['language']} (detected in {self['share']:.0%} of the "
                f"documents sampled): {words}; --language none keeps every word")


def detect_language(texts, sample=SAMPLE, random_state=0):
    """The language most of ``texts`` are written in: ``(code, share)``, the ISO 639-1
    code py3langid gives most often over a sample of at most ``sample`` texts (the first
    :data:`CHARS` characters of each) and the share of the sampled texts it gives it to.
    Texts without a letter are not sampled; ``(None, 0.0)`` when no text has one."""
    import py3langid

    texts = [t for t in texts if any(c.isalpha() for c in t[:CHARS])]
    if not texts:
        return None, 0.0
    if len(texts) > sample:
        texts = random.Random(random_state).sample(texts, sample)
    votes = {}
    for text in texts:
        code = py3langid.classify(text[:CHARS])[0]
        votes[code] = votes.get(code, 0) + 1
    code = max(sorted(votes), key=votes.get)
    return code, votes[code] / len(texts)


def language_code(language):
    """``language`` ("english", an ISO 639-1 code with a stop-word list, any case) as its
    code; a clear ValueError otherwise."""
    code = NAMES.get(language.lower(), language.lower())
    if code != "en" and code not in stop_word_languages():
        raise ValueError(
            f"no stop-word list for the language {language!r}: use auto (detect it), none, "
            f"english or one of the ISO 639-1 codes {', '.join(stop_word_languages())}; or "
            "give your own list (a stop-word file).")
    return code


@functools.lru_cache(maxsize=64)
def stop_words_for(code):
    """The stop words of the language ``code``: scikit-learn's English list for "en", the
    ``stopwordsiso`` list (in Unicode's composed form, as the tokenizer reads text)
    otherwise, an empty tuple for a language without a list. Sorted."""
    if code == "en":
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        return tuple(sorted(ENGLISH_STOP_WORDS))
    if code not in stop_word_languages():
        return ()
    import stopwordsiso

    return tuple(sorted({unicodedata.normalize("NFC", w).lower()
                         for w in stopwordsiso.stopwords(code) if w.strip()}))


def _source(code):
    return "scikit-learn's English list" if code == "en" else f"stopwordsiso, {code}"


def resolve_stop_words(stop_words, texts=None):
    """``(value, choice)``: the stop words of the setting ``stop_words`` ("auto": the
    detected language's, a language, "none" or None, a list, or ``{"language": ...,
    "extra": words}``) as CountVectorizer takes them, and the :class:`LanguageChoice`."""
    if isinstance(stop_words, dict):
        value, choice = resolve_stop_words(stop_words["language"], texts)
        extra = {str(w) for w in stop_words["extra"]}
        base = set(stop_words_for("en")) if value == "english" else set(value or ())
        words = sorted(base | extra)
        choice.update(n_stop_words=len(words), added=len(extra - base))
        return words, choice
    if stop_words is None or (isinstance(stop_words, str) and stop_words.lower() == "none"):
        return None, LanguageChoice(language=None, how="given", stop_words=None,
                                    n_stop_words=0)
    if not isinstance(stop_words, str):
        words = list(stop_words)
        return words, LanguageChoice(language=None, how="list", stop_words="given",
                                     n_stop_words=len(set(words)))
    if stop_words.lower() == "auto":
        if texts is None:
            raise ValueError("stop_words='auto' detects the language of the texts; a corpus "
                             "of counts only has none: name the language or use 'none'.")
        detected, share = detect_language(texts)
        if detected is None or share < MAJORITY:
            code, how = "en", "mixed"
        else:
            code, how = detected, "detected"
        choice = LanguageChoice(language=code, how=how, detected=detected,
                                share=round(float(share), 3))
    else:
        code = language_code(stop_words)
        choice = LanguageChoice(language=code, how="given")
    words = stop_words_for(code)
    choice.update(stop_words=_source(code) if words else None, n_stop_words=len(words))
    if code == "en":
        return "english", choice
    return (list(words) if words else None), choice
