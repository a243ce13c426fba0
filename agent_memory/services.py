"""The one place that builds every service from settings.

Heavy parts (the embedding model, the stores) are built on first use, so a command
that needs only the catalog does not load a model.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path

from .catalog import SourceCatalog, SQLiteCatalog
from .config import Settings, load_settings
from .embedding import CachedEmbedder, EmbeddingCache, collection_name, make_embedder
from .tokens import TokenCounter, make_counter

log = logging.getLogger(__name__)


class Services:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.data_dir = Path(settings.data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)

    @functools.cached_property
    def counter(self) -> TokenCounter:
        return make_counter(self.settings.tokenizer)

    @functools.cached_property
    def postgres(self):
        """The one PostgreSQL pool of this process (catalog, sessions, jobs); None when not configured."""
        if not self.settings.postgres_url:
            return None
        from .stores.postgres import PostgresDB

        return PostgresDB(self.settings.postgres_url, pool_size=self.settings.postgres_pool_size)

    @functools.cached_property
    def catalog(self) -> SourceCatalog:
        if self.postgres is not None:
            from .stores.postgres_catalog import PostgresCatalog

            return PostgresCatalog(self.postgres)
        return SQLiteCatalog(self.data_dir / "catalog.sqlite")

    @functools.cached_property
    def session_store(self):
        """Working-memory sessions on PostgreSQL when configured; None: the session manager keeps
        its embedded SQLite file under data_dir."""
        if self.postgres is None:
            return None
        from .stores.postgres_sessions import PostgresSessionStore

        return PostgresSessionStore(self.postgres)

    @functools.cached_property
    def job_store(self):
        """Durable ingestion jobs and per-source locks on PostgreSQL when configured; None:
        jobs run in the API process (``api/jobs.py``)."""
        if self.postgres is None:
            return None
        from .stores.postgres_jobs import PostgresJobStore

        return PostgresJobStore(self.postgres)

    @functools.cached_property
    def embedder(self) -> CachedEmbedder:
        inner = make_embedder(self.settings.embedding_model, self.settings.embedding_batch_size)
        return CachedEmbedder(inner, EmbeddingCache(self.data_dir / "embedding-cache.sqlite"))

    @functools.cached_property
    def sparse_encoder(self):
        from .sparse import SparseEncoder

        return SparseEncoder()

    @functools.cached_property
    def vectors(self):
        from .stores.vector_factory import open_vector_store

        self._check_index_format()
        embedder = self.embedder
        return open_vector_store(self.settings, embedder.dimension, collection_name(embedder))

    def _check_index_format(self) -> None:
        """Refuse a data dir whose keyword vectors were written by another sparse format."""
        import json

        from .errors import ConfigError
        from .sparse import SPARSE_FORMAT

        marker = self.data_dir / "index-format.json"
        if marker.exists():
            found = json.loads(marker.read_text()).get("sparse")
            if found != SPARSE_FORMAT:
                raise ConfigError(f"data dir {self.data_dir} holds sparse vectors of format {found!r}, this version "
                                  f"writes {SPARSE_FORMAT!r}: re-ingest into a fresh data dir")
        else:
            marker.write_text(json.dumps({"sparse": SPARSE_FORMAT}))

    @functools.cached_property
    def graph(self):
        from .stores.graph_factory import open_graph_store

        return open_graph_store(self.settings)

    @functools.cached_property
    def llm(self):
        if not self.settings.llm_configured:
            return None
        from .llm import llm_from_settings

        return llm_from_settings(self.settings)

    def close(self) -> None:
        """Close what was opened; untouched lazy services stay unbuilt."""
        for name in ("vectors", "graph", "catalog", "postgres"):
            service = self.__dict__.get(name)
            if service is not None:
                try:
                    service.close()
                except Exception as exc:  # noqa: BLE001 - closing must not mask the real outcome
                    log.warning("closing %s failed: %s", name, exc)
        embedder = self.__dict__.get("embedder")
        if embedder is not None:
            embedder.cache.close()

    def __enter__(self) -> "Services":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def build_services(settings: Settings | None = None) -> Services:
    return Services(settings or load_settings())
