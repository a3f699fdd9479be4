"""How the local engine scales with threads: NG20 (k = 20) on 1, 2, 4, 8, ... threads.

    python benchmarks/studies/bench_threads.py [--data DIR] [--threads 1 2 4 8 16] [--out DIR]

For each number of threads, in a new process with ``SEMNMF_NUM_THREADS`` (and numba's
threads) set to it: the median of 10 sweeps of NMF Frobenius and NMF-KL (float32, one
random start, as ``gpu_check.py``'s section 3), one spherical k-means fit (10 restarts:
the start of every default fit), and one multinomial-mixture consensus of the fit's three
partitions (NMF, NMF-KL, spherical k-means). Reads NG20's ``counts.mtx`` and ``labels.txt``
from ``--data`` (default: the shared datasets); writes ``threads.md`` to ``--out``
(default: $OUT when set, else benchmarks/results/). Meant for a many-core machine (the
device machine's 16 cores): on two cores it says little.
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/: gpu_check

import gpu_check  # noqa: E402  (the per-iteration helpers)


def one(data, threads):
    """The timings of one process (``threads`` already set in its environment)."""
    import warnings

    from semnmf import SphericalKMeans
    from semnmf.ensemble import combine

    warnings.simplefilter("ignore")
    X, _, k = gpu_check.load_corpus("ng20", data)
    out = {"threads": threads}
    labels = {}
    for method, loss in (("NMF", "frobenius"), ("NMF", "kl")):
        run = gpu_check.local_problem(*gpu_check.float32_problem(method, loss, X, k))
        out[f"{loss} ms"] = 1e3 * gpu_check.median_step(run, 10)
        labels[loss] = np.argmax(run.Z, axis=1)
    SphericalKMeans(k, random_state=0, n_init=1).fit(X[:2000])  # compile first
    start = time.perf_counter()
    km = SphericalKMeans(k, random_state=0).fit(X)
    out["skmeans s"] = time.perf_counter() - start
    partitions = np.column_stack([labels["frobenius"], labels["kl"], km.labels_])
    start = time.perf_counter()
    combine(partitions, k, "mmm", random_state=0)
    out["MMM s"] = time.perf_counter() - start
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=gpu_check.DEFAULT_DATA)
    parser.add_argument("--threads", type=int, nargs="+", default=None)
    parser.add_argument("--out", default=os.environ.get("OUT") or gpu_check.RESULTS)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.data, args.one)))
        return 0
    threads = args.threads or sorted({1, 2, 4, 8, os.cpu_count() or 1})
    rows = []
    for t in threads:
        env = {**os.environ, "SEMNMF_NUM_THREADS": str(t), "NUMBA_NUM_THREADS": str(t),
               "OMP_NUM_THREADS": str(t), "OPENBLAS_NUM_THREADS": str(t)}
        done = subprocess.run([sys.executable, __file__, "--one", str(t), "--data", args.data],
                              capture_output=True, text=True, env=env)
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            return 1
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(rows[-1], flush=True)
    base = rows[0]
    header = ["threads", "Frobenius ms / sweep", "KL ms / sweep", "spherical k-means s",
              "MMM s"]
    keys = ["frobenius ms", "kl ms", "skmeans s", "MMM s"]
    body = [[r["threads"]] + [f"{r[key]:.2f} ({base[key] / r[key]:.1f}x)" for key in keys]
            for r in rows]
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "threads.md")
    notes = os.path.join(gpu_check.RESULTS, "threads_notes.md")  # by hand, kept on reruns
    with open(path, "w", encoding="utf-8") as f:
        f.write("# The local engine on more threads (NG20, k = 20)\n\n"
                f"`python benchmarks/studies/bench_threads.py`, {time.strftime('%Y-%m-%d %H:%M')}, "
                f"{os.cpu_count()} cores; in brackets the speed-up over {base['threads']} "
                "thread(s).\n\n" + gpu_check.table(header, body) + "\n")
        if os.path.exists(notes):
            with open(notes, encoding="utf-8") as g:
                f.write("\n" + g.read())
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
