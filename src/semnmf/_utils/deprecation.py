"""Renamed parameters: one release of grace with a FutureWarning.

A renamed constructor parameter stays in ``__init__`` under its old name with the
sentinel default :data:`DEPRECATED` (so ``get_params``, ``clone`` and ``set_params`` keep
working); :func:`renamed_param` reads it at fit time.
"""

import warnings

from sklearn.utils._param_validation import Hidden, StrOptions

DEPRECATED = "deprecated"

#: Constraint to add for a deprecated parameter: its sentinel, hidden from messages.
DEPRECATED_OPTION = Hidden(StrOptions({DEPRECATED}))


def is_set(value):
    """Whether a deprecated parameter was given a value (anything but the sentinel)."""
    return not (isinstance(value, str) and value == DEPRECATED)


def renamed_param(estimator, old, new, since="0.2", removal="0.3"):
    """The value to use for parameter ``new`` of ``estimator``.

    If the old name ``old`` was set, warn (FutureWarning) and return its value; else
    return the value of ``new``.
    """
    old_value = getattr(estimator, old, DEPRECATED)
    if not is_set(old_value):
        return getattr(estimator, new)
    warnings.warn(f"{old} was renamed {new} in {since} and will be removed in {removal}; "
                  f"pass {new}={old_value!r} instead.", FutureWarning, stacklevel=3)
    return old_value
