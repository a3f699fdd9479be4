"""Default weights of the estimators, in a module that imports nothing.

The command line shows these in its help without loading numpy or scikit-learn; the
estimators take their defaults from here.
"""

# Relative weight of the word-context term of SemanticNMF, SeNMF and SemanticGNMF
# (``lam``), chosen from the sweep in benchmarks/results/lambda_sweep.md.
DEFAULT_LAM = 10.0

# Relative weight of the document-graph term of GNMF and SemanticGNMF (``graph_lam``),
# from the sweeps in benchmarks/results/design_notes.md.
DEFAULT_GRAPH_LAM = 3.0

# The largest weight (``lam``, ``graph_lam``) accepted: at 10⁶ the other term of the
# objective is already negligible, and larger values overflow the updates (NaN factors).
MAX_LAM = 1e6

# The largest seed (``random_state``) numpy's generators and scikit-learn take: the runs
# of a consensus (seeds s .. s + n_runs - 1) must stay at or below it.
MAX_SEED = 2**32 - 1

# The stopping rule of the multiplicative-update fits (NMF, SemanticNMF, SeNMF, GNMF,
# SemanticGNMF, PNMF, SymNMF) and of a clustering run: at most ``max_iter`` iterations,
# fewer once the objective changes by less than ``tol`` (relative).
DEFAULT_MAX_ITER = 200
DEFAULT_TOL = 1e-4
