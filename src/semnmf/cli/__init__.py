"""The ``semnmf`` command line: one module per command, each parses its options, calls
the library and prints.

    semnmf cluster SOURCE -k K [options]   cluster a corpus, print and save the results
    semnmf tree SOURCE --leaves N          hierarchical clustering (HierNMF2): a topic tree
    semnmf bench [DATASET ...]             the papers' Table 2 and λ sweep, resumable
    semnmf datasets                        list the corpora that can be opened by name

``semnmf.cli:main`` is the console entry point; ``python -m semnmf`` runs it too.
"""

from .main import build_parser, main

__all__ = ["main", "build_parser"]
