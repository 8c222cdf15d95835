"""Sweep results that last: a local DuckDB file (``--out results.duckdb``).

Two tables, written by the process that runs the sweep (workers only send rows back):

* ``rows`` — one row per session × setting: ``session`` (its path, ``path#id`` inside a
  database), ``setting`` (the setting's key: base settings + grid point, see
  :func:`inspector.corpus.sweep.setting_key`), ``agent``, ``setting_values`` (the grid point as
  JSON, or ``"recorded"``), and the metrics (``total_input_tokens``, ``cost_usd``, ``compactions``,
  ``overflows``, ``rereads``, ``tokens_pruned``, …). Primary key (session, setting): a resumed
  sweep skips the pairs already there.
* ``failures`` — sessions that could not be swept, with the error (retried on the next run).

Each session's rows are committed together, as soon as they arrive: an interrupted sweep loses
at most the sessions in flight. :func:`results` reads the rows into a pandas DataFrame for SQL-less
analysis in a notebook; any DuckDB client reads the file with SQL. Needs ``duckdb``
(``pip install 'context-inspector[corpus]'``).
"""

from __future__ import annotations

import atexit
import gc
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

METRIC_FIELDS: tuple[str, ...] = (
    "steps",
    "total_input_tokens",
    "cost_usd",
    "peak_context",
    "compactions",
    "overflows",
    "rereads",
    "tokens_pruned",
    "summary_tokens",
)
"""The numbers each row carries (fields of :class:`inspector.replay.Metrics`); defined with the rows'
schema, so the store does not import the sweep that imports it."""
CACHE_FIELDS: tuple[str, ...] = ("billed_cost_usd", "cache_hit_rate", "invalidations")
"""The prompt-cache model's figures of the same replay (:mod:`inspector.cache`): billed cost, hit
rate, invalidations. A results file written before they existed gets the columns (empty) and
those rows are computed again."""
ROW_FIELDS: tuple[str, ...] = METRIC_FIELDS + CACHE_FIELDS

_TYPES = {"cost_usd": "DOUBLE", "billed_cost_usd": "DOUBLE", "cache_hit_rate": "DOUBLE"}
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS rows (session VARCHAR NOT NULL, setting VARCHAR NOT NULL, agent VARCHAR, "
    "setting_values VARCHAR, "
    + ", ".join(f"{f} {_TYPES.get(f, 'BIGINT')}" for f in METRIC_FIELDS)
    + ", PRIMARY KEY (session, setting));"
    + "".join(
        f"ALTER TABLE rows ADD COLUMN IF NOT EXISTS {f} {_TYPES.get(f, 'BIGINT')};" for f in CACHE_FIELDS
    )
    + "CREATE TABLE IF NOT EXISTS failures (session VARCHAR PRIMARY KEY, error VARCHAR);"
)


def _duckdb() -> Any:
    try:
        import duckdb
    except ImportError as e:
        raise RuntimeError("results files need DuckDB: pip install 'context-inspector[corpus]'") from e
    # Loading a session freezes the heap (inspector.gcpause); at exit let the last collection reach
    # DuckDB's objects again, or its bindings report them as leaked.
    atexit.unregister(gc.unfreeze)
    atexit.register(gc.unfreeze)
    return duckdb


def _connect(path: str, read_only: bool = False) -> Any:
    """DuckDB's connection to the results file ``path``; :class:`OSError` with DuckDB's reason when it
    cannot open it (a missing folder, a name too long, a file that is not a DuckDB database, which
    is left as it is)."""
    duckdb = _duckdb()
    try:
        return duckdb.connect(path, read_only=read_only)
    except duckdb.Error as e:
        raise OSError(f"cannot open the results file {path}: {e}") from None


class Store:
    """A results file open for writing (one writer at a time: DuckDB locks the file)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.con = _connect(self.path)
        self.con.execute(SCHEMA)

    def done(self, keys: Sequence[str]) -> dict[str, set[str]]:
        """The settings among ``keys`` each session already has rows for."""
        out: dict[str, set[str]] = {}
        q = (
            "SELECT session, setting FROM rows WHERE setting IN (SELECT unnest(?)) "
            "AND billed_cost_usd IS NOT NULL"
        )
        for s, k in self.con.execute(q, [list(keys)]).fetchall():
            out.setdefault(s, set()).add(k)
        return out

    def add(self, result: dict[str, Any]) -> None:
        """One session task's result: its rows, or its failure, in one transaction."""
        self.con.execute("BEGIN")
        try:
            if result["error"] is not None:
                self.con.execute(
                    "INSERT OR REPLACE INTO failures VALUES (?, ?)", [result["session"], result["error"]]
                )
            else:
                self.con.execute("DELETE FROM failures WHERE session = ?", [result["session"]])
            cols = ["session", "setting", "agent", "setting_values", *ROW_FIELDS]
            data = [
                [
                    r["session"],
                    r["setting"],
                    result["agent"],
                    json.dumps(r["values"], sort_keys=True),
                    *(r.get(f) for f in ROW_FIELDS),
                ]
                for r in result["rows"]
            ]
            if data:
                self.con.executemany(
                    f"INSERT OR REPLACE INTO rows ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                    data,
                )
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise

    def rows(self, keys: Sequence[str], sessions: Sequence[str]) -> list[dict[str, Any]]:
        """The rows of these settings and sessions, as the workers sent them."""
        cur = self.con.execute(
            f"SELECT session, setting, setting_values, {', '.join(ROW_FIELDS)} FROM rows "
            "WHERE setting IN (SELECT unnest(?)) AND session IN (SELECT unnest(?)) ORDER BY session, setting",
            [list(keys), list(sessions)],
        )
        return [
            {
                "session": s,
                "setting": k,
                "values": json.loads(v),
                **dict(zip(ROW_FIELDS, rest, strict=True)),
            }
            for s, k, v, *rest in cur.fetchall()
        ]

    def agents(self) -> dict[str, str]:
        return dict(
            self.con.execute("SELECT DISTINCT session, agent FROM rows WHERE agent IS NOT NULL").fetchall()
        )

    def close(self) -> None:
        self.con.close()


def results(path: str | Path) -> Any:
    """The rows of a results file as a pandas DataFrame: one row per session × setting, the
    grid point in ``setting_values`` (JSON; ``"recorded"`` for the as-recorded baseline) and the
    metrics in their own columns. Opened read-only."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"no results file {path}")
    con = _connect(str(path), read_only=True)
    try:
        return con.execute("SELECT * FROM rows ORDER BY session, setting").df()
    finally:
        con.close()
