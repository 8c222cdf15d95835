"""Other agents' files, damaged: every importer keeps going (located issues, never an exception),
and everything loaded can be replayed and inspected."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.doctor import diagnose
from inspector.importers import parse_any
from inspector.info import session_info
from inspector.recon import check
from inspector.replay import ReplaySettings, replay
from inspector.retention import retention

from .support.paths import REPO
from .test_import_claude_code import _preserved_session
from .test_import_opencode import _tail_export

SAMPLES = {
    name: (REPO / "sample_sessions" / name).read_bytes()
    for name in (
        "claude-code-session.jsonl",
        "codex-session.jsonl",
        "codex-legacy.jsonl",
        "opencode-session.json",
    )
}
# the hand-made files of the importer tests: a Claude Code preserved segment, an OpenCode retained tail
SAMPLES["claude-code-preserved.jsonl"] = _preserved_session()
SAMPLES["opencode-tail.json"] = _tail_export("msg_3")
JUNK: list[Any] = [None, True, 0, -1, 1e308, "", "x" * 50, [], {}, [1, [2]], {"type": None}, {"a": {"b": []}}]


def _mutate_value(v: Any, rnd: random.Random, depth: int = 0) -> Any:
    if isinstance(v, dict) and v and depth < 6:
        k = rnd.choice(list(v))
        v = dict(v)
        r = rnd.random()
        if r < 0.3:
            del v[k]
        elif r < 0.6:
            v[k] = rnd.choice(JUNK)
        else:
            v[k] = _mutate_value(v[k], rnd, depth + 1)
        return v
    if isinstance(v, list) and v and depth < 6:
        v = list(v)
        i = rnd.randrange(len(v))
        v[i] = _mutate_value(v[i], rnd, depth + 1) if rnd.random() < 0.7 else rnd.choice(JUNK)
        return v
    return rnd.choice(JUNK)


def _mutate(name: str, seed: int) -> bytes:
    rnd = random.Random(seed)
    data = SAMPLES[name]
    if name.endswith(".json"):
        doc = json.loads(data)
        for _ in range(rnd.randint(1, 6)):
            doc = _mutate_value(doc, rnd)
        return json.dumps(doc, indent=2).encode()
    rows = data.split(b"\n")[:-1]
    for _ in range(rnd.randint(1, 6)):
        i = rnd.randrange(len(rows))
        r = rnd.random()
        if r < 0.15:
            rows[i] = rows[i][: rnd.randrange(len(rows[i]) + 1)]
        elif r < 0.25:
            del rows[i]
        else:
            try:
                rows[i] = json.dumps(_mutate_value(json.loads(rows[i]), rnd)).encode()
            except ValueError:  # a row cut by an earlier mutation
                continue
    return b"\n".join(rows) + b"\n"


def _exercise(data: bytes) -> None:
    s = parse_any(data, source="fuzz")
    session_info(s)
    diagnose(s)
    check(s)  # every call's context as sent, counted from the one before
    retention(replay(s))
    if s.entries:
        retention(
            replay(
                s,
                ReplaySettings(
                    compaction="pi",
                    context_window=2000,
                    reserve_tokens=500,
                    keep_recent_tokens=200,
                    strategy="recorded",
                ),
            )
        )


@pytest.mark.parametrize("name", sorted(SAMPLES))
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_damaged_files_of_every_format_load_and_replay(name: str, seed: int) -> None:
    _exercise(_mutate(name, seed))


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_behind_each_formats_first_line(tail: bytes) -> None:
    for name in SAMPLES:
        head = (
            SAMPLES[name].split(b"\n", 1)[0]
            if not name.endswith(".json")
            else b'{"info": {"id": "ses_1"}, "messages": ['
        )
        _exercise(head + b"\n" + tail)
