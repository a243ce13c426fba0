"""The settings set in this process's environment and ``.env``, read even where some are invalid: for a
process that applies only a few of them itself (the CLI through a server), a setting it does not apply
must not stop it, and is said to be invalid instead."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError, create_model
from pydantic_settings import BaseSettings, SettingsError

from agent_memory.core.config import Settings, not_json_setting, settings_problems
from agent_memory.core.settings import home_expanded

# Each setting read as the text it is set to, none decoded or checked: which are set, and their raw values.
_Raw = create_model("_RawSettings", __base__=BaseSettings,  # type: ignore[call-overload]
                    **{name: (Any, None) for name in Settings.model_fields})
_Raw.model_config = {**Settings.model_config}


@dataclass(frozen=True)
class SettingsHere:
    settings: Settings | None  # all of them, where every one is valid
    set_here: frozenset[str]  # the names set in the environment or .env
    invalid: dict[str, str] = field(default_factory=dict)  # name -> what is wrong with it
    raw: dict[str, Any] = field(default_factory=dict)  # name -> the value set, unchecked

    def value(self, name: str) -> Any:
        """One setting of a plain type (``tenant``, ``data_dir``), even where others are invalid."""
        if self.settings is not None:
            return getattr(self.settings, name)
        if name not in self.raw or name in self.invalid:
            return Settings.model_fields[name].get_default(call_default_factory=True)
        raw = self.raw[name]
        return Path(home_expanded(raw)) if name == "data_dir" else raw


def settings_here() -> SettingsHere:
    """The settings set here, whether or not each is valid."""
    try:
        settings = Settings()
    except ValidationError as exc:
        invalid = settings_problems(exc)
    except SettingsError as exc:
        name = not_json_setting(exc)
        invalid = {name or "settings": "must be JSON" if name else str(exc)}
    else:
        return SettingsHere(settings, frozenset(settings.model_fields_set))
    raw = _Raw()
    set_here = frozenset(raw.model_fields_set)
    return SettingsHere(None, set_here, invalid, {name: getattr(raw, name) for name in set_here})
