"""DCP benchmark: OpenCode exports with the DCP plugin's compresses, of growing length, imported
and replayed as recorded — the replay against the reference that decides every call by
``apply`` on the whole context (``incremental=False``), in the same run.

    python bench/dcp.py [--exchanges 500,2000] [--every 12] [--baseline-max 500]

Each export is written at random (``tests/support/opencode_export.dcp_export``, seed 1): user
requests answered by a read and a reply, a compress every ``--every`` requests on average (one
range or two, often consuming earlier blocks), a few outputs OpenCode clears. Printed per export:
calls, compresses, import time (the importer numbers DCP's message ids and rebuilds each block)
against ``json.loads`` of the same bytes, and the recorded replay's CPU time, incremental and
reference (the reference is quadratic: only up to ``--baseline-max`` requests), and ``inspector
check`` (every call's context as sent, counted and compared with its recorded prompt). Figures only.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from inspector.importers import parse_any  # noqa: E402
from inspector.pruning.recorded import dcp_blocks  # noqa: E402
from inspector.recon import check  # noqa: E402
from inspector.replay import ReplaySettings, replay  # noqa: E402
from tests.support.opencode_export import dcp_export  # noqa: E402


def export(exchanges: int, every: int) -> Path:
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    p = out / f"dcp-{exchanges}-{every}.json"
    if not p.exists():
        p.write_text(json.dumps(dcp_export(random.Random(1), exchanges, every).document()))
    return p


def cpu(fn, *a, **k):  # type: ignore[no-untyped-def]
    t = time.process_time()
    v = fn(*a, **k)
    return v, time.process_time() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exchanges", default="500,2000")
    ap.add_argument("--every", type=int, default=12)
    ap.add_argument("--baseline-max", type=int, default=500)
    args = ap.parse_args()
    print("| requests | calls | compresses | import | json.loads | replay | reference | × | check |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in (int(x) for x in args.exchanges.split(",")):
        data = export(n, args.every).read_bytes()
        _, t_json = cpu(json.loads, data)
        s, t_import = cpu(parse_any, data, source="dcp.json")
        settings = ReplaySettings(strategy="recorded")
        r, t_replay = cpu(replay, s, settings)
        compresses = sum(1 for e in s.entries if dcp_blocks(getattr(e, "message", None)))
        ref = "—"
        ratio = "—"
        if n <= args.baseline_max:
            _, t_ref = cpu(replay, s, settings, incremental=False)
            ref, ratio = f"{t_ref:.2f} s", f"{t_ref / t_replay:.0f}×"
        _, t_check = cpu(check, s)
        print(
            f"| {n:,} | {len(r.steps):,} | {compresses} | {t_import:.2f} s | {t_json:.2f} s | "
            f"{t_replay:.2f} s | {ref} | {ratio} | {t_check:.2f} s |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
