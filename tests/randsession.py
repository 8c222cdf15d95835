"""Random valid pi sessions for the differential test against pi's own code.

Trees (entries attached to random earlier ones), every entry type and role, astral-plane
characters, floats / big ints / nested objects / integer-like keys in tool arguments, images,
aborted and error answers, usage with and without ``totalTokens``, several compactions (first
kept entry on or off the path, ``fromHook``), empty branch summaries, and sometimes a legacy v1
file that pi migrates.
"""

from __future__ import annotations

import json
import random
from typing import Any

WORDS = ["alpha", "beta", "γάμμα", "δ", "naïve", "日本語", "😀", "𝕏", "emoji👩‍💻", "tab\t", "quote\"", "back\\slash",
         "line\nbreak", "<b>", "ünïcödé", "\u2028sep"]
PATHS = ["src/a.ts", "src/b.ts", "docs/😀.md", "z.md", "A.md", "src/ｆｕｌｌ.ts", "𝕏/x.ts"]


def _text(rng: random.Random, lo: int = 0, hi: int = 400) -> str:
    n = rng.choice([0, 1, 3, 10, 40, rng.randint(lo, hi), rng.randint(1000, 12000)])
    words = [rng.choice(WORDS) for _ in range(max(0, n // 5))]
    return " ".join(words)[:n] if n else ""


def _value(rng: random.Random, depth: int = 0) -> Any:
    k = rng.randrange(9 if depth < 2 else 6)
    if k == 0:
        return rng.choice([1.0, 2.5e-7, 1e21, 123456789012345678901, -0.0, 0.1 + 0.2, 3, True, None])
    if k == 1:
        return rng.randint(-10**6, 10**6)
    if k in (2, 3, 4, 5):
        return _text(rng, 0, 60)
    if k in (6, 7):
        return {rng.choice(["b", "2", "1", "a", "zz", "10"]): _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]


def _usage(rng: random.Random) -> dict[str, Any]:
    u = {"input": rng.randint(0, 50000), "output": rng.randint(0, 4000), "cacheRead": rng.randint(0, 90000),
         "cacheWrite": rng.randint(0, 5000)}
    if rng.random() < 0.6:
        u["totalTokens"] = rng.choice([0, sum(u.values()), rng.randint(1, 200000)])
    u["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return u


def _message(rng: random.Random, ts: int) -> dict[str, Any]:
    role = rng.choices(["user", "assistant", "toolResult", "bashExecution", "custom"], [4, 6, 5, 1, 1])[0]
    img = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    if role == "user":
        content: Any = _text(rng) if rng.random() < 0.5 else [
            rng.choice([{"type": "text", "text": _text(rng)}, img]) for _ in range(rng.randint(0, 3))]
        return {"role": "user", "content": content, "timestamp": ts}
    if role == "assistant":
        blocks: list[dict[str, Any]] = []
        for _ in range(rng.randint(0, 4)):
            kind = rng.choice(["text", "thinking", "toolCall", "toolCall"])
            if kind == "text":
                blocks.append({"type": "text", "text": _text(rng)})
            elif kind == "thinking":
                blocks.append({"type": "thinking", "thinking": _text(rng), "thinkingSignature": "s"})
            else:
                name = rng.choice(["read", "write", "edit", "bash", "grep", "ls"])
                args = {rng.choice(["b", "2", "path", "1", "command"]): _value(rng) for _ in range(rng.randint(0, 4))}
                if name in ("read", "write", "edit") and rng.random() < 0.8:
                    args["path"] = rng.choice(PATHS + [""])
                blocks.append({"type": "toolCall", "id": f"t{rng.getrandbits(32):x}", "name": name, "arguments": args})
        msg = {"role": "assistant", "content": blocks, "api": "anthropic-messages", "provider": rng.choice(["anthropic", "openai"]),
               "model": rng.choice(["m1", "m2"]), "stopReason": rng.choice(["stop", "toolUse", "aborted", "error", "length"]),
               "timestamp": ts}
        if rng.random() < 0.85:
            msg["usage"] = _usage(rng)
        return msg
    if role == "toolResult":
        content = [rng.choice([{"type": "text", "text": _text(rng)}, img, {"type": "text", "text": _text(rng)}])
                   for _ in range(rng.randint(0, 3))]
        return {"role": "toolResult", "toolCallId": "t", "toolName": rng.choice(["read", "bash"]), "content": content,
                "isError": rng.random() < 0.2, "timestamp": ts}
    if role == "bashExecution":
        return {"role": "bashExecution", "command": _text(rng, 0, 40), "output": _text(rng),
                "exitCode": rng.choice([0, 1, None]), "cancelled": rng.random() < 0.2, "truncated": rng.random() < 0.2,
                "fullOutputPath": rng.choice([None, "/tmp/out.txt"]), "excludeFromContext": rng.random() < 0.2,
                "timestamp": ts}
    return {"role": "custom", "customType": "hook", "content": _text(rng) if rng.random() < 0.5 else
            [{"type": "text", "text": _text(rng)}, img], "display": True, "timestamp": ts}


def random_session(rng: random.Random) -> str:
    """JSONL text of a valid random pi session (v3, or sometimes v1)."""
    legacy = rng.random() < 0.15
    n = rng.randint(5, 150)
    header: dict[str, Any] = {"type": "session", "id": f"sess-{rng.getrandbits(32):x}",
                              "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}
    if not legacy:
        header["version"] = 3
    lines = [header]
    ids: list[str] = []
    base = 1767225600000
    for k in range(n):
        ts = base + k * 1000 + rng.choice([0, 0, 500])
        iso = f"2026-01-01T{(k // 3600) % 24:02d}:{(k // 60) % 60:02d}:{k % 60:02d}.000Z"
        kind = rng.choices(["message", "model_change", "thinking_level_change", "compaction", "branch_summary",
                            "custom", "custom_message", "label", "session_info"], [30, 1, 1, 2, 1, 1, 1, 1, 1])[0]
        e: dict[str, Any] = {"type": kind, "timestamp": iso}
        if not legacy:
            eid = f"{rng.getrandbits(32):08x}"
            parent = None if not ids else (ids[-1] if rng.random() < 0.85 else rng.choice(ids))
            e = {"type": kind, "id": eid, "parentId": parent, "timestamp": iso}
            ids.append(eid)
        if kind == "message":
            e["message"] = _message(rng, ts)
        elif kind == "model_change":
            e.update(provider="openai", modelId="gpt-x")
        elif kind == "thinking_level_change":
            e["thinkingLevel"] = rng.choice(["off", "low", "high"])
        elif kind == "compaction":
            e.update(summary=_text(rng, 1, 300) or "s", tokensBefore=rng.randint(0, 200000))
            if legacy:
                e["firstKeptEntryIndex"] = rng.randint(0, k + 1)
            else:
                e["firstKeptEntryId"] = rng.choice(ids[:-1]) if len(ids) > 1 else "missing"
            if rng.random() < 0.7:
                e["details"] = {"readFiles": rng.sample(PATHS, 2), "modifiedFiles": rng.sample(PATHS, 1)}
            if rng.random() < 0.2:
                e["fromHook"] = True
        elif kind == "branch_summary":
            e.update(fromId=e.get("parentId") or "root", summary=rng.choice(["", _text(rng, 1, 200) or "b"]))
            if rng.random() < 0.6:
                e["details"] = {"readFiles": rng.sample(PATHS, 1), "modifiedFiles": rng.sample(PATHS, 2)}
        elif kind == "custom":
            e.update(customType="ext", data={"x": _value(rng)})
        elif kind == "custom_message":
            e.update(customType="note", content=_text(rng) if rng.random() < 0.5 else [
                {"type": "text", "text": _text(rng)}, {"type": "image", "data": "x", "mimeType": "image/png"}],
                display=rng.random() < 0.5)
        elif kind == "label":
            e.update(targetId=rng.choice(ids) if ids else "x", label=rng.choice(["", "mark", "😀"]))
        elif kind == "session_info":
            e["name"] = rng.choice(["", " name ", "x"])
        lines.append(e)
    if lines[-1]["type"] == "compaction":  # pi's oracle cannot describe a path ending in one
        lines.append({**{k: v for k, v in lines[-1].items() if k in ("id", "parentId")}, "type": "label",
                      "timestamp": "2026-01-02T00:00:00.000Z", "targetId": "x", "label": "end"})
        if not legacy:
            lines[-1]["id"] = "ffffffff"
            lines[-1]["parentId"] = lines[-2]["id"]
    return "".join(json.dumps(x, ensure_ascii=rng.random() < 0.3) + "\n" for x in lines)
