"""Published numbers the benchmarks are compared with (NMI, ARI), by dataset and method.

- ``"sn"``: Neurocomputing 2022, Table 2 — mean ± sd of the 10 best of 50 runs by
  objective, every NMF-like method started from the same spherical k-means solutions.
- ``"slides"``: SFC 2019 slides, SNMF-KL table — mean over 30 runs (λ = 10⁻³ for SNMF-KL).
- ``"sigir"``: SIGIR 2017, Table 2 — mean over runs (read from the extracted text, whose
  layout is scrambled: CLASSIC4 and NG20 columns as printed).
"""

SN = "Neurocomputing 2022 Table 2 (best 10 of 50)"
SLIDES = "SFC 2019 slides (mean of 30)"
SIGIR = "SIGIR 2017 Table 2"

# dataset -> method -> (NMI, ARI, source)
PAPER = {
    "cstr": {
        "skmeans": (0.76, 0.80, SN), "nmf": (0.73, 0.75, SN), "onmf": (0.65, 0.60, SN),
        "pnmf": (0.72, 0.73, SN), "gnmf": (0.69, 0.75, SN), "dcn": (0.63, 0.53, SN),
        "snmf-pglove": (0.76, 0.80, SN), "snmf": (0.76, 0.80, SN),
        "nmf-kl": (0.73, 0.77, SLIDES), "snmf-kl": (0.76, 0.80, SLIDES),
    },
    "classic4": {
        "skmeans": (0.60, 0.47, SN), "nmf": (0.59, 0.47, SN), "onmf": (0.49, 0.41, SN),
        "pnmf": (0.51, 0.42, SN), "gnmf": (0.62, 0.45, SN), "dcn": (0.57, 0.42, SN),
        "snmf-pglove": (0.61, 0.47, SN), "snmf": (0.61, 0.47, SN),
        "nmf-kl": (0.71, 0.65, SLIDES), "snmf-kl": (0.74, 0.71, SLIDES),
        "senmf": (0.74, 0.69, SIGIR),
    },
    "ng5": {
        "skmeans": (0.72, 0.60, SN), "nmf": (0.72, 0.60, SN), "onmf": (0.52, 0.29, SN),
        "pnmf": (0.69, 0.54, SN), "gnmf": (0.58, 0.50, SN), "dcn": (0.62, 0.47, SN),
        "snmf-pglove": (0.79, 0.76, SN), "snmf": (0.78, 0.75, SN),
        "nmf-kl": (0.80, 0.82, SLIDES), "snmf-kl": (0.75, 0.72, SLIDES),
    },
    "ng20": {
        "skmeans": (0.49, 0.30, SN), "nmf": (0.49, 0.30, SN), "onmf": (0.38, 0.20, SN),
        "pnmf": (0.43, 0.22, SN), "gnmf": (0.00, 0.00, SN), "dcn": (0.43, 0.17, SN),
        "snmf-pglove": (0.49, 0.29, SN), "snmf": (0.49, 0.33, SN),
        "nmf-kl": (0.47, 0.33, SLIDES), "snmf-kl": (0.50, 0.36, SLIDES),
        "senmf": (0.52, 0.33, SIGIR),
    },
}

# The four corpora of the SN paper's Table 2 that we have (RCV1 and SPORTS are not shared).
PAPER_DATASETS = ("cstr", "classic4", "ng5", "ng20")
# The baselines SNMF (PPMI) is claimed to beat (SN Table 2).
BASELINES = ("skmeans", "nmf", "onmf", "pnmf", "gnmf", "dcn")
