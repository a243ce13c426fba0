"""Two existing files that the CLI names by one source ID (``a/x.py`` and ``b/x.py`` both ingested alone are
``x.py``): locally the second is refused naming the first (ingest/file_ingestion.py); through the server that
owns the data dir it is refused the same way (409 ``source_id_held``), never stored over the first. An upload
under a source ID the API caller chose keeps replacing what that ID held (a changed version of a document)."""

from __future__ import annotations

import json

import httpx
import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.core.config import load_settings
from agent_memory.remote import KEY_ENV
from tests.helpers import embedded_cli_env, run_cli


@pytest.fixture()
def twins(tmp_path, monkeypatch):
    """Two files both named x.py, in folders a/ and b/, and the CLI's data dir."""
    data = tmp_path / "data"
    embedded_cli_env(monkeypatch, data)
    monkeypatch.delenv(KEY_ENV, raising=False)
    for folder, text in (("a", "ALPHA_CONTENT = 1\n"), ("b", "BETA_CONTENT = 2\n")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.py").write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path, data


def stored(capsys) -> str:
    """Whose text ``x.py`` holds."""
    code, out, err = run_cli(capsys, ["inspect", "x.py"])
    assert code == 0, err
    text = json.dumps(json.loads(out)["items"])
    return "ALPHA" if "ALPHA_CONTENT" in text else "BETA" if "BETA_CONTENT" in text else text


def refused_second(capsys, root) -> str:
    assert run_cli(capsys, ["ingest", str(root / "a" / "x.py")])[0] == 0
    code, out, err = run_cli(capsys, ["ingest", str(root / "b" / "x.py")])
    assert code != 0, out
    return out + err


def test_a_second_file_under_one_id_is_refused_locally(twins, capsys):
    root, _ = twins
    said = refused_second(capsys, root)
    assert f"source ID 'x.py' is held by another file, '{root / 'a' / 'x.py'}'" in said, said
    assert stored(capsys) == "ALPHA"


def test_a_second_file_under_one_id_is_refused_through_the_server(twins, capsys):
    root, data = twins
    with serve_in_thread(create_app(load_settings(data_dir=data), warm=False), owns=data):
        said = refused_second(capsys, root)
        assert "working through its HTTP API" in said, said
        assert f"source ID 'x.py' is held by another file, '{root / 'a' / 'x.py'}'" in said, said
        assert "409 source_id_held" in said, said
        assert stored(capsys) == "ALPHA"
        # The first file itself, changed, is read again as ever.
        (root / "a" / "x.py").write_text("ALPHA_CONTENT = 1\nGAMMA_CONTENT = 3\n")
        assert run_cli(capsys, ["ingest", str(root / "a" / "x.py")])[0] == 0
        assert "GAMMA_CONTENT" in run_cli(capsys, ["inspect", "x.py"])[1]


def test_an_api_caller_s_chosen_source_id_is_replaced_and_named_by_path_needs_client_path(twins):
    root, data = twins
    with serve_in_thread(create_app(load_settings(data_dir=data), warm=False), owns=data) as url, \
            httpx.Client(base_url=url, timeout=120) as client:
        def upload(folder: str, **form: str) -> httpx.Response:
            body = (root / folder / "x.py").read_bytes()
            return client.post("/v1/documents", files={"file": ("x.py", body)},
                               data={"client_path": str(root / folder / "x.py"), **form})
        assert upload("a").status_code == 200  # no source_id: named from the file name, by its path
        # Without a source_id the ID is the server's naming from the file name: the other file is refused.
        held = upload("b")
        assert held.status_code == 409 and held.json()["error"]["code"] == "source_id_held", held.text
        assert str(root / "a" / "x.py") in held.json()["error"]["message"]
        # A source ID the caller chose: a new version of that document replaces it.
        chosen = upload("b", source_id="x.py")
        assert chosen.status_code == 200, chosen.text
        assert "BETA_CONTENT" in client.get("/v1/sources/x.py").text
        # Named by path, but from no path the server can compare: said, nothing stored.
        bare = client.post("/v1/documents", files={"file": ("y.py", b"Y = 1\n")}, data={"named_by_path": "true"})
        assert bare.status_code == 422 and "client_path" in bare.json()["error"]["message"], bare.text
