"""How fast the command line answers: ``semnmf --help`` and argument errors (which must be
said before any heavy import), as whole processes, median of several runs.

    python benchmarks/bench_startup.py [--runs 7]   # -> benchmarks/results/startup.md
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
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
    atomic_write(os.path.join(RESULTS, "startup.md"), lambda f: f.write("\n".join(lines)))


if __name__ == "__main__":
    main()
