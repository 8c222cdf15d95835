"""Dynamic Context Pruning's ``compress`` tool in an OpenCode export: which messages each call
replaced, and the summary message the model saw instead.

Source: Opencode-DCP/opencode-dynamic-context-pruning — ``lib/message-ids.ts``,
``lib/tools/compress.ts`` and ``lib/tools/utils.ts`` (fbd75bce, March 2026), ``lib/compress/range.ts``,
``range-utils.ts``, ``search.ts``, ``state.ts`` (the later ``content: [{startId, endId, summary}]``
form), ``lib/messages/prune.ts`` (``filterCompressedRanges``), ``lib/messages/sync.ts``
(``syncCompressionBlocks``). Rules reproduced:

* **Message ids.** Before each model call DCP numbers the messages it is sent, in the order it
  sends them, that have no number yet: ``m0001``, ``m0002``, … (``assignMessageRefs``), skipping
  user messages whose every part is ignored (DCP's own notifications). A number, once given,
  stays. A new block's summary message is numbered too, when first sent (it stands at its anchor,
  so before the compress call's own message): the five compress calls of a real session (their
  ranges and "Compressed N messages") only add up with one number per block (later DCP versions
  skip ``msg_dcp_summary_…`` ids explicitly).
* **Ranges.** ``startId``/``endId`` name a message (``mNNNN``) or an active block (``bN``, which
  stands at its anchor: the first message it replaced). The range is every message from start to
  end, ignored ones left out; active blocks anchored in it are consumed (their messages join the
  new block, they stop being active). Each entry of ``content`` (or the one ``content`` object of
  the older form, or the flat ``startId``/``endId``/``summary`` form) is a block, numbered ``b1``,
  ``b2``, … in order.
* **Summary.** ``(bN)`` / ``{block_N}`` placeholders are replaced by that block's summary without
  its wrapper (``restoreSummary``); a boundary block not placed by a placeholder is put before
  (start) or after (end) the text; a required block still missing is appended under "The
  following previously compressed summaries were also part of this conversation section:";
  outputs of protected tools in the range (default ``task``, ``skill``, ``todowrite``,
  ``todoread``) are appended under "The following protected tools were used in this
  conversation as well:". The result is wrapped: ``[Compressed conversation section]``, the
  trimmed text, a blank line and ``<dcp-message-id>bN</dcp-message-id>`` on a line of its own
  (``wrapCompressedSummary``).
* **In the context** (``filterCompressedRanges``, ``syncCompressionBlocks``): from the call after
  the compress on — while the message holding the compress call is still sent — the block's
  messages are left out and one user message carrying its summary stands where its anchor was.

Not reproduced: the configuration a user may change (``protectUserMessages``, other protected
tools, ``protectedFilePatterns``), sub-agent merging, ``decompress``/``recompress`` commands
(not in the export).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

HEADER = "[Compressed conversation section]"
PROTECTED_TOOLS = ("task", "skill", "todowrite", "todoread")
_PLACEHOLDER = re.compile(r"\(b(\d+)\)|\{block_(\d+)\}", re.I)
_REF = re.compile(r"^m(\d{4})$")
_BLOCK = re.compile(r"^b([1-9]\d*)$")
_RESTORE_HEAD = re.compile(r"^\s*\[Compressed conversation(?: section)?(?: b\d+)?\]", re.I)
_RESTORE_TAIL = re.compile(r"(?:\r?\n)*<dcp-message-id>b\d+</dcp-message-id>\s*$", re.I)


@dataclass
class Block:
    id: int
    anchor: int
    """Index (in the export's messages) of the first message it replaced."""
    lo: int
    hi: int
    """First and last message it replaced (consumed blocks' included)."""
    summary: str
    consumes: list[int] = field(default_factory=list)
    compress_message: int = -1


def ignored(msg: dict[str, Any]) -> bool:
    """DCP's ``isIgnoredUserMessage``: a user message with no part that is not ``ignored``."""
    info = jv if isinstance(jv := msg.get("info"), dict) else {}
    parts = [p for p in _parts(msg) if isinstance(p, dict)]
    return info.get("role") == "user" and all(p.get("ignored") for p in parts)


def is_dcp(messages: list[Any]) -> bool:
    """Does this export show DCP at work: a completed ``compress`` call?"""
    return any(_compress_parts(m) for m in messages if isinstance(m, dict))


def restore(summary: str) -> str:
    m = _RESTORE_HEAD.match(summary)
    if not m:
        return summary
    body = re.sub(r"^(?:\r?\n)+", "", summary[m.end() :])
    return re.sub(r"(?:\r?\n)+$", "", _RESTORE_TAIL.sub("", body))


def wrap(block_id: int, body: str) -> str:
    footer = f"\n<dcp-message-id>b{block_id}</dcp-message-id>"
    body = body.strip()
    return f"{HEADER}\n{footer}" if not body else f"{HEADER}\n{body}\n\n{footer}"


def _compress_parts(msg: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        p
        for p in _parts(msg)
        if isinstance(p, dict)
        and p.get("type") == "tool"
        and p.get("tool") == "compress"
        and isinstance(p.get("state"), dict)
        and p["state"].get("status") == "completed"
    ]


def _parts(msg: dict[str, Any]) -> list[Any]:
    """A message's parts (a damaged file may hold anything there)."""
    parts = msg.get("parts")
    return parts if isinstance(parts, list) else []


def _info(msg: dict[str, Any]) -> dict[str, Any]:
    info = msg.get("info")
    return info if isinstance(info, dict) else {}


def _entries(args: Any) -> list[dict[str, Any]]:
    """The ranges of a compress call, whichever of DCP's argument forms it used."""
    if not isinstance(args, dict):
        return []
    c = args.get("content")
    items = c if isinstance(c, list) else [c] if isinstance(c, dict) else [args]
    return [
        x
        for x in items
        if isinstance(x, dict) and all(isinstance(x.get(k), str) for k in ("startId", "endId", "summary"))
    ]


def _steps(msg: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """An assistant message's parts, one list per model call (split at ``step-finish``)."""
    steps: list[list[dict[str, Any]]] = [[]]
    for p in _parts(msg):
        if not isinstance(p, dict):
            continue
        steps[-1].append(p)
        if p.get("type") == "step-finish":
            steps.append([])
    return [s for s in steps if s] or [[]]


class Replay:
    """DCP's state through an export: message numbers and blocks, call by call."""

    def __init__(self, messages: list[Any]) -> None:
        self.msgs = [m if isinstance(m, dict) else {} for m in messages]
        self.ignored = [ignored(m) for m in self.msgs]  # DCP's own notifications: never numbered
        self.refs: dict[tuple[str, int], int] = {}  # ("m", message index) | ("s", block id) -> number
        self.by_number: dict[int, tuple[str, int]] = {}  # the other way round
        self.blocks: dict[int, Block] = {}
        self.active: list[int] = []
        self.calls: dict[str, list[Block]] = {}  # compress part id -> the blocks it made
        self.problems: list[str] = []
        self.seen = 0  # messages 0 .. seen-1 have been sent once (numbered, or covered by then)
        self.covered: set[int] = set()  # messages the active blocks leave out
        self.unnumbered: set[int] = set()  # active blocks whose summary has no number yet

    def run(self) -> dict[str, list[Block]]:
        for j, msg in enumerate(self.msgs):
            if _info(msg).get("role") != "assistant":
                continue
            for s, parts in enumerate(_steps(msg)):
                self._number(j + (1 if s else 0))
                for p in parts:
                    if p in _compress_parts({"parts": parts}):
                        self._compress(j, p)
        return self.calls

    def _number(self, upto: int) -> None:
        """Number what the call sees of messages ``0 .. upto-1`` that has no number yet, in the
        order it is sent: each active block's summary at its anchor, then the message there if no
        active block covers it and it is not ignored. Only two kinds of key can be new: a message not
        sent before (from :attr:`seen` on: a block only ever covers more, so an earlier message left
        out stays out, and one sent was numbered then) and the summary of a block made since; so
        only those are looked at, in that order, not every message at every call."""
        new = []
        if self.unnumbered:  # a block's summary not sent yet
            anchors = {self.blocks[b].anchor: b for b in self.active}
            new = [(i, 0, ("s", b)) for i, b in anchors.items() if i < upto and b in self.unnumbered]
        new += [
            (i, 1, ("m", i))
            for i in range(self.seen, upto)
            if i not in self.covered and not self.ignored[i]  # from seen on: none numbered yet
        ]
        self.seen = max(self.seen, upto)
        for _, _, key in sorted(new):
            n = self.refs[key] = len(self.refs) + 1
            self.by_number[n] = key
            if key[0] == "s":
                self.unnumbered.discard(key[1])

    def _resolve(self, ref: str) -> tuple[int, int | None] | None:
        """(message index, block id or None) a boundary id stands for, or None."""
        ref = ref.strip().lower()
        m, b = _REF.match(ref), _BLOCK.match(ref)
        if m:
            key = self.by_number.get(int(m.group(1)))
            return (key[1], None) if key is not None and key[0] == "m" else None
        if b and int(b.group(1)) in self.active:
            return self.blocks[int(b.group(1))].anchor, int(b.group(1))
        return None

    def _compress(self, j: int, part: dict[str, Any]) -> None:
        st = part["state"]
        plans = []
        for entry in _entries(st.get("input")):
            a, z = self._resolve(entry["startId"]), self._resolve(entry["endId"])
            if a is None or z is None or a[0] > z[0]:
                self.problems.append(f"{entry['startId']}..{entry['endId']}")
                continue
            plans.append((entry, a, z))
        made = [self._block(j, entry, a, z) for entry, a, z in plans]
        for b in made:
            self.active = [x for x in self.active if x not in b.consumes] + [b.id]
            self.unnumbered = (self.unnumbered - set(b.consumes)) | {b.id}
            self.covered.update(range(b.lo, b.hi + 1))  # the blocks it consumes lie within it
        self.calls[str(part.get("id") or part.get("callID"))] = made

    def _block(
        self, j: int, entry: dict[str, Any], a: tuple[int, int | None], z: tuple[int, int | None]
    ) -> Block:
        sel = [i for i in range(a[0], z[0] + 1) if not self.ignored[i]]
        required = sorted(
            (b for b in self.active if self.blocks[b].anchor in sel), key=lambda b: (self.blocks[b].anchor, b)
        )
        boundary = {x for x in (a[1], z[1]) if x is not None}
        body, consumed = self._expand(entry["summary"], required, a[1], z[1])
        missing = [b for b in required if b not in boundary and b not in consumed]
        if missing:
            body += (
                "\n\nThe following previously compressed summaries were also part of this conversation section:"
                + "".join(f"\n### (b{b})\n{restore(self.blocks[b].summary)}" for b in missing)
            )
            consumed += missing
        body += self._protected(sel)
        bid = len(self.blocks) + 1
        lo = min([a[0], *(self.blocks[b].lo for b in consumed)])
        hi = max([z[0], *(self.blocks[b].hi for b in consumed)])
        block = Block(bid, a[0], lo, hi, wrap(bid, body), consumed, j)
        self.blocks[bid] = block
        return block

    def _expand(
        self, summary: str, required: list[int], start: int | None, end: int | None
    ) -> tuple[str, list[int]]:
        """Placeholders replaced, boundary blocks put in (``injectBlockPlaceholders``)."""
        consumed: list[int] = []
        out, cursor = "", 0
        for m in _PLACEHOLDER.finditer(summary):
            b = int(m.group(1) or m.group(2))
            if b not in required or b in consumed:
                continue
            out += summary[cursor : m.start()] + restore(self.blocks[b].summary)
            cursor = m.end()
            consumed.append(b)
        text = out + summary[cursor:] if consumed else summary
        for edge, first in ((start, True), (end, False)):
            if edge is None or edge in consumed:
                continue
            inject = restore(self.blocks[edge].summary).strip()
            left, right = (inject, text.strip()) if first else (text.strip(), inject)
            text = right if not left else left if not right else f"{left}\n\n{right}"
            consumed.append(edge)
        return text, consumed

    def _protected(self, sel: list[int]) -> str:
        outs = []
        for i in sel:
            if i in self.covered:
                continue
            for p in _parts(self.msgs[i]):
                if isinstance(p, dict) and p.get("type") == "tool" and p.get("tool") in PROTECTED_TOOLS:
                    st = jv if isinstance(jv := p.get("state"), dict) else {}
                    out = st.get("output") if st.get("status") == "completed" else ""
                    if out:
                        outs.append(f"\n### Tool: {p['tool']}\n{out if isinstance(out, str) else out!r}")
        return (
            "\n\nThe following protected tools were used in this conversation as well:" + "".join(outs)
            if outs
            else ""
        )


# ---------------------------------------------------------------------------------------------
# What DCP's own notifications say of the summaries it sent
# ---------------------------------------------------------------------------------------------

_NOTE_HEAD = re.compile(
    r"▣ DCP \| -[\d.]{1,12}K? removed(?:, \+(?P<total>\d{1,9}(?:\.\d)?K?) summary)?"
    r"(?: — Compression #(?P<run>\d{1,9}))?"
)
"""The notification's first line (DCP 3.1: ``formatCompressionMetrics`` of the whole session, then,
in the ``minimal`` form, the run): ``+Y summary`` is the summaries of the active blocks."""
_NOTE_RUN = re.compile(
    r"▣ Compression #(?P<run>\d{1,9}) -[\d.]{1,12}K? removed(?:, \+(?P<own>\d{1,9}(?:\.\d)?K?) summary)?"
)
"""The ``detailed`` form's line for the run: ``+Y summary`` is this call's blocks' summaries. Numbers
are bounded (a hostile file's 5,000-digit run number is not read)."""


def _count(text: str) -> int:
    """``formatTokenCount(n, true)`` read back: ``10.3K`` → 10,300, ``999`` → 999."""
    return round(float(text[:-1]) * 1000) if text.endswith("K") else int(text)


def notified(messages: list[Any], calls: dict[str, list[Block]]) -> dict[str, tuple[int, str]]:
    """Compress part id → (the tokens DCP's own notification gives the summaries that call sent, the
    notification's line), for the calls whose notification the export holds (an ignored user
    message after it: ``▣ DCP | -39.6K removed, +10.3K summary — Compression #1``). Source: DCP
    3.1.9 (npm ``@tarquinen/opencode-dcp``), ``sendCompressNotification`` in ``lib/ui/notification``:
    each block's stored summary counted with Anthropic's tokenizer (``countTokens``), printed to the
    nearest 0.1K (``formatTokenCount``); the header's figure is ``getActiveSummaryTokenUsage``. Run ``N`` is
    the ``N``-th completed compress call (DCP numbers a run when the call's ranges resolve). The
    ``detailed`` form gives a run's own figure; the ``minimal`` one only the active blocks' total,
    from which a run's is its rise plus what the blocks it consumed had counted. Older DCP versions
    print no summary size: nothing is given then."""
    totals: dict[int, tuple[int, str]] = {}
    own: dict[int, tuple[int, str]] = {}
    for msg in messages:
        if not isinstance(msg, dict) or not ignored(msg):
            continue
        for p in _parts(msg):
            text = p.get("text") if isinstance(p, dict) else None
            if not isinstance(text, str) or "▣" not in text:
                continue
            head, run = _NOTE_HEAD.search(text), _NOTE_RUN.search(text)
            line = text.strip().splitlines()[0][:200]
            if run and run.group("own"):
                own[int(run.group("run"))] = (_count(run.group("own")), line)
            elif run and head:
                own[int(run.group("run"))] = (0, line)  # no summary: DCP leaves "+0 summary" out
            if head and head.group("run"):
                total = _count(head.group("total")) if head.group("total") else 0
                totals[int(head.group("run"))] = (total, line)
    out: dict[str, tuple[int, str]] = {}
    sizes: dict[int, int] = {}  # block id -> its summary's notified tokens (a one-block run's)
    for n, (part, blocks) in enumerate(calls.items(), start=1):
        if n in own:
            tokens, line = own[n]
        elif n in totals and (n == 1 or n - 1 in totals):
            consumed = [c for b in blocks for c in b.consumes]
            if any(c not in sizes for c in consumed):
                continue
            tokens = totals[n][0] - (totals[n - 1][0] if n > 1 else 0) + sum(sizes[c] for c in consumed)
            line = totals[n][1]
        else:
            continue
        if tokens < 0:
            continue
        out[part] = (tokens, line)
        if len(blocks) == 1:
            sizes[blocks[0].id] = tokens
    return out
