"""``semnmf edit``: a new run folder from a saved run with its clusters merged, split,
dropped or renamed and stop words removed from its topics (:mod:`semnmf.pipelines.edit`),
without refitting; run.json lists the edits, which ``replay`` applies to another run of
the same corpus (docs/guide/editing.md).
"""

import json
import os
import time
from dataclasses import dataclass, field

import numpy as np


@dataclass
class EditResult:
    """An edited run: its labels, strengths, model, record and folder."""

    labels: np.ndarray
    strengths: np.ndarray
    model: object
    record: dict
    folder: str
    scores: dict | None = None
    files: list = field(default_factory=list)


def _recorded_edits(replay):
    """The edits recorded in a run folder's run.json (or a JSON file of them)."""
    path = os.path.join(replay, "run.json") if os.path.isdir(replay) else replay
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except FileNotFoundError:
        raise ValueError(f"replay {replay}: no run folder (run.json) or JSON file of edits "
                         "there.") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} is not readable JSON: {' '.join(str(exc).split())}") from None
    edits = record.get("edits") if isinstance(record, dict) else record
    if not edits:
        raise ValueError(f"{replay} records no edits to replay.")
    return edits


def _run_documents(run, run_record, saved):
    """The run's corpus (re-read from its source) and its X over the saved vocabulary."""
    from ..report._reading import find_corpus

    corpus, note = find_corpus(run_record)
    if corpus is None:
        raise ValueError(f"cannot edit {run}: its corpus cannot be read again ({note}).")
    return corpus, saved.vectorize(corpus)


def _level_steps(run, record, level):
    """The recorded steps of level ``level`` of a run (run.json ``levels``)."""
    levels = {int(entry["k"]): entry.get("steps", []) for entry in record.get("levels") or []}
    if not levels:
        raise ValueError(f"{run} has no levels: they are made by semnmf cluster -k auto "
                         "(or --min-cluster-size).")
    if int(level) not in levels:
        raise ValueError(f"--level {level}: {run} has levels k = "
                         f"{', '.join(map(str, sorted(levels)))}.")
    return levels[int(level)]


def edit_run(run, out, *, merge=(), split=(), drop=(), rename=None, stop_words=(),
             stop_words_file=None, replay=None, level=None, overwrite=False,
             random_state=0):
    """Edit the saved run folder ``run`` and write the edited run to ``out``.

    ``merge``: groups of cluster numbers to merge (``[[3, 7]]``); ``split``, ``drop``:
    cluster numbers; ``rename``: ``{cluster: name}``; ``stop_words`` (and the words of
    ``stop_words_file``, one per line): terms removed from every topic; ``replay``: a run
    folder (or JSON file) whose recorded edits are applied instead; ``level``: a k of the
    run's levels, applied first so that the level's clusters become the run's (numbers
    are then the level's). Returns an :class:`EditResult`."""
    from ..metrics import clustering_scores
    from ..pipelines.edit import Edits, apply_edits, replay_edits
    from ..pipelines.saved import load_model
    from ..report._reading import read_run
    from ..report.output import check_output_folder
    from .inputs import read_stop_words

    run = os.fspath(run)
    check_output_folder(out, overwrite=overwrite, option="out")
    if os.path.abspath(out) == os.path.abspath(run):
        raise ValueError("the edited run is written to a new folder: give another --out.")
    run_record = read_run(run)
    saved = load_model(run)
    words = list(stop_words) + (read_stop_words(stop_words_file) if stop_words_file else [])
    edits = Edits(merge=[list(map(int, g)) for g in merge], split=list(map(int, split)),
                  drop=list(map(int, drop)), rename={int(c): str(n) for c, n in
                                                     (rename or {}).items()},
                  stop_words=words)
    steps = None if level is None else _level_steps(run, run_record.run, level)
    if replay is None and steps is None and not (edits.clusters() or edits.stop_words):
        raise ValueError("nothing to edit: give --merge, --split, --drop, --rename, "
                         "--stop-words, --level or --replay.")
    corpus, X = _run_documents(run, run_record, saved)
    if steps is not None:
        from ..pipelines.levels import apply_level

        seed = (run_record.run.get("cli_arguments") or {}).get("seed", 0)
        saved = apply_level(saved, steps, X, random_state=int(seed or 0))
        if replay is None and not (edits.clusters() or edits.stop_words):
            edits = None
    if edits is None:
        edited = saved
    elif replay is not None:
        edited = replay_edits(saved, _recorded_edits(replay), X=X, random_state=random_state)
    else:
        edited = apply_edits(saved, edits, X=X, random_state=random_state)
    new_labels, strengths = edited.assign_matrix(X)
    scores = (clustering_scores(corpus.labels, new_labels)
              if corpus.labels is not None else None)
    new_record = {key: value for key, value in run_record.run.items()
                  if key not in ("levels", "k_range", "k_recommended")}  # of the input run
    new_record.update({"edited_from": os.path.abspath(run), "edits": edited.edits or [],
                       "cluster_names": edited.names, "n_clusters": edited.n_clusters,
                       "scores": scores, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
    if level is not None:
        new_record["level"] = int(level)
    result = EditResult(labels=new_labels, strengths=strengths, model=edited,
                        record=new_record, folder=os.fspath(out), scores=scores)
    result.files = _write(out, corpus, result)
    return result


def _write(out, corpus, result):
    from .._utils.io import write_json
    from ..report.results import write_assignments, write_topics
    from .result import staged_folder

    def write(folder):
        write_assignments(os.path.join(folder, "assignments.csv"), corpus.ids, result.labels,
                          corpus.labels, result.strengths)
        write_topics(os.path.join(folder, "topics.csv"), result.model.topics,
                     result.model.vectorizer.vocabulary)
        write_json(os.path.join(folder, "run.json"), result.record)
        result.model.save(os.path.join(folder, "model"))
        return ["assignments.csv", "topics.csv", "run.json", "model/"]

    return staged_folder(out, write)
