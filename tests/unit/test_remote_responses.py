"""A server's refusals read back by the remote client (agent_memory/remote/responses.py): each as the error a
local call raises, a source's 404 carrying the stored IDs like the one asked, which ``forget`` and ``inspect``
through a server hand on for the CLI's hint."""

from __future__ import annotations

import httpx
import pytest

from agent_memory.core.errors import ConfigError, NotFoundError, SourceBusyError, SourceNotFoundError
from agent_memory.remote import RemoteError, RemoteMemory


def answering(status: int, body=None, text: str = "") -> RemoteMemory:
    """A client whose server answers every request with ``status`` and ``body`` (JSON) or ``text``."""
    remote = RemoteMemory("http://server.test", api_key="")

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json=body) if body is not None else httpx.Response(status, text=text)

    remote.client = httpx.Client(base_url=remote.url, transport=httpx.MockTransport(handler))
    return remote


def test_a_404_naming_similar_ids_is_a_source_not_found_that_carries_them():
    body = {"error": {"code": "not_found", "message": "no source 'notes/kiosks.md'"}, "similar": ["notes/kiosk.md", 7]}
    with answering(404, body) as remote:
        with pytest.raises(SourceNotFoundError) as refused:
            remote.request("GET", "/v1/sources/notes/kiosks.md")
        assert refused.value.similar == ["notes/kiosk.md", "7"] and str(refused.value) == "no source 'notes/kiosks.md'"
        assert remote.inspect_or_similar("notes/kiosks.md") == (None, ["notes/kiosk.md", "7"])
        assert remote.forget_or_similar("notes/kiosks.md") == ({"sources": 0, "items": 0, "triples": 0},
                                                               ["notes/kiosk.md", "7"])


@pytest.mark.parametrize("similar", [None, "notes/kiosk.md"])
def test_a_404_without_a_list_of_similar_ids_is_a_plain_not_found(similar):
    body = {"error": {"code": "not_found", "message": "no session 'pier'"}, "similar": similar}
    with answering(404, body) as remote:
        with pytest.raises(NotFoundError) as refused:
            remote.request("GET", "/v1/sessions/pier/view")
        assert type(refused.value) is NotFoundError
        assert remote.inspect_or_similar("pier") == (None, [])
        assert remote.forget_or_similar("pier")[1] == []


def test_other_refusals_keep_the_servers_code_and_message_or_the_start_of_its_text():
    with answering(409, {"error": {"code": "source_id_held", "message": "held by another file"}}) as remote:
        with pytest.raises(RemoteError) as refused:
            remote.request("POST", "/v1/documents")
        assert (refused.value.status, refused.value.code, refused.value.message) == (409, "source_id_held",
                                                                                    "held by another file")
    with answering(502, text="x" * 500) as remote:
        with pytest.raises(RemoteError) as refused:
            remote.request("GET", "/v1/stats")
        assert refused.value.code == "error" and refused.value.message == "x" * 300
    with answering(401, {"error": {"code": "unauthorized", "message": "missing API key"}}) as remote:
        with pytest.raises(ConfigError, match="needs an API key: missing API key; set AGENT_MEMORY_API_KEY"):
            remote.request("GET", "/v1/whoami")


def test_a_source_busy_refusal_is_the_source_busy_error_a_local_forget_raises_with_its_jobs():
    body = {"error": {"code": "source_busy", "message": "source 'a.md' is being uploaded by a job not finished yet"},
            "jobs": ["j-1", "j-2"]}
    with answering(409, body) as remote:
        with pytest.raises(SourceBusyError) as refused:
            remote.forget("a.md")
        assert refused.value.jobs == ["j-1", "j-2"]
        assert isinstance(refused.value, RemoteError) and refused.value.code == "source_busy"
    with answering(409, {"error": {"code": "source_busy", "message": "busy"}}) as remote:  # an older server's body
        with pytest.raises(SourceBusyError) as refused:
            remote.forget("a.md")
        assert refused.value.jobs == []
