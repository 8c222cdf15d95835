"""JavaScript string/JSON semantics and pi's token estimate."""

from __future__ import annotations

import json
import math

import pytest

from inspector.jsjson import js_number, js_sorted, js_stringify, utf16_len, utf16_slice
from inspector.session.models import (
    AssistantMessage,
    BashExecutionMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ToolResultMessage,
    UserMessage,
)
from inspector.tokens import calculate_context_tokens, estimate_context_tokens, estimate_tokens, get_counter


@pytest.mark.parametrize(
    "value,js",
    [
        (1.0, "1"),
        (0.1, "0.1"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (0.000001, "0.000001"),
        (-0.0, "0"),
        (12345678901234567890, "12345678901234567000"),
        (9007199254740993, "9007199254740992"),
        (2.5e25, "2.5e+25"),
        (-3.14, "-3.14"),
        (float("nan"), "null"),
    ],
)
def test_numbers_print_like_json_stringify(value: float, js: str) -> None:
    assert js_number(value) == js


def test_stringify_is_compact_keeps_order_and_puts_index_keys_first() -> None:
    v = json.loads('{"b":1,"2":[1.0,true,null],"a":"é\\u0001","1":{"z":1,"0":2}}')
    assert js_stringify(v) == '{"1":{"0":2,"z":1},"2":[1,true,null],"b":1,"a":"é\\u0001"}'


def test_lone_surrogates_are_escaped_like_well_formed_json_stringify() -> None:
    assert js_stringify(json.loads('"a\\ud800b"')) == '"a\\ud800b"'


def test_utf16_length_slice_and_sort() -> None:
    assert utf16_len("a😀") == 3 and utf16_len("é") == 1
    assert utf16_slice("a😀b", 2) == "a\ud83d"  # JS slice can split a surrogate pair
    # JS sorts by UTF-16 units: U+FF5E (one unit 0xFF5E) sorts after U+1F600 (0xD83D...)
    assert js_sorted(["\uff5e", "\U0001f600", "a"]) == ["a", "\U0001f600", "\uff5e"]


def test_pi_estimate_per_role() -> None:
    assert estimate_tokens(UserMessage(content="abcde")) == 2  # ceil(5/4)
    img = {"type": "image", "data": "x", "mimeType": "image/png"}
    assert estimate_tokens(UserMessage(content=[{"type": "text", "text": "abcd"}, img])) == 1  # user image: 0
    assert estimate_tokens(ToolResultMessage(content=[img])) == 1200  # tool image: 4800 chars
    assert estimate_tokens(CustomMessage(content=[img, {"type": "text", "text": "abcd"}])) == 1201
    a = AssistantMessage(
        content=[
            {"type": "thinking", "thinking": "tt"},
            {"type": "text", "text": "xx"},
            {"type": "toolCall", "name": "read", "arguments": {"path": "a", "n": 1.0}},
        ]
    )
    # 2 + 2 + len("read") + len('{"path":"a","n":1}') = 4 + 4 + 18
    assert estimate_tokens(a) == math.ceil(26 / 4)
    assert estimate_tokens(BashExecutionMessage(command="ls", output="abc", excludeFromContext=True)) == 2
    assert estimate_tokens(CompactionSummaryMessage(summary="x" * 9)) == 3
    assert estimate_tokens(UserMessage(content="😀😀")) == 1  # 4 UTF-16 units


def test_context_tokens_skip_aborted_and_error_usage() -> None:
    u = {"input": 10, "output": 5, "cacheRead": 100, "cacheWrite": 0, "totalTokens": 0}
    good = AssistantMessage(content=[], stopReason="stop", usage=u)
    aborted = AssistantMessage(content=[], stopReason="aborted", usage={**u, "totalTokens": 99999})
    assert calculate_context_tokens(good.usage) == 115  # totalTokens 0 is falsy: sum instead
    tail = UserMessage(content="abcdefgh")
    r = estimate_context_tokens([UserMessage(content="x" * 400), good, aborted, tail])
    assert (r.tokens, r.usageTokens, r.trailingTokens, r.lastUsageIndex) == (117, 115, 2, 1)
    r = estimate_context_tokens([UserMessage(content="x" * 400)])
    assert r.lastUsageIndex is None and r.tokens == 100


def test_tiktoken_counts_offline_and_differs_from_the_estimate(monkeypatch) -> None:
    # No network: any attempt to download an encoding would fail here.
    import socket

    def no_network(*a, **k):
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket, "create_connection", no_network)
    c = get_counter("tiktoken")
    assert c.count_text("hello world") == 2
    msgs = [
        UserMessage(content="hello world"),
        ToolResultMessage(content=[{"type": "image", "data": "", "mimeType": ""}]),
    ]
    assert c.count_many(msgs) == [2, 1200]


def test_short_texts_are_encoded_on_the_calling_thread_and_large_batches_in_two_halves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A batch under :data:`inspector.tokens._THREADED_CHARS` is encoded on the calling thread; a
    larger one in two halves on the process's two threads (never by tiktoken's
    ``encode_ordinary_batch``, which submits each text on its own), with the same counts."""
    from inspector import tokens

    enc = tokens._encoding()
    texts = ["hello world", "def f(x):\n    return x + 1\n" * 300, "naïve café 日本語 " * 2000, "x"]
    serial = [len(enc.encode_ordinary(t)) for t in texts]
    c = get_counter("tiktoken")
    pools = []
    pool = tokens._pool
    monkeypatch.setattr(tokens, "_pool", lambda: pools.append(1) or pool())
    monkeypatch.setattr(type(enc), "encode_ordinary_batch", None)  # not used
    assert c.count_pieces(texts[:2]) == serial[:2] and pools == []  # 10k characters: one thread
    assert c.count_text(texts[0]) == 2 and pools == []
    monkeypatch.setattr(tokens, "_THREADED_CHARS", 1000)
    assert c.count_pieces(texts) == serial and pools == [1]
    assert c.count_pieces(texts[1:3]) == serial[1:3] and c.count_pieces(texts[2:]) == serial[2:]


def test_unknown_counter_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown token counter"):
        get_counter("nope")
