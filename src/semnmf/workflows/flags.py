"""The command line's names of the library's settings: one table, :data:`FLAGS`, for the
command line's messages (:mod:`semnmf.cli.flags`) and for run.json's ``cli_arguments``
(:func:`recorded_name`), which a run made in Python writes too. Standard library only.
"""

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
    # terms of a fitted model in the library's messages: see CLI_FLAGS)
    "text_column": "--text-column", "label_column": "--label-column",
    "id_column": "--id-column", "delimiter": "--delimiter", "on_bad_lines": "--on-bad-lines",
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
    "time_period": "--time-period", "date_format": "--date-format", "k": "-k", "engine": "--engine",
    "workers": "--workers", "scheduler": "--scheduler",
    # HierarchicalNMF (semnmf tree)
    "n_leaves": "--leaves", "splitter": "--splitter", "beta": "--beta",
    "n_trials": "--trials", "score_threshold": "--score-threshold", "stop": "--stop",
    "assign_labels": "--assign-labels",
}

#: every flag of a setting: :data:`FLAGS` and ``--vocab`` (the command line's checks say
#: it; the library's messages about a model's vocabulary are not turned into it)
CLI_FLAGS = {**FLAGS, "vocabulary": "--vocab"}


def recorded_name(name):
    """The key of setting ``name`` in run.json's ``cli_arguments``: its flag's word
    (``random_state``: ``seed``, ``n_runs``: ``runs``, ``n_top``: ``top``, ``stop_words``:
    ``language``, ``vocabulary``: ``vocab``), or ``name`` itself where no flag sets it.
    ``stop_words_file`` keeps its name (``stop_words`` would read as the list itself)."""
    if name == "stop_words_file" or name not in CLI_FLAGS:
        return name
    return CLI_FLAGS[name].lstrip("-").replace("-", "_")
