"""Progress display for slow steps (rich progress bars on stderr, off by default)."""

import contextlib
import sys

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)

_console = Console(stderr=True)


class _NullTask:
    def advance(self, n=1, **fields):
        pass

    def update(self, **fields):
        pass


class _Task:
    def __init__(self, progress, task_id):
        self._progress = progress
        self._id = task_id

    def advance(self, n=1, **fields):
        self._progress.update(self._id, advance=n, **fields)

    def update(self, **fields):
        self._progress.update(self._id, **fields)


@contextlib.contextmanager
def progress(description, total=None, enabled=True, status=""):
    """Context manager yielding a task with ``advance(n, status=...)``.

    Does nothing (and costs nothing) when ``enabled`` is false; bars are drawn on stderr
    only, so stdout stays clean for results and pipes.
    """
    if not enabled:
        yield _NullTask()
        return
    columns = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.fields[status]}")]
    with Progress(*columns, console=_console, transient=False,
                  disable=not sys.stderr) as bar:
        task_id = bar.add_task(description, total=total, status=status)
        yield _Task(bar, task_id)


def log(message, enabled=True):
    """Print a one-line status message on stderr."""
    if enabled:
        _console.print(message, highlight=False)
