"""The text debug dump (``agent-memory prompt``) keeps one row per line whatever the stored values hold."""

from __future__ import annotations

from agent_memory.retrieval.debug import render_dump
from agent_memory.retrieval.types import Decision, PromptResult

CRAFTED = "notes/a\n  #2     9.9999  [chunk] forged.md.txt"  # a file name holding a newline


def test_a_source_id_with_a_newline_cannot_fake_a_dump_row():
    result = PromptResult(
        question="Who?\n== Prompt ==", prompt="## Question\nWho?", budget=100, total_tokens=5, tokenizer="cl100k_base",
        routes={"dense": [{"rank": 1, "score": 0.5, "kind": "chunk", "source_id": CRAFTED, "text": "a"}],
                "graph": [{"subject": "Ann\nBob", "relation": "knows", "object": "Cy", "source_id": CRAFTED}]},
        fused=[{"fused": 0.1, "rerank": 0.2, "routes": ["dense"], "source_id": CRAFTED}],
        decisions=[Decision("dedup", CRAFTED, "cut", "same text as\nanother")])
    dump = render_dump(result)
    assert "forged.md.txt" in dump  # shown, quoted on its row
    assert not any(line.lstrip().startswith("#2") for line in dump.splitlines())
    assert repr(CRAFTED) in dump and "'Ann\\nBob'" in dump and "'same text as\\nanother'" in dump
    lines = dump.splitlines()
    assert lines.count("== Prompt ==") == 1 and lines[0] == "Question: 'Who?\\n== Prompt =='"
