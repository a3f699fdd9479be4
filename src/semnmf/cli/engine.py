"""``semnmf cluster --engine dask``: the options and checks of the Dask engine, whose run
is the library's (:func:`semnmf.workflows.dask.run_dask`; docs/guide/large-corpora.md).
"""

from ..workflows.dask import DASK_METHODS, ENGINES, check_dask
from .flags import CLI_WORDS


def add_engine_arguments(parser):
    group = parser.add_argument_group("engine (needs the [dask] extra for dask)")
    group.add_argument("--engine", choices=ENGINES,
                       help="local: fit in this process (default; the local engine, or "
                            "the torch engine with --device); dask: the blocked engine, "
                            "the updates over Dask workers by blocks of documents "
                            f"({', '.join(DASK_METHODS)})")
    group.add_argument("--workers", type=int, metavar="N",
                       help="with --engine dask: start a local cluster of N worker "
                            "processes (default 2)")
    group.add_argument("--scheduler", metavar="ADDRESS",
                       help="with --engine dask: the address of a running Dask scheduler "
                            "(tcp://host:8786) instead of a local cluster (default: none, "
                            "a local cluster of --workers)")


def check_engine_options(settings, command):
    """Refuse the engine options of ``command`` that cannot run ``settings``, before any
    data is read (:func:`~semnmf.workflows.dask.check_dask` and ``--report``)."""
    if command.engine == "local":
        if command.workers is not None or command.scheduler is not None:
            raise ValueError(f"{'--workers' if command.workers is not None else '--scheduler'} "
                             "applies to --engine dask; add --engine dask or drop it.")
        return
    if command.report:
        raise ValueError("--report runs on the local engine only; drop it or use "
                         "--engine local.")
    check_dask(settings, command.workers, command.scheduler, words=CLI_WORDS)


def run_dask(settings, command, started):
    """``semnmf cluster --engine dask``: the library's Dask run
    (:func:`semnmf.workflows.dask.run_dask`) of ``settings`` on ``command``'s workers."""
    from ..workflows.dask import run_dask as run

    return run(settings, workers=command.workers, scheduler=command.scheduler,
               started=started)
