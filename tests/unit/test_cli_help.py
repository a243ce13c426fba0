"""Every option named in the CLI's help says what it does: --tenant, --session, --preset (with the
presets there are) and demo --budget had no help text."""

from __future__ import annotations

import argparse

from agent_memory.cli import build_parser
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
    assert all(name in preset_help for name in PRESETS), preset_help
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
