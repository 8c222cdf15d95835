"""Exports: nothing lost on a round trip, secrets redacted, the source never overwritten,
and a compacted copy that pi itself opens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector import load_session, parse_session
from inspector.export import ExportError, compacted_entries, write_session_jsonl
from inspector.redact import redact_text

from .support.builder import SessionBuilder
from .support.paths import FIXTURES, REPO
from .support.pi_compare import compare
from .support.pi_oracle import PiOracle


def _objs(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _v3_files() -> list[Path]:
    files = sorted((REPO / "sample_sessions").glob("*.jsonl")) + sorted(FIXTURES.glob("synth-*.jsonl"))
    from inspector.importers import detect_format

    return [
        f
        for f in files
        if f.name != "broken.jsonl" and "v2" not in f.name and detect_format(f.read_bytes()[:65536]) == "pi"
    ]  # other agents' files are not pi round trips


@pytest.mark.parametrize("path", _v3_files(), ids=lambda p: p.name)
def test_round_trip_reproduces_every_entry(path: Path, tmp_path: Path) -> None:
    s = load_session(path)
    out = write_session_jsonl(s, tmp_path / "copy.jsonl")
    assert _objs(out) == _objs(path)


def test_round_trip_keeps_unknown_entries_and_fields(tmp_path: Path) -> None:
    text = (
        '{"type":"session","version":3,"id":"s","future":1}\n'
        '{"type":"hologram","id":"h","parentId":null,"beam":[1,{"x":2.5}]}\n'
        '{"type":"message","id":"m","parentId":"h","message":{"role":"user","content":"hi","mood":"ok"},"extra":true}\n'
    )
    src = tmp_path / "s.jsonl"
    src.write_text(text)
    out = write_session_jsonl(load_session(src), tmp_path / "o.jsonl")
    assert _objs(out) == _objs(src)


def test_export_refuses_to_overwrite_the_session(tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    b = SessionBuilder()
    b.user("hi")
    src.write_text(b.text())
    with pytest.raises(ExportError, match="refusing"):
        write_session_jsonl(load_session(src), src)
    assert src.read_text() == b.text()


@pytest.mark.parametrize(
    "secret,kind",
    [
        ("sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv", "anthropic-key"),
        ("sk-proj-abcdefghijklmnop1234", "openai-key"),
        ("Authorization: Bearer abcdef123456789xyz", "bearer-token"),
        ("ghp_abcdefghijklmnopqrstuvwxyz12", "github-token"),
        ("OPENAI_API_KEY=hunter2hunter2", "assignment"),
    ],
)
def test_secrets_are_redacted(secret: str, kind: str) -> None:
    out = redact_text(f"before {secret} after")
    assert f"[REDACTED:{kind}]" in out and "before" in out and "after" in out
    assert "hunter2" not in out and "abcdefghijklmnop" not in out and "AbCdEf" not in out


def test_session_export_redacts_unless_asked_to_keep(tmp_path: Path) -> None:
    b = SessionBuilder()
    b.user("my key is sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv")
    s = parse_session(b.text())
    red = write_session_jsonl(s, tmp_path / "r.jsonl", redact=True).read_text()
    kept = write_session_jsonl(s, tmp_path / "k.jsonl", redact=False).read_text()
    assert "sk-ant-api03" not in red and "[REDACTED:anthropic-key]" in red
    assert "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv" in kept


def test_compacted_copy_has_pis_compaction_as_leaf() -> None:
    s = load_session(FIXTURES / "synth-tree.jsonl")
    entries, entry = compacted_entries(s, keep_recent_tokens=2000)
    assert entries[-1] is entry and entry.parentId == s.entries[-1].id
    assert entry.firstKeptEntryId == "a0000016" and entry.id not in s.by_id


def test_export_compact_follows_pi_version_and_the_summarizer_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--pi-version, --model, --base-url and --send-secrets had been dropped on this path: the copy
    always took 0.73's cut and the default model. It cuts where `compact` says, and the summary
    request carries every option given."""
    import inspector.replay as replay_pkg
    from inspector.cli import main

    src = str(REPO / "sample_sessions" / "coding-session.jsonl")
    kept = {}
    for v in ("0.73", "0.58"):
        out = tmp_path / f"c{v}.jsonl"
        assert main(["export", "session", src, "--compact", "--pi-version", v, "-o", str(out)]) == 0
        kept[v] = load_session(out).entries[-1].firstKeptEntryId
    assert kept == {"0.73": "c000007e", "0.58": "c0000095"}  # `inspector compact --pi-version` says the same
    seen = []
    real = replay_pkg.default_summary

    def spy(prep, settings, *a, **k):  # type: ignore[no-untyped-def]
        seen.append(settings)
        return real(prep, settings.model_copy(update={"summarizer": "offline"}), *a, **k)

    monkeypatch.setattr(replay_pkg, "default_summary", spy)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    args = [
        "--summarizer",
        "openai",
        "--model",
        "m-1",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--send-secrets",
    ]
    out = tmp_path / "llm.jsonl"
    assert (
        main(["export", "session", src, "--compact", *args, "--keep-recent-tokens", "5000", "-o", str(out)])
        == 0
    )
    (got,) = seen
    assert (got.summarizer, got.summarizer_model, got.summarizer_base_url) == (
        "openai",
        "m-1",
        "http://127.0.0.1:9/v1",
    )
    assert got.summarizer_redact is False and got.keep_recent_tokens == 5000


@pytest.mark.oracle
def test_pi_opens_the_compacted_copy(tmp_path: Path, pi_oracle: PiOracle) -> None:
    s = load_session(FIXTURES / "synth-tree.jsonl")
    entries, entry = compacted_entries(s, keep_recent_tokens=2000)
    out = write_session_jsonl(s, tmp_path / "c.jsonl", entries=entries)
    pi = pi_oracle.run(str(out))
    assert pi["leafIndex"] == len(entries) - 1
    roles = [m["role"] for m in pi["context"]["messages"]]
    assert roles[0] == "compactionSummary"
    ours = load_session(out)
    from inspector import build_session_context

    assert [m.role for m in build_session_context(ours).messages] == roles


@pytest.mark.parametrize("what", ["replay", "doctor"])
def test_html_reports_are_self_contained_and_inert(what: str, tmp_path: Path) -> None:
    import re

    from inspector.cli import main

    out = tmp_path / f"{what}.html"
    src = REPO / "sample_sessions" / "hostile-content.jsonl"
    assert main(["export", what, str(src), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    from html.parser import HTMLParser

    class Scripts(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tags: list[dict] = []
            self.bodies: list[str] = []
            self._in = False

        def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
            if tag in ("script", "iframe", "img", "link"):
                self.tags.append({"tag": tag, **dict(attrs)})
            self._in = tag == "script"

        def handle_data(self, data):  # type: ignore[no-untyped-def]
            if self._in:
                self.bodies.append(data)

    p = Scripts()
    p.feed(page)
    assert all(t["tag"] == "script" and "src" not in t for t in p.tags), p.tags  # nothing loaded from outside
    assert not any(re.match(r"\s*alert\(", b) for b in p.bodies)  # the session's script is text, not code
    if what == "replay":
        assert "Plotly" in page and "&lt;script&gt;" in page
    else:
        assert "doctor" in page


def test_csv_and_json_reports(tmp_path: Path) -> None:
    import csv
    import json as _json

    from inspector.cli import main

    src = REPO / "sample_sessions" / "coding-session.jsonl"
    assert main(["export", "replay", str(src), "-o", str(tmp_path / "r.csv")]) == 0
    rows = list(csv.DictReader((tmp_path / "r.csv").open()))
    assert rows and {"step", "contextTokens", "events"} <= set(rows[0])
    assert main(["export", "doctor", str(src), "-o", str(tmp_path / "d.json")]) == 0
    assert "findings" in _json.loads((tmp_path / "d.json").read_text())
    # the JSON report carries what the HTML one shows, the compactions' summaries included
    assert main(["export", "replay", str(src), "-o", str(tmp_path / "r.json")]) == 0
    rep = _json.loads((tmp_path / "r.json").read_text())
    assert {"settings", "metrics", "steps", "cache", "summaries"} <= set(rep)
    (summary,) = rep["summaries"]
    assert (summary["step"], summary["entryIndex"]) == (66, 147) and summary["text"].startswith("## Goal")


@pytest.mark.oracle
@pytest.mark.parametrize(
    "name", ["claude-code-session.jsonl", "codex-session.jsonl", "opencode-session.json"]
)
def test_other_agents_sessions_exported_as_pi_files_read_the_same_in_pi(
    name: str, tmp_path: Path, pi_oracle: PiOracle
) -> None:
    """An imported session written out as a pi v3 file: pi's own code builds the same context."""
    from inspector.importers import load_any
    from inspector.oracle_json import oracle_main

    s = load_any(REPO / "sample_sessions" / name)
    out = write_session_jsonl(s, tmp_path / "as-pi.jsonl")
    pi = pi_oracle.run(str(out))
    ours = json.loads(json.dumps(oracle_main(load_session(out))))
    c = compare(pi, ours)
    assert c.checks > 50 and c.ok, c.report()
    assert [m["role"] for m in pi["context"]["messages"]][0] == "compactionSummary"


def test_the_html_replay_report_states_the_billed_cost_beside_the_blended_one(tmp_path: Path) -> None:
    """Billed cost wherever a cost appears (issue 19): the report's metrics name the blended
    figure as such and give the prompt-cache priced one, the summarisation requests in it."""
    import re

    from inspector.cache import cache_replay
    from inspector.cli import main
    from inspector.replay import ReplaySettings, replay

    src = REPO / "sample_sessions" / "coding-session.jsonl"
    out = tmp_path / "r.html"
    assert main(["export", "replay", str(src), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    m = cache_replay(replay(load_session(src), ReplaySettings())).metrics()

    def cell(label: str) -> str:
        got = re.search(rf"<th>{re.escape(label)}</th><td class='num'>([^<]*)</td>", page)
        assert got is not None, label
        return got.group(1)

    assert cell("billed input cost, prompt cache priced (USD)") == f"${m['billedCostUsd']:,.4f}"
    assert (
        cell("of which the compactions&#x27; summarisation requests (USD, estimated)")
        == f"${m['summarisationCostUsd']:,.4f}"
        != "$0.0000"
    )
    assert cell("input cost, blended per token, no cache (USD)").startswith("$")
    # figures as the app writes them: separators, whole tokens, shares in per cent
    r = replay(load_session(src), ReplaySettings())
    assert cell("mean context (tokens)") == f"{r.metrics.mean_context:,.0f}"
    assert cell("total input tokens (sum over calls)") == f"{r.metrics.total_input_tokens:,}"
    assert cell("cache hit rate") == f"{m['cacheHitRate']:.1%}"
    # as recorded, the reconstruction check: its band on the timeline and its verdict in words
    assert (
        "expected prompt (check" in page
        and "Reconstruction check: the context rebuilt here departs at 2 calls" in page
    )
    assert "what-if" not in page  # as recorded: the read error is the model's check
    what_if = ["--strategy", "opencode", "--compaction", "pi", "--window", "40000"]
    assert main(["export", "replay", str(src), "-o", str(out), *what_if]) == 0
    page = out.read_text(encoding="utf-8")
    c = cache_replay(
        replay(load_session(src), ReplaySettings(strategy="opencode", compaction="pi", context_window=40_000))
    )
    assert c.departs and cell(
        f"cache-read error vs recorded (a what-if from call {c.departs}: differs by design there)"
    )
    assert "Reconstruction check" not in page  # a what-if: the file's prompts are not its own


def test_the_html_replay_reports_last_bar_ends_at_the_prompt_the_provider_counted(tmp_path: Path) -> None:
    """The report's context bars, as the Replay page's: the sent bar ends at the last call's prompt
    as the provider counted it, and a line says what the part not in the file is."""
    import html

    from inspector.cli import main
    from inspector.replay import ReplaySettings, replay
    from inspector.ui.figures import NOT_IN_FILE, PROVIDER_PART_NOTE

    src = REPO / "sample_sessions" / "coding-session.jsonl"
    out = tmp_path / "r.html"
    assert main(["export", "replay", str(src), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    last = replay(load_session(src), ReplaySettings()).steps[-1]
    assert last.provider_tokens > last.tokens  # the recorded prompt holds the system prompt and tools
    assert f'"name":"{NOT_IN_FILE}"' in page.replace(": ", ":")
    assert f'"x":[{last.provider_tokens - last.tokens}]' in page.replace(", ", ",").replace(": ", ":")
    assert html.escape(PROVIDER_PART_NOTE) in page
