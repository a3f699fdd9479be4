"""The report's third stage: a :class:`._page.Page` rendered to one HTML document from the
Jinja2 templates of ``semnmf/report/templates/`` (a section a template; the CSS inline).

Autoescaping is on: every text of the page (document texts, words, labels, ids, run.json
values) is escaped once, by Jinja2. The only markup let through is the inline SVG of the
pictures, which matplotlib writes (and escapes) itself: the ``map_svg`` and ``curve_svg``
filters mark it safe.
"""

import functools

from ._page import fmt

__all__ = ["render_page"]


def render_page(page):
    """The HTML of ``page`` (a :class:`._page.Page`), as text."""
    return _environment().get_template("page.html").render(page=page)


@functools.cache
def _environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined
    from markupsafe import Markup

    from ._figures import curve_svg, map_svg

    env = Environment(loader=PackageLoader("semnmf.report", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      keep_trailing_newline=True)
    env.filters.update({
        "fmt": fmt,
        "thousands": lambda n: f"{n:,}",
        "percent": lambda x: f"{x:.1%}",
        # matplotlib's SVG: its texts are escaped by matplotlib, the element is markup
        "map_svg": lambda document_map: Markup(map_svg(document_map)),
        "curve_svg": lambda curve: Markup(curve_svg(curve)),
    })
    return env
