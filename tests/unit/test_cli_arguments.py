"""The CLI refuses what the HTTP API answers 422 for, naming the value, before it opens anything: the
same command behaves the same with and without a server. The upkeep views refuse the same values."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from agent_memory.api.app import create_app
from agent_memory.api.schemas import AskIn, SearchIn
from agent_memory.cli import build_parser, main
from agent_memory.core.config import load_settings
from agent_memory.core.errors import ConfigError
from agent_memory.core.limits import MAX_LIST_LIMIT, MAX_QUESTION_CHARS, MAX_SOON_DAYS
from agent_memory.core.tokens import MAX_PROMPT_BUDGET
from agent_memory.ingest.upkeep import list_sources, stats
from agent_memory.memory import Memory
from agent_memory.memory.arguments import check_tenant


def refused(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main(["--data-dir", "/nonexistent/never-opened", *argv])
    assert exited.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["list", "--offset", "-2"], "argument --offset: must be 0 or more, got -2"),
    (["list", "--limit", "-1"], f"argument --limit: must be from 1 to {MAX_LIST_LIMIT}, got -1"),
    (["list", "--limit", "0"], f"argument --limit: must be from 1 to {MAX_LIST_LIMIT}, got 0"),
    (["list", "--limit", str(MAX_LIST_LIMIT + 1)], f"got {MAX_LIST_LIMIT + 1}"),
    (["list", "--offset", "two"], "argument --offset: expected a whole number, got 'two'"),
    (["stats", "--soon-days", "nan"], f"argument --soon-days: must be a finite number of days from 0 to "
                                      f"{MAX_SOON_DAYS}, got 'nan'"),
    (["stats", "--soon-days", str(MAX_SOON_DAYS + 1)], f"got '{MAX_SOON_DAYS + 1}'"),
    (["stats", "--soon-days", "inf"], "got 'inf'"),
    (["stats", "--soon-days", "-1"], "got '-1'"),
    (["prompt", "", "--json"], "argument question: the question is empty ('')"),
    (["prompt", "   "], "the question is empty"),
    (["prompt", "q" * (MAX_QUESTION_CHARS + 1)], f"argument question: the question must be at most "
                                                 f"{MAX_QUESTION_CHARS} characters, got {MAX_QUESTION_CHARS + 1}"),
    (["prompt", "Who?", "--budget", "99999999"], f"argument --budget: must be from 1 to {MAX_PROMPT_BUDGET}, "
                                                 "got 99999999"),
    (["prompt", "Who?", "--budget", "0"], "got 0"),
    (["demo", "--budget", str(MAX_PROMPT_BUDGET + 1)], f"got {MAX_PROMPT_BUDGET + 1}"),
    (["serve", "--port", "0"], "argument --port: must be from 1 to 65535, got 0"),  # had meant the settings' port
    (["mcp", "--http", "--port", "0"], "argument --port: must be from 1 to 65535, got 0"),  # had meant 8765
])
def test_values_the_api_refuses_are_usage_errors_naming_them(capsys, argv, message):
    assert message in refused(capsys, argv)


def test_the_cli_budget_cap_is_the_apis():
    assert AskIn(question="Who?", budget=MAX_PROMPT_BUDGET).budget == MAX_PROMPT_BUDGET
    with pytest.raises(ValidationError):
        AskIn(question="Who?", budget=MAX_PROMPT_BUDGET + 1)


def test_the_cli_accepts_the_apis_largest_values():
    parse = build_parser().parse_args
    assert parse(["list", "--limit", str(MAX_LIST_LIMIT)]).limit == MAX_LIST_LIMIT
    assert parse(["stats", "--soon-days", str(MAX_SOON_DAYS)]).soon_days == MAX_SOON_DAYS
    assert parse(["prompt", "q" * MAX_QUESTION_CHARS]).question == "q" * MAX_QUESTION_CHARS


def test_the_apis_caps_are_the_shared_constants(tmp_path):
    # One constant each: the HTTP API answers 422 exactly past what the CLI and Memory refuse.
    for model, field in [(AskIn, "question"), (SearchIn, "query")]:
        model(**{field: "q" * MAX_QUESTION_CHARS})
        with pytest.raises(ValidationError, match=f"at most {MAX_QUESTION_CHARS} characters"):
            model(**{field: "q" * (MAX_QUESTION_CHARS + 1)})
    paths = create_app(load_settings(data_dir=tmp_path)).openapi()["paths"]
    params = {p["name"]: p["schema"] for route in ("/v1/stats", "/v1/sources") for p in paths[route]["get"]["parameters"]}
    assert params["soon_days"]["maximum"] == MAX_SOON_DAYS and params["limit"]["maximum"] == MAX_LIST_LIMIT


@pytest.mark.parametrize("length, problem", [(0, r"is empty \(''\)"),
                                             (MAX_QUESTION_CHARS + 1, f"must be at most {MAX_QUESTION_CHARS} "
                                                                      f"characters, got {MAX_QUESTION_CHARS + 1}")])
def test_memory_refuses_a_question_the_api_refuses_naming_its_length(tmp_path, length, problem):
    memory = Memory(data_dir=tmp_path)  # refused before any store or model is opened
    try:
        for call in (memory.prompt, memory.ask):
            with pytest.raises(ValueError, match=f"^question {problem}"):
                call("q" * length)
        with pytest.raises(ValueError, match=f"^query {problem}"):
            memory.search("q" * length)
    finally:
        memory.close()


@pytest.mark.parametrize("limit", [0, -1, 2.5, True])
def test_memory_search_refuses_a_limit_below_one_naming_it(tmp_path, limit):
    memory = Memory(data_dir=tmp_path)  # refused before any store or model is opened
    try:
        with pytest.raises(ValueError, match=f"limit must be .*got {limit!r}"):
            memory.search("Who?", limit=limit)
    finally:
        memory.close()


@pytest.mark.parametrize("argv, expected", [
    (["ingest", "a.md", "-r", "b"], {"paths": ["a.md", "b"], "recursive": True}),
    (["ingest", "a.md", "--glob", "*.md", "b", "--json"], {"paths": ["a.md", "b"], "glob": "*.md", "json": True}),
    (["prompt", "--budget", "50", "Who?", "--json"], {"question": "Who?", "budget": 50, "json": True}),
    (["forget", "--tenant", "t", "notes/x.md"], {"source_id": "notes/x.md", "tenant": "t"}),
    (["inspect", "notes/x.md", "--tenant", "t"], {"source_id": "notes/x.md", "tenant": "t"}),
    (["prompt", "--json", "--", "-dash question?"], {"question": "-dash question?", "json": True}),
    # "--" with options before it and positionals on both sides: everything after it is a path.
    (["ingest", "a.md", "-r", "--", "-b.md"], {"paths": ["a.md", "-b.md"], "recursive": True}),
    (["ingest", "a.md", "--", "-b.md", "-r"], {"paths": ["a.md", "-b.md", "-r"], "recursive": False}),
    (["ingest", "-r", "--", "-b.md", "c"], {"paths": ["-b.md", "c"], "recursive": True}),
    (["ingest", "a", "-r", "b", "--data-dir", "x", "--", "-c"], {"paths": ["a", "b", "-c"], "data_dir": "x"}),
])
def test_options_and_positionals_go_in_any_order(argv, expected):
    args = vars(build_parser().parse_args(["--data-dir", "d", *argv]))
    assert {key: args[key] for key in expected} == expected


@pytest.mark.parametrize("argv, expected", [
    (["ingest", "c", "--data-dir", "after"], {"data_dir": "after", "server": None, "verbose": False}),
    (["--data-dir", "before", "ingest", "c"], {"data_dir": "before"}),
    # Given in both places, the later one wins; not given after, the one before is never undone by a default.
    (["--data-dir", "before", "ingest", "c", "--data-dir", "after"], {"data_dir": "after"}),
    (["--server", "http://a", "-v", "list", "--tenant", "t"], {"server": "http://a", "verbose": True}),
    (["list", "--server", "http://b", "-v"], {"server": "http://b", "verbose": True}),
    (["--server", "http://a", "stats", "--server", "http://b"], {"server": "http://b"}),
    (["eval", "set.json", "--data-dir", "e"], {"data_dir": "e", "dataset": "set.json"}),
    (["ingest", "c"], {"data_dir": None, "server": None, "verbose": False}),
])
def test_global_options_go_before_or_after_the_subcommand(argv, expected):
    args = vars(build_parser().parse_args(argv))
    assert {key: args[key] for key in expected} == expected


def test_a_data_dir_given_after_the_subcommand_is_the_one_used(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AGENT_MEMORY_DATA_DIR", str(tmp_path / "from-env"))
    assert main(["stats", "--data-dir", str(tmp_path / "given")]) == 1  # stats creates no data dir: it names it
    assert f"no data dir at {tmp_path / 'given'}:" in capsys.readouterr().err
    (tmp_path / "given").mkdir()
    assert main(["stats", "--data-dir", str(tmp_path / "given")]) == 0
    assert json.loads(capsys.readouterr().out) == {}  # a fresh data dir: no tenant holds anything
    assert (tmp_path / "given").is_dir() and not (tmp_path / "from-env").exists()


@pytest.mark.parametrize("paging, message", [({"offset": -2}, "offset must be a whole number, 0 or more, got -2"),
                                             ({"limit": -1}, f"limit must be a whole number from 1 to {MAX_LIST_LIMIT}, "
                                                             "got -1")])
def test_list_sources_refuses_negative_paging(paging, message):
    # Checked before the stores are read: a negative bound would slice from the end instead of paging.
    with pytest.raises(ValueError, match=message):
        list_sources(None, "default", **paging)


@pytest.mark.parametrize("days", [float("nan"), float("inf"), -1.0])
def test_stats_refuses_a_soon_days_that_is_no_finite_count(days):
    with pytest.raises(ValueError, match="soon_days must be a finite number of days"):
        stats(None, "default", soon_days=days)


def test_serve_with_a_bad_tenant_in_its_api_keys_says_so_in_one_line_before_starting(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AGENT_MEMORY_API_KEYS", '{"k1": "a/b"}')
    assert main(["--data-dir", str(tmp_path), "serve", "--port", "1"]) == 2
    err = capsys.readouterr().err
    assert "got 'a/b' (holds '/') in AGENT_MEMORY_API_KEYS" in err and "Traceback" not in err and len(err.splitlines()) == 1
    assert not (tmp_path / "owner.lock").exists()  # refused before it owned the data dir


@pytest.mark.parametrize("tenant", ["acme ", "t\nx"])
def test_serve_on_a_new_data_dir_refuses_any_tenant_name_the_rule_refuses_before_starting(tmp_path, monkeypatch,
                                                                                        capsys, tenant):
    monkeypatch.setenv("AGENT_MEMORY_API_KEYS", json.dumps({"k1": tenant}))
    assert main(["--data-dir", str(tmp_path / "new"), "serve", "--port", "1"]) == 2
    err = capsys.readouterr().err
    assert f"got {tenant!r}" in err and "in AGENT_MEMORY_API_KEYS" in err and "Traceback" not in err
    assert not (tmp_path / "new" / "owner.lock").exists()


@pytest.mark.parametrize("variable", ["AGENT_MEMORY_TENANT", "AGENT_MEMORY_API_KEYS"])
def test_serve_words_a_refused_tenant_name_as_every_surface_does(tmp_path, monkeypatch, capsys, variable):
    """serve's start-up check echoed a bad name whole (a 10,000-character one filled the terminal); it now
    gives the refusal every other surface gives, the name cut at 80 characters (core/names.py refusal)."""
    name = "team/" + "x" * 300
    monkeypatch.setenv(variable, name if variable == "AGENT_MEMORY_TENANT" else json.dumps({"k1": name}))
    assert main(["--data-dir", str(tmp_path / "new"), "serve", "--port", "1"]) == 2
    err = capsys.readouterr().err
    with pytest.raises(ConfigError) as local:
        check_tenant(name)
    keys = " in AGENT_MEMORY_API_KEYS" if variable == "AGENT_MEMORY_API_KEYS" else ""
    assert err == f"error: {local.value}{keys}\n" and "x" * 81 not in err and "(has 305 characters)" in err

def test_api_keys_that_are_not_json_name_the_variable_and_the_shape(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AGENT_MEMORY_API_KEYS", "key1=acme")
    assert main(["--data-dir", str(tmp_path), "stats"]) == 2
    err = capsys.readouterr().err
    assert "AGENT_MEMORY_API_KEYS must be JSON (API key -> tenant), e.g. {\"key-acme\": \"acme\"" in err
    assert "Traceback" not in err and len(err.splitlines()) == 1


def test_ctrl_c_says_what_stays_and_how_an_ingestion_goes_on(monkeypatch, capsys, tmp_path):
    """Exit 130 with one line on stderr, not a silent stop: what was stored stays; an ingestion run again
    goes on where it stopped."""
    from agent_memory.cli import commands, main

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(commands, "cmd_ingest", interrupted)
    monkeypatch.setattr(commands, "cmd_list", interrupted)
    assert main(["--data-dir", str(tmp_path / "d"), "ingest", str(tmp_path)]) == 130
    err = capsys.readouterr().err
    assert "interrupted: `ingest` stopped; what it stored before stays" in err and "run it again" in err
    assert main(["--data-dir", str(tmp_path / "d"), "list"]) == 130
    err = capsys.readouterr().err
    assert "`list` stopped" in err and "run it again" not in err


@pytest.mark.parametrize("command", ["worker", "reindex", "serve"])
def test_commands_that_open_their_own_stores_refuse_server_instead_of_ignoring_it(command, capsys):
    """`--server` is every command's option; `worker --help` promised it worked through a server, and it
    was ignored (a probe). These commands open their stores themselves: they say so before anything opens."""
    code = main(["--data-dir", "/nonexistent/never-opened", "--server", "http://127.0.0.1:9", command])
    err = capsys.readouterr().err
    assert code == 2 and f"`agent-memory {command}` does not work through a server" in err and "drop --server" in err
