"""`agent-memory prompt`: the debug dump, as JSON and as text, on a corpus ingested through the CLI."""

from __future__ import annotations

import json
import shutil

import pytest

from agent_memory.cli import main
from tests.helpers import SAMPLES

QUESTION = "What is the power draw of the X-300?"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("prompt-cli")
    shutil.copytree(SAMPLES, root / "corpus")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENT_MEMORY_DATA_DIR", str(root / "data"))
        mp.setenv("AGENT_MEMORY_NO_PROGRESS", "1")
        mp.setenv("AGENT_MEMORY_TRIPLE_EXTRACTOR", "rules")
        # Embedded stores and no remote LLM, whatever the developer's shell says.
        for name in ("AGENT_MEMORY_QDRANT_URL", "AGENT_MEMORY_NEO4J_URI", "AGENT_MEMORY_LLM_BASE_URL",
                     "AGENT_MEMORY_TENANT", "AGENT_MEMORY_TOKENIZER"):
            mp.delenv(name, raising=False)
        assert main(["ingest", str(root / "corpus"), "-r", "--json"]) == 0
        yield root / "data"


def run(capsys, argv: list[str]) -> tuple[int, str]:
    capsys.readouterr()  # drop what earlier steps printed
    code = main(argv)
    return code, capsys.readouterr().out


def test_ingest_wrote_into_the_configured_data_dir(data_dir):
    assert (data_dir / "catalog.sqlite").exists()


def test_prompt_json(data_dir, capsys):
    code, out = run(capsys, ["prompt", QUESTION, "--budget", "400", "--json"])
    assert code == 0
    dump = json.loads(out)
    assert dump["question"] == QUESTION and dump["budget"] == 400
    assert 0 < dump["total_tokens"] <= 400 and dump["tokenizer"] == "cl100k_base"
    assert {"dense", "keyword", "graph", "summaries", "recent"} <= set(dump["routes"])
    assert dump["routes"]["dense"] and all(row["source_id"] for row in dump["routes"]["dense"])
    assert {"instructions", "passages", "question"} <= set(dump["sections"])
    assert dump["prompt"].endswith("## Question\n" + QUESTION)
    assert "[S:product-x300]" in dump["prompt"] and "product-x300" in dump["used_source_ids"]
    assert dump["fused"] and dump["timings_ms"]["total"] >= 0


def test_prompt_json_keeps_chinese_readable(data_dir, capsys):
    code, out = run(capsys, ["prompt", "图数据库保存什么？", "--budget", "300", "--json"])
    assert code == 0
    assert "图数据库" in out  # not \\u escapes
    dump = json.loads(out)
    assert any(p["source_id"].endswith("chinese-notes.txt") for p in dump["passages"])


def test_prompt_text_dump(data_dir, capsys):
    code, out = run(capsys, ["prompt", QUESTION, "--budget", "400", "--session", "demo-session"])
    assert code == 0
    for heading in ("== Routes ==", "== Fused and reranked ==", "== Decisions (kept, cut, compressed, why) ==",
                    "== Token accounting ==", "== Time per stage (ms) ==", "== Prompt =="):
        assert heading in out
    assert out.index("== Routes ==") < out.index("== Prompt ==")
    assert "-- recent: 4 candidates" in out
    prompt = out.split("== Prompt ==\n", 1)[1]
    assert prompt.rstrip("\n").endswith(QUESTION) and "[S:" in prompt
    total = int(out.split("Budget: 400 tokens (cl100k_base); prompt: ", 1)[1].split(" ", 1)[0])
    assert 0 < total <= 400


def test_prompt_with_a_budget_below_the_question_fails_cleanly(data_dir, capsys):
    code = main(["prompt", QUESTION, "--budget", "3"])
    captured = capsys.readouterr()
    assert code == 2 and "error: budget of 3 tokens" in captured.err and "== Prompt ==" not in captured.out


def test_prompt_unknown_preset_fails_cleanly(data_dir, capsys):
    code = main(["prompt", QUESTION, "--preset", "nope"])
    assert code == 2 and "unknown retrieval preset 'nope'" in capsys.readouterr().err


def test_prompt_takes_the_day_the_question_is_asked(data_dir, capsys):
    """`last month` needs a day to count back from: the CLI dump can now be asked as the API is."""
    code, out = run(capsys, ["prompt", QUESTION, "--question-date", "2024-08-01", "--budget", "400", "--json"])
    assert code == 0 and json.loads(out)["prompt"].endswith(QUESTION + "\n(asked on 2024-08-01)")
    code = main(["prompt", QUESTION, "--question-date", "Tuesday"])
    assert code == 2 and "'Tuesday'" in capsys.readouterr().err
