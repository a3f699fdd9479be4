"""The shared multiplicative-update loop (semnmf.models._solvers.mu.run): its stopping rule."""

import warnings

import pytest
from sklearn.exceptions import ConvergenceWarning

from semnmf.models._solvers import mu as _mu


class ScriptedProblem:
    """A problem whose objective follows a given sequence, one value per step."""

    def __init__(self, values):
        self.values = list(values)
        self.steps = 0

    def objective(self):
        return self.values[0]

    def step(self):
        self.steps += 1
        return self.values[self.steps]


def test_plateau_in_the_first_iterations_is_not_convergence():
    # the shape seen from a random start: a big first drop, a near-flat plateau
    # (relative change 1e-5), then the real descent, then convergence
    values = [100.0, 90.0] + [90.0 * (1 - 1e-5) ** i for i in range(1, 6)]
    while len(values) < 40:
        values.append(values[-1] * (1 - 1e-2))
    values += [values[-1] * (1 - 1e-6) ** i for i in range(1, 20)]
    n_iter, history, converged = _mu.run(ScriptedProblem(values), max_iter=200, tol=1e-4)
    assert converged
    # stops at the first iteration after the descent whose change is under tol
    assert n_iter == 40
    assert history == values[:41]


def test_stops_at_min_iter_when_already_converged():
    values = [1.0 - 1e-8 * i for i in range(50)]
    n_iter, _, converged = _mu.run(ScriptedProblem(values), max_iter=49, tol=1e-4)
    assert converged and n_iter == _mu.MIN_ITER


def test_max_iter_reached_warns():
    values = [100.0 * 0.9 ** i for i in range(30)]
    with pytest.warns(ConvergenceWarning, match="Increase max_iter"):
        n_iter, history, converged = _mu.run(ScriptedProblem(values), max_iter=20, tol=1e-4)
    assert (n_iter, converged, len(history)) == (20, False, 21)


def test_tol_zero_runs_max_iter_without_warning():
    values = [100.0 * 0.9 ** i for i in range(30)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        n_iter, _, converged = _mu.run(ScriptedProblem(values), max_iter=25, tol=0)
    assert n_iter == 25 and not converged
