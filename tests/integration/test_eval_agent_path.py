"""``eval --agent-path`` end to end on a small LoCoMo-format conversation: both paths in one run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_memory.evaluation.cli import build_parser, run_eval

SESSION_1 = [
    ("Ada", "Hi Ben! Guess what, I finally adopted a cat last weekend, her name is Miso."),
    ("Ben", "No way, congratulations! What colour is she?"),
    ("Ada", "She is a ginger tabby with one white paw, and she loves sleeping on my keyboard."),
    ("Ben", "Ha, that sounds like trouble for your thesis."),
]
SESSION_2 = [
    ("Ben", "How did the conference talk go last Friday?"),
    ("Ada", "Really well, I presented the glacier melt model to about eighty people."),
    ("Ben", "Did anyone ask hard questions?"),
    ("Ada", "One professor asked about the 1998 baseline, but I had the data ready."),
]


def locomo_record() -> dict:
    conversation = {"speaker_a": "Ada", "speaker_b": "Ben",
                    "session_1_date_time": "1:56 pm on 8 May, 2023", "session_2_date_time": "7:10 pm on 20 June, 2023"}
    for number, turns in ((1, SESSION_1), (2, SESSION_2)):
        conversation[f"session_{number}"] = [{"speaker": who, "dia_id": f"D{number}:{n + 1}", "text": text}
                                             for n, (who, text) in enumerate(turns)]
    qa = [{"question": "What is the name of Ada's cat?", "answer": "Miso", "evidence": ["D1:1"], "category": 4},
          {"question": "What did Ada present at the conference?", "answer": "the glacier melt model",
           "evidence": ["D2:2"], "category": 4}]
    return {"sample_id": "conv-t", "conversation": conversation, "qa": qa}


@pytest.fixture()
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps([locomo_record()]), encoding="utf-8")
    return path


def test_agent_path_scores_both_paths_side_by_side(dataset: Path, tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("AGENT_MEMORY_NO_PROGRESS", "1")
    monkeypatch.setenv("AGENT_MEMORY_TRIPLE_EXTRACTOR", "rules")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("AGENT_MEMORY_LLM_MODEL", raising=False)
    out = tmp_path / "reports"
    args = build_parser().parse_args([str(dataset), "--agent-path", "--budget", "600", "--json", "--out", str(out),
                                      "--data-dir", str(tmp_path / "data")])
    assert run_eval(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["systems"]) == {"transcript", "agent", "agent+session"}
    assert report["appended"] == 8 and report["archived_turns"] == 8
    assert report["append_ms"]["p95"] > 0 and report["archive_lag_ms"]["n"] == 8
    assert report["archive_lag_idle_ms"]["n"] == 20  # probes in a tenant of their own
    for system in report["systems"].values():
        assert system["n"] == 2 and system["soft"] == 1.0  # two short sessions: every evidence turn fits
    rows = [json.loads(line) for line in (out / "locomo-agent-path-600.jsonl").read_text().splitlines()]
    by = {(r["qid"], r["system"]): r for r in rows}
    # The harness maps each evidence turn to the source ID its appended message got (seq from the append).
    assert by[("conv-t:q0", "transcript")]["evidence"] == ["conv-t/D1:1"]
    assert by[("conv-t:q0", "agent")]["evidence"] == ["conv-t:S1/m0"]
    assert by[("conv-t:q1", "agent")]["evidence"] == ["conv-t:S2/m1"]
    assert "[S:conv-t/D" not in by[("conv-t:q0", "agent")]["prompt"]  # the transcript tenant stays apart
    # Appended turns carry their session's date: the date heading of the recalled passage.
    assert "8 May 2023" in by[("conv-t:q0", "agent")]["prompt"]
    # Inside the last session its recent turns are in the prompt, each once.
    inside = by[("conv-t:q1", "agent+session")]["prompt"]
    assert inside.count("[S:conv-t:S2/m1]") == 1


def test_a_second_agent_path_run_on_one_data_dir_is_refused(dataset: Path, tmp_path: Path, monkeypatch, capsys):
    # Its messages would be appended twice, and each question's evidence, mapped to the newest copy, read as missing
    # where de-duplication kept the older: the figures would be wrong, so the run stops before appending anything.
    from agent_memory.core.errors import ConfigError

    monkeypatch.setenv("AGENT_MEMORY_NO_PROGRESS", "1")
    monkeypatch.setenv("AGENT_MEMORY_TRIPLE_EXTRACTOR", "rules")
    monkeypatch.delenv("AGENT_MEMORY_LLM_MODEL", raising=False)
    argv = [str(dataset), "--agent-path", "--budget", "600", "--json", "--out", str(tmp_path / "reports"),
            "--data-dir", str(tmp_path / "data")]
    assert run_eval(build_parser().parse_args(argv)) == 0
    capsys.readouterr()
    with pytest.raises(ConfigError, match=r"tenant 'agent-locomo-conv-t'.*already holds.*--data-dir .*data forget --all --tenant agent-locomo-conv-t"):
        run_eval(build_parser().parse_args(argv))
    # Once that tenant is gone, the run goes through again, with the same figures.
    from agent_memory.memory import Memory

    with Memory(data_dir=tmp_path / "data") as memory:
        memory.forget_tenant("agent-locomo-conv-t")
    assert run_eval(build_parser().parse_args(argv)) == 0
    assert all(system["soft"] == 1.0 for system in json.loads(capsys.readouterr().out)["systems"].values())


def test_agent_path_with_mixed_memory(dataset: Path, tmp_path: Path, monkeypatch):
    from agent_memory.evaluation.mixed import MixedConfig, evaluate_mixed, markdown

    monkeypatch.setenv("AGENT_MEMORY_NO_PROGRESS", "1")
    monkeypatch.setenv("AGENT_MEMORY_TRIPLE_EXTRACTOR", "rules")
    monkeypatch.delenv("AGENT_MEMORY_LLM_MODEL", raising=False)
    hotpot = tmp_path / "hotpot.jsonl"
    record = {
        "question_id": "h1", "question_text": "Which river flows through Munich?", "answers_objects": [{"spans": ["Isar"]}],
        "contexts": [{"title": "Munich", "is_supporting": True,
                      "paragraph_text": "Munich is the capital of Bavaria. The river Isar flows through the city."},
                     {"title": "Lake Garda", "is_supporting": False,
                      "paragraph_text": "Lake Garda is the largest lake in Italy, popular with windsurfers."}]}
    # Two lines: one JSON object alone would read as a whole-file JSON document.
    hotpot.write_text(json.dumps(record) + "\n" + json.dumps({**record, "question_id": "h2"}), encoding="utf-8")
    report = evaluate_mixed(MixedConfig(datasets=[dataset, hotpot], budgets={"locomo": 600, "hotpotqa": 400},
                                        data_dir=tmp_path / "data", out_dir=tmp_path / "out", progress=False,
                                        agent_path=True))
    rows = {row["set"]: row for row in report["sets"]}
    assert rows["locomo"]["agent-single"]["soft"] == 1.0 and rows["locomo"]["agent-mixed"]["soft"] == 1.0
    assert "agent-mixed" not in rows["hotpotqa"]  # a document set has no agent path of its own
    assert "| locomo | 1.000 / 1.000 | 1.000 / 1.000 | 1.000 / 1.000 |" in markdown(report)
