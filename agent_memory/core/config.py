"""Settings, read from the environment (prefix ``AGENT_MEMORY_``) and an optional ``.env``.

Nothing is read at import time: call :func:`load_settings` (the factory) where a
process starts, and pass the result down. The settings model is ``settings.py``'s ``Settings``;
this module reads it and says what is wrong with a value it refuses.
"""

from __future__ import annotations

import json
import re

from pydantic import ValidationError
from pydantic_settings import SettingsError

from agent_memory.core.errors import ConfigError, problem_of
from agent_memory.core.settings import Settings  # and imported from here, beside load_settings


def setting_variable(name: str) -> str:
    """The environment variable a setting is read from (``job_runner`` → ``AGENT_MEMORY_JOB_RUNNER``); a name
    that is no setting ("settings", a nested location) as it is."""
    return f"AGENT_MEMORY_{name.upper()}" if name in Settings.model_fields else name


def settings_problems(exc: ValidationError) -> dict[str, str]:
    """Each invalid setting of ``exc`` (its name, or "settings") and what is wrong with it, without pydantic's
    URL lines."""
    problems: dict[str, str] = {}
    for error in exc.errors():
        name = ".".join(map(str, error["loc"])) or "settings"
        problems[name] = f"{problems[name]}; {problem_of(error)}" if name in problems else problem_of(error)
    return problems


def load_settings(**overrides) -> Settings:
    """The one factory for settings: environment, then ``.env``, then explicit overrides. An
    override that names no setting is refused with its name (a typo must not pass silently; the
    environment and ``.env`` may hold other tools' variables, so they are not checked)."""
    unknown = sorted(set(overrides) - set(Settings.model_fields))
    if unknown:
        raise ConfigError(f"unknown setting(s) {', '.join(map(repr, unknown))}; known: "
                          f"{', '.join(sorted(Settings.model_fields))}")
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        problems = "; ".join(f"{name} ({setting_variable(name)}): {problem}" if name in Settings.model_fields
                             else f"{name}: {problem}" for name, problem in settings_problems(exc).items())
        raise ConfigError(f"invalid settings: {problems}") from None
    except SettingsError as exc:  # a structured setting (a dict, a list) whose variable is not JSON
        raise ConfigError(_not_json(exc)) from None


def not_json_setting(exc: SettingsError) -> str | None:
    """The setting whose variable could not be read as JSON, by its name (pydantic-settings names only it)."""
    found = re.search(r'field "(\w+)"', str(exc))
    return found.group(1) if found and found.group(1) in Settings.model_fields else None


def _not_json(exc: SettingsError) -> str:
    """The variable whose value could not be read, and the JSON its setting takes (pydantic-settings
    names only the field and the source)."""
    name = not_json_setting(exc)
    if name is None:
        return f"invalid settings: {exc}"
    field = Settings.model_fields[name]
    example = f", e.g. {json.dumps(field.examples[0])}" if field.examples else ""
    return (f"invalid settings: {setting_variable(name)} must be JSON ({field.description}){example}; "
            "check the environment and .env")
