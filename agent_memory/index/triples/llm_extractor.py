"""Entity and relation extraction with an LLM, validated against pydantic models.

The ``llm`` object is duck-typed: anything with
``complete(messages, *, max_tokens=None, temperature=0.0, response_format=None)``
returning an object with ``.text`` (``agent_memory.core.llm.LLMClient`` is one). An answer
that is not valid JSON for :class:`Extraction` is retried once with the validation
error shown to the model; a second failure raises :class:`~agent_memory.core.errors.LLMError`
so that the pipeline can fall back to the rule-based extractor.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from agent_memory.core.errors import LLMError
from agent_memory.core.llm import CompletionClient
from agent_memory.core.prompt_data import DATA_RULE, data_block
from agent_memory.core.records import Triple
from agent_memory.core.text import split_sentences
from agent_memory.index.triples.base import GENERIC, clean_name, dedupe_entities, dedupe_triples
from agent_memory.index.triples.base import Entity as FoundEntity

ENTITY_TYPES = ("PERSON", "ORG", "GPE", "LOC", "PRODUCT", "DATE", "NUMBER", "EVENT", "WORK_OF_ART", "entity")


class Entity(BaseModel):
    name: str = Field(min_length=1, description="The entity as written in the text")
    type: str = Field(default=GENERIC, description="One of " + ", ".join(ENTITY_TYPES))


class Relation(BaseModel):
    subject: str = Field(min_length=1)
    relation: str = Field(min_length=1, description="Short verb phrase, e.g. 'founded', 'located in'")
    object: str = Field(min_length=1)
    evidence: str = Field(default="", description="The exact span of the text that states the relation")


class Extraction(BaseModel):
    entities: list[Entity] = Field(default_factory=list)
    relations: list[Relation] = Field(default_factory=list)


_SYSTEM = (
    "You extract a knowledge graph from text. Answer with one JSON object only, matching this JSON schema:\n"
    "{schema}\n"
    "Rules: list every named entity (people, organisations, places, products and model identifiers, dates, "
    "numbers that matter) with a type from: {types}. List relations between those entities as "
    "subject/relation/object with `evidence` copied verbatim from the text. Use names exactly as written. "
    "Do not invent facts that the text does not state. Answer in the language of the text for names. "
    + DATA_RULE.replace("{", "{{").replace("}", "}}")  # _SYSTEM is a format string
)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)


def parse_extraction(text: str) -> Extraction:
    """Validate an LLM answer; tolerates a ```json fence around the object."""
    body = _FENCE.sub("", (text or "").strip())
    return Extraction.model_validate_json(body)


class LLMExtractor:
    """Triples from an LLM, with pydantic validation, one retry and chunking."""

    def __init__(
        self,
        llm: CompletionClient,
        *,
        max_chars: int = 6000,
        max_tokens: int | None = 2048,
        response_format: Literal["json_schema", "json_object", "none"] = "json_schema",
        confidence: float = 0.9,
    ):
        if max_chars < 200:
            raise ValueError(f"max_chars must be at least 200, got {max_chars}")
        self.llm = llm
        self.max_chars = max_chars
        self.max_tokens = max_tokens
        self.response_format = response_format
        self.confidence = confidence

    # -- public API ------------------------------------------------------------------
    def extract(self, text: str, *, tenant: str, source_id: str, item_id: str) -> list[Triple]:
        triples: list[Triple] = []
        for chunk in self.chunks(text):
            extraction = self.extract_chunk(chunk)
            types = {e.name.strip().casefold(): _type(e.type) for e in extraction.entities}
            for r in extraction.relations:
                s, o = clean_name(r.subject), clean_name(r.object)
                if not s or not o:
                    continue
                triples.append(
                    Triple(
                        subject=s, relation=r.relation.strip(), object=o, tenant=tenant, source_id=source_id,
                        item_id=item_id, subject_type=types.get(s.casefold(), GENERIC),
                        object_type=types.get(o.casefold(), GENERIC),
                        evidence=r.evidence.strip() or _sentence_with(chunk, s, o), confidence=self.confidence,
                    )
                )
        return dedupe_triples(triples)

    def entities(self, text: str) -> list[FoundEntity]:
        found = [FoundEntity(clean_name(e.name), _type(e.type)) for c in self.chunks(text) for e in self.extract_chunk(c).entities]
        return dedupe_entities(e for e in found if e.name)

    def chunks(self, text: str) -> list[str]:
        """Sentence-aligned pieces of at most ``max_chars`` (a longer sentence is cut)."""
        out: list[str] = []
        buf = ""
        for s in split_sentences(text or ""):
            while len(s) > self.max_chars:
                if buf:
                    out.append(buf)
                    buf = ""
                out.append(s[: self.max_chars])
                s = s[self.max_chars :]
            if buf and len(buf) + 1 + len(s) > self.max_chars:
                out.append(buf)
                buf = ""
            buf = f"{buf} {s}" if buf else s
        if buf.strip():
            out.append(buf)
        return out

    def extract_chunk(self, chunk: str) -> Extraction:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": _SYSTEM.format(schema=json.dumps(Extraction.model_json_schema()), types=", ".join(ENTITY_TYPES))},
            # The chunk is a stored document: fenced as data (its evidence spans are copied from what is shown).
            {"role": "user", "content": data_block(chunk)},
        ]
        first_error: Exception | None = None
        for attempt in range(2):
            result = self.llm.complete(
                messages, max_tokens=self.max_tokens, temperature=0.0, response_format=self._response_format()
            )
            answer = getattr(result, "text", None)
            try:
                if not isinstance(answer, str):
                    raise ValueError(f"LLM result has no text: {result!r}")
                return parse_extraction(answer)
            except (ValidationError, ValueError) as exc:
                first_error = first_error or exc
                if attempt == 0:
                    # Show the model its answer and the error once; a second failure is final.
                    messages = [
                        *messages,
                        {"role": "assistant", "content": str(answer)},
                        {"role": "user", "content": f"That was not valid JSON for the schema ({_short(exc)}). "
                         "Answer again with only the JSON object."},
                    ]
                    continue
                raise LLMError(
                    f"LLM extraction gave invalid JSON twice for a {len(chunk)}-char chunk; "
                    f"last answer {_short(answer)!r}: {_short(exc)}"
                ) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _response_format(self) -> dict[str, Any] | None:
        if self.response_format == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "extraction", "schema": Extraction.model_json_schema()}}
        if self.response_format == "json_object":
            return {"type": "json_object"}
        return None


def _type(t: str) -> str:
    t = (t or "").strip()
    upper = t.upper()
    return upper if upper in ENTITY_TYPES else (GENERIC if not t or t.lower() == GENERIC else upper)


def _sentence_with(chunk: str, a: str, b: str) -> str:
    for s in split_sentences(chunk):
        if a in s and b in s:
            return s
    return ""


def _short(x: object, limit: int = 200) -> str:
    s = str(x)
    return s if len(s) <= limit else s[:limit] + "..."
