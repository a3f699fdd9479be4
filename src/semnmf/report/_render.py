"""The report's third stage: a :class:`._page.Page` rendered to one HTML document from the
Jinja2 templates of ``semnmf/report/templates/`` (a section a template; the CSS inline).

Autoescaping is on: every text of the page (document texts, words, labels, ids, run.json
values) is escaped once, by Jinja2. The only markup let through is the inline SVG of the
selection curves, which matplotlib writes (and escapes) itself (the ``curve_svg`` filter
marks it safe), and the documents' data for the page's script (``page_data``): one JSON
text in which ``<``, ``>`` and ``&`` are written as JSON escapes, so that no text of it can
end its ``<script>`` element; the script puts every text into the page as text.
"""

import functools
import json

import numpy as np

from ._page import OUTLIER_COLOR, fmt

__all__ = ["render_page", "page_data"]


def render_page(page):
    """The HTML of ``page`` (a :class:`._page.Page`), as text."""
    return _environment().get_template("page.html").render(page=page)


@functools.cache
def _environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined
    from markupsafe import Markup

    from ._figures import curve_svg, timeline_svg

    env = Environment(loader=PackageLoader("semnmf.report", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      keep_trailing_newline=True)
    env.filters.update({
        "fmt": fmt,
        "thousands": lambda n: f"{n:,}",
        "percent": lambda x: f"{x:.1%}",
        # matplotlib's SVG: its texts are escaped by matplotlib, the element is markup
        "curve_svg": lambda curve: Markup(curve_svg(curve)),
        "timeline_svg": lambda timeline: Markup(timeline_svg(timeline)),
        "page_data": lambda page: Markup(_script_json(page_data(page))),
    })
    return env


def _script_json(data):
    """JSON that can stand inside a <script> element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def page_data(page):
    """What the page's script needs, compactly: per document (in the list's order) its
    id, cluster, strength, label (an index into ``label_names``) and excerpt; the map's
    points (a document's position in those lists, x and y in thousandths) and where each
    cluster's name goes; the clusters' colours and words."""
    docs = page.documents
    data = {"leaf": page.is_tree, "none_color": OUTLIER_COLOR,
            "none_name": "outliers" if page.is_tree else "none",
            "clusters": [{"id": c.id, "color": c.color, "words": " ".join(c.words[:5]),
                          "name": c.name} for c in page.clusters],
            "ids": [str(v) for v in docs.ids], "cluster": docs.clusters,
            "strength": docs.strength, "text": docs.excerpts, "search": docs.search,
            "labels": None, "map": None}
    if docs.labels is not None:
        names = sorted(set(docs.labels))
        index = {name: j for j, name in enumerate(names)}
        data["label_names"] = names
        data["labels"] = [index[v] for v in docs.labels]
    if page.levels is not None:  # the level picker: every level's clusters, list order
        data["levels"] = {
            "current": page.levels.current,
            "by_k": {str(k): {"cluster": np.asarray(level["clusters"])[docs.order].tolist(),
                              "clusters": level["views"]}
                     for k, level in page.levels.by_k.items()}}
    m = page.map
    if m is not None:
        position = np.empty(len(docs.order), dtype=np.int64)
        position[docs.order] = np.arange(len(docs.order))
        xy = np.rint(np.clip(m.coords, -1, 1) * 1000).astype(int)
        data["map"] = {"i": position[m.rows].tolist(), "x": xy[:, 0].tolist(),
                       "y": xy[:, 1].tolist(),
                       "anchors": [[int(c), int(round(1000 * x)), int(round(1000 * y))]
                                   for c, (x, y) in m.anchors.items()]}
    return data
