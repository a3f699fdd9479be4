"""Estimators that chain several layers: pretrained semantics (text vectors, kNN graphs,
Semantic-GNMF, optional GTNMF refinement) behind one ``fit``."""

from .pretrained import PretrainedSemanticNMF

__all__ = ["PretrainedSemanticNMF"]
