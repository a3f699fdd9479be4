"""The output folder of a run: never mixed with the files of an earlier run.

:func:`check_output_folder` refuses, before any work, a file or a folder holding an
earlier run's files (unless ``overwrite``); :func:`clear_output_folder` then removes that
run's known result files (:data:`RESULT_FILES`), no other, just before the new ones are
written, so that no stale file stays beside them.
"""

import os
import shutil
import tempfile

__all__ = ["RESULT_FILES", "check_output_folder", "clear_output_folder", "earlier_results"]

# Every file or folder a semnmf command writes into a result folder.
RESULT_FILES = ("assignments.csv", "topics.csv", "run.json", "partitions.csv", "tree.json",
                "tree.png", "tree.svg", "report.html", "model")


def earlier_results(path):
    """The result files of an earlier run found in folder ``path`` (sorted names), with the
    ``assigned_*`` folders that ``semnmf assign`` wrote there by default (their documents
    were assigned by the earlier run's model)."""
    if not os.path.isdir(path):
        return []
    found = [name for name in RESULT_FILES if os.path.lexists(os.path.join(path, name))]
    found += [name for name in os.listdir(path) if name.startswith("assigned_")
              and os.path.isfile(os.path.join(path, name, "run.json"))]
    return sorted(found)


def check_output_folder(path, overwrite=False, option="--out"):
    """Refuse an output folder that cannot be used (ValueError naming ``option``).

    ``path`` may be new, an empty folder, or a folder without result files; a folder with
    an earlier run's files is refused unless ``overwrite``; a file is always refused.
    """
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"{option} {path} is a file; {option} names a folder for the result "
                         "files (it is created if missing).")
    if os.path.isdir(path):  # (the saved-model module only for a folder that exists)
        from ..pipelines.saved import MODEL_FILE
    if os.path.isdir(path) and os.path.isfile(os.path.join(path, MODEL_FILE)):
        raise ValueError(f"{option} {path} is a saved model folder ({MODEL_FILE}): results "
                         f"written there would be mixed with the model; choose another "
                         f"{option}.")
    found = earlier_results(path)
    if found and not overwrite:
        raise ValueError(f"{option} {path} already holds the results of another run "
                         f"({', '.join(found)}); pass --overwrite to replace them, or choose "
                         f"another {option}.")
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise ValueError(f"{option} {path} cannot be created: {parent} is a file.")
    # a file made and removed where the results will go: permissions, a read-only or full
    # disk, an immutable folder are found now, not after the fit
    where = path if os.path.isdir(path) else parent
    try:
        with tempfile.TemporaryFile(dir=where):
            pass
    except OSError as exc:
        raise ValueError(f"{option} {path} cannot be written: {exc.strerror or exc} in "
                         f"{where}; choose another {option}.") from None


def clear_output_folder(path):
    """Remove the earlier run's result files (:data:`RESULT_FILES`) from folder ``path``."""
    for name in earlier_results(path):
        target = os.path.join(path, name)
        if os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target)
        else:
            os.unlink(target)
