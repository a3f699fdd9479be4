"""The report's pictures as inline SVG (matplotlib, no pyplot global state): the
selection curves (the map is drawn by the page's script from the embedded coordinates).
Each function returns the ``<svg>`` element as text, which matplotlib has escaped; the
renderer marks it safe."""

import io

__all__ = ["curve_svg"]


def _svg(fig, salt):
    """A matplotlib figure as an inline <svg> element (text kept as text; unique ids)."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        fig.savefig(buffer, format="svg", bbox_inches="tight",
                    metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    svg = buffer.getvalue()
    svg = svg[svg.find("<svg"):]  # no XML declaration or DTD inside HTML
    # inline SVG in HTML needs no namespace declarations: the page names no URL at all
    for declaration in (' xmlns:xlink="http://www.w3.org/1999/xlink"',
                        ' xmlns="http://www.w3.org/2000/svg"'):
        svg = svg.replace(declaration, "", 1)
    return svg


def _figure(width, height):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    fig.set_layout_engine("constrained")
    return fig


def timeline_svg(timeline):
    """Each cluster's share of the documents by period (:class:`._page.Timeline`), one
    line per cluster in its colour."""
    periods = timeline.periods
    fig = _figure(7.2, 3.2)
    ax = fig.add_subplot()
    x = list(range(len(periods)))
    for c, shares in timeline.shares.items():
        name = timeline.names.get(c)
        ax.plot(x, shares, "-o", color=timeline.colors[c], markersize=3, linewidth=1.5,
                label=f"{c} {name}" if name else str(c))
    step = max(1, len(periods) // 12)
    ax.set_xticks(x[::step], [str(p) for p in periods[::step]], rotation=45, ha="right")
    ax.set_ylabel("share of the period's documents", fontsize=9)
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(title="cluster", fontsize=8, title_fontsize=8, loc="upper left",
              bbox_to_anchor=(1.0, 1.0), frameon=False)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.tick_params(labelsize=8)  # laid out by the figure's constrained layout
    return _svg(fig, "timeline")


def curve_svg(curve):
    """A selection curve (:class:`._page.Curve`), the chosen value circled."""
    x, y, xlabel, chosen = curve.x, curve.y, curve.xlabel, curve.chosen
    fig = _figure(5.6, 2.8)
    ax = fig.add_subplot()
    ax.plot(x, y, "o-", color="#3465a4", markersize=4)
    if chosen is not None and chosen in list(x):
        i = list(x).index(chosen)
        ax.plot([x[i]], [y[i]], "o", color="#cc0000", markersize=9, fillstyle="none",
                markeredgewidth=2)
        ax.annotate(f"{xlabel.split()[0]} = {chosen}", (x[i], y[i]), textcoords="offset points",
                    xytext=(6, 8), fontsize=9, color="#cc0000")
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_ylabel(curve.ylabel, fontsize=9)
    ax.grid(alpha=0.3)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.tick_params(labelsize=9)
    return _svg(fig, curve.salt)
