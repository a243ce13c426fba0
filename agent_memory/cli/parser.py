"""The ``agent-memory`` command line: its subcommands, their options, and the argument types that
refuse locally what the HTTP API refuses (the same limits)."""

from __future__ import annotations

import argparse
import copy
import functools
import importlib
import math

from agent_memory.core.limits import INSPECT_TEXT_CHARS, MAX_LIST_LIMIT, MAX_SOON_DAYS, question_problem
from agent_memory.core.tokens import MAX_PROMPT_BUDGET
from agent_memory.core.version import __version__
from agent_memory.evaluation.arguments import add_eval_arguments

DESCRIPTION = "The agent-memory command: ingestion jobs, forgetting, the prompt debug dump, eval, the API."

# A subcommand's module is imported when that subcommand runs (``_runs``), not when the parser is built: those
# modules load the stores, the models and the ingestion and retrieval stacks (seconds), which --help, --version
# and a refused argument need not wait for. So the presets' names the help lists are written here, and
# tests/unit/test_cli_help.py checks them against retrieval/config.py's.
PRESET_NAMES = ("default", "conversation", "documents", "documents-no-graph", "fast")
SESSION_ACTIONS = ("list", "view", "messages", "delete")
VIEW_BUDGET = 4000  # `session view`'s window, as GET /v1/sessions/{id}/view and Memory.view
ADMIN_KEY_ENV = "AGENT_MEMORY_ADMIN_KEY"  # the admin key `backup`, `check` and `forget --all` send a server
BACKUP_HELP = ("copy the data dir, consistently, into a new folder that opens as a data dir as it is (restore: "
               "stop what uses the data dir, move it aside, copy the backup to its path; never over it); through a "
               f"server that requires API keys, with one of its admin keys in {ADMIN_KEY_ENV}")
DESTINATION_HELP = ("a new or empty folder outside the data dir; through a server, on the server's machine "
                    "(with --server: its absolute path there)")


def _run(module: str, function: str, args: argparse.Namespace) -> int:
    """The command ``agent_memory.cli.<module>.<function>``, imported when it runs (and looked up then)."""
    return getattr(importlib.import_module(f"agent_memory.cli.{module}"), function)(args)


def _runs(module: str, function: str) -> functools.partial[int]:
    return functools.partial(_run, module, function)


# Argument types: a value the HTTP API answers 422 for is refused here too, naming it, so a command
# behaves the same with and without a server (argparse prints "argument --x: <message>", rc 2).
def _whole(minimum: int, maximum: int | None = None):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            allowed = f"{minimum} or more" if maximum is None else f"from {minimum} to {maximum}"
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {value}")
        return value

    return parse


def _days(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of days, got {text!r}") from None
    if not math.isfinite(value) or not 0 <= value <= MAX_SOON_DAYS:
        raise argparse.ArgumentTypeError(f"must be a finite number of days from 0 to {MAX_SOON_DAYS}, got {text!r}")
    return value


def _question(text: str) -> str:
    # Blank, too long, or text no store holds (argv cannot carry NUL, but bytes that are no UTF-8 arrive
    # as lone surrogates): refused as Memory and the API refuse it (core/limits.py), as a usage error.
    problem = question_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"the question {problem}")
    return text


# A prompt's token budget, capped as the API caps it.
_budget = _whole(1, MAX_PROMPT_BUDGET)


class _Refused(Exception):
    """An intermixed parse that failed quietly (see _AnyOrder)."""


class _AnyOrder(argparse.ArgumentParser):
    """A subcommand's parser that takes options and positionals in any order (``ingest a -r b``):
    plain argparse stops filling ``paths`` at the first option and calls ``b`` unrecognized."""

    _inner = False  # parse_known_intermixed_args calls parse_known_args itself, twice

    def parse_known_args(self, args=None, namespace=None):
        if self._inner:
            return super().parse_known_args(args, namespace)
        args = list(args or ())
        self._inner = True
        try:
            if "--" not in args:
                return self.parse_known_intermixed_args(args, namespace)
            # After "--" everything is positional (`prompt -- "-x?"`, `ingest a -r -- -b.md`). Python's
            # intermixed parse keeps that only when a positional comes before the "--"; without one it
            # fails, where the plain parse is right (no positional before "--", nothing to intermix).
            # So: the intermixed parse, quietly; if it fails or leaves anything over, the plain one,
            # which then reports any real mistake itself.
            self.error = _refuse  # shadows the method for this parse only
            try:
                found, extras = self.parse_known_intermixed_args(args, copy.copy(namespace))
                if not extras:
                    return found, extras
            except _Refused:
                pass
            finally:
                del self.error
        finally:
            self._inner = False
        return super().parse_known_args(args, namespace)


def _refuse(message: str):
    raise _Refused(message)


def _global_options(parser: argparse.ArgumentParser, *, after: bool) -> None:
    """The options of every subcommand, taken before it (``--data-dir X ingest``) and after it
    (``ingest --data-dir X``), as ``--tenant`` is. ``after``: on a subcommand's parser, where an option
    not given must leave the value given before the subcommand alone (argparse copies every attribute of
    the subcommand's namespace over the main one: a default there would silently undo ``--data-dir X
    ingest``); given in both places, the later one wins."""
    unset = {"default": argparse.SUPPRESS} if after else {}
    parser.add_argument("--data-dir", help="override AGENT_MEMORY_DATA_DIR", **unset)
    parser.add_argument("--server", metavar="URL",
                        help="work through this running `agent-memory serve` (its API key from AGENT_MEMORY_API_KEY); "
                             "default: the server that owns the data dir, if one runs", **unset)
    parser.add_argument("-v", "--verbose", action="store_true", help="log more; a failure's traceback", **unset)


TENANT_HELP = ("the tenant whose memory this reads or writes (default: AGENT_MEMORY_TENANT, else 'default'); "
               "through a server, only the tenant it serves this command: its API key's, or its own")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent-memory", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"agent-memory {__version__}")
    _global_options(parser, after=False)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_AnyOrder)

    p = sub.add_parser("ingest", help="ingest files (text, Markdown, HTML, PDF, DOCX, PPTX, XLSX, EPUB, ODT, RTF, "
                       "notebooks, e-mail and .mbox archives, source code, JSON/JSONL, transcripts)")
    p.add_argument("paths", nargs="+", help="files and folders; a file named here is read even if ignore "
                   "rules leave it out (where `git add` would need -f)")
    p.add_argument("--tenant", help=TENANT_HELP)
    p.add_argument("--recursive", "-r", action="store_true")
    p.add_argument("--glob", help="only files whose name matches, e.g. '*.md'")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--base", help="source IDs are paths relative to this folder (default: the folder holding "
                   "each path given, so 'notes/' stores 'notes/x.md' from any working folder)")
    p.add_argument("--keep-missing", action="store_true", help="keep stored files of the folders given that are "
                   "gone from disk or now ignored (default: a folder job forgets them, so memory mirrors the folder)")
    p.add_argument("--no-ignore", dest="ignore_rules", action="store_false", help="read what .gitignore and "
                   ".ignore files leave out, and generated files (default: a folder's walk honours them, and those "
                   "of its parents up to the git repository root, as ripgrep does, or outside git up to the folder "
                   "the source IDs are named from, and leaves out lockfiles, *.min.js, *.min.css and *.map; "
                   "ignored files are counted, not listed)")
    p.set_defaults(func=_runs("commands", "cmd_ingest"))

    p = sub.add_parser("forget", help="remove one source (or a whole file), every source under a prefix, or a "
                                      "whole tenant, everywhere")
    p.add_argument("source_id", nargs="?", help="a source ID as ingest stored it, or the ingested file's ./ or "
                   "absolute path")
    p.add_argument("--prefix", help="every source (and ingested file) whose ID starts with this, in batches")
    p.add_argument("--all", action="store_true", dest="everything", help="everything the tenant named by --tenant "
                   "holds: sources, sessions, facts (asks to confirm; --yes confirms); through a server, with an admin "
                   "key in AGENT_MEMORY_ADMIN_KEY, any tenant")
    p.add_argument("--yes", action="store_true", help="confirm --all without asking")
    p.add_argument("--tenant", help=TENANT_HELP)
    p.set_defaults(func=_runs("forget_many", "cmd_forget_any"))

    p = sub.add_parser("export", help="everything a tenant holds as JSON Lines: sources with their text, sessions "
                                      "with their raw messages (a data request, a move to another deployment)")
    p.add_argument("--tenant", help=TENANT_HELP)
    p.add_argument("--out", metavar="FILE", help="write it to FILE (whole, or not at all) instead of stdout")
    p.set_defaults(func=_runs("transfer", "cmd_export"))

    p = sub.add_parser("import", help="read an export back: sources re-ingested and sessions appended with this "
                                      "deployment's models and settings; importing twice changes nothing")
    p.add_argument("file", help="the export (JSON Lines; '-' reads stdin)")
    p.add_argument("--tenant", help="the tenant it goes into (default: the tenant the export names)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_runs("transfer", "cmd_import"))

    p = sub.add_parser("reindex", help="re-encode the stored text with the embedding settings and keyword "
                                       "tokenization in force (after changing models or upgrading)")
    p.add_argument("--all", action="store_true", dest="everything",
                   help="re-embed every item even when the recorded layout matches (after changing the "
                        "sentence-vector settings, for example)")
    p.set_defaults(func=_runs("commands", "cmd_reindex"))

    p = sub.add_parser("backup", help=BACKUP_HELP)
    p.add_argument("destination", metavar="DEST", help=DESTINATION_HELP)
    p.set_defaults(func=_runs("backup", "cmd_backup"))

    p = sub.add_parser("gc", help="remove expired items (ttl_days) from every store at once; then keyword weights "
                                  "count no deleted item (forgotten, replaced or expired)")
    p.add_argument("--tenant", help=TENANT_HELP)
    p.set_defaults(func=_runs("commands", "cmd_gc"))
    p = sub.add_parser("check", help="whether the catalog, the vectors and the graph agree, per tenant (exit 1 "
                                     "when they do not); --repair mends what it can")
    p.add_argument("--tenant", help="only this tenant (default: every tenant any store holds); through a server, "
                                    "only the tenant it serves this command")
    p.add_argument("--repair", action="store_true",
                   help="remove what the catalog does not know from the vectors and the graph (refused for a tenant "
                        "whose catalog records nothing), mark sources whose items are missing so that the next "
                        "ingest writes them again (and list their files), extract missing facts again")
    p.add_argument("--adopt", action="store_true",
                   help="with --repair: record in the catalog what it does not know, as the vectors hold it, "
                        "instead of removing it (a lost catalog without a backup)")
    p.set_defaults(func=_runs("check", "cmd_check"))
    p = sub.add_parser("stats", help="items per kind, sources, expiring soon, entities and triples: with --tenant "
                       "that tenant's (the object GET /v1/stats answers), else by tenant")
    p.add_argument("--tenant", help=TENANT_HELP)
    p.add_argument("--soon-days", type=_days, default=1.0, help="what 'expiring soon' means (default: a day)")
    p.set_defaults(func=_runs("commands", "cmd_stats"))
    p = sub.add_parser("list", help="sources, by source ID, filtered and paged")
    p.add_argument("--tenant", help=TENANT_HELP)
    p.add_argument("--prefix", default="", help="only source IDs starting with this")
    p.add_argument("--kind", choices=["chunk", "summary", "turn"])
    p.add_argument("--offset", type=_whole(0), default=0)
    p.add_argument("--limit", type=_whole(1, MAX_LIST_LIMIT), default=50)
    p.set_defaults(func=_runs("commands", "cmd_list"))
    p = sub.add_parser("inspect", help="everything stored for one source: catalog entry, items, metadata")
    p.add_argument("source_id", help="a source ID as ingest stored it, or the ingested file's ./ or absolute path")
    p.add_argument("--tenant", help=TENANT_HELP)
    p.add_argument("--full", action="store_true", help=f"each item's whole text (default: its first {INSPECT_TEXT_CHARS} characters; "
                   "an item cut says so: text_truncated, and chars is its whole length)")
    p.set_defaults(func=_runs("commands", "cmd_inspect"))

    p = sub.add_parser("prompt", help="debug dump: routes, fusion, compaction and the final prompt")
    p.add_argument("question", type=_question)
    p.add_argument("--session", help="a working-memory session ID: its recent turns and summaries join the "
                   "prompt beside what is recalled")
    p.add_argument("--where", help='JSON filter on items\' metadata, e.g. \'{"version": {"gte": 2}, "team": "ops"}\' '
                   'or a date range \'{"published": {"gte": "2024-03-01", "lte": "2024-06-30"}}\'')
    p.add_argument("--tenant", help=TENANT_HELP)
    p.add_argument("--budget", type=_budget, default=1800, help=f"token budget, 1 to {MAX_PROMPT_BUDGET}")
    p.add_argument("--preset", default="default", help="retrieval preset: " + ", ".join(PRESET_NAMES) +
                   " (default: default; agent_memory/retrieval/config.py)")
    p.add_argument("--question-date", help="when the question is asked, a date that names its year "
                   "(2024-08-01, '2023/05/30 (Tue) 14:06'): 'last month' and 上个月 count back from it")
    p.add_argument("--json", action="store_true", help="print the dump as JSON")
    p.set_defaults(func=_runs("commands", "cmd_prompt"))

    p = sub.add_parser("session", help="an agent's working-memory sessions: list them, view one as the next model "
                       "call sees it (compacted), its raw messages, or delete it")
    p.add_argument("action", choices=SESSION_ACTIONS, help="list: the tenant's sessions; view ID: the compacted "
                   "window; messages ID: the history as appended (JSON); delete ID: the session")
    p.add_argument("session_id", nargs="?", help="the session's ID (view, messages, delete)")
    p.add_argument("--tenant", help=TENANT_HELP)
    p.add_argument("--budget", type=_whole(1, 1_000_000), default=None,
                   help=f"view: the window's token budget (default: {VIEW_BUDGET})")
    p.add_argument("--forget", action="store_true", help="delete: its archived turns leave long-term memory too")
    p.add_argument("--json", action="store_true", help="list, view: print JSON")
    p.set_defaults(func=_runs("sessions", "cmd_session"))

    p = sub.add_parser("demo", help="ingest the bundled sample corpus and print a prompt (the main job)")
    p.add_argument("--question", type=_question, default="Which vector store does agent-memory embed, and why?",
                   help="the question the prompt answers (default: %(default)r)")
    p.add_argument("--budget", type=_budget, default=800,
                   help=f"the prompt's token budget, 1 to {MAX_PROMPT_BUDGET} (default: 800)")
    p.set_defaults(func=_runs("commands", "cmd_demo"))

    p = sub.add_parser("eval", help="evidence recall inside a bounded prompt on a benchmark file")
    add_eval_arguments(p, data_dir=False)  # the global --data-dir serves it
    p.set_defaults(func=_runs("commands", "cmd_eval"))

    p = sub.add_parser("serve", help="run the HTTP API")
    p.add_argument("--host", default=None)
    p.add_argument("--port", type=_whole(1, 65535), default=None)
    p.set_defaults(func=_runs("commands", "cmd_serve"))

    p = sub.add_parser("worker", help="run durable ingestion jobs from PostgreSQL into the shared stores (AGENT_MEMORY_POSTGRES_URL, _QDRANT_URL, _NEO4J_URI)")
    p.add_argument("--once", action="store_true", help="exit when the queue is empty")
    p.add_argument("--id", help="this worker's name in the jobs table (default host-pid-random)")
    p.add_argument("--lease-s", type=float, default=60.0,
                   help="a job whose heartbeat is older than this is taken again (its worker died)")
    p.add_argument("--poll-s", type=float, default=1.0, help="wait between looks at an empty queue")
    p.set_defaults(func=_runs("commands", "cmd_worker"))

    p = sub.add_parser("mcp", help="serve the memory over MCP (stdio; --http for streamable HTTP on /mcp)")
    p.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio (API keys as in serve)")
    p.add_argument("--host", default=None)
    p.add_argument("--port", type=_whole(1, 65535), default=None, help="HTTP port (default 8765)")
    p.add_argument("--tenant", help="the tenant of a stdio session (HTTP: the API key's)")
    p.set_defaults(func=_runs("commands", "cmd_mcp"))
    for subcommand in sub.choices.values():
        _global_options(subcommand, after=True)
    # `agent-memory CMD --help` opens with what CMD does (argparse shows a subcommand's help only in the list).
    for listed in sub._choices_actions:
        sub.choices[listed.dest].description = sub.choices[listed.dest].description or listed.help
    return parser
