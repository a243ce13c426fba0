"""The human ingest report lists the first warnings and says how many more there are (--json lists all)."""

from __future__ import annotations

import json

from agent_memory.ingest.report import WARNINGS_SHOWN, IngestReport
from tests.helpers import embedded_cli_env, run_cli


def test_render_says_how_many_warnings_are_not_listed():
    report = IngestReport(warnings=[f"w{i}" for i in range(WARNINGS_SHOWN + 7)])
    lines = report.render(listed_in="--json").splitlines()
    assert sum(line.startswith("  warning: ") for line in lines) == WARNINGS_SHOWN
    assert lines[-1] == "  … and 7 more warnings (--json lists them all)"
    assert report.render().splitlines()[-1] == "  … and 7 more warnings"
    report.warnings = report.warnings[:WARNINGS_SHOWN]  # all listed: nothing more to say
    assert "more warnings" not in report.render(listed_in="--json")


def test_the_cli_report_cut_names_the_rest_and_json_lists_them(tmp_path, capsys, monkeypatch):
    embedded_cli_env(monkeypatch, tmp_path / "data")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "team.md").write_text("# Team\n\nOrla Vance leads the Kestrel platform team.\n")
    bad = [f"bad{i}\\" for i in range(WARNINGS_SHOWN + 5)]  # a trailing backslash is no pattern: a warning each
    (notes / ".ignore").write_text("\n".join(bad) + "\n")
    code, out, _ = run_cli(capsys, ["ingest", str(notes)])
    assert code == 0, out
    assert out.count("  warning: ") == WARNINGS_SHOWN and "… and 5 more warnings (--json lists them all)" in out
    code, out, _ = run_cli(capsys, ["ingest", str(notes), "--json"])
    assert code == 0 and len([w for w in json.loads(out)["warnings"] if "not a pattern" in w]) == len(bad)
