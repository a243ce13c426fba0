"""What README.md, docs/api.md, docs/deployment.md and docs/architecture.md show a user is what the code takes,
checked without running anything: every `agent-memory` command line parses with the real parser and every flag
shown belongs to its subcommand; every AGENT_MEMORY_* name is a setting or a variable the code reads, spelled in
full, and every setting is named in README's table; every HTTP operation named is one the API serves, and every
operation it serves is in docs/api.md."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from agent_memory.api.app import create_app
from agent_memory.cli import LOG_LEVEL_VARIABLE, build_parser
from agent_memory.cli.backup import ADMIN_KEY_ENV
from agent_memory.core.config import Settings, load_settings, setting_variable
from agent_memory.core.progress import NO_PROGRESS_ENV
from agent_memory.remote.responses import KEY_ENV
from agent_memory.retrieval.config import PRESETS

ROOT = Path(__file__).resolve().parents[2]
DOCS = {name: (ROOT / name).read_text(encoding="utf-8")
        for name in ("README.md", "docs/api.md", "docs/deployment.md", "docs/architecture.md")}
# Read from the environment only, not settings: the CLI's keys for a server, the progress bars, the log level;
# the tests' nginx (docs/deployment.md says how to run the balancer test) and their workers (scripts/test.sh reads it).
ENVIRONMENT_ONLY = {KEY_ENV, ADMIN_KEY_ENV, NO_PROGRESS_ENV, LOG_LEVEL_VARIABLE, "AGENT_MEMORY_TEST_NGINX",
                    "AGENT_MEMORY_TEST_WORKERS"}
# Other programs' flags the docs show (docker compose, cargo, rsync, the API fuzzing script).
OTHER_TOOLS = ("docker ", "cargo ", "rsync", "scripts/fuzz_api.py", "--delete")
PARSER = build_parser()
SUBCOMMANDS: dict[str, argparse.ArgumentParser] = next(
    action.choices for action in PARSER._actions if isinstance(action, argparse._SubParsersAction))


def block_lines() -> list[tuple[str, str]]:
    """(document, line) of every line of a fenced code block."""
    return [(name, line) for name, text in DOCS.items()
            for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, re.S | re.M) for line in block.splitlines()]


def code_spans() -> list[tuple[str, str]]:
    """(document, text) of every line of a fenced code block and every inline code span outside them."""
    spans = [(name, span) for name, text in DOCS.items()
             for span in re.findall(r"`([^`\n]+)`", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M))]
    return block_lines() + spans


def command_of(span: str) -> tuple[str, str] | None:
    """The subcommand a span shows and what follows it: ``agent-memory CMD ...`` anywhere in it, or a span
    that starts with a subcommand and shows a flag (``forget --prefix notes/``)."""
    named = re.search(r"agent-memory\s+((?:--?[\w-]+(?:\s+(?!-)\S+)?\s+)*)([a-z]+)\b(.*)", span)
    if named and named.group(2) in SUBCOMMANDS:
        return named.group(2), named.group(1) + named.group(3)
    first, _, rest = span.partition(" ")
    if first in SUBCOMMANDS and re.search(r"(?<![\w-])--?[a-z]", rest):
        return first, rest
    return None


def flags(text: str, short: bool = True) -> list[str]:
    """The options in a command line, before its comment; ``short``: ``-r`` too, not only ``--recursive``."""
    return re.findall(r"(?<![\w./'\"-])(--[a-zA-Z][\w-]*" + ("|-[a-zA-Z]\\b" if short else "") + ")",
                      text.split(" #")[0])


def test_every_command_line_in_a_code_block_parses():
    lines = [(name, line) for name, line in block_lines()
             if line.lstrip().startswith((".venv/bin/agent-memory ", "agent-memory "))]
    assert len(lines) >= 25, "README lost its everyday commands"
    for name, line in lines:
        argv = shlex.split(line.split(" #")[0].split("agent-memory", 1)[1])
        with contextlib.redirect_stderr(io.StringIO()) as err, contextlib.redirect_stdout(io.StringIO()):
            try:
                PARSER.parse_args(argv)
            except SystemExit:
                pytest.fail(f"{name}: `{line.strip()}` does not parse: {err.getvalue().strip()}")


def test_every_flag_shown_belongs_to_its_subcommand():
    everywhere = set(PARSER._option_string_actions).union(*(p._option_string_actions for p in SUBCOMMANDS.values()))
    checked = 0
    for name, span in code_spans():
        if any(tool in span for tool in OTHER_TOOLS):
            continue
        command = command_of(span)
        takes = set(SUBCOMMANDS[command[0]]._option_string_actions) if command else everywhere
        # Without a subcommand, long options only: `cp -a`, `nice -n 19` are other programs' (-r is ingest's).
        for flag in (flags(command[1]) if command else flags(span, short=False)):
            checked += 1
            assert flag in takes, f"{name}: `{span}` shows {flag}, which " + (
                f"`agent-memory {command[0]}` does not take" if command else "no agent-memory command takes")
    assert checked >= 40


def test_every_variable_named_is_read_and_spelled_in_full():
    variables = {setting_variable(field) for field in Settings.model_fields} | ENVIRONMENT_ONLY
    for name, text in DOCS.items():
        for variable in set(re.findall(r"AGENT_MEMORY_[A-Z0-9_]*[A-Z0-9]", text)):
            assert variable in variables, f"{name} names {variable}, which no setting or code reads"
        # `AGENT_MEMORY_LLM_BASE_URL` / `_API_KEY` read as AGENT_MEMORY_API_KEY, another variable: names in full.
        shortened = re.findall(r"`(?:\.\.\.)?_[A-Z][A-Z0-9_]*`", text)
        assert not shortened, f"{name} shortens variable names: {shortened}"


def test_every_setting_is_in_readmes_table():
    table = "\n".join(line for line in DOCS["README.md"].splitlines() if line.startswith("| `AGENT_MEMORY_"))
    missing = [setting_variable(field) for field in Settings.model_fields if f"`{setting_variable(field)}`" not in table]
    assert not missing, f"settings no README row names: {missing}"


def test_the_presets_named_are_the_presets():
    listed = re.search(r"`preset` \(a named retrieval preset: (.*?), as", DOCS["docs/api.md"], re.S)
    assert listed and set(re.findall(r"`([\w-]+)`", listed.group(1))) == set(PRESETS)


def template(path: str) -> str:
    """``/v1/sessions/{id}/view?budget=N`` as ``/v1/sessions/{}/view``: its route, whatever its names."""
    return re.sub(r"\{[^}]*\}", "{}", path.split("?")[0])


def test_every_operation_named_is_served_and_every_one_served_is_in_the_api_reference(tmp_path):
    paths = create_app(load_settings(data_dir=tmp_path)).openapi()["paths"]
    served = [(method.upper(), re.compile(re.escape(template(path)).replace(r"\{\}", "[^?#]+") + r"(\?.*)?"))
              for path, operations in paths.items() for method in operations]
    pages = ("/debug", "/docs", "/redoc", "/openapi.json")  # not operations of the schema
    named = r"\b(GET|POST|PUT|DELETE|PATCH|HEAD) (/(?:v1/|healthz|readyz|debug|docs)[^\s`]*)"
    for name, text in DOCS.items():
        for method, path in re.findall(named, text):
            path = path.rstrip(".,;:)")
            if path.split("?")[0] in pages:
                continue
            wanted = "GET" if method == "HEAD" else method  # every GET route answers HEAD
            assert any(m == wanted and pattern.fullmatch(path) for m, pattern in served), \
                f"{name} names {method} {path}, which the API does not serve"
    documented = {(method, template(path)) for method, path in re.findall(named, DOCS["docs/api.md"])}
    undocumented = [f"{method.upper()} {path}" for path, operations in paths.items() for method in operations
                    if (method.upper(), template(path)) not in documented]
    assert not undocumented, f"docs/api.md does not name {undocumented}"
