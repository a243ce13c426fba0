"""One rule for tenant names (core/names.py) on every surface: no control character, no '/', not blank nor
surrounded by whitespace, at most 256 characters; the settings' tenant and API keys' are checked the same
way before a server starts."""

from __future__ import annotations

import pytest

from agent_memory.api.state import check_tenant_names
from agent_memory.core.config import Settings
from agent_memory.core.errors import ConfigError
from agent_memory.core.names import MAX_NAME_CHARS, session_id_problem, tenant_problem
from agent_memory.memory.arguments import check_tenant

REFUSED = {"": "is blank", " ": "is blank", "a/b": "holds '/'", "t\nx": "holds a control character ('\\n')",
           "default\x00": "holds a control character ('\\x00')", "x\x85": "holds a control character ('\\x85')",
           " acme": "has whitespace around it", "acme\t": "holds a control character ('\\t')",
           "acme ": "has whitespace around it", "x" * (MAX_NAME_CHARS + 1): f"has {MAX_NAME_CHARS + 1} characters"}


@pytest.mark.parametrize("name", ["acme", "my tenant", "ü", "租户", "a.b", "x" * MAX_NAME_CHARS])
def test_names_every_surface_takes(name):
    assert tenant_problem(name) is None and check_tenant(name) == name


@pytest.mark.parametrize("name", list(REFUSED))
def test_names_refused_say_why_and_what_is_expected(name):
    assert tenant_problem(name) == REFUSED[name]
    with pytest.raises(ConfigError) as refused:
        check_tenant(name)
    message = str(refused.value)
    assert REFUSED[name] in message and repr(name[:80]) in message
    assert "non-blank strings of at most 256 characters, without '/', control characters" in message


def test_a_name_a_data_dir_holds_from_before_the_rule_is_still_taken():
    assert check_tenant("t\nx", held=lambda name: name == "t\nx") == "t\nx"
    with pytest.raises(ConfigError):
        check_tenant("t\ny", held=lambda name: name == "t\nx")
    with pytest.raises(TypeError, match="tenant must be a str"):
        check_tenant(5)


def test_session_ids_follow_the_http_rule_with_spaces_allowed():
    assert session_id_problem(" s 1 ") is None
    assert session_id_problem("team/alpha") == "holds '/'" and session_id_problem("  ") == "is blank"


@pytest.mark.parametrize(("tenant", "keys"), [("t\nx", {}), ("default", {"k1": "acme "}), ("default", {"k": "a/b"})])
def test_a_server_refuses_settings_naming_no_tenant(tenant, keys):
    settings = Settings(tenant=tenant, api_keys=keys)
    if "/" in (tenant + "".join(keys.values())):  # before the stores open: what no data dir can hold
        with pytest.raises(ConfigError, match="holds '/'"):
            check_tenant_names(settings)
    else:
        check_tenant_names(settings)  # a data dir from before the rule may hold it: decided once open
    with pytest.raises(ConfigError, match="tenant names are non-blank") as refused:
        check_tenant_names(settings, held=lambda name: False)
    assert ("in AGENT_MEMORY_API_KEYS" in str(refused.value)) == bool(keys)
    check_tenant_names(settings, held=lambda name: True)
