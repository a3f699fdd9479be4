"""How fast the command line answers: ``semnmf --help`` and argument errors (which must be
said before any heavy import), as whole processes, median of several runs; and what the
first run on a fresh install costs against the runs after it (the compiled kernels are
cached on first use), in a new virtual environment with this checkout installed as the
README's first command installs it.

    python benchmarks/bench_startup.py [--runs 7] [--no-first-run]
    # -> benchmarks/results/startup.md
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from _common import RESULTS, atomic_write, machine_line, table  # noqa: E402

COMMANDS = [
    ("semnmf --help", ["--help"], 0),
    ("semnmf cluster --help", ["cluster", "--help"], 0),
    ("an empty --out", ["cluster", "bbc", "-k", "5", "--out", ""], 2),
    ("a source that does not exist", ["cluster", "no-such-file.csv", "-k", "5"], 2),
    ("an unknown --language", ["cluster", "bbc", "-k", "5", "--language", "xx"], 2),
    ("a negative --lam", ["cluster", "bbc", "-k", "5", "--lam", "-1"], 2),
]


def seconds(argv, expected, runs):
    times = []
    exe = [sys.executable, "-m", "semnmf"]
    with tempfile.TemporaryDirectory() as where:
        for _ in range(runs):
            t = time.perf_counter()
            done = subprocess.run(exe + argv, cwd=where, capture_output=True)
            times.append(time.perf_counter() - t)
            if done.returncode != expected:
                raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}, expected "
                                 f"{expected}: {done.stderr.decode()[-300:]}")
    return float(np.median(times)), float(np.max(times))


FIRST_RUN = ["cluster", "bbc", "-k", "5", "-q"]


def first_run(runs):
    """(install seconds, first run's seconds, the later runs' median) of ``semnmf
    cluster bbc -k 5`` in a new virtual environment holding this checkout."""
    root = os.path.dirname(HERE)
    with tempfile.TemporaryDirectory() as where:
        env = os.path.join(where, "venv")
        subprocess.run([sys.executable, "-m", "venv", env], check=True)
        python = os.path.join(env, "bin", "python")
        t = time.perf_counter()
        subprocess.run([python, "-m", "pip", "install", "-q", root], check=True,
                       capture_output=True)
        install = time.perf_counter() - t
        times = []
        for i in range(runs + 1):
            t = time.perf_counter()
            subprocess.run([python, "-m", "semnmf", *FIRST_RUN, "--out",
                            os.path.join(where, f"run{i}")], check=True, capture_output=True)
            times.append(time.perf_counter() - t)
            print(f"  run {i + 1}: {times[-1]:.1f} s", flush=True)
    return install, times[0], float(np.median(times[1:]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-first-run", action="store_true",
                        help="leave out the fresh install (it takes a few minutes)")
    args = parser.parse_args(argv)
    rows = []
    for what, command, expected in COMMANDS:
        median, worst = seconds(command, expected, args.runs)
        shown = " ".join(a if a else '""' for a in command)
        rows.append((what, f"`semnmf {shown}`",
                     f"{median:.2f}", f"{worst:.2f}"))
        print(f"{what}: {median:.2f} s", flush=True)
    lines = ["# Start-up: help and argument errors", "",
             f"Machine: {machine_line()}. Produced by `benchmarks/bench_startup.py` "
             f"(`python -m semnmf`, whole processes, {args.runs} runs each, median and "
             "slowest). Targets: help within 0.2 s, an argument error within 0.5 s.", "",
             table(("what", "command", "median (s)", "slowest (s)"), rows), ""]
    if not args.no_first_run:
        warm_runs = 3
        install, first, warm = first_run(warm_runs)
        lines += ["## The first run on a fresh install", "",
                  "A new virtual environment, `pip install` of this checkout (the README's "
                  "first command), then `semnmf cluster bbc -k 5` once and "
                  f"{warm_runs} times more (the median of those). Target: the first run "
                  "within 2x a later one.", "",
                  table(("install (s)", "first run (s)", "later runs (s)", "first / later"),
                        [(f"{install:.0f}", f"{first:.1f}", f"{warm:.1f}",
                          f"{first / warm:.2f}")]), ""]
    atomic_write(os.path.join(RESULTS, "startup.md"), lambda f: f.write("\n".join(lines)))


if __name__ == "__main__":
    main()
