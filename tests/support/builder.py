"""``SessionBuilder``: pi v3 JSONL written in a few lines, for tests that need a precise session."""

from __future__ import annotations

import json
from typing import Any


class SessionBuilder:
    """Builds pi v3 JSONL in memory: linear by default, ``parent=`` to branch."""

    def __init__(self, version: int | None = 3) -> None:
        header: dict[str, Any] = {
            "type": "session",
            "id": "test-session",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": "/p",
        }
        if version is not None:
            header["version"] = version
        self.lines: list[dict[str, Any]] = [header]
        self.last: str | None = None
        self.n = 0

    def add(self, type_: str, parent: str | None | bool = True, **fields: Any) -> str:
        self.n += 1
        eid = fields.pop("id", f"e{self.n:07d}")
        pid = self.last if parent is True else (None if parent is False else parent)
        ts = f"2026-01-01T00:{self.n // 60:02d}:{self.n % 60:02d}.000Z"
        self.lines.append({"type": type_, "id": eid, "parentId": pid, "timestamp": ts, **fields})
        self.last = eid
        return eid

    def msg(self, role: str, parent: str | None | bool = True, **m: Any) -> str:
        m.setdefault("timestamp", 1767225600000 + self.n * 1000)
        return self.add("message", parent, message={"role": role, **m})

    def user(self, text: str, **kw: Any) -> str:
        return self.msg("user", content=text, **kw)

    def assistant(
        self,
        text: str = "",
        tools: list[tuple[str, dict[str, Any]]] = (),
        usage: int | None = None,
        stop: str = "stop",
        **kw: Any,
    ) -> str:
        content: list[dict[str, Any]] = []
        if text:
            content.append({"type": "text", "text": text})
        self.pending_calls = []
        for k, (name, args) in enumerate(tools):
            cid = f"c{self.n + 1}_{k}"
            self.pending_calls.append(cid)
            content.append({"type": "toolCall", "id": cid, "name": name, "arguments": args})
        extra: dict[str, Any] = {
            "provider": "anthropic",
            "model": "m",
            "stopReason": "toolUse" if tools and stop == "stop" else stop,
        }
        if usage is not None:
            extra["usage"] = {
                "input": usage,
                "output": 0,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": usage,
            }
        return self.msg("assistant", content=content, **{**extra, **kw})  # kw may name the model

    def tool_result(self, text: str, tool: str = "read", is_error: bool = False, **kw: Any) -> str:
        cid = self.pending_calls.pop(0) if getattr(self, "pending_calls", None) else "c"
        return self.msg(
            "toolResult",
            toolCallId=cid,
            toolName=tool,
            content=[{"type": "text", "text": text}],
            isError=is_error,
            **kw,
        )

    def text(self) -> str:
        return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in self.lines)

    def session(self):  # type: ignore[no-untyped-def]
        from inspector import parse_session

        return parse_session(self.text())
