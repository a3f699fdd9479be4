"""How a message names a setting: the library's parameter names or the command line's flags.

One check serves :func:`semnmf.cluster` and ``semnmf cluster``; only its words differ.
``Words()`` (:data:`LIBRARY`) says ``lam`` and ``method='nmf'``; the command line's
``Words(FLAGS)`` says ``--lam`` and ``--method nmf``.

Standard library only (the command line's parser loads this module).
"""

import math
import numbers


class Words:
    """The names a message uses: ``words("lam")`` names a setting, ``words.set("method",
    "nmf")`` names a setting with its value. ``flags`` maps a library name to its flag;
    a name it lacks is said as the library says it."""

    def __init__(self, flags=None):
        self.flags = dict(flags or {})

    def __call__(self, name):
        return self.flags.get(name, name)

    def set(self, name, value):
        if name in self.flags:
            return f"{self.flags[name]} {value}"
        return f"{name}={value!r}"


LIBRARY = Words()


def check_number(value, name, words=LIBRARY, *, low=None, high=None, integer=False):
    """Refuse a setting's value outside [low, high], not finite, or (``integer``) not an
    integer, naming the setting in ``words``. None passes (not given)."""
    if value is None:
        return
    said = words(name)
    if integer and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
        raise ValueError(f"{said} must be an integer, got {value!r}.")
    if not integer and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
        raise ValueError(f"{said} must be a number, got {value!r}.")
    if not integer and not math.isfinite(value):
        raise ValueError(f"{said} must be a finite number, got {value}.")
    if (low is not None and value < low) or (high is not None and value > high):
        show = (lambda v: f"{v:d}") if integer else (lambda v: f"{v:g}")
        if high is None:
            bound = f"at least {show(low)}"
        elif low is None:
            bound = f"at most {show(high)}"
        else:
            bound = f"between {show(low)} and {show(high)}"
        raise ValueError(f"{said} must be {bound}, got {show(value)}.")
