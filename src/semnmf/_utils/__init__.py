"""Shared utilities of every layer: input validation (:mod:`.validation`), the one
threading layer (:mod:`.parallel`), atomic file writes (:mod:`.io`) and messages
(:mod:`.progress`: ``logging`` plus optional progress bars).

Nothing here imports any other part of semnmf.
"""
