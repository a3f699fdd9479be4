"""Messages and progress of slow steps.

Library code never prints: it logs through the ``"semnmf"`` logger (:data:`logger`) and
draws progress bars (rich, on stderr) only when asked. :func:`log` is the one call for a
status line: with ``enabled`` (an estimator's ``verbose``) at INFO and shown on stderr even
without logging configured, otherwise at DEBUG.
"""

import contextlib
import logging
import sys
import time

logger = logging.getLogger("semnmf")

_console = None

# The width of a console whose output is not a terminal (a file, a pipe): lines are never
# cut or wrapped there (rich would otherwise cut them at 80 columns).
UNBOUNDED_WIDTH = 10_000


def _is_terminal(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or stream-less replacement
        return False


def console_options(stream):
    """Console options for ``stream``: none on a terminal (its own width); elsewhere an
    unbounded width and no wrapping, so that redirected output keeps whole lines."""
    if _is_terminal(stream):
        return {}
    return {"width": UNBOUNDED_WIDTH, "soft_wrap": True}


def _stderr_console():
    global _console
    if _console is None:
        from rich.console import Console

        _console = Console(stderr=True, **console_options(sys.stderr))
    return _console


def stdout_console():
    """A console on stdout (the command line's results), lines whole when redirected."""
    from rich.console import Console

    return Console(**console_options(sys.stdout))


class _RichStderrHandler(logging.Handler):
    """One line per record on stderr; rich markup ("[yellow]...[/]") rendered only in the
    records logged with ``markup=True`` (other text, "semnmf[embeddings]" say, is shown as
    written)."""

    def emit(self, record):
        try:
            _stderr_console().print(self.format(record), highlight=False,
                                    markup=getattr(record, "markup", False))
        except Exception:  # a logging handler must never raise
            self.handleError(record)


_handler = None


def _ensure_handler():
    """Attach the stderr handler once, unless the application gave the "semnmf" logger
    handlers of its own (then those show the messages)."""
    global _handler
    if _handler is not None or logger.handlers:
        return
    _handler = _RichStderrHandler(logging.INFO)
    logger.addHandler(_handler)
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.INFO)


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
def timed(timings, name):
    """Set ``timings[name]`` to the seconds the block took (nothing when it raises)."""
    start = time.perf_counter()
    yield
    timings[name] = time.perf_counter() - start


@contextlib.contextmanager
def progress(description, total=None, enabled=True, status=""):
    """Context manager yielding a task with ``advance(n, status=...)``.

    Does nothing (and costs nothing) when ``enabled`` is false; bars are drawn on stderr
    only, so stdout stays clean for results and pipes. A loop that ends early (a fit that
    converges before ``total`` iterations) leaves a finished bar, its total set to the
    steps done, never one stopped short of its total that looks hung.
    """
    if not enabled:
        yield _NullTask()
        return
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    columns = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.fields[status]}")]
    with Progress(*columns, console=_stderr_console(), transient=False,
                  disable=not sys.stderr) as bar:
        task_id = bar.add_task(description, total=total, status=status)
        yield _Task(bar, task_id)
        _finish(bar, task_id)


def _finish(bar, task_id):
    """Mark a task done: a total not reached (an early stop) becomes the steps done."""
    for task in bar.tasks:
        if task.id == task_id and (task.total is None or task.completed < task.total):
            bar.update(task_id, total=max(task.completed, 1), completed=max(task.completed, 1))


def log(message, enabled=True, markup=False):
    """Log a one-line status message: INFO, shown on stderr, when ``enabled``; else DEBUG.
    ``markup``: the message holds rich markup to render (escape the data it quotes)."""
    if enabled:
        _ensure_handler()
        logger.info(message, extra={"markup": markup})
    else:
        logger.debug(message, extra={"markup": markup})
