"""Pictures and files of results (matplotlib, no pyplot global state): topic-tree pictures
(:mod:`.tree`), the result folders of ``semnmf cluster`` / ``semnmf tree``
(:mod:`.results`) and the HTML report of a run folder (:mod:`.html`: reading the folder,
:mod:`._reading`; what the page shows, :mod:`._page`; the Jinja2 templates, :mod:`._render`
and ``templates/``)."""

from .results import (run_record, write_assignments, write_partitions, write_results,
                      write_topics, write_tree_results)
from .tree import plot_tree, save_figure

__all__ = ["plot_tree", "save_figure", "write_results", "write_tree_results",
           "write_assignments", "write_topics", "write_partitions", "run_record"]
