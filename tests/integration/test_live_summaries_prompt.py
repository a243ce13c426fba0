"""The live session's compaction summaries in the prompt, chosen by the question (Memory.prompt with a
session_id): the summary that holds the question's fact is the one shown, whatever its age."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory import Memory  # noqa: E402
from agent_memory.retrieval.debug import render_dump  # noqa: E402

# One topic per span of the session, each compacted into a summary of its own (oldest first).
SPANS = [
    ("the staging database", "The staging database listens on port 6543."),
    ("the billing export", "The billing export runs nightly at 02:30 UTC."),
    ("the mobile release", "The mobile release is frozen until build 8812 passes QA."),
]


def summaries_section(prompt: str) -> str:
    return prompt.partition("## Summaries\n")[2].partition("\n\n## ")[0]


@pytest.fixture
def memory(settings):
    with Memory(settings=settings) as memory:
        session = memory.session("ops")
        for topic, fact in SPANS:
            memory.add_message("ops", {"role": "user", "content": f"Let us look at {topic} today. {fact}"})
            memory.add_message("ops", {"role": "assistant", "content": f"Checking {topic} now."})
            memory.add_message("ops", {"role": "user", "content": "Thanks."})
            memory.add_message("ops", {"role": "assistant", "content": f"Done with {topic}."})
            session.compact(force=True)
        yield memory


def test_the_summary_holding_the_questions_fact_is_in_the_prompt(memory):
    summaries = memory.working_memory.summaries("default", "ops")
    assert len(summaries) == 3 and "6543" in summaries[-1].text  # newest first: the port is in the oldest
    for question, fact in (("Which port does the staging database listen on?", "6543"),
                           ("When does the billing export run?", "02:30 UTC"),
                           ("Which build must pass QA before the mobile release?", "8812")):
        result = memory.prompt(question, session_id="ops", budget=500, debug=True)
        shown = summaries_section(result.prompt)
        assert fact in shown, (question, result.prompt)
        assert sum(other in shown for _, other in SPANS) == 1  # the share (50 tokens) holds one: the right one


def test_the_dump_says_why_each_summary_was_placed_or_dropped(memory):
    result = memory.prompt("Which port does the staging database listen on?", session_id="ops", budget=500,
                           debug=True)
    ranked = [d for d in result.decisions if d.stage == "summaries" and d.action == "ranked"]
    assert [d.target for d in ranked][0] == "wms:default/ops/0"  # the oldest, ranked first by the question
    assert "question terms" in ranked[0].reason and "by meaning" in ranked[0].reason
    placed = {d.target: d.action for d in result.decisions + result.assembly_drops
              if d.target.startswith("wms:") and d.action in ("placed", "compressed", "dropped")}
    assert placed["wms:default/ops/0"] in ("placed", "compressed")
    assert set(placed) == {"wms:default/ops/0", "wms:default/ops/1", "wms:default/ops/2"}
    dump = render_dump(result)
    assert "[summaries] ranked wms:default/ops/0: best line by meaning" in dump
    assert "[assemble] dropped wms:default/ops/2: summaries share full" in dump


def test_off_the_newest_summary_comes_first_as_before(memory):
    pipeline = memory.pipeline_for(overrides={"live_summaries": {"by_question": False}})
    result = pipeline.run("Which port does the staging database listen on?", tenant="default", session_id="ops",
                          budget=500, debug=True)
    assert [row["id"] for row in result.routes["summaries"]] == [
        "wms:default/ops/2", "wms:default/ops/1", "wms:default/ops/0"]
