"""One progress bar on stderr for a long command (a corpus load or sweep).

On a terminal the bar redraws in place; otherwise (a log, a pipe) a line is printed at every
tenth of the way, so logs stay short. Nothing is printed on stdout.
"""

from __future__ import annotations

import sys
import time


class ProgressBar:
    def __init__(self, label: str, unit: str, width: int = 30) -> None:
        self.label, self.unit, self.width = label, unit, width
        self.tty = sys.stderr.isatty()
        self.t0 = time.perf_counter()
        self.last_tenth = -1
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        frac = done / total if total else 1.0
        secs = time.perf_counter() - self.t0
        if self.tty:
            full = int(frac * self.width)
            sys.stderr.write(
                f"\r{self.label} [{'#' * full}{'.' * (self.width - full)}] {done:,}/{total:,} "
                f"{self.unit} {secs:,.0f}s "
            )
            sys.stderr.flush()
            self.drawn = True
        elif int(frac * 10) > self.last_tenth:
            self.last_tenth = int(frac * 10)
            print(f"{self.label}: {done:,}/{total:,} {self.unit} ({frac:.0%}, {secs:,.1f}s)", file=sys.stderr)

    def close(self) -> None:
        if self.drawn:
            sys.stderr.write("\n")
            self.drawn = False
