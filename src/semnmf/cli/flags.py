"""The command line's words for the library's parameters: the library's errors name its
parameters (``lam must be ...``), the command line its flags (``--lam must be ...``), by
the one table :data:`semnmf.workflows.flags.FLAGS`. Standard library only.
"""

import re

from .._utils.words import Words
from ..workflows.flags import CLI_FLAGS, FLAGS

#: the library's checks (:mod:`semnmf.workflows.checks`) in the command line's words
CLI_WORDS = Words(CLI_FLAGS)

_LEADING_NAME = re.compile(r"^`?([a-z][a-z_]*)`?(?= )")
_LEADING_SETTING = re.compile(r"^([a-z][a-z_]*)=(\S+)(?= )")


def flag(name):
    """The flag of the library parameter ``name`` (``"lam"`` -> ``"--lam"``)."""
    return FLAGS[name]


def cli_message(message):
    """A library error as the command line says it: a message that starts with a
    parameter name (``"max_iter must be ..."``) starts with its flag instead
    (``"--max-iter must be ..."``); any other message is returned as it is."""
    setting = _LEADING_SETTING.match(message)
    if setting is not None and setting.group(1) in FLAGS:  # "window=5 has ..." of a warning
        return f"{FLAGS[setting.group(1)]} {setting.group(2)}" + message[setting.end():]
    match = _LEADING_NAME.match(message)
    if match is None or match.group(1) not in FLAGS:
        return message
    return FLAGS[match.group(1)] + message[match.end():]
