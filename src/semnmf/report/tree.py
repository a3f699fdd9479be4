"""A picture of a topic tree in which every node shows its size and top terms."""

import functools
import os
import warnings

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._utils.io import atomic_write


def _layout(model):
    """(x, depth) of every node: leaves evenly spaced in depth-first order, each internal
    node centred above its children."""
    x, depth = {}, {}
    next_leaf = [0]

    def place(node_id, level):
        node = model.nodes_[node_id]
        depth[node_id] = level
        if not node.children:
            x[node_id] = float(next_leaf[0])
            next_leaf[0] += 1
            return
        for child in node.children:
            place(child, level + 1)
        x[node_id] = float(np.mean([x[c] for c in node.children]))

    place(0, 0)
    return x, depth


# The tree picture's width: 1.7 inches per leaf, at most MAX_WIDTH inches (at 150 dpi,
# 2,925 px); a wider tree draws every second leaf half a level lower, so that each leaf's
# box may take two leaves' room, and shrinks its words only below that.
LEAF_WIDTH, MAX_WIDTH = 1.7, 19.5


def _sizes(n_leaves):
    """(width in inches, stagger, font size) of a tree picture of ``n_leaves`` leaves."""
    width = min(max(6.0, LEAF_WIDTH * n_leaves), MAX_WIDTH)
    room = width / n_leaves
    if room >= LEAF_WIDTH:
        return width, False, 7.0
    return width, True, max(4.5, min(7.0, 7.0 * 2 * room / LEAF_WIDTH))


# Drawn for a character that no installed font has: the "tofu" box matplotlib would
# draw, without its warning for every such character at every save.
MISSING_GLYPH = "\u25a1"


@functools.lru_cache(maxsize=None)
def _charmap(path):
    """The code points of a font file (empty when the file cannot be read)."""
    from matplotlib.ft2font import FT2Font

    try:
        return frozenset(FT2Font(path).get_charmap())
    except (OSError, RuntimeError, ValueError):
        return frozenset()


@functools.lru_cache(maxsize=32)
def _fallback_fonts(missing):
    """(installed font families that have the code points ``missing``, in the order
    they are needed; the code points none has). "Last Resort" fonts, which draw a
    placeholder for every code point, do not count."""
    from matplotlib import font_manager

    families, seen, left = [], set(), set(missing)
    for entry in font_manager.fontManager.ttflist:
        if not left:
            break
        if entry.name in seen or entry.name.startswith("Last Resort"):
            continue
        seen.add(entry.name)
        # the file matplotlib draws the family with: two files of one family name (a
        # system DejaVu Sans beside matplotlib's own) may cover different characters
        drawn = font_manager.findfont(font_manager.FontProperties(family=entry.name),
                                      fallback_to_default=False)
        covered = left & _charmap(drawn)
        if covered:
            families.append(entry.name)
            left -= covered
    return tuple(families), frozenset(left)


def text_fonts(texts):
    """Font families for drawing ``texts`` with matplotlib, and the characters no
    installed font has.

    The default families followed by the installed fonts that have the characters the
    default font lacks (matplotlib falls back glyph by glyph), e.g. a CJK font.

    Returns
    -------
    families : list of str
    missing : frozenset of str
        Characters that no installed font has; :func:`plot_tree` draws them as
        :data:`MISSING_GLYPH` and says so once.
    """
    from matplotlib import font_manager, rcParams

    default = list(rcParams["font.family"])
    used = {ord(c) for text in texts for c in text if not c.isspace()}
    lacking = used - _charmap(font_manager.findfont(font_manager.FontProperties(
        family=default)))
    if not lacking:
        return default, frozenset()
    extra, missing = _fallback_fonts(frozenset(lacking))
    return default + list(extra), frozenset(chr(c) for c in missing)


def plot_tree(model, vocabulary=None, n_terms=6, path=None, title=None):
    """Draw a fitted :class:`~semnmf.HierarchicalNMF` tree.

    Each node is a box with its id (or leaf label), number of documents, outliers and top
    ``n_terms`` terms; the figure grows with the tree up to :data:`MAX_WIDTH` inches.

    Parameters
    ----------
    model : fitted HierarchicalNMF
    vocabulary : sequence of str or None
    n_terms : int, default=6
    path : str, path-like, or sequence of them, optional
        File(s) to save the picture to; the format follows the extension (.png, .svg,
        .pdf). PNG is written at 150 dpi.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    check_is_fitted(model, "nodes_")
    x, depth = _layout(model)
    terms = model.top_terms(n_terms, vocabulary, nodes=range(len(model.nodes_)))
    label_of = {node_id: label for label, node_id in enumerate(model.leaves_)}
    n_leaves = max(1, len(model.leaves_))
    levels = max(depth.values()) + 1
    words_of = {node.id: [str(t) for t, _ in terms[node.id]] for node in model.nodes_}
    families, missing = text_fonts([w for words in words_of.values() for w in words]
                                   + [title or ""])
    if missing:
        shown = "".join(sorted(missing)[:8])
        warnings.warn(f"{len(missing)} character(s) of the topic words ({shown}"
                      f"{' ...' if len(missing) > 8 else ''}) are in no installed font: the "
                      "tree picture shows them as boxes (tree.json has the words). Install "
                      "a font that has them, e.g. Noto Sans CJK for Chinese, Japanese or "
                      "Korean.", UserWarning, stacklevel=2)
        boxes = {ord(c): MISSING_GLYPH for c in missing}
        words_of = {i: [w.translate(boxes) for w in words] for i, words in words_of.items()}
        title = title and title.translate(boxes)
    width, stagger, fontsize = _sizes(n_leaves)
    drop = 0.5 if stagger else 0.0
    fig = Figure(figsize=(width, max(2.5, 1.2 * (levels + drop) + 0.6)))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_axis_off()
    # a staggered leaf (every second one) is drawn half a level lower
    y = {node.id: -depth[node.id] - (drop if not node.children and int(x[node.id]) % 2 else 0)
         for node in model.nodes_}
    for node in model.nodes_:
        for child in node.children:
            ax.plot([x[node.id], x[child]], [y[node.id], y[child]],
                    color="0.6", linewidth=0.8, zorder=1)
    for node in model.nodes_:
        words = words_of[node.id]
        if node.id in label_of:
            head, colour = f"leaf {label_of[node.id]}", "#e8f1fb"
        else:
            head, colour = f"node {node.id}", "#f4f4f4"
        head += f" · {node.documents.size} docs"
        if node.outliers.size:
            head += f" (+{node.outliers.size} outliers)"
        n_lines = 3 if stagger else 2
        per = max(1, -(-len(words) // n_lines))
        lines = [" ".join(words[i * per:(i + 1) * per]) for i in range(n_lines)]
        text = "\n".join([head] + lines)
        ax.text(x[node.id], y[node.id], text, ha="center", va="center", fontsize=fontsize,
                fontfamily=families, zorder=2,
                bbox=dict(boxstyle="round,pad=0.3", facecolor=colour, edgecolor="0.5",
                          linewidth=0.6))
    ax.set_xlim(-0.6, n_leaves - 0.4)
    ax.set_ylim(-(levels - 1) - 0.5 - drop, 0.5)
    if title:
        ax.set_title(title, fontsize=10, fontfamily=families)
    fig.tight_layout()
    if path is not None:
        for target in ([path] if isinstance(path, (str, bytes)) or hasattr(path, "__fspath__") else path):
            save_figure(fig, target)
    return fig


def save_figure(fig, path, dpi=150):
    """Save ``fig`` to ``path`` atomically, in the format of its extension (png, svg,
    pdf, ...)."""
    path = os.fsdecode(os.fspath(path))
    fmt = os.path.splitext(path)[1].lstrip(".").lower() or "png"
    atomic_write(path, lambda f: fig.savefig(f, format=fmt, dpi=dpi), binary=True)
