"""Prompt styles, written here in our own words, each asking for the structure its system uses.

* ``pi`` — pi's sections (Goal; Constraints & Preferences; Progress: Done / In Progress /
  Blocked; Key Decisions; Next Steps; Critical Context); an *update* variant that merges a
  previous summary; a *turn prefix* variant for the start of a split turn. Output budgets
  (set by the caller): 0.8 × reserveTokens for history, 0.5 × for the turn prefix.
* ``claude-code`` — nine sections, with an ``<analysis>`` scratch area first and the result in
  ``<summary>`` tags; only the summary is kept (:func:`extract_summary`).
* ``codex`` — a checkpoint handoff for the model that continues; the result is later shown
  behind Codex's summary prefix.
* ``opencode`` — Goal / Instructions / Discoveries / Accomplished / Relevant files.

The conversation is always pi's ``serializeConversation`` text inside ``<conversation>`` tags,
so the model reads it as material, not as a dialogue to continue.
"""

from __future__ import annotations

import re

from ..context import convert_to_llm, serialize_conversation
from .base import SummaryRequest

SYSTEM = ("You turn a transcript of work between a user and a coding assistant into a summary that another "
          "model will use to carry on. Only write the summary; do not answer or continue the transcript.")

_PI_SECTIONS = """## Goal
(what the user wants; several goals if the work changed direction)

## Constraints & Preferences
- (requirements and preferences the user stated, or "(none)")

## Progress
### Done
- [x] (finished work)

### In Progress
- [ ] (work under way)

### Blocked
- (what stops progress, if anything)

## Key Decisions
- **(decision)**: (why)

## Next Steps
1. (what to do next, in order)

## Critical Context
- (data, names, errors or references needed to continue, or "(none)")"""

STYLES = ("pi", "claude-code", "codex", "opencode")


def _pi(req: SummaryRequest) -> str:
    if req.kind == "turn_prefix":
        return ("The transcript above is only the FIRST PART of a turn; the rest of that turn is kept verbatim "
                "after your summary. Write what the kept part needs to make sense:\n\n"
                "## Original Request\n(what the user asked for in this turn)\n\n"
                "## Early Progress\n- (what was decided and done so far)\n\n"
                "## Context for Suffix\n- (facts the remaining part relies on)\n\nBe brief.")
    if req.previous_summary:
        return ("The transcript above is NEW activity. Fold it into the earlier summary given in "
                "<previous-summary>: keep everything still true, add new progress and decisions, move finished "
                "items to Done, refresh Next Steps, drop only what no longer matters. Use exactly this layout:\n\n"
                + _PI_SECTIONS + "\n\nStay concise; copy file paths, function names and error messages exactly.")
    return ("Write a structured checkpoint of the transcript above for another model to continue from. Use "
            "exactly this layout:\n\n" + _PI_SECTIONS +
            "\n\nStay concise; copy file paths, function names and error messages exactly.")


def _claude(req: SummaryRequest) -> str:
    return (
        "Summarise the work so far in detail, focusing on what the user explicitly asked for and what was done "
        "about it. First think it through inside <analysis> tags: go through the transcript in order, noting "
        "requests, approaches, decisions, file names, code, edits, errors and their fixes, and any feedback the "
        "user gave. Then write the result inside <summary> tags with these nine numbered sections:\n"
        "1. Primary Request and Intent\n2. Key Technical Concepts\n3. Files and Code Sections (why each matters, "
        "what changed, key snippets)\n4. Errors and fixes\n5. Problem Solving\n6. All user messages (every "
        "message the user wrote, not tool output)\n7. Pending Tasks\n8. Current Work (precisely what was "
        "happening just before this summary)\n9. Optional Next Step (only if it follows directly from the latest "
        "request; quote the recent conversation to pin it down)")


def _codex(req: SummaryRequest) -> str:
    return ("Context checkpoint: write a handoff note for the model that will pick this task up. Cover the "
            "progress made and the decisions behind it, constraints and preferences that matter, what is left "
            "to do as clear next steps, and any data, examples or references needed to continue. Keep it short "
            "and structured.")


def _opencode(req: SummaryRequest) -> str:
    return ("Write the prompt a fresh session would need to continue this conversation, since it will not see "
            "the transcript. Use these headings:\n\n## Goal\n## Instructions\n## Discoveries\n## Accomplished\n"
            "## Relevant files / directories\n\nInclude what was done, what is in progress, which files are "
            "involved and what comes next.")


_BUILDERS = {"pi": _pi, "claude-code": _claude, "codex": _codex, "opencode": _opencode}


def build_prompt(req: SummaryRequest) -> tuple[str, str]:
    """(system prompt, user message) for a request, exactly as sent."""
    if req.style not in _BUILDERS:
        raise ValueError(f"unknown prompt style {req.style!r}; choose one of {', '.join(STYLES)}")
    conversation = serialize_conversation(convert_to_llm([m.message for m in req.messages]))
    text = f"<conversation>\n{conversation}\n</conversation>\n\n"
    if req.previous_summary and req.style == "pi" and req.kind != "turn_prefix":
        text += f"<previous-summary>\n{req.previous_summary}\n</previous-summary>\n\n"
    text += _BUILDERS[req.style](req)
    if req.custom_instructions:
        text += f"\n\nAlso focus on: {req.custom_instructions}"
    return SYSTEM, text


_SUMMARY_TAG = re.compile(r"<summary>(.*?)</summary>", re.S)


def extract_summary(style: str, text: str) -> str:
    """Claude Code keeps only the ``<summary>`` part (the analysis is scratch work)."""
    if style == "claude-code":
        m = _SUMMARY_TAG.search(text)
        if m:
            return m.group(1).strip()
    return text.strip()
