"""Estimators that chain several layers: pretrained semantics (text vectors, kNN graphs,
Semantic-GNMF, optional GTNMF refinement) behind one ``fit``."""

from .._utils.lazy import lazy_names

# loaded on first use (a saved model's file name is read before any heavy import)
__getattr__, __dir__ = lazy_names(__name__, {"PretrainedSemanticNMF": ".pretrained"})

__all__ = ["PretrainedSemanticNMF"]
