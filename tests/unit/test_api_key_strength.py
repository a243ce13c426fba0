"""A server refuses, before it listens, an API key copied from the docs, and off loopback a short one;
its messages name the key's tenant, never the key."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest

from agent_memory.api.state import MIN_KEY_CHARS, PLACEHOLDER_KEYS, check_api_keys
from agent_memory.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
LONG = "0123456789abcdef0123"


def test_every_key_the_docs_and_compose_show_is_a_placeholder():
    shown = set()
    for path in [ROOT / "README.md", ROOT / "docker-compose.yml", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for keys in re.findall(r"AGENT_MEMORY_API_KEYS='(\{[^}]*\})'", text):
            shown |= set(json.loads(keys))
        shown |= set(re.findall(r"X-API-Key: ([^\s'\"`$]+)", text))
    assert "k-acme" in shown
    assert shown <= PLACEHOLDER_KEYS, shown - PLACEHOLDER_KEYS


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1", "localhost", "::1"])
def test_a_placeholder_is_refused_wherever_the_server_listens(host):
    with pytest.raises(ConfigError) as refused:
        check_api_keys({LONG: "globex", "change-me-long-random-key": "acme"}, host)
    message = str(refused.value)
    assert "'acme'" in message and "example from the documentation" in message
    assert "change-me" not in message and LONG not in message and "globex" not in message


def test_a_short_key_is_refused_off_loopback_naming_its_tenant_only():
    with pytest.raises(ConfigError) as refused:
        check_api_keys({"Zq": "acme", LONG: "globex"}, "0.0.0.0")
    message = str(refused.value)
    assert "'acme'" in message and f"shorter than {MIN_KEY_CHARS}" in message and "'0.0.0.0'" in message
    assert "Zq" not in message and "globex" not in message
    with pytest.raises(ConfigError, match="tenants 'acme', 'beta'"):
        check_api_keys({"Zq": "beta", "Zr": "acme"}, "10.0.0.5")


def test_a_short_key_on_loopback_is_warned_of_and_served(caplog):
    with caplog.at_level(logging.WARNING, logger="agent_memory.api.state"):
        check_api_keys({"Zq": "acme"}, "127.0.0.1")
    (record,) = caplog.records
    assert "'acme'" in record.getMessage() and "Zq" not in record.getMessage()


def test_long_keys_pass_silently(caplog):
    with caplog.at_level(logging.WARNING):
        check_api_keys({LONG: "acme", "x" * MIN_KEY_CHARS: "globex"}, "0.0.0.0")
        check_api_keys({}, "127.0.0.1")
    assert not caplog.records


def test_serve_refuses_a_short_key_before_it_opens_anything(monkeypatch, tmp_path):
    from agent_memory.api.server import serve

    monkeypatch.setenv("AGENT_MEMORY_API_KEYS", json.dumps({"k": "acme"}))
    with pytest.raises(ConfigError, match="tenant 'acme'.*shorter"):
        serve(host="0.0.0.0", port=1, data_dir=str(tmp_path / "data"))
    assert not (tmp_path / "data").exists()


def test_the_mcp_http_server_refuses_a_placeholder(monkeypatch):
    from agent_memory.mcp_server.server import serve

    monkeypatch.setenv("AGENT_MEMORY_API_KEYS", json.dumps({"change-me-long-random-key": "acme"}))
    with pytest.raises(ConfigError, match="tenant 'acme' is the example"):
        serve(http=True, host="127.0.0.1", port=1, remote=object())  # type: ignore[arg-type]


# ---- admin keys (AGENT_MEMORY_ADMIN_KEYS): the server-wide operations' keys, named by position only ------
ADMIN = "adm1n-s3cret-0123456789"


def _settings(monkeypatch, admin: str, api_keys: dict | None = None, host: str = "127.0.0.1"):
    from agent_memory.core.config import load_settings

    monkeypatch.setenv("AGENT_MEMORY_ADMIN_KEYS", admin)
    monkeypatch.delenv("AGENT_MEMORY_API_KEYS", raising=False)
    return load_settings(api_keys=api_keys if api_keys is not None else {LONG: "acme"}, api_host=host)


def test_admin_keys_are_a_comma_list_or_json_and_never_in_the_settings_repr(monkeypatch):
    settings = _settings(monkeypatch, f" {ADMIN} , second-{ADMIN}")
    assert settings.admin_keys == [ADMIN, f"second-{ADMIN}"]
    assert ADMIN not in repr(settings)
    assert _settings(monkeypatch, json.dumps([ADMIN])).admin_keys == [ADMIN]
    assert _settings(monkeypatch, "").admin_keys == []


@pytest.mark.parametrize("value, problem", [(f"{ADMIN},,other-{ADMIN}", "entry 2 is blank"),
                                            (f"{ADMIN},", "entry 2 is blank"),
                                            (f'["{ADMIN}", 7]', "entry 2 is not a string (int)"),
                                            (f'["{ADMIN}"', "is not a JSON list")])
def test_a_malformed_admin_key_list_is_refused_by_position_without_the_keys(monkeypatch, value, problem):
    with pytest.raises(ConfigError) as refused:
        _settings(monkeypatch, value)
    message = str(refused.value)
    assert "AGENT_MEMORY_ADMIN_KEYS" in message and problem in message and ADMIN not in message


def test_admin_keys_need_api_keys_and_are_no_tenant_key(monkeypatch):
    from agent_memory.api.state import check_admin_keys

    with pytest.raises(ConfigError, match="AGENT_MEMORY_API_KEYS is not"):
        check_admin_keys(_settings(monkeypatch, ADMIN, api_keys={}))
    with pytest.raises(ConfigError) as refused:
        check_admin_keys(_settings(monkeypatch, f"other-{ADMIN},{ADMIN}", api_keys={ADMIN: "acme"}))
    message = str(refused.value)
    assert "admin key 2 is also the API key of tenant 'acme'" in message and ADMIN not in message


def test_an_admin_key_from_the_docs_or_short_off_loopback_is_refused_by_position(monkeypatch, caplog):
    from agent_memory.api.state import check_admin_keys

    with pytest.raises(ConfigError, match="admin key 2 is the example from the documentation"):
        check_admin_keys(_settings(monkeypatch, f"{ADMIN},change-me-long-random-key"))
    with pytest.raises(ConfigError) as refused:
        check_admin_keys(_settings(monkeypatch, f"{ADMIN},Zq", host="0.0.0.0"))
    assert "admin key 2 is shorter than" in str(refused.value) and "Zq" not in str(refused.value)
    with caplog.at_level(logging.WARNING, logger="agent_memory.api.state"):
        check_admin_keys(_settings(monkeypatch, "Zq"))  # on loopback: warned of, served
    (record,) = caplog.records
    assert "admin key 1 is shorter" in record.getMessage() and "Zq" not in record.getMessage()


def test_serve_refuses_admin_keys_without_api_keys_before_it_listens(monkeypatch, tmp_path, capsys):
    from tests.helpers import embedded_cli_env, run_cli

    embedded_cli_env(monkeypatch, tmp_path / "data")
    monkeypatch.setenv("AGENT_MEMORY_ADMIN_KEYS", ADMIN)
    monkeypatch.delenv("AGENT_MEMORY_API_KEYS", raising=False)
    code, _, err = run_cli(capsys, ["serve", "--port", "9"])
    assert code == 2 and "AGENT_MEMORY_API_KEYS is not" in err and ADMIN not in err
    assert not (tmp_path / "data").exists()
