"""Every option named in the CLI's help says what it does: --tenant, --session, --preset (with the
presets there are) and demo --budget had no help text."""

from __future__ import annotations

import argparse
import importlib

from agent_memory.cli import build_parser
from agent_memory.cli.parser import PRESET_NAMES
from agent_memory.core.limits import INSPECT_TEXT_CHARS
from agent_memory.retrieval.config import PRESETS


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def option(command: str, flag: str) -> argparse.Action:
    (action,) = [a for a in subcommands()[command]._actions if flag in a.option_strings]
    return action


def test_tenant_session_preset_and_budget_say_what_they_do():
    commands = subcommands()
    with_tenant = [name for name, p in commands.items() if any("--tenant" in a.option_strings for a in p._actions)]
    assert {"ingest", "forget", "gc", "stats", "list", "inspect", "prompt"} <= set(with_tenant)
    for name in with_tenant:
        assert option(name, "--tenant").help, name
    assert "session" in option("prompt", "--session").help
    preset_help = option("prompt", "--preset").help
    assert "retrieval preset: " + ", ".join(PRESETS) + " (default" in preset_help, preset_help
    assert "token budget" in option("demo", "--budget").help


def test_the_help_pages_render():
    for name, parser in subcommands().items():
        assert parser.format_help(), name


def test_a_subcommands_help_opens_with_what_it_does():
    """`agent-memory check --help` said only its usage: what the command does was in the top-level list alone."""
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    listed = {action.dest: action.help for action in sub._choices_actions}
    for name, command in sub.choices.items():
        assert listed[name] and listed[name] in command.format_help().replace("\n", " ").replace("  ", " ") \
            or command.description == listed[name], name


def test_what_the_parser_says_of_the_layers_below_is_what_they_hold():
    """The parser names the presets without importing retrieval (cli/parser.py), and inspect's cut as core holds it."""
    assert PRESET_NAMES == tuple(PRESETS)
    assert f"its first {INSPECT_TEXT_CHARS} characters" in option("inspect", "--full").help


def test_every_subcommand_runs_a_command_function():
    """Each subcommand names the function that runs it, imported when it runs: every name is one that exists."""
    for name, command in subcommands().items():
        run = command.get_default("func")
        module, function = run.args
        assert callable(getattr(importlib.import_module(f"agent_memory.cli.{module}"), function)), name
