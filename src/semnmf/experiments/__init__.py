"""The papers' experiments: Table 2's methods, the shared-start protocol, the λ sweep.

``semnmf bench`` runs them from the command line; results are cached per run so an
interrupted benchmark resumes, and written as markdown with the published numbers.
"""

from .methods import METHODS, TABLE2_ORDER, Method, get_method
from .paper import PAPER
from .protocol import PROTOCOLS, Contexts, ResultCache, run_dataset, summarize
from .sweep import LAMBDAS, lambda_sweep, plot_sweep
from .tables import table2_markdown

__all__ = ["METHODS", "TABLE2_ORDER", "Method", "get_method", "PAPER", "PROTOCOLS",
           "Contexts", "ResultCache", "run_dataset", "summarize", "LAMBDAS", "lambda_sweep",
           "plot_sweep", "table2_markdown"]
