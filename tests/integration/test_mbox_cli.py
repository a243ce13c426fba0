"""A mail archive through the CLI: `agent-memory ingest` reads each message of an .mbox as a source of its own,
and `agent-memory prompt` finds the one a question is about and cites it by its ID (``<file ID>#<n>``)."""

from __future__ import annotations

import json

from tests.helpers import embedded_cli_env, run_cli

ARCHIVE = b"""From ana@heron.example Mon Jan  6 09:00:00 2025
From: Ana Ortiz <ana@heron.example>
To: depot@heron.example
Subject: Greenhouse heating
Date: Mon, 6 Jan 2025 09:00:00 +0000

The greenhouse boiler needs a new thermostat before the frost.

From bo@heron.example Tue Jan  7 10:30:00 2025
From: Bo Lind <bo@heron.example>
To: depot@heron.example
Subject: Forklift service
Date: Tue, 7 Jan 2025 10:30:00 +0000
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: quoted-printable

The forklift in hangar 4 goes to Norrk=C3=B6ping for its service on 14 February.
>From then on the spare forklift is used.

From cy@heron.example Wed Jan  8 16:45:00 2025
From: Cy Moss <cy@heron.example>
Subject: Lunch
Date: Wed, 8 Jan 2025 16:45:00 +0000

Pizza on Friday.
"""


def test_an_mbox_message_is_found_by_a_question_and_cited_by_its_id(tmp_path, monkeypatch, capsys):
    embedded_cli_env(monkeypatch, tmp_path / "data")
    mail = tmp_path / "mail"
    mail.mkdir()
    (mail / "depot.mbox").write_bytes(ARCHIVE)
    code, out, _ = run_cli(capsys, ["ingest", str(mail), "--json"])
    report = json.loads(out)
    assert code == 0 and report["files_ingested"] == 1 and not report["files_skipped"], out
    code, out, _ = run_cli(capsys, ["prompt", "When does the forklift go for its service?", "--budget", "400",
                                    "--json"])
    dump = json.loads(out)
    assert code == 0
    assert "[S:mail/depot.mbox#1]" in dump["prompt"] and "mail/depot.mbox#1" in dump["used_source_ids"]
    assert "Norrk\u00f6ping for its service on 14 February" in dump["prompt"]
    assert "From then on the spare forklift is used." in dump["prompt"]
    # Ingested again unchanged: nothing is read again, the IDs stay.
    code, out, _ = run_cli(capsys, ["ingest", str(mail), "--json"])
    assert code == 0 and json.loads(out)["files_unchanged"] == 1, out
