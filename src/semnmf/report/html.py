"""The HTML report of a run folder: one self-contained page that works offline.

:func:`write_report` reads the files of a run folder (``run.json``, ``assignments.csv``,
``topics.csv``, ``tree.json``, ``partitions.csv``) and writes ``report.html`` beside them
(what the page shows: ``docs/guide/report.md``). Everything is inline (CSS, matplotlib's
SVG curves, the documents as one JSON text, a small script); nothing is fetched. The texts
come from the corpus named by run.json's ``source`` or from the ``corpus`` given; without
either the page shows what the files alone allow.

Three stages: reading the run folder (:func:`read_run`, a :class:`~._reading.RunRecord`),
computing what the page shows (:class:`~._page.Page`) and rendering it from Jinja2
templates, one a section (:mod:`._render`, ``templates/``).
"""

import os
import time

from .._utils.io import atomic_write
from .._utils.progress import log
from ._page import build_page
from ._reading import RunRecord, find_corpus, read_run
from ._render import render_page

__all__ = ["write_report", "read_run", "RunRecord"]


def write_report(run_dir, *, corpus=None, out=None, n_documents=3, n_words=10,
                 excerpt_chars=320, max_points=5000, list_chars=160, layout="tsne",
                 load_texts=True, verbose=False):
    """Write ``report.html`` for a run folder and return its path.

    Parameters
    ----------
    run_dir : str or path-like
        A folder written by ``semnmf cluster`` or ``semnmf tree`` (or
        :func:`semnmf.report.write_results`): run.json and assignments.csv at least.
    corpus : Corpus, optional
        The run's corpus (same documents, same order). By default it is re-read from
        run.json's ``source`` with the run's input options; without it the page shows no
        texts, no map and no coherence, and says so.
    out : str, optional
        Where to write the page (default ``run_dir/report.html``).
    n_documents : int, default=3
        Representative documents shown per cluster.
    n_words : int, default=10
        Top words shown per cluster (bars) and used for NPMI coherence.
    excerpt_chars : int, default=320
        Length of each document excerpt.
    max_points : int, default=5000
        Documents drawn on the map at most (a fixed random sample beyond).
    list_chars : int, default=160
        Length of each document's excerpt in the document list (what its search reads).
    layout : {"tsne", "anchors"}, default="tsne"
        The map's layout (:mod:`.map_layout`; ``benchmarks/results/report_map.md``).
    load_texts : bool, default=True
        Re-read the corpus from the source when ``corpus`` is not given.
    verbose : bool, default=False
        Log what is done (never printed by the library otherwise).

    Returns
    -------
    str
        The path of the page.
    """
    t0 = time.perf_counter()
    record = read_run(run_dir)
    if corpus is None and load_texts:
        log(f"report: reading the corpus {record.source!r} ...", verbose)
    corpus, note = find_corpus(record, corpus, load_texts)
    page = build_page(record, corpus, note, n_documents=n_documents, n_words=n_words,
                      excerpt_chars=excerpt_chars, max_points=max_points,
                      list_chars=list_chars, layout=layout)
    html = render_page(page)
    path = os.fspath(out) if out is not None else os.path.join(record.run_dir, "report.html")
    atomic_write(path, lambda f: f.write(html))
    log(f"report: {path} ({len(html.encode('utf-8')) / 1e6:.2f} MB, "
        f"{time.perf_counter() - t0:.1f} s)", verbose)
    return path
