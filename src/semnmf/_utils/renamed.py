"""Keywords renamed at a release: the old name still works, with a ``FutureWarning``, for
one release.

>>> @renamed("n_clusters", "n_components")
... def f(labels, n_components=None):
...     return n_components
>>> f([0], 3), f([0], n_components=3)     # no warning: the new name, or positional
(3, 3)

``f([0], n_clusters=3)`` warns "n_clusters was renamed n_components in 0.3 and will be
removed in 0.4" and returns 3; giving both names is a ``TypeError``.
"""

import functools
import warnings

__all__ = ["renamed", "renamed_keyword"]

RENAMED_IN = "0.3"
REMOVED_IN = "0.4"


def renamed_keyword(kwargs, old, new, *, stacklevel=3):
    """Move ``kwargs[old]`` to ``kwargs[new]`` (in place) with a ``FutureWarning``; a
    ``TypeError`` when both are given. Returns ``kwargs``. ``stacklevel`` 3 points the
    warning at the caller of the function that calls this one."""
    if old in kwargs:
        if new in kwargs:
            raise TypeError(f"{old} and {new} name the same argument ({old} was renamed "
                            f"{new} in {RENAMED_IN}); give {new} only.")
        warnings.warn(f"{old} was renamed {new} in {RENAMED_IN} and will be removed in "
                      f"{REMOVED_IN}.", FutureWarning, stacklevel=stacklevel)
        kwargs[new] = kwargs.pop(old)
    return kwargs


def renamed(old, new):
    """Decorator: the keyword ``old`` of the function is now ``new``; ``old=`` still works,
    warned (:func:`renamed_keyword`). Positional calls are unchanged and silent; giving
    ``new`` positionally and ``old=`` is Python's "multiple values" ``TypeError``."""
    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if old in kwargs:
                renamed_keyword(kwargs, old, new)
            return func(*args, **kwargs)
        return wrapper
    return decorate
