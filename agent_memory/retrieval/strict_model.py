"""The base of the retrieval config's models: strict (an unknown key is refused by name), no boolean where a
number goes, every count bounded and every number finite. Its own module so ``config.py`` holds the settings."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

# The largest count (hits, candidates, words, days) a setting may ask for where the setting names no bound
# of its own: far above every default (the routes' 250 hits, 400 reranked) and every preset, below what would make
# one question read a whole store or a search fail inside.
MAX_COUNT = 10_000


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_boolean_for_a_number(cls, value: Any, info: ValidationInfo) -> Any:
        """pydantic reads ``true`` as 1 for a number: ``"dense": {"limit": true}`` asked for one hit, silently."""
        if isinstance(value, bool) and cls.model_fields[info.field_name].annotation in (int, float):
            raise ValueError("should be a number, not a boolean")
        return value

    @field_validator("*", mode="after")
    @classmethod
    def _bounded(cls, value: Any, info: ValidationInfo) -> Any:
        """A count with no bound of its own is at most ``MAX_COUNT``, a number is finite: ``"limit": 10**30`` was
        accepted, the search it shaped failed inside ("int too big to convert") and the prompt went out without
        that route, said only in a log line."""
        field = cls.model_fields[info.field_name]
        if any(hasattr(rule, "le") or hasattr(rule, "lt") for rule in field.metadata):
            return value
        if field.annotation is int and value > MAX_COUNT:
            raise ValueError(f"should be at most {MAX_COUNT}")
        if field.annotation is float and not math.isfinite(value):
            raise ValueError("should be a finite number")
        return value
