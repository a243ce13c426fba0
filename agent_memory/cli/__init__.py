"""The ``agent-memory`` command: ingestion jobs, forgetting, the prompt debug dump, eval, the API.

``parser.py`` reads the command line, ``commands.py`` runs the subcommand over the stores or the server
that ``stores_or_server.py`` chooses; ``main`` turns any failure into one line (the traceback with ``-v``).
A subcommand's module, and with it the stores, the models and the server stacks, is imported when that
subcommand runs (``parser._runs``): ``--help``, ``--version`` and a refused argument load none of them.
"""

from __future__ import annotations

import logging
import os
import sys
import traceback

from agent_memory.cli.parser import build_parser
from agent_memory.core.errors import AgentMemoryError

__all__ = ["build_parser", "main"]
# Commands that, run again after Ctrl-C, go on where they stopped (ingestion skips what it stored unchanged).
RESUMABLE = ("ingest", "demo")


SERVERS = ("serve", "worker", "mcp")
LOG_LEVEL_VARIABLE = "AGENT_MEMORY_LOG_LEVEL"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def log_level(verbose: bool) -> int:
    """``-v``: INFO; else ``AGENT_MEMORY_LOG_LEVEL`` (one of LOG_LEVELS, any case); else WARNING."""
    if verbose:
        return logging.INFO
    named = os.environ.get(LOG_LEVEL_VARIABLE, "").strip().upper()
    if not named:
        return logging.WARNING
    if named not in LOG_LEVELS:
        raise ValueError(f"{LOG_LEVEL_VARIABLE}={os.environ[LOG_LEVEL_VARIABLE]!r} is not one of "
                         f"{', '.join(LOG_LEVELS)}")
    return getattr(logging, named)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        level = log_level(args.verbose)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # A server's lines are read later, beside other processes' (docker logs, the journal): each says when.
    stamp = "%(asctime)s " if args.command in SERVERS else ""
    logging.basicConfig(level=level, format=stamp + "%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except KeyboardInterrupt:
        # What was stored stays; an ingestion resumes where it stopped (a file's manifest is written last).
        print(f"\ninterrupted: `{args.command}` stopped; what it stored before stays"
              + ("; run it again to go on from where it stopped (unchanged files are not read again)"
                 if args.command in RESUMABLE else ""), file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of stdout went away (`| head`): end quietly as Unix tools do when SIGPIPE ends them (141),
        # stdout pointed at /dev/null so that the interpreter's last flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13
    except Exception as exc:  # noqa: BLE001 - one clear line for any failure; the traceback with -v
        if args.verbose:
            traceback.print_exc()
        if isinstance(exc, AgentMemoryError):
            print(f"error: {exc}", file=sys.stderr)
            return getattr(exc, "exit_code", 2)
        # Not raised on purpose (a corrupted or read-only file the store met first, a bug): still one line.
        print(f"error: {type(exc).__name__}: {exc} (run with -v for the traceback)", file=sys.stderr)
        return 1
