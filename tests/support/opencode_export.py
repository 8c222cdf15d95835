"""OpenCode exports written by hand or at random, with the DCP plugin's ``compress`` calls.

``Export`` builds one message by message, shaped like the ones OpenCode writes with DCP
installed (one step per assistant message, DCP's ignored notification after each compress);
``dcp_export`` writes a long one at random, each compress naming messages and blocks by the ids
DCP gave them (read back through the importer's own numbering, so the ranges resolve).
"""

from __future__ import annotations

import json
import random
from typing import Any

from inspector.importers import parse_any
from inspector.importers.opencode_dcp import Replay

T0 = 1780000000000


class Export:
    """An ``opencode export`` document built message by message."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def _msg(self, role: str, parts: list[dict[str, Any]], **info: Any) -> str:
        mid = f"msg_{len(self.messages):03d}"
        t = T0 + 1000 * len(self.messages)
        for k, p in enumerate(parts):
            p.setdefault("id", f"prt_{len(self.messages):03d}_{k}")
        self.messages.append(
            {"info": {"id": mid, "role": role, "time": {"created": t}, **info}, "parts": parts}
        )
        return mid

    def user(self, text: str, ignored: bool = False) -> str:
        return self._msg("user", [{"type": "text", "text": text, **({"ignored": True} if ignored else {})}])

    def answer(
        self,
        text: str = "",
        tool: tuple[str, dict[str, Any], str] | None = None,
        prompt: int = 1000,
        cleared_after: int | None = None,
    ) -> str:
        """One model call; ``cleared_after``: OpenCode clears the tool's output that many ms later."""
        n = len(self.messages)
        parts: list[dict[str, Any]] = [{"type": "step-start"}]
        if text:
            parts.append({"type": "text", "text": text})
        if tool:
            name, args, out = tool
            when: dict[str, Any] = {"start": T0 + 1000 * n, "end": T0 + 1000 * n + 1}
            if cleared_after is not None:
                when["compacted"] = T0 + 1000 * n + cleared_after
            parts.append(
                {
                    "type": "tool",
                    "tool": name,
                    "callID": f"call_{n}",
                    "state": {"status": "completed", "input": args, "output": out, "time": when},
                }
            )
        parts.append(
            {
                "type": "step-finish",
                "tokens": {"input": prompt, "output": 10, "reasoning": 0, "cache": {"read": 0, "write": 0}},
            }
        )
        return self._msg("assistant", parts, providerID="openai", modelID="gpt-5.5")

    def compress(
        self,
        ranges: list[tuple[str, str, str]],
        prompt: int = 1000,
        note: str = "▣ DCP | -1K removed, +0.1K summary — Compression",
    ) -> str:
        content = [{"startId": a, "endId": b, "summary": s} for a, b, s in ranges]
        mid = self.answer(
            tool=(
                "compress",
                {"topic": "t", "content": content},
                "Compressed N messages into [Compressed conversation section].",
            ),
            prompt=prompt,
        )
        self.user(note, ignored=True)
        return mid

    def document(self) -> dict[str, Any]:
        return {
            "info": {"id": "ses_dcp", "directory": "/p", "time": {"created": T0}},
            "messages": self.messages,
        }

    def session(self):  # type: ignore[no-untyped-def]
        return parse_any(json.dumps(self.document()).encode(), source="dcp.json")


def _ids_now(e: Export) -> list[tuple[int, str]]:
    """(message index or anchor, id) of everything the next call would send that has an id:
    numbered messages no active block covers, and the active blocks."""
    d = Replay(e.messages)
    d.run()
    d._number(len(e.messages))  # what the next call numbers
    out = [(i, f"m{n:04d}") for (kind, i), n in d.refs.items() if kind == "m" and i not in d.covered]
    out += [(d.blocks[b].anchor, f"b{b}") for b in d.active]
    return sorted(out)


def dcp_export(rng: random.Random, exchanges: int, every: int = 12) -> Export:
    """``exchanges`` user requests, each answered by a read and a reply, with a compress every
    ``every`` of them on average: one range or two, from a message or a block to a later one (a
    block in it is consumed), its summary now and then naming a block by placeholder; a few
    ranges that do not resolve; now and then an output OpenCode clears a little later."""
    e = Export()
    for k in range(exchanges):
        e.user(f"step {k}: look at f{k % 7}.py")
        cleared = rng.choice([None, None, None, 500, 5_000])
        out = f"def f{k}():\n    return {k}\n" * rng.randint(1, 40)
        e.answer("reading", ("read", {"filePath": f"/p/f{k % 7}.py"}, out), cleared_after=cleared)
        e.answer(f"f{k} returns {k}")
        if rng.random() < 1 / every:
            ids = _ids_now(e)
            ranges = []
            for _ in range(rng.choice([1, 1, 2])):
                if len(ids) < 2:
                    break
                a, b = sorted(rng.sample(range(len(ids)), 2))
                text = f"summary {k}" + (f" (b{rng.randint(1, 5)})" if rng.random() < 0.3 else "")
                ranges.append((ids[a][1], ids[b][1], text))
                ids = ids[b + 1 :]  # a second range after the first
            if rng.random() < 0.1:
                ranges.append(("m9998", "m9999", "nothing there"))
            if ranges:
                e.compress(
                    ranges, note=f"▣ DCP | -1K removed, +{rng.randint(1, 9)}.0K summary — Compression #{k}"
                )
    return e
