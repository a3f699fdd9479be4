"""``semnmf cluster``'s options: the library's settings of the run, and the command's own.

The parser writes each option given under the library's name
(:data:`semnmf.workflows.flags.FLAGS`); :func:`cluster_options` makes them the run's
:class:`~semnmf.workflows.ClusterSettings` and a :class:`ClusterCommand`, checked before
any data is read. Standard library only (the parser loads this module).
"""

import dataclasses
from dataclasses import dataclass

from ..workflows.result import ClusterSettings, arguments_record
from ._common import check_input_files
from .engine import check_engine_options
from .flags import CLI_WORDS

# what a run decided that run.json's cli_arguments records (the rest as given and filled)
RECORDED_CHOICES = ("k", "association", "top_k", "dtype")


@dataclass(frozen=True, kw_only=True)
class ClusterCommand:
    """What ``semnmf cluster`` takes beside the run's settings: the output options, the
    engine's (arguments of :func:`semnmf.cluster`, not settings), and ``k_label``, the
    name of ``-k``'s candidates in the default folder."""

    command: str = "cluster"
    out: str | None = None
    overwrite: bool = False
    quiet: bool = False
    report: bool = False
    engine: str = "local"
    workers: int | None = None
    scheduler: str | None = None
    k_label: str | None = None

    def folder_name(self, settings):
        """The default result folder: ``<source>_<method>_k<K>``."""
        from ..datasets import source_name

        return f"{source_name(settings.source)}_{settings.method}_k{settings.k or self.k_label}"

    def record(self, settings, chosen):
        """run.json's ``cli_arguments``: ``settings`` with what the run decided (``chosen``'s
        :data:`RECORDED_CHOICES`), as :func:`~semnmf.workflows.result.arguments_record`
        writes them, and these options."""
        decided = dataclasses.replace(
            settings, **{name: getattr(chosen, name) for name in RECORDED_CHOICES})
        own = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name != "k_label"}
        return {**arguments_record(decided), **own}


COMMAND_OPTIONS = tuple(f.name for f in dataclasses.fields(ClusterCommand)
                        if f.name != "k_label")


def default(name):
    """The default of setting ``name`` as the help shows it (:class:`ClusterSettings`')."""
    return ClusterSettings.__dataclass_fields__[name].default


def parse_k(text):
    """The ``-k`` of the command line: an int, ``"auto"``, a range ``"a:b"`` (every integer;
    ``"a:b:s"`` every s-th) or a list ``"5,10,20"``.

    Returns
    -------
    int, or ("auto", None), or ("grid", [k, ...])
    """
    text = str(text).strip().lower()
    if text == "auto":
        return ("auto", None)
    try:
        if ":" in text:
            parts = [int(p) for p in text.split(":")]
            if len(parts) not in (2, 3):
                raise ValueError
            step = parts[2] if len(parts) == 3 else 1
            if step < 1 or parts[0] < 1 or parts[1] < parts[0]:
                raise ValueError
            grid = list(range(parts[0], parts[1] + 1, step))
        elif "," in text:
            grid = sorted({int(p) for p in text.split(",") if p.strip()})
            if not grid or grid[0] < 1:
                raise ValueError
        else:
            return int(text)
    except ValueError:
        raise ValueError(f"-k must be a number of clusters (e.g. 5), auto, a range a:b "
                         f"(e.g. 2:40) or a list (e.g. 5,10,20), got {text!r}.") from None
    return ("grid", grid)


def method_name(method, semantics, source=None, engine="local", given=()):
    """``(method, reason)``: ``--method``, else the default for the source
    (:func:`semnmf.workflows.cluster.default_method`), with why."""
    from ..workflows.cluster import resolve_method

    return resolve_method(method, semantics, source, engine, given)


def _k_fields(value):
    """``-k`` as the settings hold it (k, k_candidates), and its ``k_label``."""
    if isinstance(value, int):
        return {"k": value}, None
    kind, grid = value
    if kind == "grid" and len(grid) == 1:
        return {"k": grid[0]}, None
    if kind == "grid" and grid[0] < 2:
        shown = ", ".join(map(str, grid[:4])) + (", ..." if len(grid) > 4 else "")
        raise ValueError(f"-k: the candidates must be at least 2 (one cluster needs no "
                         f"choice); got {shown}.")
    if kind == "auto":
        return {"k": None, "k_candidates": "auto"}, "auto"
    return {"k": None, "k_candidates": tuple(grid)}, f"{grid[0]}-{grid[-1]}"


def cluster_options(args):
    """``(settings, command)`` of the parsed command line ``args`` (the options given, under
    the library's names): the run's :class:`~semnmf.workflows.ClusterSettings`, checked
    and filled, and its :class:`ClusterCommand`."""
    from ..workflows.checks import check_settings, semantics_source
    from ..workflows.cluster import asked_for
    from ..workflows.inputs import context_defaults
    from ..workflows.result import method_defaults
    from ..workflows.semantics import plan_semantics

    given = dict(vars(args))
    if "k" not in given and "min_cluster_size" not in given:
        raise ValueError("-k is required: a number of clusters, auto, a range 2:40 or a list "
                         "5,10,20 (or give --min-cluster-size N, which implies -k auto).")
    k = given.pop("k", "auto")
    command = ClusterCommand(**{name: given.pop(name) for name in COMMAND_OPTIONS
                                if name in given})
    if "semantics" in given:
        given["semantics"] = semantics_source(given["semantics"], CLI_WORDS)
    given["method"], given["method_reason"] = method_name(
        given.get("method"), given.get("semantics", "auto"), given.get("source"),
        command.engine, asked_for(given))
    k_fields, k_label = _k_fields(parse_k(k) if isinstance(k, str) else k)
    command = dataclasses.replace(command, k_label=k_label)
    settings = ClusterSettings(**given, **k_fields, verbose=int(not command.quiet))
    check_input_files(settings)
    check_settings(settings, CLI_WORDS)
    settings = plan_semantics(settings, command.engine, CLI_WORDS)
    check_engine_options(settings, command)
    # the word-context settings are recorded with their defaults for every method
    return dataclasses.replace(settings, **{**method_defaults(settings),
                                            **context_defaults(settings)}), command
