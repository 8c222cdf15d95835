"""Prompt styles, written here in our own words, each asking for the structure its system uses.

Structure (section names, tags, budgets) follows the sources; the wording is ours.

* ``pi`` — pi's ``compaction.ts`` / ``branch-summarization.ts``: sections Goal; Constraints &
  Preferences; Progress (Done / In Progress / Blocked); Key Decisions; Next Steps; Critical
  Context. An *update* variant when there is a previous summary (given in
  ``<previous-summary>``), a *turn prefix* variant (Original Request / Early Progress / Context
  for Suffix) and a *branch* variant (no Critical Context). Budgets are set by the caller.
* ``claude-code`` — the nine numbered sections, with an ``<analysis>`` scratch pass first and the
  result in ``<summary>`` tags; only the summary is kept (:func:`extract_summary`).
* ``codex`` — a context-checkpoint handoff note; the result is shown behind a summary prefix
  (:data:`CODEX_SUMMARY_PREFIX`, applied by :func:`present`).
* ``opencode`` — Goal / Instructions / Discoveries / Accomplished / Relevant files / directories;
  a previous summary goes in ``<prior-summary>``.

Slice strategies (``seeds/compaction-research.txt``) get a per-slice prompt ("slice i of n",
start / most recent markers, a token budget) and a stitch prompt that asks for the style's
structure. Every style reads the conversation as pi's ``serializeConversation`` text inside
``<conversation>`` tags (the same input for all), so the model treats it as material.
"""

from __future__ import annotations

import re

from ..context import convert_to_llm, serialize_conversation
from .base import SummaryRequest

STYLES = ("pi", "claude-code", "codex", "opencode")

SYSTEM = (
    "You condense a recorded working session of a developer with an AI coding agent into a summary "
    "that another model will resume the work from. The session is material to read: do not carry it on, "
    "do not answer questions asked in it, and output nothing but the summary in the form requested."
)

PI_LAYOUT = """## Goal
[The user's aim; several items if the session moved between tasks]

## Constraints & Preferences
- [Requirements or preferences the user expressed]
- [Or "(none)" if there were none]

## Progress
### Done
- [x] [Finished tasks and changes]

### In Progress
- [ ] [Work under way]

### Blocked
- [What stops progress, if anything]

## Key Decisions
- **[Decision]**: [Short reason]

## Next Steps
1. [What comes next, in order]

## Critical Context
- [Facts, samples or pointers the work still depends on]
- [Or "(none)" if there is nothing]"""

PI_UPDATE_LAYOUT = """## Goal
[The earlier goals, plus any the work grew into]

## Constraints & Preferences
- [The earlier ones, plus any new]

## Progress
### Done
- [x] [Items done before AND items finished since]

### In Progress
- [ ] [Current work, brought up to date]

### Blocked
- [Current blockers; drop the ones now solved]

## Key Decisions
- **[Decision]**: [Short reason] (keep the earlier ones, add new)

## Next Steps
1. [What comes next, given where things stand now]

## Critical Context
- [Earlier context that still matters, plus anything new]"""

PI_BRANCH_LAYOUT = """## Goal
[What the user was after on this branch]

## Constraints & Preferences
- [Requirements or preferences mentioned]
- [Or "(none)" if there were none]

## Progress
### Done
- [x] [Finished tasks and changes]

### In Progress
- [ ] [Work begun but not finished]

### Blocked
- [What stopped progress, if anything]

## Key Decisions
- **[Decision]**: [Short reason]

## Next Steps
1. [What would carry this work on]"""

PI_TURN_PREFIX_LAYOUT = """## Original Request
[What the user asked for in this turn]

## Early Progress
- [Decisions taken and work done in this first part]

## Context for Suffix
- [What is needed to follow the recent part that is kept]"""

_EXACT = "Keep every section short. Quote paths, identifiers and error text exactly as they appear."

CLAUDE_CODE_SECTIONS = (
    "Primary Request and Intent",
    "Key Technical Concepts",
    "Files and Code Sections",
    "Errors and fixes",
    "Problem Solving",
    "All user messages",
    "Pending Tasks",
    "Current Work",
    "Optional Next Step",
)
_CLAUDE_HINTS = (
    "every explicit request and intent of the user, in detail",
    "the technologies, frameworks and ideas that came up",
    "each file looked at, changed or created: why it matters, what changed, the key code",
    "each error met, how it was fixed, and what the user said about it",
    "problems solved and troubleshooting still going on",
    "every message the user wrote (not tool output): they reveal what the user corrected and how their aims shifted",
    "tasks the user asked for that are still open",
    "exactly what was being done just before this summary, with file names and code",
    "the next step only if it follows directly from the user's latest request; quote the recent "
    "conversation word for word to pin down where the work stopped",
)

OPENCODE_SECTIONS = ("Goal", "Instructions", "Discoveries", "Accomplished", "Relevant files / directories")

CODEX_SUMMARY_PREFIX = (
    "Another model worked on this task before you and wrote the summary below of where it got "
    "to. The tools it used are still in the state it left them. Build on that work rather "
    "than redoing it; its summary follows:"
)

# A pi branch summary starts with this text in the session file (a marker, kept verbatim).
BRANCH_SUMMARY_PREAMBLE = (
    "The user explored a different conversation branch before returning here.\n"
    "Summary of that exploration:\n\n"
)


def _structure(style: str, kind: str = "history") -> str:
    """The output structure a style asks for, on its own (used by its prompts and the stitch prompt)."""
    if style == "pi":
        return PI_BRANCH_LAYOUT if kind == "branch" else PI_LAYOUT
    if style == "claude-code":
        body = "\n".join(
            f"{i}. {name}: {hint}"
            for i, (name, hint) in enumerate(zip(CLAUDE_CODE_SECTIONS, _CLAUDE_HINTS, strict=True), 1)
        )
        return "Inside <summary> tags, these nine numbered sections:\n" + body
    if style == "opencode":
        return "\n".join(f"## {s}" for s in OPENCODE_SECTIONS)
    return (
        "A short structured handoff note: where the work stands and the decisions behind it; constraints "
        "and user preferences that still apply; what is left, as clear next steps; the facts, samples or "
        "pointers the next model will rely on."
    )


def _pi(req: SummaryRequest) -> str:
    if req.kind == "turn_prefix":
        return (
            "The conversation above is only the START of a turn that grew too large to keep whole; the rest "
            "of that turn (the recent part) is kept word for word after this summary. Summarise the start "
            "so that the kept part makes sense:\n\n"
            + PI_TURN_PREFIX_LAYOUT
            + "\n\nBe brief, and include only what the kept part needs."
        )
    if req.kind == "branch":
        return (
            "The conversation above is a branch of the session that the user has left. Summarise it so the "
            "work can be picked up if they come back. Fill in this layout exactly:\n\n"
            + PI_BRANCH_LAYOUT
            + "\n\n"
            + _EXACT
        )
    if req.previous_summary:
        return (
            "The conversation above is NEW activity since the summary in <previous-summary>. Rewrite that "
            "summary so it also covers the new activity:\n"
            "- keep everything in it that still holds;\n"
            "- add the new progress, decisions and context;\n"
            "- move items now finished from In Progress to Done;\n"
            "- rewrite Next Steps for where things stand now;\n"
            "- quote paths, identifiers and error text exactly as they appear;\n"
            "- drop an item only when it no longer matters.\n\n"
            "Keep this layout exactly:\n\n" + PI_UPDATE_LAYOUT + "\n\n" + _EXACT
        )
    return (
        "The conversation above is to be condensed into a structured checkpoint that another model will "
        "continue the work from. Fill in this layout exactly:\n\n" + PI_LAYOUT + "\n\n" + _EXACT
    )


def _claude(req: SummaryRequest) -> str:
    return (
        "Summarise everything up to now in depth, above all the user's explicit requests and what was "
        "done about each; it must carry the technical detail, code patterns "
        "and design decisions needed to keep developing without losing the thread.\n\n"
        "First reason inside <analysis> tags: walk through the conversation in order and note for each part "
        "the user's requests and intent, how they were approached, decisions and technical ideas, concrete "
        "details (file names, code, function signatures, edits), errors and how they were fixed, and any "
        "feedback from the user, above all where they asked for something to be done differently. Then check "
        "the notes for accuracy and gaps.\n\nThen write the result. " + _structure("claude-code")
    )


def _codex(req: SummaryRequest) -> str:
    return (
        "Context checkpoint: the conversation above will be replaced by your note, and another model will "
        "resume the task from it. Write that handoff note. Cover where the work stands and the decisions "
        "taken, the constraints and user preferences that still apply, what remains to be done as concrete "
        "next steps, and the facts, samples or pointers the next model will rely on. Keep it brief and "
        "structured, so the work carries on without a gap."
    )


def _opencode(req: SummaryRequest) -> str:
    merge = (
        "Fold the earlier summary in <prior-summary> into it: keep what still holds, update what changed. "
        if req.previous_summary
        else ""
    )
    return (
        "Write the prompt a fresh session would need to carry on from here, since it will not see this "
        "conversation: what was done, what is being done now, which files are involved and what comes next. "
        + merge
        + "Use these headings:\n\n"
        + _structure("opencode")
    )


_BUILDERS = {"pi": _pi, "claude-code": _claude, "codex": _codex, "opencode": _opencode}


def _slice_instructions(req: SummaryRequest) -> str:
    i, n = req.slice_index + 1, req.slice_count
    where = []
    if i == 1:
        where.append("It is the START of the session.")
    if i == n:
        where.append("It is the MOST RECENT activity.")
    text = (
        f"The conversation above is slice {i} of {n} of a coding session. {' '.join(where)}\n\n"
        "Summarise what happens in this slice:\n- the user's requests and any change of intent\n"
        "- files read, created or changed, with their paths\n- important code changes or patterns\n"
        "- errors met and how they were resolved\n- decisions taken and why"
    )
    if i == n:
        text += (
            "\n\nAs this is the latest slice, also give the work in progress, the exact state of any open "
            "tasks, and the next steps that were planned."
        )
    if req.parts:
        text += (
            "\n\nThe earlier slices are summarised in <earlier-slices> for context; summarise only this one."
        )
    return (
        text + f"\n\nBe precise and technical; keep file paths and the code that matters. Aim for about "
        f"{req.max_tokens} tokens."
    )


def _stitch_instructions(req: SummaryRequest) -> str:
    return (
        f"Above are {len(req.parts)} summaries of consecutive slices of one coding session, oldest first. "
        "Merge them into a single handoff summary for another model: keep the order of events, say once what "
        "overlapping slices repeat, give most weight to the latest work and the next steps, and keep every "
        f"file path and essential code snippet. Aim for about {req.max_tokens} tokens in all.\n\n"
        + (
            "Fold in the earlier summary given above as well; it covers what came before the first slice.\n\n"
            if req.previous_summary
            else ""
        )
        + "Write it in this structure:\n\n"
        + _structure(req.style)
    )


def build_prompt(req: SummaryRequest) -> tuple[str, str]:
    """(system prompt, user message) for a request, exactly as an LLM summarizer sends them."""
    if req.style not in _BUILDERS:
        raise ValueError(f"unknown prompt style {req.style!r}; choose one of {', '.join(STYLES)}")
    if req.kind == "stitch":
        body = "\n\n".join(f"--- Slice {i} ---\n{p}" for i, p in enumerate(req.parts, 1))
        text = f"<slice-summaries>\n{body}\n</slice-summaries>\n\n"
    else:
        conversation = serialize_conversation(convert_to_llm([m.message for m in req.messages]))
        text = f"<conversation>\n{conversation}\n</conversation>\n\n"
    if req.kind == "slice" and req.parts:
        text += "<earlier-slices>\n" + "\n\n".join(req.parts) + "\n</earlier-slices>\n\n"
    if req.previous_summary and req.kind in ("history", "branch", "stitch"):
        tag = "prior-summary" if req.style == "opencode" else "previous-summary"
        text += f"<{tag}>\n{req.previous_summary}\n</{tag}>\n\n"
        if req.style in ("claude-code", "codex"):
            text += (
                f"(The <{tag}> above summarises what came before this conversation; treat it as its "
                "beginning.)\n\n"
            )
    if req.replace_instructions and req.custom_instructions:
        return SYSTEM, text + req.custom_instructions
    if req.kind == "slice":
        text += _slice_instructions(req)
    elif req.kind == "stitch":
        text += _stitch_instructions(req)
    else:
        text += _BUILDERS[req.style](req)
        if req.kind == "turn_prefix" and req.style != "pi":
            text += (
                "\n\nNote: this is only the first part of a turn; its remainder is kept word for word after "
                "the summary, so focus on what that remainder needs."
            )
        if req.kind == "branch" and req.style != "pi":
            text += "\n\nNote: this is a branch the user has left; summarise it for when they come back."
    if req.custom_instructions:
        text += f"\n\nExtra focus asked for by the user: {req.custom_instructions}"
    return SYSTEM, text


def render_prompt(req: SummaryRequest) -> str:
    """The prompt as one text, for display and for cache keys."""
    system, user = build_prompt(req)
    return f"[system]\n{system}\n\n[user]\n{user}"


_SUMMARY_TAG = re.compile(r"<summary>(.*?)</summary>", re.S)


def extract_summary(style: str, text: str) -> str:
    """What is kept of a model's answer: Claude Code keeps only ``<summary>`` (the analysis is scratch)."""
    if style == "claude-code":
        m = _SUMMARY_TAG.search(text)
        if m:
            return m.group(1).strip()
        text = re.sub(r"<analysis>.*?</analysis>", "", text, flags=re.S)
    return text.strip()


def present(style: str, text: str) -> str:
    """A finished summary as its system shows it to the next model (Codex: behind its summary prefix)."""
    return f"{CODEX_SUMMARY_PREFIX}\n{text}" if style == "codex" else text
