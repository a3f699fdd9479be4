"""The papers' experiments: Table 2's shared-start protocol, the published numbers, the λ
sweep, over the method registry (:mod:`semnmf.models.registry`).

``semnmf bench`` runs them from the command line; results are cached per run so an
interrupted benchmark resumes, and written as markdown with the published numbers.

The names below load on first use (PEP 562).
"""

from .._utils.lazy import lazy_names

_NAMES = {
    "PAPER": ".paper",
    "PROTOCOLS": ".protocol", "Contexts": ".protocol", "ResultCache": ".protocol",
    "run_dataset": ".protocol", "summarize": ".protocol",
    "LAMBDAS": ".sweep", "lambda_sweep": ".sweep", "plot_sweep": ".sweep",
    "table2_markdown": ".tables", "nmi_convention": ".tables",
}

__all__ = list(_NAMES)

__getattr__, __dir__ = lazy_names(__name__, _NAMES)
