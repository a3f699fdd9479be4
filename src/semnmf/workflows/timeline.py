"""Topics over time (and by class): each cluster's share of the documents of each period
(``time_column``, ``time_period``, ``date_format``; the files: docs/guide/outputs.md).
"""

import csv
import datetime
import os
import re
from collections import Counter

import numpy as np

from ..datasets.frames import _missing as _no_value

PERIODS = ("auto", "year", "month", "day")
MAX_PERIODS = 60
MIN_PER_PERIOD = 10  # "auto" keeps at least this many documents per period on average
_DATE = re.compile(r"^\s*(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?(?:[T ].*)?\s*$")
OVER_TIME_FILE = "topics_over_time.csv"
BY_CLASS_FILE = "topics_over_time_by_class.csv"


# a day-first or month-first date (05/03/2024, 5.3.2024): ambiguous, so never guessed
_NUMERIC_DMY = re.compile(r"^\s*\d{1,2}[/.\-]\d{1,2}[/.\-]\d{2,4}\s*$")


def _missing(value):
    """No value: a data frame's missing one (None, NaN) or an empty text."""
    return _no_value(value) or not str(value).strip()


def _format_fields(date_format):
    """(has month, has day) of a strptime format."""
    return (any(f"%{c}" in date_format for c in "mbBj"),
            any(f"%{c}" in date_format for c in "dj"))


def parse_dates(values, date_format=None):
    """``(year, month, day)`` of each value (month/day None when not given; None for no
    date): ISO (``2024-03-05``, ``2024-03``, ``2024``, a time allowed after it), or
    ``date_format`` (a :func:`datetime.datetime.strptime` format) when given."""
    if date_format is not None:
        month, day = _format_fields(date_format)
        out = []
        for value in values:
            try:
                when = datetime.datetime.strptime(str(value).strip(), date_format)
            except (TypeError, ValueError):
                out.append(None)
                continue
            out.append((when.year, when.month if month else None, when.day if day else None))
        return out
    out = []
    for value in values:
        match = _DATE.match(str(value)) if value is not None else None
        if match is None:
            out.append(None)
            continue
        year, month, day = (int(g) if g else None for g in match.groups())
        if (month is not None and not 1 <= month <= 12) or (day is not None and not 1 <= day <= 31):
            out.append(None)
        else:
            out.append((year, month, day))
    return out


def check_dates(values, column=None, date_format=None):
    """The parsed dates of ``values`` (:func:`parse_dates`), refused when none is a date
    (naming a value, and the format to give when the values are day- or month-first)."""
    dates = parse_dates(values, date_format)
    if all(d is None for d in dates):
        where = "time_column" if column is None else f"time_column {column!r}"
        given = [str(v) for v in values if not _missing(v)]
        example = next((v for v in given if _NUMERIC_DMY.match(v)), given[0] if given else None)
        if example is None:
            raise ValueError(f"{where}: every value is empty.")
        if date_format is not None:
            raise ValueError(f"{where}: no value reads as date_format {date_format!r} (e.g. "
                             f"{example!r}).")
        hint = (" or give their format, e.g. date_format='%d/%m/%Y' (CLI: --date-format "
                "%d/%m/%Y; %m/%d/%Y for month first)" if _NUMERIC_DMY.match(example)
                else " or give their format with date_format= (CLI: --date-format)")
        raise ValueError(f"{where}: no value is a date (e.g. {example!r}): give ISO dates "
                         f"such as 2024-03-05, 2024-03 or 2024,{hint}.")
    return dates


def _key(date, period):
    year, month, day = date
    if period == "year" or month is None:
        return f"{year:04d}"
    if period == "month" or day is None:
        return f"{year:04d}-{month:02d}"
    return f"{year:04d}-{month:02d}-{day:02d}"


def choose_period(dates, period="auto"):
    """The period of the tables: as given, or the finest with at most MAX_PERIODS periods
    (and no finer than the dates themselves)."""
    if period not in PERIODS:
        raise ValueError(f"time_period must be one of {', '.join(PERIODS)}, got {period!r}.")
    if period != "auto":
        return period
    known = [d for d in dates if d is not None]
    for candidate in ("day", "month"):
        finest = all((d[2] if candidate == "day" else d[1]) is not None for d in known)
        n_periods = len({_key(d, candidate) for d in known})
        if finest and n_periods <= MAX_PERIODS and len(known) >= MIN_PER_PERIOD * n_periods:
            return candidate
    return "year"


def timeline(values, clusters, labels=None, period="auto", date_format=None):
    """The tables of topics over time: a dict with ``period`` (the chosen one), ``rows``
    (period, cluster, documents, share), ``by_class`` rows (period, class, cluster,
    documents, share) or None, ``n_undated`` (documents without a date), of which
    ``n_unreadable`` have a value that is no date (``unreadable``: the first such)."""
    dates = check_dates(values, date_format=date_format)
    n_undated = sum(d is None for d in dates)
    unreadable = [str(v) for v, d in zip(values, dates) if d is None and not _missing(v)]
    period = choose_period(dates, period)
    clusters = np.asarray(clusters)
    keys = [None if d is None else _key(d, period) for d in dates]
    rows = _shares([(k,) for k in keys], clusters)
    by_class = None
    if labels is not None:
        by_class = _shares([(k, None if y is None else str(y))
                            for k, y in zip(keys, labels)], clusters)
    return {"period": period, "rows": rows, "by_class": by_class, "n_undated": n_undated,
            "n_unreadable": len(unreadable), "unreadable": unreadable[0] if unreadable else None}


def _shares(groups, clusters):
    """Rows (*group, cluster, documents, share of the group) for the dated documents with
    a cluster, groups in order."""
    totals = Counter(g for g, c in zip(groups, clusters) if None not in g and c >= 0)
    counts = Counter((g, int(c)) for g, c in zip(groups, clusters) if None not in g and c >= 0)
    cluster_ids = sorted({int(c) for c in clusters if c >= 0})
    rows = []
    for group in sorted(totals):
        for c in cluster_ids:
            n = counts.get((group, c), 0)
            rows.append((*group, c, n, round(n / totals[group], 6)))
    return rows


def write_timeline(folder, result):
    """Write the tables of :func:`timeline` into the run folder: the file names."""
    files = [OVER_TIME_FILE]
    _write(os.path.join(folder, OVER_TIME_FILE), ["period", "cluster", "documents", "share"],
           result["rows"])
    if result.get("by_class") is not None:
        _write(os.path.join(folder, BY_CLASS_FILE),
               ["period", "class", "cluster", "documents", "share"], result["by_class"])
        files.append(BY_CLASS_FILE)
    return files


def _write(path, header, rows):
    from .._utils.io import atomic_write

    def write(f):
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)

    atomic_write(path, write)
