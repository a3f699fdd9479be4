"""Workflows: the command line's runs as library calls. :func:`cluster` is ``semnmf
cluster SOURCE -k K`` in one call, its :class:`ClusterResult` saves the run folder the
command line writes; the command line only parses its options, calls these and prints.
"""

from .cluster import cluster, run_cluster
from .result import ClusterResult, ClusterSettings

__all__ = ["cluster", "run_cluster", "ClusterResult", "ClusterSettings"]
