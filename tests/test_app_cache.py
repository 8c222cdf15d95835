"""The prompt cache in the app (AppTest): the split of a call's prompt, the invalidation marks on
the timeline, the sentence in "What happened here", the run panel and Compare's ranking."""

from __future__ import annotations

from inspector import load_session
from inspector.cache import cache_replay
from inspector.replay import ReplaySettings, replay
from inspector.ui import cache_view

from .test_app import SAMPLE, figures_of, fresh, load, page, run_sweep, story


def test_replay_page_splits_the_prompt_and_marks_invalidations():
    at = page(load(fresh()), "replay")
    assert not at.exception
    c = cache_replay(replay(load_session(SAMPLE), ReplaySettings()))
    k = at.slider(key="step").value
    split = next(
        f for f in figures_of(at) if f["layout"].get("title", {}).get("text", "").startswith("Prompt cache")
    )
    got = {t["name"]: t["x"] for t in split["data"]}
    s = c.steps[k]
    assert (
        got["cache read"][0] == s.read
        and got["cache written"][0] == s.write
        and got["uncached input"][0] == s.uncached
    )
    assert got["cache read"][1] == s.recorded_read  # the recorded bar
    caption = next(x.value for x in at.caption if x.value.startswith("What was sent, split the way"))
    assert s.family == "anthropic" and "orange written to it (billed at 1.25× the input price)" in caption
    tl = figures_of(at)[1]
    marks = next(t for t in tl["data"] if t.get("name") == "cache invalidated")
    assert marks["x"] == [x.step for x in c.invalidations]
    # at an invalidation the story says what broke the cache and what it cost
    inv = c.invalidations[0]
    at.slider(key="step").set_value(inv.step).run()
    text = story(at)
    assert "The cached prefix broke here" in text and f"{inv.invalidation['tokensRewritten']:,}" in text
    assert any(
        "Billed input cost" in " ".join(df.value["metric"])
        for df in at.dataframe
        if "metric" in df.value.columns
    )


def test_compare_ranks_configurations_by_billed_cost():
    at = page(load(fresh()), "compare")
    assert not at.exception
    table = next(df.value for df in at.dataframe if "billed input cost ($)" in df.value.columns)
    assert list(table["rank"]) == [1, 2]
    assert list(table["billed input cost ($)"]) == sorted(table["billed input cost ($)"])


def test_story_for_a_provider_without_a_cache_model(sb):
    sb.user("hi")
    sb.assistant("hello")
    for x in sb.lines:
        if x.get("message", {}).get("role") == "assistant":
            x["message"]["provider"], x["message"]["model"] = "google", "gemini-2.5-pro"
    r = replay(sb.session(), ReplaySettings())
    assert cache_view.story(r, cache_replay(r), 0)[0].startswith("Prompt cache: no cache model")


def test_recorded_reads_under_no_cache_model_are_not_checked(sb):
    """A provider with no cache model has nothing to check its recorded reads against: no error,
    no verdict on the Load page (it read "within 100.0 % … 0 calls disagree")."""
    sb.user("hi")
    sb.assistant("hello", usage=100)
    for x in sb.lines:
        if x.get("message", {}).get("role") == "assistant":
            x["message"]["provider"], x["message"]["model"] = "google", "gemini-2.5-pro"
            x["message"]["usage"].update(cacheRead=50_000)
    c = cache_replay(replay(sb.session(), ReplaySettings()))
    assert c.steps[0].family == "none" and c.steps[0].recorded_read == 50_000
    m = c.metrics()
    assert m["cacheReadError"] is None and m["cacheReadTotalError"] is None
    assert cache_view.verdict(m, len(c.disagreements())) is None


def test_story_says_how_each_provider_pays_for_a_broken_prefix():
    """Anthropic writes the prefix again at its write price; an OpenAI-style cache has none: the
    tokens are sent uncached again (the story and the timeline's mark say which). Pruning every
    turn breaks the prefix at each prune."""
    from .test_cache import PRUNE_EVERY_TURN, reading_session

    def gpt(b):  # type: ignore[no-untyped-def]
        for x in b.lines:
            if x.get("message", {}).get("role") == "assistant":
                x["message"]["model"], x["message"]["provider"] = "gpt-5.5", "openai"
        return b

    for build, family, said in (
        (lambda: gpt(reading_session(6)), "openai", "tokens be sent uncached again"),
        (lambda: reading_session(6), "anthropic", "tokens be written again"),
    ):
        r = replay(build().session(), PRUNE_EVERY_TURN)
        c = cache_replay(r)
        inv = c.invalidations[0]
        assert inv.family == family and inv.invalidation["cause"] == "prune"
        (line,) = [x for x in cache_view.story(r, c, inv.step) if x.startswith("The cached prefix broke")]
        assert said in line
        mark = cache_view.invalidation_trace(r, c)
        assert mark is not None and ("sent uncached again" in mark["text"][0]) == (family == "openai")


def test_story_at_a_compaction_prices_its_summarisation_request():
    from inspector import load_session

    from .test_app import SAMPLES

    r = replay(load_session(SAMPLES / "coding-session.jsonl"), ReplaySettings())
    c = cache_replay(r)
    (sc,) = c.summaries
    (line,) = [x for x in cache_view.story(r, c, sc.step) if "summarisation request" in x]
    assert f"{sc.write:,} tokens written to the cache" in line and f"${sc.cost:,.4f}" in line
    assert not [x for x in cache_view.story(r, c, sc.step + 1) if "summarisation request" in x]


def test_compare_prices_batch_style_pruning_against_every_turn():
    at = page(load(fresh()), "compare")
    at.toggle(key="cmp_batches").set_value(True).run()
    assert not at.exception
    table = [df.value for df in at.dataframe if "billed input cost ($)" in df.value.columns][-1]
    names = list(table["configuration"])
    assert sorted(names) == [
        "every turn (PRUNE_MINIMUM 0)",
        "in batches (PRUNE_MINIMUM 20,000)",
        "in batches (PRUNE_MINIMUM 40,000)",
        "no pruning",
    ]  # each row told apart within the column's width; the strategy is said once, above the table
    assert "Pruning with pi-context-pruning (the sidebar's other settings kept), against no pruning." in [
        c.value for c in at.caption
    ]
    every = table[table["configuration"].str.contains("every turn")].iloc[0]
    none = table[table["configuration"] == "no pruning"].iloc[0]
    # on this sample pruning every turn saves tokens (blended) but bills more (the cache)
    assert (
        every["blended input cost ($)"] < none["blended input cost ($)"]
        and every["billed input cost ($)"] > none["billed input cost ($)"]
    )


def test_the_cost_table_shows_dollars_shares_and_token_counts_as_such():
    import json

    at = page(load(fresh()), "compare")
    (df,) = [d for d in at.dataframe if "billed input cost ($)" in d.value.columns]
    assert list(df.value.columns[:2]) == ["rank", "configuration"]
    shown = json.loads(df.proto.columns)
    fmt = {k: v["type_config"].get("format") for k, v in shown.items() if k in df.value.columns}
    assert fmt["billed input cost ($)"] == fmt["blended input cost ($)"] == "$%.4f"
    assert fmt["cache hit rate"] == "percent" and fmt["input tokens"] == "localized"
    assert list(df.value["rank"]) == [1, 2]  # the values stay as computed


def test_load_page_says_how_far_the_cache_model_follows_the_recorded_usage():
    at = load(fresh())
    line = next(c.value for c in at.caption if c.value.startswith("Prompt cache:"))
    c = cache_replay(replay(load_session(SAMPLE), ReplaySettings(strategy="recorded")))
    assert (
        f"{abs(c.read_total_error):.1%} in total" in line
        and f"{len(c.disagreements())} call(s) disagree" in line
    )


def test_a_sweeps_cells_are_ranked_by_billed_cost_with_the_frontier():
    at = load(fresh())
    at.selectbox(key="compaction").set_value("pi")
    at.selectbox(key="strategy").set_value("opencode").run()
    at = run_sweep(page(at, "compare"), "prune_protect", "1000, 40000", "prune_minimum", "0, 20000")
    at.toggle(key="sw_billed").set_value(True).run()
    assert not at.exception
    table = next(df.value for df in at.dataframe if "frontier" in df.value.columns)
    assert len(table) == 4 and list(table["billedCostUsd"]) == sorted(table["billedCostUsd"])
    assert bool(table["frontier"].iloc[0])  # the cheapest cell is on the frontier
    front = next(f for f in figures_of(at) if "Cost against re-reads" in str(f["layout"].get("title")))
    assert sorted(front["data"][0]["x"]) == sorted(table["billedCostUsd"])  # one marker per cell
    assert front["data"][0]["y"] == [int(v) for v in table["rereads"]]
    assert front["layout"]["yaxis"]["dtick"] == 1  # a few re-reads: whole-number ticks


def test_the_load_pages_verdict_says_how_far_off_the_reads_are():
    """ "within 100.0 %" read as praise for a model that missed every read: the sentence says how far off."""
    m = {"cacheReadError": 1.0, "cacheReadTotalError": -1.0, "billedCostError": None}
    assert cache_view.verdict(m, 1) == (
        "Prompt cache: replayed as recorded, the model's cache reads are off the recorded ones by "
        "100.0% in total (100.0% call by call); 1 call(s) disagree, each with its likely cause on the "
        "Replay page."
    )


def test_the_first_call_of_a_claude_code_file_says_it_is_assumed_warm():
    """The split under a Claude Code file's first call names the modelled warm start (and its
    sources); a later call's does not."""
    at = page(load(fresh(), "claude-code-session.jsonl"), "replay")
    at.slider(key="step").set_value(0).run()
    assert not at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "First call: assumed warm at the start" in captions and "#94417" in captions
    assert "The read is assumed warm at the start" in story(at)
    at.slider(key="step").set_value(1).run()
    assert "First call:" not in " ".join(c.value for c in at.caption) and "assumed warm" not in story(at)
