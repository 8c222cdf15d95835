"""Importer benchmark: Claude Code, Codex and OpenCode sessions of growing size, imported into
the session model, against parsing the same file with the standard library's ``json`` (the floor
every importer pays) in the same run.

    python bench/importers.py [--lines 10000,50000] [--format claude-code,codex,opencode]

Each file is the bundled sample of that format repeated until it has about ``--lines`` lines (an
OpenCode export: messages), ids made unique per copy and each copy continuing the previous one,
so the shapes are the generator's (compactions, parallel tool calls, a rollback, pruned outputs)
at scale. Printed per file: size, import time, ``json`` time, their ratio, the entries imported,
and the peak memory of the process that imported it (ru_maxrss: interpreter, the file's bytes and
everything the import built) against the file's size.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SAMPLES = REPO / "sample_sessions"
SAMPLE_OF = {
    "claude-code": "claude-code-session.jsonl",
    "codex": "codex-session.jsonl",
    "opencode": "opencode-session.json",
}

MEASURE = r"""
import gc, json, resource, sys, time
sys.path.insert(0, sys.argv[2])
from inspector.importers import parse_any
data = open(sys.argv[1], "rb").read()
t = time.perf_counter()
s = parse_any(data, source=sys.argv[1])
took = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # the whole process, read before the floor runs
gc.collect()
t = time.perf_counter()
if sys.argv[1].endswith(".json"):
    json.loads(data)
else:
    for line in data.splitlines():
        if line.strip():
            json.loads(line)
floor = time.perf_counter() - t
print(json.dumps({"import": took, "json": floor, "entries": len(s.entries), "peak_kib": peak,
                  "errors": sum(1 for i in s.issues if i.severity == "error")}))
"""


def _suffix(v: object, c: int) -> object:
    return f"{v}-{c}" if isinstance(v, str) and v else v


def scale_claude_code(lines: int) -> bytes:
    rows = [json.loads(x) for x in (SAMPLES / SAMPLE_OF["claude-code"]).read_text().splitlines() if x.strip()]
    out: list[str] = []
    last: str | None = None
    c = 0
    while len(out) < lines:
        tail = last
        for r in rows:
            r = json.loads(json.dumps(r))
            for k in ("uuid", "logicalParentUuid", "leafUuid"):
                if k in r:
                    r[k] = _suffix(r[k], c)
            if "parentUuid" in r:
                r["parentUuid"] = (
                    _suffix(r["parentUuid"], c)
                    if r["parentUuid"]
                    else (tail if r.get("type") != "system" else None)
                )
            m = r.get("message")
            if isinstance(m, dict):
                if "id" in m:
                    m["id"] = _suffix(m["id"], c)
                for b in m.get("content") if isinstance(m.get("content"), list) else []:
                    for k in ("id", "tool_use_id"):
                        if k in b:
                            b[k] = _suffix(b[k], c)
            meta = r.get("microcompactMetadata")
            if isinstance(meta, dict):
                meta["compactedToolIds"] = [_suffix(x, c) for x in meta.get("compactedToolIds", [])]
            if isinstance(r.get("uuid"), str) and not r.get("isSidechain"):
                last = r["uuid"]
            out.append(json.dumps(r, ensure_ascii=False))
        c += 1
    return ("\n".join(out) + "\n").encode()


def scale_codex(lines: int) -> bytes:
    rows = [json.loads(x) for x in (SAMPLES / SAMPLE_OF["codex"]).read_text().splitlines() if x.strip()]
    head, body = rows[0], rows[1:]
    out = [json.dumps(head)]
    c = 0
    while len(out) < lines:
        for r in body:
            r = json.loads(json.dumps(r))
            p = r.get("payload")
            if isinstance(p, dict) and "call_id" in p:
                p["call_id"] = _suffix(p["call_id"], c)
            out.append(json.dumps(r, ensure_ascii=False))
        c += 1
    return ("\n".join(out) + "\n").encode()


OPENCODE_PERIOD = 240_000
"""ms between the starts of two copies of the OpenCode sample (it spans 215.5 s): each copy's
times are moved on by this, so the repeated session's clock runs forward as a real one does."""


def scale_opencode(messages: int, forward: bool = True) -> bytes:
    """The bundled OpenCode export repeated to ``messages`` messages, each copy with its own ids and
    (``forward``) its times moved on by :data:`OPENCODE_PERIOD` per copy; without ``forward`` every
    copy keeps the sample's times, so the clock goes back at each copy (the agent's cleared outputs
    are then sent whole again at the next call, as after a clock skew)."""
    doc = json.loads((SAMPLES / SAMPLE_OF["opencode"]).read_text())
    msgs = doc["messages"]
    out = []
    c = 0
    while len(out) < messages:
        for m in msgs:
            m = json.loads(json.dumps(m))
            if forward:
                _shift_times(m, c * OPENCODE_PERIOD)
            m["info"]["id"] = _suffix(m["info"]["id"], c)
            if "parentID" in m["info"]:
                m["info"]["parentID"] = _suffix(m["info"]["parentID"], c)
            for p in m["parts"]:
                for k in ("id", "callID", "messageID", "tail_start_id"):
                    if k in p:
                        p[k] = _suffix(p[k], c)
            out.append(m)
        c += 1
    return json.dumps({**doc, "messages": out}, indent=2, ensure_ascii=False).encode()


def _shift_times(x: Any, by: int) -> None:
    """Every number under a ``time`` object of ``x`` (OpenCode's created, completed, start, end,
    compacted), moved on by ``by`` ms."""
    if isinstance(x, dict):
        for k, v in x.items():
            if k == "time" and isinstance(v, dict):
                for tk, tv in v.items():
                    if isinstance(tv, int | float) and not isinstance(tv, bool):
                        v[tk] = tv + by
            else:
                _shift_times(v, by)
    elif isinstance(x, list):
        for v in x:
            _shift_times(v, by)


SCALE = {"claude-code": scale_claude_code, "codex": scale_codex, "opencode": scale_opencode}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", default="10000,50000")
    ap.add_argument("--format", default="claude-code,codex,opencode")
    args = ap.parse_args()
    out_dir = HERE / "out"
    out_dir.mkdir(exist_ok=True)
    print(
        f"# {platform.python_implementation()} {platform.python_version()} on {platform.machine()}, "
        f"{platform.system()} · bench/importers.py --lines {args.lines}"
    )
    print(
        f"{'format':<12} {'lines':>7} {'MB':>7} {'entries':>8} {'import s':>9} {'json s':>8} {'×json':>6} "
        f"{'peak MB':>8} {'×file':>6}"
    )
    for fmt in args.format.split(","):
        for n in (int(x) for x in args.lines.split(",")):
            p = out_dir / f"import-{fmt}-{n}{'.json' if fmt == 'opencode' else '.jsonl'}"
            if not p.exists():
                p.write_bytes(SCALE[fmt](n))
            r = json.loads(
                subprocess.run(
                    [sys.executable, "-c", MEASURE, str(p), str(REPO)],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
            )
            mb = p.stat().st_size / 1e6
            print(
                f"{fmt:<12} {n:>7,} {mb:>7.1f} {r['entries']:>8,} {r['import']:>9.2f} {r['json']:>8.2f} "
                f"{r['import'] / max(r['json'], 1e-9):>6.1f} {r['peak_kib'] / 1024:>8.0f} "
                f"{r['peak_kib'] / 1024 / mb:>6.1f}"
                + (f"  ({r['errors']} load errors!)" if r["errors"] else "")
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
