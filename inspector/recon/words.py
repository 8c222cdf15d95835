"""The check in plain words: a one-line verdict, and a sentence for a flagged call."""

from __future__ import annotations

from collections import Counter

from .check import ReconCheck
from .flags import UNEXPLAINED

_PLURAL = {
    "mid-session start": "mid-session starts",
    "compaction": "compactions",
    "prune": "prunes",
    "tokenizer drift": "tokenizer drifts",
    UNEXPLAINED: "context changes not in the file",
}


def _k(n: float) -> str:
    return f"{n / 1000:.1f}k" if abs(n) >= 1000 else f"{round(n)}"


def verdict(c: ReconCheck) -> str:
    """ "tracks the recorded prompt within ±2.1k tokens" / "departs at 4 calls: …"."""
    if not c.calls:
        return "no call records its prompt: there is nothing to check the rebuilt context against"
    within = f"within ±{_k(c.spread_excluding_flagged / 2)} tokens"
    flags = c.flags
    if not flags:
        return f"tracks the recorded prompt {within}"
    counts = Counter(f.cause for f in flags)
    listed = ", ".join(f"{n} {_PLURAL[cause] if n > 1 else cause}" for cause, n in counts.most_common())
    return f"departs at {len(flags)} call{'s' if len(flags) > 1 else ''}: {listed} (elsewhere {within})"


def unexplained_words(tokens: int, rebuilt: str = "") -> str:
    """A call the file cannot explain: ``tokens`` sent beyond the context rebuilt from the file
    (below 0: fewer), a departure an earlier flagged call carried here; ``rebuilt`` says that
    context's size, when given."""
    side = "fewer" if tokens < 0 else "more"
    return (
        f"The file cannot explain what was sent here: about {abs(tokens):,} tokens {side} than the context "
        f"rebuilt from it{rebuilt}, since an earlier change the reconstruction check found. The recorded "
        "prompt is the figure to trust."
    )


def unstored_words(c: ReconCheck) -> str:
    """The part of each recorded prompt no file stores, in words (the Load page, the HTML report);
    where the recorded prompts are not larger than the rebuilt context (a damaged or odd file),
    that there is no such part."""
    if c.offset_median <= 0:
        return (
            f"the recorded prompts are not larger than the context rebuilt here (the median offset is "
            f"{c.offset_median:+,} tokens), so no part of them is left for a system prompt or tools"
        )
    return (
        f"the system prompt and tool definitions, which no session file stores, are about "
        f"{c.offset_median:,} tokens of each recorded prompt (the median offset)"
    )


def recorded_split(c: ReconCheck, step: int) -> str | None:
    """The recorded prompt of the call at ``step`` as the check splits it: what the file accounts
    for (the messages, and each thing the agent's sending rules add or leave out, in tiktoken
    tokens, then as this session's provider counts them) and the part no file stores (the system
    prompt and tool definitions). None where the check did not compare the call, or departs there
    (:func:`step_note` says why)."""
    call = c.call_at(step)
    if call is None or call.flag is not None or call.unexplained:
        return None
    extra = [f"{name} ({n:+,})" for name, n in call.parts.items() if name != "messages" and n]
    if extra:
        parts = [f"the messages ({call.parts.get('messages', 0):,})", *extra]
        listed = f"{', '.join(parts[:-1])} and {parts[-1]}, {call.sent:,} tiktoken tokens"
    else:
        listed = f"the messages, {call.sent:,} tiktoken tokens"
    if call.calibrated != call.sent:  # the provider counts otherwise
        cal = c.calibration
        how = (
            f" (tiktoken × {cal.ratio:.3f} + {cal.overhead:.0f} per message, fitted to its usage)"
            if cal.fitted
            else ""
        )
        listed += f", which this session's provider counts as {call.calibrated:,}{how}"
    if call.departure:
        listed += f"; and changes the check found at earlier calls ({call.departure:+,})"
    if call.offset <= 0:  # nothing left over: a damaged or odd file
        over = "That is all of it" if call.offset == 0 else f"That is {-call.offset:,} more than was recorded"
        return (
            f"The provider recorded {call.recorded:,} tokens for this prompt, and the file accounts for "
            f"{call.expected:,}: {listed}. {over}, so no part of the prompt is left for a system prompt or "
            f"tools ({c.offset_median:+,} at this session's median call; the reconstruction check)."
        )
    return (
        f"Of the {call.recorded:,} tokens the provider recorded for this prompt, the file accounts for "
        f"{call.expected:,}: {listed}. The other {call.offset:,} are what no file stores, the system prompt "
        f"and tool definitions ({c.offset_median:,} at this session's median call; the reconstruction check)."
    )


def step_note(c: ReconCheck, step: int) -> str | None:
    """What the check says about the call at ``step``: its flag in a sentence; at a later call the
    departure is carried to, that the file cannot explain it; else None."""
    call = c.call_at(step)
    if call is None:
        return None
    if call.flag is None:
        return unexplained_words(call.unexplained) if call.unexplained else None
    f = call.flag
    if f.cause == UNEXPLAINED:
        return f"{f.detail[0].upper()}{f.detail[1:]}."
    sign = "more" if f.tokens > 0 else "fewer"
    return (
        f"The recorded prompt moved {_k(abs(f.tokens))} tokens {sign} than the rebuilt context here "
        f"({f.cause}: {f.detail})."
    )
