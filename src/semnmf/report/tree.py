"""A picture of a topic tree in which every node shows its size and top terms."""

import os

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


def plot_tree(model, vocabulary=None, n_terms=6, path=None, title=None):
    """Draw a fitted :class:`~semnmf.HierarchicalNMF` tree.

    Each node is a box with its id (or leaf label), number of documents, outliers set
    apart there, and its top ``n_terms`` terms on two lines; edges join parents to
    children. The figure grows with the number of leaves and the depth, so the terms stay
    readable (about 1.7 inches per leaf, 1.2 per level).

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
    fig = Figure(figsize=(max(6.0, 1.7 * n_leaves), max(2.5, 1.2 * levels + 0.6)))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_axis_off()
    for node in model.nodes_:
        for child in node.children:
            ax.plot([x[node.id], x[child]], [-depth[node.id], -depth[child]],
                    color="0.6", linewidth=0.8, zorder=1)
    for node in model.nodes_:
        words = [str(t) for t, _ in terms[node.id]]
        half = (len(words) + 1) // 2
        if node.id in label_of:
            head, colour = f"leaf {label_of[node.id]}", "#e8f1fb"
        else:
            head, colour = f"node {node.id}", "#f4f4f4"
        head += f" · {node.documents.size} docs"
        if node.outliers.size:
            head += f" (+{node.outliers.size} outliers)"
        text = f"{head}\n{' '.join(words[:half])}\n{' '.join(words[half:])}"
        ax.text(x[node.id], -depth[node.id], text, ha="center", va="center", fontsize=7,
                zorder=2, bbox=dict(boxstyle="round,pad=0.3", facecolor=colour,
                                    edgecolor="0.5", linewidth=0.6))
    ax.set_xlim(-0.6, n_leaves - 0.4)
    ax.set_ylim(-(levels - 1) - 0.5, 0.5)
    if title:
        ax.set_title(title, fontsize=10)
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
