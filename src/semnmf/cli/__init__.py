"""The ``semnmf`` command line: one module per command (cluster, tree, assign, edit,
report, bench, datasets), each parses its options, calls the library and prints.
``semnmf.cli:main`` is the console entry point; ``python -m semnmf`` runs it too.
"""

from .main import build_parser, main

__all__ = ["main", "build_parser"]
