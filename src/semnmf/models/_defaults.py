"""Default weights of the estimators, in a module that imports nothing.

The command line shows these in its help without loading numpy or scikit-learn; the
estimators take their defaults from here.

TODO(contract merge): models/semantic.py (``DEFAULT_LAM``) and models/gnmf.py
(``DEFAULT_GRAPH_LAM``) still define their own copies; they should import them from here
(tests/cli/test_cli_parser.py checks that the values agree until then).
"""

# Relative weight of the word-context term of SemanticNMF, SeNMF and SemanticGNMF
# (``lam``), chosen from the sweep in benchmarks/results/lambda_sweep.md.
DEFAULT_LAM = 10.0

# Relative weight of the document-graph term of GNMF and SemanticGNMF (``graph_lam``),
# from the sweeps reported in their docstrings (CSTR, CLASSIC4, BBC, NG5).
DEFAULT_GRAPH_LAM = 3.0
