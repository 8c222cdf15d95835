"""``Transcript``: a Claude Code transcript written by hand, in the shape 2.1 builds write (one line
per record, linked by ``uuid``/``parentUuid``), for tests that need a precise one."""

from __future__ import annotations

import json
from typing import Any

from inspector.importers import parse_any

SID = "0c0c0c0c-0000-4000-8000-000000000001"


class Transcript:
    """Lines in memory, each linked to the one before (``parent``: the first line's parent, a line of
    an earlier file). Line ``n`` is stamped ``n`` seconds after 10:00."""

    def __init__(self, parent: str | None = None) -> None:
        self.lines: list[dict[str, Any]] = []
        self.last = parent
        self.n = 0

    def raw(self, **o: Any) -> None:
        """A record outside the conversation (no uuid)."""
        self.lines.append({**o, "sessionId": SID})

    def line(self, type_: str, **o: Any) -> str:
        self.n += 1
        uid = f"00000000-0000-4000-8000-{self.n:012d}"
        self.lines.append(
            {
                "type": type_,
                "uuid": uid,
                "parentUuid": self.last,
                "isSidechain": False,
                "sessionId": SID,
                "timestamp": f"2026-07-01T10:{self.n // 60:02d}:{self.n % 60:02d}.000Z",
                **o,
            }
        )
        self.last = uid
        return uid

    def user(self, content: Any) -> str:
        """A user line: a text, or content blocks (``tool_result`` blocks included)."""
        return self.line("user", message={"role": "user", "content": content})

    def answer(
        self, text: str, prompt: int, thinking: str = "", output: int = 10, model: str = "claude-opus-4-8"
    ) -> str:
        content = (
            [{"type": "thinking", "thinking": thinking, "signature": "c2ln"}] if thinking is not None else []
        ) + [{"type": "text", "text": text}]
        return self.line(
            "assistant",
            message={
                "id": f"msg_{self.n}",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": "end_turn",
                "usage": {
                    "input_tokens": prompt,
                    "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 0,
                    "output_tokens": output,
                },
            },
        )

    def bytes(self) -> bytes:
        return "".join(json.dumps(x) + "\n" for x in self.lines).encode()


class CachedTranscript(Transcript):
    """A Claude Code transcript whose answers record the cache usage of their requests."""

    def line(self, type_: str, **o: Any) -> str:
        return super().line(type_, version="2.1.177", **o)

    def cached(self, read: int, write: int, tool: tuple[str, str, dict[str, Any]] | None = None) -> None:
        """An answer (calling ``tool``: call id, name, input) whose request read ``read`` tokens
        from the cache and wrote ``write``."""
        content: list[dict[str, Any]] = [{"type": "text", "text": "working on it"}]
        if tool is not None:
            content.append({"type": "tool_use", "id": tool[0], "name": tool[1], "input": tool[2]})
        self.line(
            "assistant",
            message={
                "id": f"msg_{self.n}",
                "role": "assistant",
                "model": "claude-opus-4-8",
                "content": content,
                "stop_reason": "tool_use" if tool else "end_turn",
                "usage": {
                    "input_tokens": 2,
                    "cache_read_input_tokens": read,
                    "cache_creation_input_tokens": write,
                    "output_tokens": 50,
                },
            },
        )

    def search(self, read: int, write: int, call_id: str, *loaded: str) -> None:
        """An answer calling ToolSearch, then its result naming the tools it loaded."""
        self.cached(read, write, (call_id, "ToolSearch", {"query": "select:" + ",".join(loaded)}))
        refs = [{"type": "tool_reference", "tool_name": n} for n in loaded]
        self.user([{"type": "tool_result", "tool_use_id": call_id, "content": refs}])

    def session(self, name: str = "claude-code.jsonl"):  # type: ignore[no-untyped-def]
        return parse_any(self.bytes(), name)
