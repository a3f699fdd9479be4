"""semnmf: document clustering with non-negative matrix factorization.

Semantic-NMF (NMF of the document-term matrix jointly with a word-context PPMI matrix),
its variants and baselines, topic trees, cluster ensembles, game-theoretic refinement, the
papers' metrics and protocols, and the ``semnmf`` command line.

The public names below load on first use (PEP 562), so ``import semnmf`` costs no
scikit-learn, numba or PyTorch import until a name is used.
"""

from ._utils.lazy import lazy_names

from ._utils.version import __version__

# public name -> module that defines it
_NAMES = {
    "Corpus": ".text.corpus",
    "ShardedCorpus": ".text.shards",
    "BlockedMatrix": "._utils.blocks",
    "word_context": ".text.context",
    "load_dataset": ".datasets",
    "list_datasets": ".datasets",
    "make_planted": ".datasets",
    "NMF": ".models.nmf",
    "SemanticNMF": ".models.semantic",
    "semantic_nmf": ".models.semantic",
    "non_negative_factorization": ".models.nmf",
    "SphericalKMeans": ".models.skmeans",
    "HierarchicalNMF": ".models.hierarchical",
    "ProjectiveNMF": ".models.pnmf",
    "SeNMF": ".models.senmf",
    "GNMF": ".models.gnmf",
    "SemanticGNMF": ".models.gnmf",
    "SymNMF": ".models.symnmf",
    "NMFS": ".models.symnmf",
    "DCN": ".models.deep",
    "GTNMF": ".refine.gtnmf",
    "consensus": ".ensemble.consensus",
    "mixture_consensus": ".ensemble.mixture",
    "ClusterEnsemble": ".ensemble.runs",
    "PretrainedSemanticNMF": ".pipelines.pretrained",
    "SavedModel": ".pipelines.saved",
    "save_model": ".pipelines.saved",
    "load_model": ".pipelines.saved",
    "nmi": ".metrics",
    "ari": ".metrics",
    "accuracy": ".metrics",
    "clustering_scores": ".metrics",
    "top_terms": ".metrics",
    "topic_coherence": ".metrics",
    "npmi_coherence": ".metrics",
    "topic_diversity": ".metrics",
    "topic_quality": ".metrics",
    "write_report": ".report.html",
    "cluster": ".workflows.cluster",
    "ClusterResult": ".workflows.result",
}

__all__ = [*_NAMES, "__version__"]

__getattr__, __dir__ = lazy_names(__name__, _NAMES)
