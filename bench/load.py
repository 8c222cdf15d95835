"""Load benchmark: load + index + leaf context, against only JSON-parsing the same lines.

    python bench/load.py [--sizes 1000,10000,50000] [--repeat 3]

For each generated session (``python -m tools.samples.gen_big``, cached in ``bench/out/``) it prints, each
measured in a fresh process (so peak memory is that work's alone):

* ``json floor``: ``json.loads`` of every line (the stdlib parser) — the issue's baseline;
* ``orjson floor``: ``orjson.loads`` of every line (the parser the loader itself uses);
* ``inspector``: ``load_session`` (read, decode, parse, migrate, validate into models, index,
  report issues) + tree index + ``build_session_context`` at the leaf + pi token estimates;
* ``pi (node)``: pi's own ``SessionManager.open`` + ``buildSessionContext`` (when node and an
  installed pi is found: ``tools/pi-oracle/node_modules`` after ``npm ci`` there, or the
  ``node_modules`` folder ``$INSPECTOR_PI_MODULES`` names).

Times are the best of ``--repeat`` runs; memory is the peak RSS growth over an idle
interpreter that imported the same modules.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out"

CHILD = r"""
import gc, json, resource, sys, time
mode, path = sys.argv[1], sys.argv[2]
import orjson
sys.path.insert(0, sys.argv[3])
from inspector import load_session, build_session_context, estimate_tokens
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
gc.collect()
t = time.perf_counter()
if mode == "json":
    with open(path, "rb") as f:
        objs = [json.loads(line) for line in f if line.strip()]
    n = len(objs)
elif mode == "orjson":
    with open(path, "rb") as f:
        objs = [orjson.loads(line) for line in f if line.strip()]
    n = len(objs)
else:
    s = load_session(path)
    s.children; s.leaves
    ctx = build_session_context(s)
    tok = sum(estimate_tokens(m.message) for m in ctx.messages)
    n = len(s.entries)
dt = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": dt, "peak_kb": peak - base, "n": n}))
"""

NODE = r"""
const [,, dir, file] = process.argv;
const url = (await import("node:url")).pathToFileURL(dir + "/node_modules/@mariozechner/pi-coding-agent/dist/index.js").href;
const pi = await import(url);
const fs = await import("node:fs"); const os = await import("node:os"); const path = await import("node:path");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-bench-"));
const copy = path.join(tmp, "s.jsonl"); fs.copyFileSync(file, copy);
const base = process.memoryUsage().rss;
const t = performance.now();
const sm = pi.SessionManager.open(copy, tmp, "/bench");
const ctx = sm.buildSessionContext();
const dt = (performance.now() - t) / 1000;
const peak = process.resourceUsage().maxRSS; // KB
fs.rmSync(tmp, { recursive: true, force: true });
console.log(JSON.stringify({ seconds: dt, peak_kb: peak - base / 1024, n: sm.getEntries().length, messages: ctx.messages.length }));
"""


def oracle_dir() -> Path | None:
    """A folder whose node_modules holds pi (the pinned one of tools/pi-oracle)."""
    modules = os.environ.get("INSPECTOR_PI_MODULES")
    for d in (str(Path(modules).parent) if modules else None, str(REPO / "tools" / "pi-oracle")):
        if d and (Path(d) / "node_modules" / "@mariozechner" / "pi-coding-agent").is_dir():
            return Path(d)
    return None


def ensure_session(n: int) -> Path:
    OUT.mkdir(exist_ok=True)
    p = OUT / f"big-{n}.jsonl"
    if not p.exists():
        subprocess.run(
            [sys.executable, "-m", "tools.samples.gen_big", "--entries", str(n), "--out", str(p)],
            check=True,
            cwd=REPO,
        )
    return p


def run_child(mode: str, path: Path, repeat: int) -> dict:
    best: dict | None = None
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", CHILD, mode, str(path), str(REPO)],
            capture_output=True,
            text=True,
            check=True,
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        if best is None or r["seconds"] < best["seconds"]:
            best = {**r, "peak_kb": max(r["peak_kb"], best["peak_kb"] if best else 0)}
    assert best is not None
    return best


def run_node(path: Path, repeat: int) -> dict | None:
    d = oracle_dir()
    if d is None or shutil.which("node") is None:
        return None
    script = OUT / "pi_load.mjs"
    script.write_text(NODE)
    best = None
    for _ in range(repeat):
        out = subprocess.run(["node", str(script), str(d), str(path)], capture_output=True, text=True)
        if out.returncode != 0:
            return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "node failed"}
        r = json.loads(out.stdout.strip().splitlines()[-1])
        if best is None or r["seconds"] < best["seconds"]:
            best = r
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,50000")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",") if x]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}"
    )
    print("target: inspector ≤ 2× the parse-only floor; peak memory ≤ 3× the file size\n")
    hdr = (
        f"{'entries':>8} {'file MB':>8} | {'json s':>7} {'orjson s':>8} {'inspector s':>11} {'×json':>6} "
        f"{'×orjson':>7} | {'mem MB':>7} {'mem/file':>8} | {'pi node s':>9} {'×pi':>5}"
    )
    print(hdr)
    print("-" * len(hdr))
    for n in sizes:
        p = ensure_session(n)
        mb = p.stat().st_size / 1e6
        j = run_child("json", p, args.repeat)
        o = run_child("orjson", p, args.repeat)
        ours = run_child("inspector", p, args.repeat)
        node = run_node(p, args.repeat)
        mem = ours["peak_kb"] / 1024
        node_s = f"{node['seconds']:>9.3f}" if node and "seconds" in node else f"{'n/a':>9}"
        ratio_pi = f"{ours['seconds'] / node['seconds']:>5.2f}" if node and "seconds" in node else f"{'':>5}"
        print(
            f"{ours['n']:>8} {mb:>8.1f} | {j['seconds']:>7.3f} {o['seconds']:>8.3f} {ours['seconds']:>11.3f} "
            f"{ours['seconds'] / j['seconds']:>6.2f} {ours['seconds'] / o['seconds']:>7.2f} | {mem:>7.1f} "
            f"{mem / mb:>8.2f} | {node_s} {ratio_pi}"
        )
        sys.stdout.flush()
    if oracle_dir() is None or shutil.which("node") is None:
        print("\npi (node): skipped — node or an installed pi (npm ci in tools/pi-oracle) not found")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
