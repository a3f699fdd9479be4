"""Workflows: the command line's runs as library calls (floor 8, between the experiments
and report units and the command line).

:func:`cluster` is ``semnmf cluster SOURCE -k K`` in one call: it reads the source (or
takes a matrix), chooses k when asked, builds the word-context matrix, fits the method
(alone, as a consensus, refined), describes the clusters and returns a
:class:`ClusterResult`, whose :meth:`~ClusterResult.save` writes the run folder the
command line writes and :meth:`~ClusterResult.report` its HTML report. The command line
only parses its options, calls these functions and prints.
"""

from .cluster import cluster, run_cluster
from .result import ClusterResult, ClusterSettings

__all__ = ["cluster", "run_cluster", "ClusterResult", "ClusterSettings"]
