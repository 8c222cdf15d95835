"""The offline summarizer's faster searches find exactly what the plain patterns find.

A long answer or a summary carried from compaction to compaction (OpenCode keeps its summary as an
assistant message) is searched for sentence breaks and decision phrases at every compaction; the
searches were rewritten to skip ahead (a pattern that starts at the punctuation, and ``str.find``
for where a decision phrase can start). These tests pin them to the plain patterns they replace,
on random text built from the characters and words that matter, case and Unicode included."""

from __future__ import annotations

import random
import re

import pytest

from inspector.summarize import offline

PLAIN_BREAK = re.compile(r"(?<=[^\d\s][.!?])\s+|\n+")
"""The sentence break as first written: the whitespace after . ! ? not after a digit, or newlines."""


def _breaks(text: str) -> list[tuple[int, int]]:
    return [m.span(1) if m.group(1) is not None else m.span(2) for m in offline._SENTENCE.finditer(text)]


BREAK_ALPHABET = ".!?\n \t1a\r\x0b\u2028\u0661b:"
DECISION_WORDS = [
    "instead of", "rather than", "the fix is", "the approach", "the plan is", "decided", "decide to",
    "better to", "we should", "switched to", "switching to", "switch to", "chose", "going with",
    "INSTEAD OF", "Decided", "xdecided", "decide", "ſwitch to", "İnstead of", "rather", "the",
    "Chose", "gOING WITH", "théapproach",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(4))
def test_sentence_breaks_are_the_plain_patterns(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(20_000):
        text = "".join(rnd.choice(BREAK_ALPHABET) for _ in range(rnd.randint(0, 16)))
        assert _breaks(text) == [m.span() for m in PLAIN_BREAK.finditer(text)], repr(text)


def test_sentence_breaks_on_prose_and_lists() -> None:
    text = "Done. Next:\n1. read it\n2. fix it!  Then test?\n\nOK 3.5 is fine. v2. ok"
    assert _breaks(text) == [m.span() for m in PLAIN_BREAK.finditer(text)]
    assert offline._sentences(text) == [
        "Done.",
        "Next: 1. read it",
        "2. fix it!",
        "Then test?",
        "OK 3.5 is fine.",
        "v2. ok",  # a digit before the full stop: a list number, not a sentence end
    ]


@pytest.mark.parametrize("seed", range(4))
def test_decision_starts_are_the_patterns_matches(seed: int) -> None:
    rnd = random.Random(seed)
    pieces = [*DECISION_WORDS, " ", "a", "_", ".", "\n", "é", "1"]
    for _ in range(20_000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 9)))
        assert offline._decision_starts(text) == [m.start() for m in offline._DECISION.finditer(text)], repr(
            text
        )


def test_decision_sentences_of_a_long_summary() -> None:
    text = "\n".join(
        f"- Step {i}: we should keep the cache. Rather than copying, the plan is to share it."
        if i % 7 == 0
        else f"- Step {i}: edited `src/a{i}.ts`."
        for i in range(300)
    )
    found = offline._decision_sentences(text)
    assert len(found) == 2 * len(range(0, 300, 7))
    assert found[:2] == [
        "- Step 0: we should keep the cache.",
        "Rather than copying, the plan is to share it.",
    ]


def _plain_decision_sentences(text: str) -> list[str]:
    """The decision sentences as first written: every sentence of the text, then the test."""
    starts = [m.start() for m in offline._DECISION.finditer(text)]
    out = []
    for s, a, b in offline._sentence_spans(text):
        if any(a <= p < b for p in starts) and offline._DECISION.search(s) and not offline._ACTION.search(s):
            out.append(s)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_decision_sentences_found_locally_are_the_whole_texts(seed: int) -> None:
    rnd = random.Random(seed)
    pieces = [
        "we should", "Decided", "rather than", "let me", "Now let's", "ok", "1", "x",
        ".", ". ", ": ", ":", ":\n", "\n", "\n\n", "  ", "!", "? ", " ", "\t", "1. ", "é",
    ]  # fmt: skip
    for _ in range(20_000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 12)))
        assert offline._decision_sentences(text) == _plain_decision_sentences(text), repr(text)
