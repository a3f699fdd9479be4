"""The report of ``bench_k_auto.py``: every label-free rule replayed on the cached curves of
every shared corpus, chosen by leave-one-corpus-out (worst held-out log error first)."""

import math
import os

import numpy as np

from _common import RESULTS, leave_one_out, load_cache, machine_line, write_markdown

TOLERANCE = 0.3
LIBRARY_TOP = 50
PENALTIES = [-0.3, -0.2, -0.1, -0.05, 0.0, 0.05, 0.1, 0.2]
CENTRED_PENALTIES = [-0.2, -0.3, -0.5, -0.7, -1.0]
CENTERS = [6, 8, 10, 12, 15]
THRESHOLDS = [0.5, 0.6, 0.75, 0.9]
MIN_SHARES = [0.0, 0.5]   # of the mean cluster share 1/k
NEAR_MAX = [1.0, 0.8]


def cache_file(seed, n_init=1):
    """The curves of one seed (runs of ``n_init`` k-means++ starts each)."""
    tag = "" if n_init == 1 else f"_init{n_init}"
    return os.path.join(RESULTS, f"k_auto_curves{tag}_s{seed}.json.gz")


def sliced(curves, top):
    """The curves over the candidates up to ``top``."""
    n = sum(1 for k in curves["candidates"] if k <= top)
    return {key: (value[:n] if isinstance(value, list) else value)
            for key, value in curves.items()}


def library_top(curves):
    return max(2, min(LIBRARY_TOP, curves["n_documents"] // 10))


def stable_counts(curves, threshold, min_share):
    """Clusters per run with clusterwise Jaccard >= threshold and a share of the sample
    >= min_share / k, at every candidate."""
    out = []
    for k, jac, share in zip(curves["candidates"], curves["cluster_jaccard"],
                             curves["cluster_share"]):
        jac, share = np.asarray(jac), np.asarray(share)
        runs = jac.size / k
        out.append(np.sum((jac >= threshold) & (share >= min_share / k)) / runs)
    return np.asarray(out)


# ------------------------------------------------------------------ rules
def penalized(criterion, param, center=1.0):
    """The library's rule: argmax of ``curve01 + param·|log(k/center)|``."""
    def rule(curves):
        from semnmf.models.selection import criterion_scores

        _, scores = criterion_scores(curves, criterion, param, center)
        scores = np.where(np.isfinite(scores), scores, -np.inf)
        return int(curves["candidates"][int(np.argmax(scores))])
    return rule


def most_stable_clusters(threshold, min_share, near):
    """The smallest k whose count of stable clusters is at least ``near`` x the largest."""
    def rule(curves):
        counts = stable_counts(curves, threshold, min_share)
        return int(curves["candidates"][int(np.argmax(counts >= near * counts.max()))])
    return rule


def extended(rule):
    """The rule on the library's grid (top 50); when it lands on the top and the corpus
    allows more (n/10 > 50), the rule again on the wider grid."""
    def wrapped(curves):
        top = library_top(curves)
        k = rule(sliced(curves, top))
        if k >= max(c for c in curves["candidates"] if c <= top) and curves["candidates"][-1] > top:
            k = rule(curves)
        return k
    return wrapped


def on_library_grid(rule):
    return lambda curves: rule(sliced(curves, library_top(curves)))


def rules():
    """{name: rule}, in order of preference (ties go to the earlier)."""
    from semnmf.models.selection import CRITERIA

    out = {}
    for criterion in CRITERIA:
        if criterion in ("gain", "stable_clusters"):
            continue
        for a in PENALTIES:
            out[f"{criterion} ({a:g}·log k)"] = on_library_grid(penalized(criterion, a))
    for criterion in ("stability", "stability_nmi", "dispersion"):
        for a in CENTRED_PENALTIES:
            for center in CENTERS:
                out[f"{criterion} ({a:g}·|log(k/{center:g})|)"] = on_library_grid(
                    penalized(criterion, a, center))
    for t in THRESHOLDS:
        for s in MIN_SHARES:
            for near in NEAR_MAX:
                base = most_stable_clusters(t, s, near)
                name = f"stable_clusters (J≥{t:g}, share≥{s:g}/k, ≥{near:g}·max)"
                out[name] = on_library_grid(base)
                out[name + " +extend"] = extended(base)
    for k in CENTERS:
        out[f"constant {k:g}"] = lambda curves, k=k: int(k)
    return out


# ------------------------------------------------------------------ scoring
def log_error(k, classes):
    return abs(math.log(k / classes))


def hit(k, classes):
    return abs(k - classes) <= TOLERANCE * classes + 1e-9


def in_range(k, classes):
    return classes / 3 - 1e-9 <= k <= 3 * classes + 1e-9


def nmi_at(curves, k):
    return curves["nmi"][curves["candidates"].index(k)]


def nmi_at_classes(curves):
    ks = np.asarray(curves["candidates"], float)
    i = int(np.argmin(np.abs(np.log(ks / curves["n_classes"]))))
    return curves["nmi"][i]


OLD_DEFAULT = "stability_nmi (-0.3·log k)"


def library_default():
    from semnmf.models.selection import DEFAULT_CENTER, DEFAULT_CRITERION, DEFAULT_PARAM

    return f"{DEFAULT_CRITERION} ({DEFAULT_PARAM:g}·|log(k/{DEFAULT_CENTER:g})|)"


def stats(ks_by_name, classes, caches, names):
    """A rule's results on ``names``: mean over seeds of the corpora hit and out of range,
    the mean log error, and the NMI gap (mean and worst corpus)."""
    seeds = range(len(caches))
    out = sum(not in_range(k, classes[n]) for n in names for k in ks_by_name[n]) / len(caches)
    hits = sum(hit(k, classes[n]) for n in names for k in ks_by_name[n]) / len(caches)
    errors = [log_error(k, classes[n]) for n in names for k in ks_by_name[n]]
    gaps = [float(np.mean([nmi_at(caches[s][n], ks_by_name[n][s]) - nmi_at_classes(caches[s][n])
                           for s in seeds])) for n in names]
    return {"out": out, "hits": hits, "error": float(np.mean(errors)),
            "gap": float(np.mean(gaps)), "worst_gap": float(min(gaps))}


ORDERINGS = {
    "hits first": lambda s: (s["hits"], -s["out"], -s["error"]),
    "out of range first": lambda s: (-s["out"], s["hits"], -s["error"]),
}


def report(seeds, n_init=1):
    caches = [load_cache(cache_file(s, n_init)) for s in seeds]
    every = [n for n in caches[0] if all(n in c for c in caches)]
    names = [n for n in every if not n.startswith("planted_")]
    planted = [n for n in every if n.startswith("planted_")]
    table = rules()
    found = {r: {n: [table[r](c[n]) for c in caches] for n in every} for r in table}
    classes = {n: caches[0][n]["n_classes"] for n in every}
    pool = [r for r in table if all(hit(k, classes[n]) for n in planted for k in found[r][n])]
    loco = {}
    for label, key in ORDERINGS.items():
        chosen = leave_one_out(names, pool, lambda r, train, key=key: key(
            stats(found[r], classes, caches, train)))
        loco[label] = (chosen, {n: found[chosen[n]][n] for n in names})
    tag = "" if n_init == 1 else f"_init{n_init}"
    write_markdown(f"k_auto{tag}.md", "-k auto on every shared corpus" + (
        f" (runs of {n_init} k-means++ starts)" if tag else ""), sections(
        seeds, caches, names, classes, found, loco, n_init, (pool, planted)))
    return loco


def same_setting(n_init):
    from semnmf.models.selection import DEFAULT_N_INIT

    if n_init == DEFAULT_N_INIT:
        return ""
    return (f" The library measures its curves with runs of {DEFAULT_N_INIT} k-means++ "
            f"starts (`k_auto_init{DEFAULT_N_INIT}.md`); here every rule, the new default's "
            f"too, is replayed on curves of {n_init}.")


def cell(ks, n_classes):
    text = "/".join(map(str, ks))
    if not all(in_range(k, n_classes) for k in ks):
        return f"**{text}**"
    return text if all(hit(k, n_classes) for k in ks) else f"*{text}*"


def sections(seeds, caches, names, classes, found, loco, n_init, planted_check):
    new, old = library_default(), OLD_DEFAULT
    pool, planted = planted_check
    chosen = {label: stats(held, classes, caches, names) for label, (_, held) in loco.items()}
    s_new, s_old = (stats(found[r], classes, caches, names) for r in (new, old))
    n = len(names)
    opt = "" if n_init == 1 else f" --n-init {n_init}"

    def line(label, s):
        return (f"| {label} | {s['hits']:.2f} | {s['out']:.2f} | {s['error']:.2f} | "
                f"{s['gap']:+.3f} | {s['worst_gap']:+.3f} |")

    head = ("| rule | corpora hit (±30 %) | corpora out of [1/3, 3]× | mean log error | "
            "NMI gap, mean | NMI gap, worst corpus |\n|---|---:|---:|---:|---:|---:|")
    out = [(None, (
        f"Machine: {machine_line()}, single-threaded. {n} corpora, seeds {seeds}. For every "
        "corpus and seed the label-free curves of `measure_candidates` (5 spherical k-means "
        f"runs per k on a sample, each the best of {n_init} k-means++ start(s)) over the "
        "grid 2 .. min(100, n/10); every rule is replayed on "
        "them (on the library's grid 2 .. min(50, n/10) unless it says `+extend`). Per rule: "
        "the corpora whose k is within ±30 % of the number of classes (**hit**) and those "
        "outside [classes/3, 3·classes] (**out of range**), averaged over the seeds; the "
        "mean |log(k / classes)|; the **NMI gap**: the runs' NMI at the chosen k minus at the "
        "grid point nearest the number of classes (labels only score). Reproduce: `python "
        f"benchmarks/studies/bench_k_auto.py measure{opt} --seed S` (each seed), then `python "
        f"benchmarks/studies/bench_k_auto.py report{opt} --seeds " + " ".join(map(str, seeds)) + "`.")),
        ("Summary", "\n".join([
            head,
            line(f"the old default, {old} (chosen on 10 corpora"
                 + ("" if n_init == 1 else f"; replayed here on {n_init}-start curves, it ran "
                    "on 1: `k_auto.md`") + ")", s_old),
            line(f"**the new default, {new}** (chosen on these {n}: in sample)", s_new),
            *[line(f"leave-one-corpus-out, {label}", chosen[label]) for label in loco]])
         + "\n\nLeave-one-corpus-out: for each corpus, the rule best on the other "
         f"{n - 1} by the named ordering, applied to it (the honest estimate), among the "
         f"{len(pool)} of {len(found)} rules that find the planted k on every planted corpus "
         f"({', '.join(str(classes[p]) for p in planted)} disjoint topics, each seed; the old "
         f"default {'does' if old in pool else 'does not'}, the new default "
         f"{'does' if new in pool else 'does not'}). Targets: hits on at least "
         f"{math.ceil(n / 2)}, none out of range." + same_setting(n_init))]
    rows = ["| corpus | classes | old default | new default | LOCO (hits first) | rule LOCO chose |"
            " NMI gap, new default |", "|---|---:|---|---|---|---|---:|"]
    chosen_rule, held = loco["hits first"]
    order = sorted(names, key=lambda m: -np.mean([log_error(k, classes[m])
                                                   for k in found[new][m]]))
    for m in order:
        gap = np.mean([nmi_at(caches[s][m], k) - nmi_at_classes(caches[s][m])
                       for s, k in enumerate(found[new][m])])
        rows.append(f"| {m} | {classes[m]} | {cell(found[old][m], classes[m])} | "
                    f"{cell(found[new][m], classes[m])} | {cell(held[m], classes[m])} | "
                    f"{chosen_rule[m]} | {gap:+.3f} |")
    out.append(("Every corpus, the worst first (by the new default's log error)", (
        "k per seed; plain: a hit on every seed; *italic*: in range but a miss on some seed; "
        "**bold**: out of range on some seed.\n\n" + "\n".join(rows))))
    for label, key in ORDERINGS.items():
        ranked = sorted(pool, key=lambda r: key(stats(found[r], classes, caches, names)),
                        reverse=True)
        rows = [head] + [line(r, stats(found[r], classes, caches, names)) for r in ranked[:15]]
        out.append((f"The 15 best rules that find the planted k, in sample ({label})",
                    "\n".join(rows)))
    return out
