"""Cluster ensembles: one consensus partition out of many (SN §5.6).

* :mod:`~semnmf.ensemble.consensus`: Strehl & Ghosh's hypergraph consensus functions
  (:func:`cspa`, :func:`hgpa`, :func:`mcla`), the ANMI criterion that picks among them
  (:func:`anmi`, :func:`consensus`), the partition that agrees most with the others
  (:func:`medoid`) and the diversity of an ensemble (:func:`pairwise_agreement`);
* :mod:`~semnmf.ensemble.mixture`: the latent class (multinomial mixture) consensus of
  Topchy, Jain & Punch with Rmixmod's parsimonious models and BIC selection
  (:class:`MultinomialMixture`, :func:`mixture_consensus`);
* :mod:`~semnmf.ensemble.runs`: the ensemble of runs of one estimator, its best runs kept
  by objective and combined (:class:`ClusterEnsemble`, :func:`combine`).

Every function takes an ``n_documents x n_partitions`` matrix of integer labels, one
column per partition, missing labels as ``-1`` or ``NaN``.
"""

from .consensus import (MISSING, ConsensusResult, anmi, consensus, cspa, hgpa,
                        hypergraph_incidence, mcla, medoid, pairwise_agreement)
from .mixture import MODELS, MultinomialMixture, mixture_consensus, n_parameters
from .runs import CONSENSUS_METHODS, ClusterEnsemble, cluster_means, combine, run_seeds

__all__ = [
    "MISSING", "ConsensusResult", "hypergraph_incidence", "cspa", "hgpa", "mcla", "anmi",
    "consensus", "pairwise_agreement", "medoid",
    "MODELS", "MultinomialMixture", "mixture_consensus", "n_parameters",
    "CONSENSUS_METHODS", "ClusterEnsemble", "combine", "cluster_means", "run_seeds",
]
