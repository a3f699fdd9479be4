"""Whether a GPU can be used: the one check of the estimators' ``device`` (the torch
engine, :mod:`semnmf.models.torch_engine`) and of the sentence encoders
(:mod:`semnmf.text.encoders`). PyTorch is imported only when a GPU is asked about."""

from .words import LIBRARY

# The names of ``device`` everywhere: "cpu", "cuda", "cuda:N" (that GPU) or "auto".
DEVICES = ("cpu", "cuda", "auto")


def is_device_name(value):
    """Whether ``value`` names a device of the estimators' ``device``: "cpu", "auto",
    "cuda" or "cuda:N"."""
    if not isinstance(value, str):
        return False
    if value in DEVICES:
        return True
    head, _, index = value.partition(":")
    return head == "cuda" and index.isdigit()


def resolve_device(device):
    """The device "auto" stands for: "cuda" when PyTorch sees a usable GPU, else "cpu";
    any other name as given."""
    if device == "auto":
        return "cuda" if gpu_usable() else "cpu"
    return device


def require_torch():
    """Import and return :mod:`torch`, or raise a one-line ImportError saying how to get it."""
    try:
        import torch
    except ImportError:
        raise ImportError('device="cuda" needs PyTorch: pip install "semnmf[gpu]" (a CUDA '
                          'build of torch for a GPU).') from None
    return torch


def gpu_usable(device="cuda"):
    """Whether PyTorch imports and ``device`` ("cuda" or "cuda:N") is a usable GPU."""
    try:
        import torch
    except ImportError:
        return False
    if not torch.cuda.is_available():
        return False
    _, _, index = device.partition(":")
    return not index or int(index) < torch.cuda.device_count()


def check_device(device, words=LIBRARY):
    """Refuse, in one line, a GPU that cannot be used: ImportError without PyTorch,
    ValueError without a CUDA device (or without device N). "cpu" and "auto" pass.
    ``words`` names the setting (:class:`~semnmf._utils.words.Words`: the library's
    ``device='cuda'`` or the command line's ``--device cuda``)."""
    if device in ("cpu", "auto"):
        return
    torch = require_torch()
    if not torch.cuda.is_available():
        raise ValueError(f"{words.set('device', device)} needs a CUDA GPU, and PyTorch sees "
                         f"none (torch {torch.__version__}; a CPU build of torch, or no "
                         f"driver): use {words.set('device', 'cpu')} or "
                         f"{words.set('device', 'auto')}, or install a CUDA build of torch "
                         '(pip install "semnmf[gpu]").')
    _, _, index = device.partition(":")
    if index and int(index) >= torch.cuda.device_count():
        raise ValueError(f"{words.set('device', device)}: PyTorch sees "
                         f"{torch.cuda.device_count()} CUDA device(s), numbered from 0.")
