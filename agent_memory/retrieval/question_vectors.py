"""The question's dense vectors: embedded in each space that holds the tenant's items, and without the
speaker names it names in the spaces of those speakers' turns (``speakers.py``), first by the speaker
directory read before it is embedded, then again for the speakers only the routes' turns showed."""

from __future__ import annotations

import logging

from agent_memory.core.embedding_spaces import QueryVectors
from agent_memory.core.errors import StoreError
from agent_memory.retrieval.routes import DenseRoute, Query, RouteOutput
from agent_memory.retrieval.speakers import Unnamed, unnamed
from agent_memory.retrieval.types import Decision
from agent_memory.services import Services

log = logging.getLogger(__name__)


def speaker_directory(services: Services, tenant: str) -> dict[str, set[str]]:
    """The speakers of the tenant's turns per space, read from the vector store and kept a few
    seconds: a question that names one is known before it is embedded, so it is embedded once,
    without the name, in those speakers' spaces, and the speaker route searches their turns. No
    route waits for it: the keyword route, which used to name the speakers first, held back the
    embedding by 4 ms at 11k items and 13-15 at 100k."""
    try:
        return dict(services.vectors.speakers(tenant))
    except StoreError as exc:  # the routes will meet the store's failure too, and report it
        log.warning("speaker directory unavailable: %s", exc)
        return {}


def encode_question(services: Services, question: str, spaces: list[str], unnamed: Unnamed | None,
                    decisions: list[Decision]) -> QueryVectors:
    """The question in each space that holds the tenant's items, without the speaker names it
    names in the spaces of those speakers' turns (``unnamed``). One model after the other: side
    by side in threads they took longer (11k mixed items, quiet: p50 75 ms against 53), both
    encoders spreading over the same two cores."""
    embedder = services.embedder
    if unnamed is None:
        return embedder.embed_query(question, spaces)
    named = [s for s in spaces if s not in unnamed.spaces]
    vectors = dict(embedder.embed_query(question, named)) if named else {}
    vectors.update(embedder.embed_query(unnamed.text, sorted(unnamed.spaces)))
    decisions.append(unnamed.decision())
    return QueryVectors(vectors, embedder.question_lang(question))


def drop_speaker_names(services: Services, dense_route: DenseRoute | None, dense_limit: int, query: Query,
                       outputs: dict[str, RouteOutput], decisions: list[Decision], done: Unnamed | None) -> None:
    """The same for the speakers named in the question whose turns only the other routes found
    (``done``: what the keyword route's turns already took out): embed again, run ``dense_route``
    (None without the dense route) again."""
    wanted = unnamed(query.text, [h for out in outputs.values() for h in out.hits], services.embedder,
                     list(query.dense))  # the spaces the question was embedded in
    if wanted is None or (done is not None and wanted.text == done.text and wanted.spaces <= done.spaces):
        return
    embedder = services.embedder
    query.dense = QueryVectors({**query.dense, **embedder.embed_query(wanted.text, sorted(wanted.spaces))},
                               query.dense.lang)
    decisions.append(wanted.decision())
    if dense_route is not None:
        try:
            outputs["dense"] = dense_route.recall(query, dense_limit)
        except Exception as exc:  # noqa: BLE001 - keep the first answer of the route
            log.warning("route dense failed without speaker names: %s", exc)
