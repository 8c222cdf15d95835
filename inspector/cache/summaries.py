"""What the summarisation requests of a replay's compactions cost (pure).

A compaction is a model call of its own, apart from the conversation's: pi sends the summarised
messages, serialized into one user message, with its summary instructions (and the previous
summary), and for a split turn a second request for the turn's first part. Source: pi-mono
``packages/coding-agent/src/core/compaction/compaction.ts`` (``generateSummary``,
``generateTurnPrefixSummary``, through pi-ai's ``completeSimple`` with its default cache options):

* **Anthropic** — pi-ai puts ``cache_control`` on the system prompt and on the last user message,
  so the request is written to the cache whole (at the write rate) once it is above the model's
  minimum; its conversation is new text (the span starts where the last one was cut), so nothing
  of it is read;
* **OpenAI** — automatic caching has nothing to read either (the prompt differs from its first
  message on): plain input before GPT-5.6 (no write premium); from GPT-5.6 on, whose cache writes
  are billed (1.25×), written whole as on Anthropic (:func:`price` follows the model's rule);
* no cache model: plain input.

The request's size is pi's instructions and what the context lost at the compaction (the
summarised messages and the previous summary, which the request quotes: the replay keeps the
count), by the replay's counter, in the provider's tokens by the session's size fit (its scale:
the request carries no tools); a simulated compaction that split a turn sends the turn's first
part apart.

**Codex's remote compaction** (a recorded ``compacted`` line with no summary text: the server
compacts) is the conversation's own request: Codex sends its history with the turn's tools and
base instructions to the compact endpoint (codex-rs ``core/src/compact_remote_request.rs``,
``run_remote_compact_attempt``), so the prefix the last call left in the cache is read (at the
cache-read rate) and the rest, what followed that call, is plain input; its size is the context
before the compaction, in the provider's tokens by the session's fit (system prompt and tools
included: the last call's prompt and what followed it). **Codex's local compaction** (a recorded
one with its summary text, or the Codex policy's simulated one) appends its compact prompt to the
whole history and sends that with no tools (codex-rs ``core/src/compact.rs``,
``run_compact_task_inner``: ``Prompt { input, ..Default::default() }``): the prompt parts from the
turns' before the history begins, so nothing of the conversation's cache is read (at most the
instructions' own prefix could be: not counted); it is priced by the family's rule as a new
request of the context before the compaction and the compact prompt. **OpenCode records its
compaction's request** (the ``summary: true`` answer's tokens, kept by the importer:
:func:`inspector.importers.opencode.summary_usage`): a recorded one is priced from those tokens,
as recorded. Any other agent's compaction is priced as pi sends its request: that agent's own
request is not modelled (said in the row's ``shape``). The output (the summary's tokens) is
listed, not priced: billed cost is the prompt side, as for every call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from ..replay.sizes import SizeFit
from ..summarize.base import Kind, SummaryRequest
from ..summarize.prompts import build_prompt
from .prices import Rates
from .rule import CacheRule

if TYPE_CHECKING:
    from ..replay.results import CompactionRecord

SOURCE = (
    "pi-mono packages/coding-agent/src/core/compaction/compaction.ts (generateSummary, "
    "generateTurnPrefixSummary): one request per part through pi-ai's completeSimple, default cache options"
)
PI_SHAPE = "pi's request"
OTHER_SHAPE = "priced as pi's request (the agent's own is not modelled)"
CODEX_REMOTE_SHAPE = "Codex's remote compaction: the conversation's own request, its cached prefix read"
CODEX_LOCAL_SHAPE = (
    "Codex's local compaction: the whole history and its compact prompt, sent without the turn's tools "
    "(nothing of the conversation's cache read)"
)
RECORDED_SHAPE = "the agent's own request, as its file records it"
_MESSAGE = attrgetter("message")


class SummaryCall(NamedTuple):
    """The summarisation request(s) of one compaction, priced."""

    step: int
    """The call the compaction came before."""
    entry_index: int | None
    """The recorded compaction's entry (None: simulated)."""
    simulated: bool
    requests: int
    prompt: int
    """Provider tokens sent (every request of the compaction)."""
    write: int
    uncached: int
    read: int
    output: int
    """The summary's tokens (the replay's counter; not priced)."""
    cost: float
    family: str
    shape: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "entryIndex": self.entry_index,
            "simulated": self.simulated,
            "requests": self.requests,
            "prompt": self.prompt,
            "read": self.read,
            "write": self.write,
            "uncached": self.uncached,
            "outputTokens": self.output,
            "costUsd": round(self.cost, 6),
            "shape": self.shape,
        }


@cache
def _instruction_text(kind: Kind, style: str = "pi") -> str:
    system, user = build_prompt(SummaryRequest((), None, None, 0, kind, style))
    return system + "\n" + user


def _instructions(counter: Any, kind: Kind, style: str = "pi") -> int:
    """Counter tokens of an agent's summary instructions for one request (pi's unless ``style``
    says; the previous summary it quotes is counted with what the context lost: the summary
    message it was)."""
    return int(counter.count_text(_instruction_text(kind, style)))


def request_sizes(record: CompactionRecord, counter: Any) -> list[int]:
    """Counter tokens of each request one compaction (a ``Replay.summaries`` record) sends: pi's
    instructions, and what the context lost (``lost``, kept by the replay: the summarised
    messages and the previous summary), the turn prefix apart when a simulated compaction split a
    turn; else what the context before it holds that the context after it does not."""
    lost = record.lost
    if lost is None:
        msgs, k = record.pinned_before
        survives = {id(cm.message) for cm in record.after()}
        while k > 0 and id(msgs[k - 1].message) in survives:  # what survives is the context's end
            k -= 1
        lost = sum(counter.counts(list(map(_MESSAGE, msgs[:k]))))
    prep = record.prep
    prefix = list(map(_MESSAGE, prep.turnPrefixMessages)) if prep is not None and prep.isSplitTurn else []
    if not prefix:
        return [_instructions(counter, "history") + lost]
    part = sum(counter.counts(prefix))
    sizes = [_instructions(counter, "turn_prefix") + part]
    if prep is not None and prep.messagesToSummarize:
        sizes.insert(0, _instructions(counter, "history") + max(0, lost - part))
    return sizes


def price(tokens: int, rule: CacheRule, rate: Rates) -> tuple[int, int, float]:
    """(written, uncached, dollars) of one summarisation request of ``tokens`` provider tokens."""
    if rule.enabled and rule.writes and tokens >= rule.min_tokens:
        return tokens, 0, tokens * rate.write
    return 0, tokens, tokens * rate.input


PI_POLICIES = frozenset({"pi", "early"})
"""The compaction policies that summarise as pi does (the others are other agents')."""


def codex_remote(rec: CompactionRecord, agent: str) -> bool:
    """Is ``rec`` a recorded Codex compaction the server made (no summary text in the file)?"""
    return agent == "codex" and not rec.simulated and not rec.text.strip()


def codex_local(rec: CompactionRecord, agent: str) -> bool:
    """Is ``rec`` a compaction Codex made itself: a recorded one with its summary text, or the
    Codex policy's?"""
    return rec.policy == "codex" or (agent == "codex" and not rec.simulated and bool(rec.text.strip()))


def summary_calls(
    records: Sequence[CompactionRecord],
    counter: Any,
    fit: SizeFit,
    terms_at: Callable[[int], tuple[CacheRule, Rates] | None],
    agent: str,
    last_call: Callable[[int], tuple[int, int, bool]] = lambda step: (0, 0, False),
    recorded: Callable[[CompactionRecord], dict[str, Any] | None] = lambda rec: None,
) -> tuple[SummaryCall, ...]:
    """Each compaction of ``records`` (a replay's ``summaries``) with its requests priced by the
    rule and rates of the call it came before (``terms_at(step)``: None, the compaction is not
    priced); ``agent``: the file's format (pi's recorded compactions are pi's requests, Codex's
    remote ones the conversation's: :func:`codex_remote`); ``last_call(step)``: the last billed call
    before ``step``: its prompt (provider tokens), its replayed context (the counter's tokens) and
    whether its cache was still alive at ``step``; ``recorded(rec)``: the usage the file records
    of a compaction's own request (None: not recorded)."""
    out = []
    for rec in records:
        step = rec.step
        terms = terms_at(step)
        if terms is None:
            continue
        rule, rate = terms
        read = 0
        if not rec.simulated and (u := recorded(rec)) is not None:
            read, write, uncached = (max(0, int(u.get(k) or 0)) for k in ("cacheRead", "cacheWrite", "input"))
            sizes, shape = [read + write + uncached], RECORDED_SHAPE
            priced = [(write, uncached, read * rate.read + write * rate.write + uncached * rate.input)]
        elif codex_remote(rec, agent):
            prompt, tokens, warm = last_call(step)
            grown = max(0, round(fit.scale * (rec.tokens_before - tokens)))
            size = prompt + grown if prompt else fit.size(rec.tokens_before)
            read = prompt if rule.enabled and warm else 0
            sizes, shape = [size], CODEX_REMOTE_SHAPE
            priced = [(0, size - read, read * rate.read + (size - read) * rate.input)]
        elif codex_local(rec, agent):
            sizes = [fit.size(rec.tokens_before + _instructions(counter, "history", "codex"))]
            priced, shape = [price(sizes[0], rule, rate)], CODEX_LOCAL_SHAPE
        else:
            sizes = [max(0, round(fit.scale * n)) for n in request_sizes(rec, counter)]
            priced = [price(n, rule, rate) for n in sizes]
            own = rec.policy in PI_POLICIES or (not rec.simulated and agent == "pi")
            shape = PI_SHAPE if own else OTHER_SHAPE
        if not sizes:
            continue
        out.append(
            SummaryCall(
                step,
                rec.entry_index,
                rec.simulated,
                len(sizes),
                sum(sizes),
                sum(x[0] for x in priced),
                sum(x[1] for x in priced),
                read,
                int(counter.count_text(rec.text)),
                sum(x[2] for x in priced),
                rule.family,
                shape,
            )
        )
    return tuple(out)
