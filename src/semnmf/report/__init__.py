"""Pictures and files of results (matplotlib, no pyplot global state): topic-tree pictures
(:mod:`.tree`), the result folders of ``semnmf cluster`` / ``semnmf tree``
(:mod:`.results`) and the HTML report of a run folder (:mod:`.html`: reading the folder,
:mod:`._reading`; what the page shows, :mod:`._page`; the Jinja2 templates, :mod:`._render`
and ``templates/``)."""

from .._utils.lazy import lazy_names

# loaded on first use: the command line checks an output folder (.output) before any
# heavy import
__getattr__, __dir__ = lazy_names(__name__, {
    "run_record": ".results", "write_assignments": ".results", "write_partitions": ".results",
    "write_results": ".results", "write_topics": ".results", "write_tree_results": ".results",
    "plot_tree": ".tree", "save_figure": ".tree"})

__all__ = ["plot_tree", "save_figure", "write_results", "write_tree_results",
           "write_assignments", "write_topics", "write_partitions", "run_record"]
