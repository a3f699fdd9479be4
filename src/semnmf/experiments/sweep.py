"""The λ sweep of the Neurocomputing paper's Figures 2 (PGLOVE) and 3 (PPMI).

NMI and ARI of Semantic-NMF as λ goes from 0 to 10³, per corpus and word-context
matrix, as mean over seeds. Our λ is the relative one (``lam_scale="relative"``, see
:func:`semnmf.models.semantic.effective_lambda`); the paper's absolute λ differs from it
by the corpus-dependent factor ‖X‖²/‖M‖², so the curves have the paper's shape but not
its λ axis.
"""

import os
import warnings

import numpy as np

from .._utils.io import atomic_write
from ..metrics import ari, nmi

LAMBDAS = (0, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000)


def lambda_sweep(X, y, k, M, lambdas=LAMBDAS, seeds=3, log=None, **params):
    """NMI and ARI over ``seeds`` runs for each λ: arrays of shape (len(lambdas), seeds)."""
    from ..models.semantic import SemanticNMF

    scores = np.zeros((2, len(lambdas), seeds))
    for i, lam in enumerate(lambdas):
        for seed in range(seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                labels = SemanticNMF(k, lam=lam, random_state=seed, **params).fit_predict(X, M=M)
            scores[:, i, seed] = nmi(y, labels), ari(y, labels)
        if log:
            log(f"λ={lam:g}: NMI {scores[0, i].mean():.3f}")
    return {"lambdas": list(map(float, lambdas)), "nmi": scores[0].tolist(),
            "ari": scores[1].tolist()}


def cached_sweeps(name, corpus, X, contexts, cache, *, seeds=3, lambdas=None, log=None):
    """The λ sweeps of one corpus with PPMI and with PGLOVE, read from ``cache`` when
    done with the same λ grid, else run (:func:`lambda_sweep`) and cached.

    ``contexts`` is the corpus' :class:`~semnmf.experiments.protocol.Contexts`;
    ``lambdas`` defaults to :data:`LAMBDAS`. Returns ``{"ppmi": sweep, "pglove": sweep}``.
    """
    lambdas = LAMBDAS if lambdas is None else lambdas
    results = {}
    for kind in ("ppmi", "pglove"):
        record = cache.get(name, "sweep", kind, seeds)
        if record is None or record["lambdas"] != list(map(float, lambdas)):
            if log:
                log(f"{name}: λ sweep with {kind} ...")
            record = lambda_sweep(X, corpus.labels, corpus.n_classes, contexts[kind], lambdas,
                                  seeds=seeds, log=log)
            cache.put(name, "sweep", kind, seeds, record)
        results[kind] = record
    return results


SWEEP_TITLES = {"ppmi": "SNMF (PPMI): NMI / ARI against λ (SN Figure 3)",
                "pglove": "SNMF (PGLOVE): NMI / ARI against λ (SN Figure 2)"}


def plot_sweep(results, path=None, title="Semantic-NMF: NMI and ARI against λ"):
    """One panel per (dataset, context): NMI and ARI (mean ± sd over seeds) against λ.

    ``results`` maps (dataset, context) to :func:`lambda_sweep`'s output. λ = 0 sits at
    the left end of a symmetric-log axis. Returns the matplotlib Figure; saved to
    ``path`` (PNG or SVG by extension) when given.
    """
    from matplotlib.figure import Figure

    keys = list(results)
    columns = min(4, max(1, len(keys)))
    rows = int(np.ceil(len(keys) / columns))
    fig = Figure(figsize=(3.6 * columns, 2.8 * rows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, columns, squeeze=False)).ravel()
    for ax, key in zip(axes, keys):
        sweep = results[key]
        lambdas = np.asarray(sweep["lambdas"])
        for metric, style in (("nmi", "o-"), ("ari", "s--")):
            values = np.asarray(sweep[metric])
            mean, sd = values.mean(axis=1), values.std(axis=1)
            ax.plot(lambdas, mean, style, label=metric.upper(), markersize=4)
            ax.fill_between(lambdas, mean - sd, mean + sd, alpha=0.2)
        positive = lambdas[lambdas > 0]
        ax.set_xscale("symlog", linthresh=positive.min() if positive.size else 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("λ (relative)")
        ax.set_title(" / ".join(map(str, key)) if isinstance(key, tuple) else str(key),
                     fontsize=9)
        ax.grid(alpha=0.3)
    for ax in axes[len(keys):]:
        ax.set_visible(False)
    axes[0].legend(fontsize=8)
    fig.suptitle(title)
    if path:
        atomic_write(path, lambda f: fig.savefig(
            f, format=os.path.splitext(path)[1].lstrip(".").lower() or "png", dpi=120),
            binary=True)
    return fig
