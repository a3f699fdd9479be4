"""semnmf: document clustering with non-negative matrix factorization.

Semantic-NMF (NMF of the document-term matrix jointly with a word-context PPMI matrix),
plain NMF and spherical k-means, a text pipeline that builds both matrices, the papers'
metrics, and the ``semnmf`` command line.
"""

from importlib.metadata import PackageNotFoundError, version

from .datasets import list_datasets, load_dataset
from .metrics import accuracy, ari, clustering_scores, nmi, top_terms, topic_coherence
from .models import (GNMF, NMF, HierarchicalNMF, ProjectiveNMF, SemanticGNMF, SemanticNMF,
                     SeNMF, SphericalKMeans)
from .ensemble import consensus, mixture_consensus
from .refine import GTNMF
from .pipelines import PretrainedSemanticNMF
from .text.corpus import Corpus
from .text.context import word_context


def __getattr__(name):
    if name in ("SymNMF", "NMFS", "DCN"):  # imported on first use (numba kernels, PyTorch)
        from . import models

        return getattr(models, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


try:
    __version__ = version("semnmf")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+local"

__all__ = [
    "Corpus", "load_dataset", "list_datasets", "word_context",
    "NMF", "SemanticNMF", "SphericalKMeans", "HierarchicalNMF", "ProjectiveNMF", "SeNMF",
    "GNMF", "SemanticGNMF", "SymNMF", "NMFS", "DCN",
    "GTNMF", "consensus", "mixture_consensus", "PretrainedSemanticNMF",
    "nmi", "ari", "accuracy", "clustering_scores", "top_terms", "topic_coherence",
    "__version__",
]
