"""The eval command's flags, defined once for `agent-memory eval` and `python -m agent_memory.evaluation`."""

from __future__ import annotations

import argparse


def add_eval_arguments(parser: argparse.ArgumentParser, *, data_dir: bool = True) -> None:
    """``data_dir=False`` where the enclosing CLI already has a global ``--data-dir``."""
    parser.add_argument("dataset", nargs="?", help="a benchmark file (or use --mixed)")
    parser.add_argument("--mixed", nargs="+", metavar="FILE",
                        help="ingest these sets into one tenant and score each against the mixed memory "
                             "beside its own tenant, in one run")
    parser.add_argument("--agent-path", action="store_true",
                        help="also append the conversations message by message through the session API, as an "
                             "agent does, and score that path (without and inside the last session) beside the "
                             "transcript path, in one run (agent_memory/evaluation/agent_path.py)")
    parser.add_argument("--budget", help="tokens, or a comma list such as 500,1000,1800")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--out", default="reports")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-baselines", action="store_true")
    parser.add_argument("--no-product", action="store_true", help="baselines only")
    if data_dir:
        parser.add_argument("--data-dir", help="keep the stores here (reused on the next run)")
    parser.add_argument("--preset", default="default",
                        help="retrieval preset to compare with the served default (the headline is the default)")
    parser.add_argument("--compare", action="append", default=[], metavar="NAME",
                        help="also score this configuration in the same run, on the same stores, beside the product: "
                             "a preset name, or LABEL=JSON overrides of --preset, e.g. "
                             "'static={\"importance_signal\": 0}' (repeatable; see docs/results.md)")
