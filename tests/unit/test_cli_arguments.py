"""The CLI refuses what the HTTP API answers 422 for, naming the value, before it opens anything: the
same command behaves the same with and without a server. The upkeep views refuse the same values."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agent_memory.api.schemas import AskIn
from agent_memory.cli import main
from agent_memory.core.tokens import MAX_PROMPT_BUDGET
from agent_memory.ingest.upkeep import list_sources, stats


def refused(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main(["--data-dir", "/nonexistent/never-opened", *argv])
    assert exited.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["list", "--offset", "-2"], "argument --offset: must be 0 or more, got -2"),
    (["list", "--limit", "-1"], "argument --limit: must be 1 or more, got -1"),
    (["list", "--limit", "0"], "argument --limit: must be 1 or more, got 0"),
    (["list", "--offset", "two"], "argument --offset: expected a whole number, got 'two'"),
    (["stats", "--soon-days", "nan"], "argument --soon-days: must be a finite number of days, 0 or more, got 'nan'"),
    (["stats", "--soon-days", "inf"], "got 'inf'"),
    (["stats", "--soon-days", "-1"], "got '-1'"),
    (["prompt", "", "--json"], "argument question: the question is empty ('')"),
    (["prompt", "   "], "the question is empty"),
    (["prompt", "Who?", "--budget", "99999999"], f"argument --budget: must be from 1 to {MAX_PROMPT_BUDGET}, "
                                                 "got 99999999"),
    (["prompt", "Who?", "--budget", "0"], "got 0"),
    (["demo", "--budget", str(MAX_PROMPT_BUDGET + 1)], f"got {MAX_PROMPT_BUDGET + 1}"),
])
def test_values_the_api_refuses_are_usage_errors_naming_them(capsys, argv, message):
    assert message in refused(capsys, argv)


def test_the_cli_budget_cap_is_the_apis():
    assert AskIn(question="Who?", budget=MAX_PROMPT_BUDGET).budget == MAX_PROMPT_BUDGET
    with pytest.raises(ValidationError):
        AskIn(question="Who?", budget=MAX_PROMPT_BUDGET + 1)


@pytest.mark.parametrize("paging", [{"offset": -2}, {"limit": -1}])
def test_list_sources_refuses_negative_paging(paging):
    # Checked before the stores are read: a negative bound would slice from the end instead of paging.
    with pytest.raises(ValueError, match=f"got offset={paging.get('offset', 0)}, limit={paging.get('limit', 50)}"):
        list_sources(None, "default", **paging)


@pytest.mark.parametrize("days", [float("nan"), float("inf"), -1.0])
def test_stats_refuses_a_soon_days_that_is_no_finite_count(days):
    with pytest.raises(ValueError, match="soon_days must be a finite number of days"):
        stats(None, "default", soon_days=days)


def test_serve_with_a_bad_tenant_in_its_api_keys_says_so_in_one_line_before_starting(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AGENT_MEMORY_API_KEYS", '{"k1": "a/b"}')
    assert main(["--data-dir", str(tmp_path), "serve", "--port", "1"]) == 2
    err = capsys.readouterr().err
    assert "'a/b' (in AGENT_MEMORY_API_KEYS)" in err and "Traceback" not in err and len(err.splitlines()) == 1
    assert not (tmp_path / "owner.lock").exists()  # refused before it owned the data dir
