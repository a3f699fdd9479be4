"""Topics over time (and by class): each cluster's share of the documents of each period.

``semnmf cluster docs.csv -k K --time-column date`` reads one date per document from the
table's column (ISO dates ``2024-03-05``, ``2024-03``, ``2024``, optionally with a time;
anything else is a document without a date, counted and left out of the tables), groups the
documents into periods (``time_period``: "year", "month", "day", or "auto": the finest of
those giving at most :data:`MAX_PERIODS` periods and :data:`MIN_PER_PERIOD` documents
per period on average) and writes, in the run folder,
``topics_over_time.csv`` (period, cluster, documents, share of the period's documents) and,
when the documents have labels, ``topics_over_time_by_class.csv`` (period, class, cluster,
documents, share of the period's documents of that class). The report draws the first as
lines, one per cluster.
"""

import csv
import os
import re
from collections import Counter

import numpy as np

PERIODS = ("auto", "year", "month", "day")
MAX_PERIODS = 60
MIN_PER_PERIOD = 10  # "auto" keeps at least this many documents per period on average
_DATE = re.compile(r"^\s*(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?(?:[T ].*)?\s*$")
OVER_TIME_FILE = "topics_over_time.csv"
BY_CLASS_FILE = "topics_over_time_by_class.csv"


def parse_dates(values):
    """``(year, month, day)`` of each value (month/day None when not given), None for a
    value that is no ISO date."""
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


def check_dates(values, column=None):
    """The parsed dates of ``values`` (:func:`parse_dates`), refused when none is a date."""
    dates = parse_dates(values)
    if all(d is None for d in dates):
        where = "time_column" if column is None else f"time_column {column!r}"
        raise ValueError(f"{where}: no value is a date (give ISO dates such as 2024-03-05, "
                         "2024-03 or 2024).")
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


def timeline(values, clusters, labels=None, period="auto"):
    """The tables of topics over time: a dict with ``period`` (the chosen one), ``rows``
    (period, cluster, documents, share), ``by_class`` rows (period, class, cluster,
    documents, share) or None, and ``n_undated`` (documents without a date)."""
    dates = check_dates(values)
    n_undated = sum(d is None for d in dates)
    period = choose_period(dates, period)
    clusters = np.asarray(clusters)
    keys = [None if d is None else _key(d, period) for d in dates]
    rows = _shares([(k,) for k in keys], clusters)
    by_class = None
    if labels is not None:
        by_class = _shares([(k, None if y is None else str(y))
                            for k, y in zip(keys, labels)], clusters)
    return {"period": period, "rows": rows, "by_class": by_class, "n_undated": n_undated}


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
