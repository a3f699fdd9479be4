"""The installed version of semnmf (``0.0.0+local`` when run from a source tree)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("semnmf")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+local"
