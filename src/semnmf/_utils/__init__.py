"""Shared utilities of every layer: input validation (:mod:`.validation`), the one
threading layer (:mod:`.parallel`), atomic file writes (:mod:`.io`) and messages
(:mod:`.progress`: ``logging`` plus optional progress bars), and the keywords renamed at a
release, warned for one release (:mod:`.renamed`).

Nothing here imports any other part of semnmf.
"""
