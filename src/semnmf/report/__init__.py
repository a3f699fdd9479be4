"""Pictures of results (matplotlib, no pyplot global state)."""

from .tree import plot_tree

__all__ = ["plot_tree"]
