"""Public names of a package loaded on first use (PEP 562), so that importing the package
costs nothing until a name is used (``import semnmf`` loads no numpy)."""

import importlib


def lazy_names(package, names):
    """``(__getattr__, __dir__)`` for ``package`` whose public ``names`` map each name to
    the (relative) module that defines it; a loaded name is cached in the package."""
    module = importlib.import_module(package)

    def __getattr__(name):
        where = names.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where, package), name)
        setattr(module, name, value)
        return value

    def __dir__():
        return sorted(set(vars(module)) | set(names))

    return __getattr__, __dir__
