"""The one table from the library's parameter names to the command line's flags.

The library's errors name its parameters (``lam must be ...``); the command line names
its flags (``--lam must be ...``). :data:`FLAGS` says which flag sets which parameter,
:func:`flag` reads it for the command line's own messages, :data:`CLI_WORDS` words the
library's checks with it, and :func:`cli_message` turns a library error that starts with
a parameter name into the flag's message.

Standard library only (the parser loads this module).
"""

import re

from .._utils.words import Words

#: library parameter name -> the flag that sets it
FLAGS = {
    # estimators
    "n_components": "-k", "lam": "--lam", "lam_scale": "--lam-scale",
    "graph_lam": "--graph-lam", "loss": "--loss", "orthogonal": "--orthogonal",
    "init": "--init", "n_init": "--n-init", "max_iter": "--max-iter", "tol": "--tol",
    "random_state": "--seed", "dtype": "--dtype", "device": "--device",
    # the word-context matrix (Corpus.word_context)
    "context": "--context", "window": "--window", "association": "--association",
    "min_count": "--min-count", "top_k": "--top-k", "max_nnz": "--max-nnz",
    # reading and vectorizing (load_dataset, Corpus; not "vocabulary", which is also the
    # terms of a fitted model in the library's messages)
    "text_column": "--text-column", "label_column": "--label-column",
    "id_column": "--id-column",
    "encoding": "--encoding", "stop_words": "--language",
    "stop_words_file": "--stop-words", "token_pattern": "--token-pattern",
    "min_df": "--min-df", "max_df": "--max-df", "stem": "--stem",
    "weighting": "--weighting",
    # ensembles, refinement, pretrained semantics
    "consensus": "--consensus", "n_runs": "--runs", "n_keep": "--keep",
    "semantics": "--semantics", "embed": "--embed", "cache_dir": "--cache-dir",
    "partition": "--partition", "pooling": "--pooling",
    "min_cluster_size": "--min-cluster-size",
    # semnmf cluster's own
    "method": "--method", "refine": "--refine", "n_top": "--top",
    "seed_words": "--seed-words", "time_column": "--time-column",
    "time_period": "--time-period", "k": "-k", "engine": "--engine",
    "workers": "--workers", "scheduler": "--scheduler",
    # HierarchicalNMF (semnmf tree)
    "n_leaves": "--leaves", "splitter": "--splitter", "beta": "--beta",
    "n_trials": "--trials", "score_threshold": "--score-threshold", "stop": "--stop",
    "assign_labels": "--assign-labels",
}

#: the library's checks (:mod:`semnmf.workflows.checks`) in the command line's words
CLI_WORDS = Words({**FLAGS, "vocabulary": "--vocab"})

_LEADING_NAME = re.compile(r"^`?([a-z][a-z_]*)`?(?= )")
_LEADING_SETTING = re.compile(r"^([a-z][a-z_]*)=(\S+)(?= )")


def flag(name):
    """The flag of the library parameter ``name`` (``"lam"`` -> ``"--lam"``)."""
    return FLAGS[name]


def cli_message(message):
    """A library error as the command line says it: a message that starts with a
    parameter name (``"max_iter must be ..."``) starts with its flag instead
    (``"--max-iter must be ..."``); any other message is returned as it is."""
    setting = _LEADING_SETTING.match(message)
    if setting is not None and setting.group(1) in FLAGS:  # "window=5 has ..." of a warning
        return f"{FLAGS[setting.group(1)]} {setting.group(2)}" + message[setting.end():]
    match = _LEADING_NAME.match(message)
    if match is None or match.group(1) not in FLAGS:
        return message
    return FLAGS[match.group(1)] + message[match.end():]
