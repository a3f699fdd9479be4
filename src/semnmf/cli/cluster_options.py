"""``semnmf cluster``'s options: the one frozen object a run is made from.

:func:`cluster_options` reads the parsed command line once: it resolves the method and
``-k``, refuses what cannot work (one line naming the option, before any data is read)
and fills in every default. The parser leaves out the options not given
(``argparse.SUPPRESS``), so the defaults are written here only: the field defaults of
:class:`ClusterOptions` and, for the options whose default depends on the method,
:func:`_method_defaults`.

Standard library only (the parser loads this module).
"""

import dataclasses
from dataclasses import dataclass

from ..experiments.methods import CLI_METHODS, DEFAULT_CLI_METHOD
from ..models._defaults import MAX_LAM
from ._common import (CONTEXT_NAMES, MAX_SEED, ContextOptions, OutputOptions, ReadOptions,
                      VectorizeOptions,
                      check_context_arguments, check_input_arguments, check_number, check_seed,
                      context_defaults, options_record)
from .engine import check_engine_options
from .flags import flag

DEFAULT_RUNS = 10  # --runs of a --consensus


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
    semantics: str = "corpus"
    embed: str | None = None
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

        given = {name: getattr(self, SETTING_NAMES.get(name, name))
                 for name in ClusterSettings.__dataclass_fields__
                 if name not in ("labels", "verbose")}
        return ClusterSettings(**given, verbose=int(self.verbose))

    def with_choices(self, settings):
        """These options with what the run chose (k, the association and top_k of M, the
        dtype), as run.json's ``cli_arguments`` records them."""
        return dataclasses.replace(self, k=settings.k, association=settings.association,
                                   top_k=settings.top_k, dtype=settings.dtype)


# ClusterSettings' names of the options whose flag names them otherwise
SETTING_NAMES = {"random_state": "seed", "n_runs": "runs", "n_keep": "keep", "n_top": "top",
                 "stop_words": "language", "vocabulary": "vocab"}


# the library's names of the options (the inverse of SETTING_NAMES)
SETTING_NAMES_OF = {flag: name for name, flag in SETTING_NAMES.items()}

DEFAULTS = ClusterOptions(source="")


def default(name):
    """The default of option ``name`` as the help shows it."""
    return getattr(DEFAULTS, name)


def names(test):
    """The --method names whose registry entry passes ``test``, for messages."""
    return ", ".join(name for name, m in CLI_METHODS.items() if test(m))


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
    ``argparse.Namespace`` holding the options given only), checked and filled."""
    given = dict(vars(args))
    k = given.pop("k")
    from ..workflows.cluster import asked_for

    given["method"], given["method_reason"] = method_name(
        given.get("method"), given.get("semantics", "corpus"), given.get("source"),
        given.get("engine", "local"),
        asked_for({SETTING_NAMES_OF.get(n, n): v for n, v in given.items()}))
    options = ClusterOptions(**given, **_k_fields(parse_k(k) if isinstance(k, str) else k))
    _check_values(options)
    _check_method(options)
    if options.semantics != "corpus":
        _check_semantics(options)
    _check_variants(options)
    _check_combinations(options)
    check_engine_options(options)
    return dataclasses.replace(options, **_method_defaults(options))


def _method_defaults(options):
    """The defaults that depend on the method (those of the options that apply to it, as
    the run record shows them: :func:`semnmf.workflows.cluster.method_defaults`) and those
    of the word-context options."""
    from ..workflows.result import method_defaults

    filled = method_defaults(options.settings())
    filled = {SETTING_NAMES.get(name, name): value for name, value in filled.items()
              if name not in CONTEXT_NAMES + ("window_given",)}
    return {**filled, **context_defaults(options)}


def _check_values(options):
    """Each option's value on its own (one line naming the option)."""
    if options.k_candidates is None and options.k < 1:
        raise ValueError(f"-k must be at least 1, got {options.k}.")
    check_seed(options.seed)
    check_number(options.lam, flag("lam"), low=0, high=MAX_LAM)
    check_number(options.graph_lam, flag("graph_lam"), low=0, high=MAX_LAM)
    check_number(options.max_iter, flag("max_iter"), low=1, integer=True)
    check_number(options.tol, flag("tol"), low=0)
    check_number(options.n_init, flag("n_init"), low=1, integer=True)
    check_input_arguments(options)


def _check_method(options):
    """The options that apply to some methods only."""
    method, name = options.spec, options.method
    if options.lam is not None and not method.word_context:
        raise ValueError(f"--lam weighs the word-context term, which --method {name} "
                         f"does not have; use it with {names(lambda m: m.word_context)}.")
    if options.graph_lam is not None and not method.graph:
        raise ValueError(f"--graph-lam weighs the document-graph term, which --method "
                         f"{name} does not have; use it with {names(lambda m: m.graph)}.")
    if options.lam_scale is not None and not (method.word_context or method.graph):
        raise ValueError(f"--lam-scale sets the scale of --lam and --graph-lam, which --method "
                         f"{name} does not have; drop --lam-scale.")
    if options.init is not None and not method.takes_init:
        raise ValueError(f"--init sets the start of the NMF methods; --method {name} "
                         "starts from its own (random) centres: drop --init (use --seed or "
                         "--n-init).")
    check_context_arguments(options, method.word_context,
                            f"for {names(lambda m: m.word_context)}")
    if options.semantics == "corpus" and (options.embed is not None
                                          or options.cache_dir is not None):
        raise ValueError(f"{'--embed' if options.embed is not None else '--cache-dir'} "
                         "applies to pretrained semantics: use it with --semantics "
                         "glove, minilm or a model name.")
    if options.partition not in (None, "auto") and (
            options.semantics.strip().lower() in ("corpus", "glove")
            or options.embed == "words"):
        raise ValueError("--partition chooses between the fit and the k-means partition of "
                         "embedded documents: use it with --semantics minilm (or a model "
                         "name) and --embed documents or both.")
    if options.partition == "documents" and options.refine == "gt":
        raise ValueError("--refine gt plays the games from the fit's memberships; "
                         "--partition documents makes no fit: drop one of them.")


def _check_variants(options):
    """``--loss`` and ``--orthogonal``: the methods with variants."""
    method, name = options.spec, options.method
    if (options.loss is not None or options.orthogonal) and not method.variants:
        with_variants = " or ".join(sorted(n for n, m in CLI_METHODS.items() if m.variants))
        kl = method.params.get("loss") == "kl"
        raise ValueError(f"--loss and --orthogonal apply to --method {with_variants} only"
                         + (f" (--method {name} already uses the KL loss)"
                            if options.loss == "kl" and kl else "") + ".")
    if options.loss == "kl" and options.orthogonal:
        raise ValueError("--orthogonal is derived for the Frobenius loss; drop --loss kl or "
                         "--orthogonal.")


def _check_semantics(options):
    """``--semantics``: Semantic-NMF with pretrained knowledge, the Frobenius updates."""
    if not options.semantics.strip():
        raise ValueError("--semantics needs a source: corpus, glove, minilm or a "
                         "sentence-transformers model name.")
    if (options.method != "snmf" or options.loss not in (None, "frobenius")
            or options.orthogonal):
        raise ValueError("--semantics adds pretrained knowledge to Semantic-NMF: use it "
                         "with the default --method snmf (Frobenius loss, not orthogonal).")
    if options.refine == "centroid":
        raise ValueError("--refine centroid moves documents by the cosine of their TF-IDF "
                         "rows, measured without pretrained semantics; drop --refine "
                         "centroid or --semantics.")
    if options.init not in (None, "skmeans"):
        raise ValueError("--semantics chooses its own start (spherical k-means, or k-means "
                         "of the document vectors); drop --init.")
    if options.dtype is not None:
        raise ValueError("--semantics builds X and M with pretrained vectors in the "
                         "pipeline's own dtype; drop --dtype.")
    embed = options.embed or "both"
    embeds_documents = embed != "words" and options.semantics.strip().lower() != "glove"
    if embeds_documents and (options.consensus or (options.n_init or 1) > 1):
        raise ValueError("with embedded documents every run starts from the same k-means "
                         "of the document vectors, so --consensus and --n-init would repeat "
                         "one run; use --embed words, or drop them.")
    from ..pipelines.pretrained import check_available

    check_available(options.semantics)


def _check_combinations(options):
    """Refinement and consensus: what they need, and --runs / --keep."""
    if options.consensus and options.refine == "gt":
        raise ValueError("--refine gt needs the soft memberships of one run; a consensus "
                         "partition has none. Use --consensus or --refine, not both.")
    if options.refine == "gt" and options.k == 1:
        raise ValueError("--refine gt needs at least 2 clusters: with -k 1 there is nothing "
                         "to refine.")
    if options.refine == "gt" and options.method == "skmeans":
        raise ValueError("--refine gt needs soft memberships (NMF or Semantic-NMF); "
                         "spherical k-means gives hard labels. Use --method nmf or snmf.")
    if not options.consensus:
        if options.runs is not None or options.keep is not None:
            raise ValueError(f"{'--runs' if options.runs is not None else '--keep'} applies "
                             "to many runs combined by --consensus; add --consensus (e.g. "
                             "--consensus mmm) or drop it.")
        return
    runs = DEFAULT_RUNS if options.runs is None else options.runs
    if runs < 2:
        raise ValueError(f"--runs must be at least 2 for a consensus, got {runs}.")
    keep = runs if options.keep is None else options.keep
    if not 2 <= keep <= runs:
        raise ValueError(f"--keep must be between 2 and --runs ({runs}), got {keep}.")
    if options.seed + runs - 1 > MAX_SEED:
        raise ValueError(f"--seed {options.seed} with --runs {runs} needs the seeds up to "
                         f"{options.seed + runs - 1}, above the largest seed ({MAX_SEED}); "
                         f"use a --seed of at most {MAX_SEED - runs + 1}.")
