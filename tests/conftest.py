"""Shared test helpers: where ../shared is, and a tiny builder of pi v3 sessions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
FIXTURES = SHARED / "fixtures"
ORACLE_OUT = FIXTURES / "oracle"


def need_shared() -> None:
    if not (FIXTURES / "before-compaction.jsonl").exists():
        pytest.skip(f"../shared/fixtures not found beside the repo ({SHARED})")


class SessionBuilder:
    """Builds pi v3 JSONL in memory: linear by default, ``parent=`` to branch."""

    def __init__(self, version: int | None = 3) -> None:
        header: dict[str, Any] = {"type": "session", "id": "test-session", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}
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

    def assistant(self, text: str = "", tools: list[tuple[str, dict[str, Any]]] = (), usage: int | None = None,
                  stop: str = "stop", **kw: Any) -> str:
        content: list[dict[str, Any]] = []
        if text:
            content.append({"type": "text", "text": text})
        self.pending_calls = []
        for k, (name, args) in enumerate(tools):
            cid = f"c{self.n + 1}_{k}"
            self.pending_calls.append(cid)
            content.append({"type": "toolCall", "id": cid, "name": name, "arguments": args})
        extra: dict[str, Any] = {"provider": "anthropic", "model": "m", "stopReason": "toolUse" if tools and stop == "stop" else stop}
        if usage is not None:
            extra["usage"] = {"input": usage, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": usage}
        return self.msg("assistant", content=content, **extra, **kw)

    def tool_result(self, text: str, tool: str = "read", is_error: bool = False, **kw: Any) -> str:
        cid = self.pending_calls.pop(0) if getattr(self, "pending_calls", None) else "c"
        return self.msg("toolResult", toolCallId=cid, toolName=tool, content=[{"type": "text", "text": text}], isError=is_error, **kw)

    def text(self) -> str:
        return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in self.lines)

    def session(self):  # type: ignore[no-untyped-def]
        from inspector import parse_session

        return parse_session(self.text())


@pytest.fixture
def sb() -> SessionBuilder:
    return SessionBuilder()


@pytest.fixture(scope="session")
def pi_oracle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with ../shared/oracle installed (``npm ci``), to run pi's own code.

    Reuses ``$INSPECTOR_ORACLE_DIR`` when it points at an install; otherwise copies the oracle
    into a temporary folder (never writing into ../shared) and runs ``npm ci`` there. Skips,
    saying why, without node/npm or when the install fails."""
    import os
    import shutil
    import subprocess

    pre = os.environ.get("INSPECTOR_ORACLE_DIR")
    if pre and (Path(pre) / "node_modules" / "@mariozechner" / "pi-coding-agent").is_dir():
        return Path(pre)
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("node and npm are needed to run pi's own code (the oracle)")
    src = SHARED / "oracle"
    if not (src / "package-lock.json").exists():
        pytest.skip(f"no oracle at {src}")
    dst = tmp_path_factory.mktemp("pi-oracle")
    for name in ("oracle.mjs", "package.json", "package-lock.json"):
        shutil.copy(src / name, dst / name)
    r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=dst,
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        pytest.skip("npm ci of the oracle failed: " + (r.stderr or r.stdout).strip()[-400:])
    return dst


def run_pi_oracle(oracle_dir: Path, *args: str) -> dict[str, Any]:
    """Run oracle.mjs; its stdout goes to a file, because Node writes to a pipe asynchronously
    and the oracle's ``process.exit`` (branch mode) would cut a long output short."""
    import subprocess
    import tempfile

    with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
        r = subprocess.run(["node", str(oracle_dir / "oracle.mjs"), *args], stdout=out, stderr=subprocess.PIPE,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        out.seek(0)
        return json.loads(out.read())
