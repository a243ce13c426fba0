"""Values no store can hold, sent over HTTP and through ``Memory``: NUL in a document's text, title, metadata
or source ID, Infinity and NaN in metadata. Each is refused naming the field (422 from the API, ValueError
from Python) and nothing is stored; a file whose front matter holds ``.inf`` or ``.nan`` is still ingested,
with that value kept as its text."""

from __future__ import annotations

import os

import httpx
import pytest

os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_thread, wait_ready  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.ingest.upkeep import inspect  # noqa: E402
from tests.helpers import api_error

FRONT = "---\ntitle: Pumps\nversion: .inf\nn: .nan\ntags: [a, -.inf]\n---\nThe greenhouse pump runs at night.\n"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    settings = load_settings(data_dir=tmp_path_factory.mktemp("hostile-values"), triple_extractor="none",
                             qdrant_url=None, neo4j_uri=None, postgres_url=None)
    app = create_app(settings)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as http:
        wait_ready(http)
        yield http


def _nothing_stored(client, source_id: str) -> None:
    assert client.get(f"/v1/sources/{source_id}").status_code == 404


@pytest.mark.parametrize("body, named", [
    ({"source_id": "h/nul.txt", "text": "Doc with NUL \x00 inside"}, "text holds a NUL character"),
    ({"source_id": "h/nul.txt", "text": "x", "title": "T\x00itle"}, "title holds a NUL character"),
    ({"source_id": "h/nul.txt", "text": "x", "metadata": {"k\x00": "v"}}, "the key 'k\\x00' holds a NUL"),
    ({"source_id": "h/nul.txt", "text": "x", "metadata": {"a": [{"b": "v\x00"}]}}, "metadata['a'][0]['b'] holds a NUL"),
    ({"source_id": "h/n\x00ul.txt", "text": "x"}, "cannot contain control characters"),
    ({"source_id": "h/line\nbreak.txt", "text": "x"}, "cannot contain control characters"),
])
def test_a_json_document_holding_nul_is_422_naming_the_field(client, body, named):
    message = api_error(client.post("/v1/documents", json=body), 422, "invalid_request")
    assert named in message
    _nothing_stored(client, "h/nul.txt")


@pytest.mark.parametrize("metadata, named", [
    ('{"v": Infinity}', "metadata['v'] is inf"),
    ('{"v": -Infinity}', "metadata['v'] is -inf"),
    ('{"team": "ops", "n": NaN}', "metadata['n'] is nan"),
    ('{"tags": ["a", [1, NaN]]}', "metadata['tags'][1][1] is nan"),
    ('{"k": "v\\u0000"}', "metadata['k'] holds a NUL"),
    ('{"k": "\\ud800"}', "metadata['k'] holds a lone surrogate"),
    ("[" * 150 + "]" * 150, "metadata must be a JSON object"),
    ('{"a":' * 150 + "1" + "}" * 150, "nested deeper than 100"),
])
def test_multipart_metadata_no_store_can_hold_is_422_naming_the_key(client, metadata, named):
    response = client.post("/v1/documents", files={"file": ("m.md", b"A note about valves.")},
                           data={"source_id": "up/m.md", "metadata": metadata})
    assert named in api_error(response, 422, "invalid_request")
    _nothing_stored(client, "up/m.md")


def test_a_json_body_with_infinity_stays_refused_before_parsing(client):
    response = client.post("/v1/documents", content=b'{"source_id": "j.txt", "text": "x", "metadata": {"v": Infinity}}',
                           headers={"content-type": "application/json"})
    assert "Infinity" in api_error(response, 400, "bad_request")


def test_a_multipart_source_id_or_file_name_with_a_control_character_is_422(client):
    response = client.post("/v1/documents", files={"file": ("m.md", b"A note.")}, data={"source_id": "up/a\x01b.md"})
    assert "cannot contain control characters" in api_error(response, 422, "invalid_request")
    response = client.post("/v1/documents", files={"file": ("a\x85b.md", b"A note.")})
    message = api_error(response, 422, "invalid_request")
    assert "file name" in message and "send a source_id" in message


def test_an_upload_whose_front_matter_holds_inf_and_nan_is_ingested_with_them_as_text(client):
    response = client.post("/v1/documents", files={"file": ("pumps.md", FRONT.encode())}, data={"source_id": "fm.md"})
    assert response.status_code == 200, response.text
    (item,) = client.get("/v1/sources/fm.md").json()["items"]
    assert {k: item["metadata"][k] for k in ("version", "n", "tags")} == {"version": ".inf", "n": ".nan",
                                                                          "tags": ["a", "-.inf"]}


def test_a_message_holding_nul_is_refused_and_nothing_is_appended(client):
    bad = {"message": {"role": "user", "content": "The safe combo is 12\x00-34-56."}}
    assert "message['content'] holds a NUL" in api_error(client.post("/v1/sessions/nul/messages", json=bad),
                                                          400, "bad_request")
    assert client.get("/v1/sessions/nul/view").status_code == 404


# ---- the same checks through Memory ---------------------------------------------------------------

@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    from agent_memory import Memory

    settings = load_settings(data_dir=tmp_path_factory.mktemp("values-memory"), triple_extractor="none",
                             qdrant_url=None, neo4j_uri=None, postgres_url=None)
    with Memory(settings=settings) as mem:
        yield mem


@pytest.mark.parametrize("kwargs, named", [
    ({"metadata": {"v": float("inf")}}, r"^metadata\['v'\] is inf"),
    ({"metadata": {"deep": {"l": [float("nan")]}}}, r"^metadata\['deep'\]\['l'\]\[0\] is nan"),
    ({"metadata": {"k": "a\x00"}}, r"^metadata\['k'\] holds a NUL"),
    ({"title": "T\x00"}, "^title holds a NUL"),
    ({"text": "body\x00"}, "^text holds a NUL"),
    ({"source_id": "h/n\x00ul.txt"}, "cannot contain control characters"),
])
def test_memory_add_refuses_what_no_store_holds_naming_it(memory, kwargs, named):
    args = {"text": "A note about valves.", "source_id": "py/v.txt", **kwargs}
    with pytest.raises(ValueError, match=named):
        memory.add(args.pop("text"), **args)
    assert inspect(memory.services, memory.tenant, "py/v.txt") is None


def test_memory_add_file_refuses_infinite_metadata_and_ingests_front_matter_infinity(memory, tmp_path):
    note = tmp_path / "pumps.md"
    note.write_text(FRONT, encoding="utf-8")
    with pytest.raises(ValueError, match=r"^metadata\['v'\] is nan"):
        memory.add_file(note, metadata={"v": float("nan")})
    added = memory.add_file(note, source_id="py/pumps.md")
    assert added.report.ok and not added.report.files_failed, added.report.to_dict()
    folder = tmp_path / "notes"  # the CLI's job: each file of a folder (fm2/inf.md failed it)
    folder.mkdir()
    (folder / "nan.md").write_text("---\nn: .nan\n---\nThe boiler was serviced in May.\n", encoding="utf-8")
    report = memory.add_paths([folder])
    assert report.files_failed == [] and report.files_ingested == 1
    (item,) = inspect(memory.services, memory.tenant, "py/pumps.md")["items"]
    assert {k: item["metadata"][k] for k in ("version", "n", "tags")} == {"version": ".inf", "n": ".nan",
                                                                          "tags": ["a", "-.inf"]}
