"""The reconstruction check: does the context we rebuild follow the prompt each call recorded?

For every model call that recorded its prompt (input + cache read + cache write), the check
compares it with the context rebuilt as recorded (the session's own compactions and pruning,
:func:`inspector.replay.replay` with ``compaction="recorded"``, ``strategy="recorded"``), counted
*as the provider is sent it* (:mod:`inspector.sent`) and scaled by the session's own fitted
tokenizer ratio (:mod:`inspector.calibration`). What no file stores — the system prompt and the
tool definitions — leaves a constant offset. Every call where that offset jumps is flagged with a
cause (:mod:`inspector.recon.flags`): a compaction or a prune we replay, a session that starts
mid-way, a tokenizer drift, or a context change not in the file. From a flagged call on, the
departure is carried: the check follows the recorded figure there, as the file cannot say why.

An analysis over replay results, next to :mod:`inspector.doctor` and :mod:`inspector.info`; the
replay, pruning and compaction never import it. ``inspector check SESSION [--json]`` prints it;
``bench/recon.py`` runs it over a folder.
"""

from .check import INTERACTIVE_MAX_CALLS, Call, ReconCheck, check, view_check
from .flags import CAUSES, UNEXPLAINED, Flag
from .words import recorded_split, step_note, unexplained_words, unstored_words, verdict

__all__ = [
    "CAUSES",
    "INTERACTIVE_MAX_CALLS",
    "UNEXPLAINED",
    "Call",
    "Flag",
    "ReconCheck",
    "check",
    "recorded_split",
    "step_note",
    "unexplained_words",
    "unstored_words",
    "verdict",
    "view_check",
]
