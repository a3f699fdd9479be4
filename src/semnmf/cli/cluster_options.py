"""``semnmf cluster``'s options: the one frozen object a run is made from.

:func:`cluster_options` reads the parsed command line once: it resolves the method and
``-k``, refuses what cannot work (the library's own checks,
:func:`semnmf.workflows.checks.check_settings`, in the flags' words: one line naming the
option, before any data is read) and fills in every default. The parser leaves out the
options not given (``argparse.SUPPRESS``), so the defaults are written here only: the
field defaults of :class:`ClusterOptions` and, for the options whose default depends on
the method, :func:`_method_defaults`.

Standard library only (the parser loads this module).
"""

import dataclasses
from dataclasses import dataclass

from ..experiments.methods import CLI_METHODS, DEFAULT_CLI_METHOD
from ..workflows.checks import CONTEXT_NAMES
from ..workflows.result import OPTION_NAMES
from ._common import (ContextOptions, OutputOptions, ReadOptions, VectorizeOptions,
                      check_input_files, context_defaults, options_record)
from .engine import check_engine_options
from .flags import CLI_WORDS


@dataclass(frozen=True, kw_only=True)
class ClusterOptions(ReadOptions, VectorizeOptions, ContextOptions, OutputOptions):
    """Every option of one ``semnmf cluster`` run, defaults filled in.

    ``k`` is the number of clusters, or None while ``k_candidates`` (``"auto"`` or the
    candidates of ``-k a:b`` / ``-k a,b,c``) holds a label-free choice to make;
    ``k_label`` names the candidates in the default folder name. An option that does
    not apply to the method stays None.
    """

    command: str = "cluster"
    k: int | None = None
    k_candidates: str | tuple | None = None
    k_label: str | None = None
    min_cluster_size: int | None = None
    method: str = DEFAULT_CLI_METHOD
    loss: str | None = None
    orthogonal: bool = False
    lam: float | None = None
    lam_scale: str | None = None
    graph_lam: float | None = None
    init: str | None = None
    n_init: int | None = None
    max_iter: int = 200
    tol: float = 1e-4
    seed: int = 0
    dtype: str | None = None
    semantics: str = "auto"
    semantics_reason: str | None = None
    embed: str | None = None
    pooling: str | None = None
    partition: str | None = None
    cache_dir: str | None = None
    consensus: str | None = None
    runs: int | None = None
    keep: int | None = None
    refine: str | None = None
    engine: str = "local"
    workers: int | None = None
    scheduler: str | None = None
    report: bool = False
    seed_words: str | None = None
    time_column: str | None = None
    time_period: str = "auto"
    device: str = "cpu"
    method_reason: str | None = None

    @property
    def spec(self):
        """The method's registry entry (:class:`semnmf.experiments.methods.Method`)."""
        return CLI_METHODS[self.method]

    @property
    def folder_name(self):
        """The default result folder: ``<source>_<method>_k<K>``."""
        from ._common import source_name

        return f"{source_name(self.source)}_{self.method}_k{self.k or self.k_label}"

    def record(self):
        """run.json's ``cli_arguments``."""
        return options_record(self, drop=("window_given", "k_label"))

    def settings(self):
        """The library's :class:`~semnmf.workflows.ClusterSettings` of these options (the
        same run, under the library's names)."""
        from ..workflows.result import ClusterSettings

        given = {name: getattr(self, OPTION_NAMES.get(name, name))
                 for name in ClusterSettings.__dataclass_fields__
                 if name not in ("labels", "verbose")}
        return ClusterSettings(**given, verbose=int(self.verbose))

    def with_choices(self, settings):
        """These options with what the run chose (k, the association and top_k of M, the
        dtype), as run.json's ``cli_arguments`` records them."""
        return dataclasses.replace(self, k=settings.k, association=settings.association,
                                   top_k=settings.top_k, dtype=settings.dtype)


# the library's names of the options named otherwise (the inverse of OPTION_NAMES)
OPTION_SETTINGS = {flag: name for name, flag in OPTION_NAMES.items()}

DEFAULTS = ClusterOptions(source="")


def default(name):
    """The default of option ``name`` as the help shows it."""
    return getattr(DEFAULTS, name)


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
    """``(method, reason)``: ``--method`` (a name of 0.1 warns), else the default for the
    source, chosen before reading it (:func:`semnmf.workflows.cluster.default_method`:
    snmf-robust with raw text, kl-consensus for counts only, the papers' snmf with
    ``--semantics``), with why."""
    from ..workflows.cluster import resolve_method

    return resolve_method(method, semantics, source, engine, given, option="--method",
                          quote=False)


def _k_fields(value):
    """``-k`` as the options hold it: k, k_candidates, k_label."""
    if isinstance(value, int):
        return {"k": value}
    kind, grid = value
    if kind == "grid" and len(grid) == 1:
        return {"k": grid[0]}
    if kind == "grid" and grid[0] < 2:
        shown = ", ".join(map(str, grid[:4])) + (", ..." if len(grid) > 4 else "")
        raise ValueError(f"-k: the candidates must be at least 2 (one cluster needs no "
                         f"choice); got {shown}.")
    if kind == "auto":
        return {"k": None, "k_candidates": "auto", "k_label": "auto"}
    return {"k": None, "k_candidates": tuple(grid), "k_label": f"{grid[0]}-{grid[-1]}"}


def cluster_options(args):
    """The :class:`ClusterOptions` of the parsed command line ``args`` (an
    ``argparse.Namespace`` holding the options given only), checked and filled: the
    library's checks (:func:`semnmf.workflows.checks.check_settings`) in the command
    line's words, and the command line's own (the input files, the engine, ``--report``)."""
    from ..workflows.checks import check_settings, semantics_source
    from ..workflows.cluster import asked_for
    from ..workflows.semantics import plan_semantics

    given = dict(vars(args))
    if "k" not in given and "min_cluster_size" not in given:
        raise ValueError("-k is required: a number of clusters, auto, a range 2:40 or a list "
                         "5,10,20 (or give --min-cluster-size N, which implies -k auto).")
    k = given.pop("k", "auto")
    if "semantics" in given:
        given["semantics"] = semantics_source(given["semantics"], CLI_WORDS)
    given["method"], given["method_reason"] = method_name(
        given.get("method"), given.get("semantics", "auto"), given.get("source"),
        given.get("engine", "local"),
        asked_for({OPTION_SETTINGS.get(n, n): v for n, v in given.items()}))
    options = ClusterOptions(**given, **_k_fields(parse_k(k) if isinstance(k, str) else k))
    check_input_files(options)
    check_settings(options.settings(), CLI_WORDS)
    planned = plan_semantics(options.settings(), options.engine, CLI_WORDS)
    options = dataclasses.replace(options, semantics=planned.semantics,
                                  semantics_reason=planned.semantics_reason)
    check_engine_options(options)
    return dataclasses.replace(options, **_method_defaults(options))


def _method_defaults(options):
    """The defaults that depend on the method (those of the options that apply to it, as
    the run record shows them: :func:`semnmf.workflows.cluster.method_defaults`) and those
    of the word-context options."""
    from ..workflows.result import method_defaults

    filled = method_defaults(options.settings())
    filled = {OPTION_NAMES.get(name, name): value for name, value in filled.items()
              if name not in CONTEXT_NAMES + ("window_given",)}
    return {**filled, **context_defaults(options)}
