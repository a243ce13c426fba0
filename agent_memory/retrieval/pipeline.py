"""The retrieval pipeline: question → routes (those that read no vector start while it is
embedded) → fusion → rerank → (a cross-encoder, where one is configured) → links → neighbours →
de-duplication → assembly (with compaction) → a prompt within the budget."""

from __future__ import annotations

import logging
import math
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import Callable

from agent_memory.conversation.archived_turns import catalog_recent_turns
from agent_memory.core.entities import normalize_name
from agent_memory.core.errors import AgentMemoryError, StoreError
from agent_memory.core.records import MemoryItem, SearchFilter
from agent_memory.core.text import keyword_set
from agent_memory.index.triples import entities_in_question
from agent_memory.index.triples.speaker import user_subjects_asked
from agent_memory.ingest.upkeep import effective_expiry
from agent_memory.retrieval.advice import StandingExamples, asks_for_advice
from agent_memory.retrieval.assemble import Assembler
from agent_memory.retrieval.config import RetrievalConfig, load_preset
from agent_memory.retrieval.debug import record_ranking
from agent_memory.retrieval.dedup import asks_for_other_wordings, deduplicate
from agent_memory.retrieval.fusion import fuse
from agent_memory.retrieval.hop import SecondHop
from agent_memory.retrieval.links import LinkFollower, spread
from agent_memory.retrieval.live_summaries import LiveSummaryRanker, StoredLineVectors
from agent_memory.retrieval.neighbours import add_neighbours
from agent_memory.retrieval.pages import Pages
from agent_memory.retrieval.question_vectors import drop_speaker_names, encode_question, speaker_directory
from agent_memory.retrieval.recent import gate_recent
from agent_memory.retrieval.rerank import DefaultReranker, Reranker
from agent_memory.retrieval.rerank.cross_encoder import PassageScorer, cross_encode
from agent_memory.retrieval.retold import bring_later_tellings
from agent_memory.retrieval.rewrite import QueryRewriter
from agent_memory.retrieval.routes import (
    DenseRoute,
    GraphRoute,
    KeywordRoute,
    Query,
    RecentRoute,
    RouteOutput,
    SpeakerRoute,
    SummaryRoute,
)
from agent_memory.retrieval.similarity import QuestionSimilarity, candidate_vectors, spaces_of
from agent_memory.retrieval.speakers import named_by_space, unnamed_from
from agent_memory.retrieval.succession import order_in_time, terms_question
from agent_memory.retrieval.types import Candidate, Decision, PromptResult
from agent_memory.retrieval.validity import order_facts
from agent_memory.retrieval.when import DateSlack, Window, parse_stamp, question_window, told_window
from agent_memory.services import Services

log = logging.getLogger(__name__)


def _give_way(summaries: list[Candidate], passages: list[Candidate], decisions: list[Decision]) -> list[Candidate]:
    """A summary of a session or document whose own turns or chunks are among the passages says
    nothing twice: the passages carry the detail, so the summary gives way."""
    present = {c.item.source_id for c in passages} | {c.item.metadata.get("session_id") for c in passages}
    out = []
    for cand in summaries:
        covered = cand.item.metadata.get("summary_of")
        if covered and covered in present:
            decisions.append(Decision("dedup", cand.item.id, "dropped", f"its {covered} is among the passages"))
            continue
        out.append(cand)
    return out


class RetrievalPipeline:
    def __init__(self, services: Services, config: RetrievalConfig, *, reranker: Reranker | None = None,
                 recent_turns: Callable[[str, str, int], list[MemoryItem]] | None = None,
                 session_summaries: Callable[[str, str], list[MemoryItem]] | None = None,
                 summary_line_vectors: StoredLineVectors | None = None) -> None:
        """``recent_turns``/``session_summaries`` read working memory (see agent_memory.conversation.working_memory);
        without them, the recent route reads ingested transcript turns from the catalog. ``summary_line_vectors``:
        the vectors of the live summaries' lines stored with them, which ranking them by meaning reads."""
        self.services = services
        self.config = config
        # Read first: a cross-encoder folder that is missing or holds another model is refused before
        # anything else is built. None (not configured): the stage is off.
        self.cross_encoder: PassageScorer | None = services.cross_encoder
        self.counter = services.counter
        self.recent_turns = recent_turns or self._catalog_recent_turns
        self.session_summaries = session_summaries
        self.rewriter = QueryRewriter(self.recent_turns, llm=services.llm,  # follow-ups made standalone
                                      turns=config.rewrite_turns, enabled=config.query_rewrite)
        self.reranker = reranker or DefaultReranker(config, graph=config.graph.enabled)
        self.assembler = Assembler(self.counter, config)
        self._pool: ThreadPoolExecutor | None = None  # opened by the first run (see run and close)
        self._use_lock = threading.Lock()
        self._runs = 0
        self._closed = False
        self.routes = {}
        # Entity pages belong to the graph layer: without the graph route, no links either.
        self.pages = Pages(services.catalog, services.vectors) if config.graph.enabled else None
        self.links = LinkFollower(self.pages, self.reranker, config) if self.pages is not None else None
        self.hop = SecondHop(services, self.reranker, config)
        self.standing = StandingExamples(services.embedder, config.advice)  # read by advice requests' rerank
        if config.dense.enabled:
            self.routes["dense"] = DenseRoute(services.vectors)
        if config.keyword.enabled:
            self.routes["keyword"] = KeywordRoute(services.vectors)
        if config.speakers.enabled:
            self.routes["speakers"] = SpeakerRoute(services.vectors)
        if config.graph.enabled:
            self.routes["graph"] = GraphRoute(services.graph, services.vectors, config, self.pages)
        if config.summaries.enabled:
            ranker = (LiveSummaryRanker(services.embedder, config.live_summaries, summary_line_vectors)
                      if config.live_summaries.by_question else None)
            self.routes["summaries"] = SummaryRoute(services.vectors, session_summaries,
                                                     stored=config.stored_summaries, ranker=ranker)
        if config.recent.enabled:
            self.routes["recent"] = RecentRoute(self.recent_turns)

    @classmethod
    def from_services(cls, services: Services, preset: str = "default", overrides: dict | None = None,
                      **kwargs) -> "RetrievalPipeline":
        return cls(services, load_preset(preset, overrides), **kwargs)

    # ---- the run ------------------------------------------------------------------------------------

    def run(self, question: str, *, tenant: str, budget: int = 1800, question_date: str | None = None,
            created_after: float | None = None, created_before: float | None = None, **kwargs) -> PromptResult:
        """The prompt for ``question`` (keyword arguments: :meth:`_run`'s). The cheap checks come
        first (a bad date or filter bound, a budget the question alone exceeds), so a refused
        question costs no embedding or store read. A pipeline in use is never shut down under a
        run: ``close`` only marks it, and the last run to leave releases its threads."""
        for name, bound in (("created_after", created_after), ("created_before", created_before)):
            if bound is not None and not math.isfinite(bound):
                raise AgentMemoryError(f"filter {name} must be a finite number, got {bound!r}")
        if question_date is not None and not isinstance(question_date, str):
            raise TypeError(f"question_date must be a date as text, e.g. '2024-08-01', got "
                            f"{type(question_date).__name__} {question_date!r}")
        if question_date is not None and parse_stamp(question_date) is None:
            raise AgentMemoryError(f"question_date {question_date[:64]!r} is not a date (e.g. '2024-08-01')")
        self.assembler.check_fits(question, budget, question_date)
        with self._use_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.config.max_workers, thread_name_prefix="route")
                self.hop.pool = self._pool
            self._runs += 1
        try:
            return self._run(question, tenant=tenant, budget=budget, question_date=question_date,
                             created_after=created_after, created_before=created_before, **kwargs)
        finally:
            with self._use_lock:
                self._runs -= 1
                self._release_if_idle()

    def _run(self, question: str, *, tenant: str, session_id: str | None = None, budget: int = 1800,
             debug: bool = False, question_date: str | None = None, source_ids: list[str] | None = None,
             kinds: list[str] | None = None, created_after: float | None = None,
             created_before: float | None = None, metadata: dict | None = None) -> PromptResult:
        timings: dict[str, float] = {}
        clock = time.perf_counter()

        def lap(stage: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            timings[stage] = round((now - clock) * 1000, 2)
            clock = now

        variants = self.rewriter.variants(question, tenant, session_id)  # agent_memory/retrieval/rewrite.py
        asked, question = question, variants.search_text
        flt = SearchFilter(tenant=tenant, source_ids=source_ids, kinds=kinds, created_after=created_after,
                           created_before=created_before, metadata=metadata)
        query = Query(text=question, tenant=tenant, session_id=session_id, flt=flt)
        query.sparse = self.services.sparse_encoder.encode_query(question)
        # The routes that read no dense vector (keyword, graph, recent) run while the question is
        # embedded: the models compute outside the GIL, the routes mostly wait on their stores.
        early = self._start_routes(query, dense=False)
        decisions: list[Decision] = []
        # Read once: every step of this question sees the same spaces (the read is renewed every few
        # seconds, and could otherwise change between the steps).
        spaces = self.services.vectors.occupied_spaces(tenant)
        needs_directory = self.config.dense_without_speakers or "speakers" in self.routes
        query.speakers = named_by_space(question, speaker_directory(self.services, tenant)) if needs_directory else {}
        unnamed = unnamed_from(question, query.speakers, spaces) if self.config.dense_without_speakers else None
        query.dense = encode_question(self.services, question, spaces, unnamed, decisions)
        advice = bool(self.config.advice.signal) and asks_for_advice(question)
        if advice:
            decisions.append(Decision("advice", "question", "asks for advice",
                                      "turns that read as the user's standing statements rank up"))
        lap("encode")

        outputs = self._collect({**early, **self._start_routes(query, dense=True)})
        self.rewriter.recall(self, query, variants, outputs)
        if self.config.dense_without_speakers:
            drop_speaker_names(self.services, self.routes.get("dense"), self.config.dense.limit, query, outputs,
                               decisions, done=unnamed)
        lap("routes")

        weights = {name: getattr(self.config, name).weight for name in self.routes}
        content_routes = {n: o.hits for n, o in outputs.items() if n not in ("summaries", "recent")}
        fused = fuse(content_routes, weights, self.config.rrf_k)
        lap("fusion")

        top = fused[: self.config.rerank_top]
        for cand in fused[self.config.rerank_top:]:
            decisions.append(Decision("rerank", cand.item.id, "cut", f"below the top {self.config.rerank_top}"))
        spread(top, outputs.get("graph", RouteOutput()).sources, "graph")
        # The window the question names by the calendar, read once: the time signal scores it, and the succession
        # stage leaves a question that names one to it. Relative phrases count from the question's date, else now.
        asked_on = parse_stamp(question_date) if question_date else datetime.now()
        window = question_window(question, asked_on, self._date_slack())
        if self.config.time_signal and window is not None:
            self._mark_window(window, top, decisions)
        similarity = QuestionSimilarity(self.services, query.dense, self.standing if advice else None)
        query.terms_text = terms_question(question, top, before_anchor=self.config.before_anchor,
                                          calendar_window=window is not None, decisions=decisions)
        reranked = self.reranker.rerank(question, top, similarity, terms_query=query.terms_text)
        lap("rerank")
        if self.cross_encoder is not None and self.config.cross_encoder.weight:
            if self._cross_encoder_reads(question):
                reranked = cross_encode(question, reranked, self.cross_encoder, self.config.cross_encoder,
                                        decisions)
            else:
                decisions.append(Decision("cross_encoder", "question", "skipped",
                                          "the default embedding model does not read the question "
                                          "(cross_encoder.questions 'default_space'): the reranker's order kept"))
            lap("cross_encoder")
        if self.links is not None and self.config.link_top and self.config.link_signal:
            reranked = self.links.follow(query, reranked, decisions, similarity)
            lap("links")
        hop_found: list[dict] | None = [] if debug else None
        if self.config.second_hop and self.config.hop_signal:
            reranked = self.hop.follow(query, reranked, decisions, similarity, spaces, hop_found)
            lap("hop")

        if self.config.present_recency or self.config.before_anchor:
            # After links and the hop, which rerank what they extend: the bonuses stand on the final order.
            cfg = self.config
            reranked = order_in_time(question, reranked, present_recency=cfg.present_recency,
                                     before_anchor=cfg.before_anchor, anchor_coverage=cfg.anchor_coverage,
                                     top=cfg.succession_top, calendar_window=window is not None, decisions=decisions)
            lap("succession")
        retold = self.config.retold
        if retold.anchors and (advice or retold.questions == "all"):
            reranked = bring_later_tellings(self.services, reranked, flt, anchors=retold.anchors,
                                            neighbours=retold.neighbours, decisions=decisions)
            lap("retold")
        reranked = add_neighbours(self.services, self.config, self.counter, reranked, flt, decisions)
        reranked = self._unexpired(reranked, lambda c: c.item, decisions)
        # Only the best can reach the prompt: a budget of B tokens holds fewer than B / 10
        # passages, so de-duplication and assembly read no further (the rest stay in the dump).
        offered = reranked[: max(self.config.prompt_candidates, budget // 10)]
        if len(offered) < len(reranked):
            decisions.append(Decision("assemble", f"{len(reranked) - len(offered)} candidates", "cut",
                                      f"below the best {len(offered)} offered to the prompt"))
        vectors = candidate_vectors(self.services, offered) if offered else None
        spaces = spaces_of(offered) if offered else None
        kept = deduplicate(offered, vectors, self.config.near_duplicate, decisions, spaces=spaces,
                           new_numbers_distinct=self.config.near_duplicate_new_numbers,
                           words_shared=self.config.near_duplicate_words,
                           turn_words_shared=(self.config.near_duplicate_turn_words if asks_for_other_wordings(question)
                                              else None),
                           question_terms=(keyword_set(question) if self.config.near_duplicate_question_terms
                                           else frozenset()),
                           longer_span_replaces=self.config.longer_span_replaces)
        recent = gate_recent(self._unexpired([h.item for h in outputs.get("recent", RouteOutput()).hits],
                                             lambda item: item, decisions), kept, question, budget,
                             self.config.recent_view, decisions,
                             seen={c.item.source_id for c in fused + reranked})
        summary_route = outputs.get("summaries", RouteOutput())
        decisions.extend(Decision("summaries", item_id, "ranked", why) for item_id, why in summary_route.notes.items())
        summaries = _give_way(deduplicate(
            [Candidate(item=h.item, fused=h.score, final=h.score)
             for h in self._unexpired(summary_route.hits, lambda h: h.item, decisions)],
            None, self.config.near_duplicate, decisions), kept + [Candidate(item=i) for i in recent], decisions)
        lap("dedup")

        facts = order_facts(outputs.get("graph", RouteOutput()).facts, question, question_date, decisions,
                            self._date_slack(), enabled=self.config.current_facts_first)
        result = self.assembler.assemble(asked, budget, facts=facts, summaries=summaries, passages=kept,
                                         recent=recent, entities=query.entities, question_date=question_date)
        lap("assemble")
        result.decisions = decisions + result.decisions
        result.timings_ms = timings
        result.timings_ms["total"] = round(sum(timings.values()), 2)
        if debug:
            result.decisions += variants.decisions()  # the question's rewrites and what each found
            record_ranking(result, outputs, reranked, facts, hop_found)
        return result

    # ---- stages -------------------------------------------------------------------------------------

    def _unexpired(self, entries: list, item_of: Callable, decisions: list[Decision]) -> list:
        """``entries`` without the expired ones: an item past its time to live (the rules in force, or its
        own stamp, read as ``gc`` reads them) is never recalled, whether ``gc`` has run or not."""
        now, rules = time.time(), self.services.settings.ttl_days
        kept = [e for e in entries if effective_expiry(item_of(e), rules) > now]
        if len(kept) < len(entries):
            decisions.append(Decision("expiry", f"{len(entries) - len(kept)} items", "cut",
                                      "past their time to live (gc removes them from the stores)"))
        return kept

    def _start_routes(self, query: Query, *, dense: bool) -> dict[str, Future]:
        """Submit the routes that do (``dense``) or do not read the question's dense vectors."""
        futures = {}
        for name, route in self.routes.items():
            if getattr(route, "needs_dense", True) != dense:
                continue
            limit = getattr(self.config, name).limit
            if name == "graph":  # its seeds, the entities the question names, are found in its thread
                futures[name] = self._pool.submit(self._graph_recall, route, query, limit)
            else:
                futures[name] = self._pool.submit(route.recall, query, limit)
        return futures

    def _graph_recall(self, route, query: Query, limit: int) -> RouteOutput:
        query.entities = self._question_entities(query.text, query.tenant)
        return route.recall(query, limit)

    def _collect(self, futures: dict[str, Future]) -> dict[str, RouteOutput]:
        outputs = {}
        down: StoreError | None = None
        for name, future in futures.items():
            try:
                outputs[name] = future.result()
            except StoreError as exc:
                # A store that is down is not a route's bad luck: the caller gets 503, not a
                # prompt silently missing what that store holds.
                down = down or exc
            except Exception as exc:  # noqa: BLE001 - one failing route must not sink the others
                log.warning("route %s failed: %s", name, exc)
                outputs[name] = RouteOutput()
        if down is not None:
            raise down
        return outputs

    def _question_entities(self, question: str, tenant: str) -> list[str]:
        try:
            graph = self.services.graph
            found = entities_in_question(question, lambda grams: [e.name for e in graph.find_entities(tenant, grams)],
                                         parse=False)
            # The asker's own first person is the tenant's user (index/triples/speaker.py), after the names.
            subjects = user_subjects_asked(question) if self.config.graph_first_person_user else []
            known = {normalize_name(name) for name in found}
            return found + [e.name for e in (graph.find_entities(tenant, subjects) if subjects else [])
                            if normalize_name(e.name) not in known]
        except StoreError:
            raise  # the graph is down: the question answers 503 (_collect), not a prompt silently without it
        except Exception as exc:  # noqa: BLE001 - the graph route is optional; others still answer
            log.warning("question entity extraction failed: %s", exc)
            return []

    def _date_slack(self) -> DateSlack:
        return DateSlack(self.config.time_after_day, self.config.time_after_month)

    def _cross_encoder_reads(self, question: str) -> bool:
        """Whether the cross-encoder reads this question (``cross_encoder.questions``)."""
        if self.config.cross_encoder.questions == "all":
            return True
        spaces = self.services.embedder
        return spaces.space_for(question) == spaces.default

    def _mark_window(self, window: Window, candidates: list[Candidate], decisions: list[Decision]) -> None:
        """Items dated inside the window the question names ("a couple of days ago", "in May 2023")
        get a time score."""
        note = " (a turn that names its own time is dated by it)" if self.config.time_told else ""
        decisions.append(Decision("time", window.phrase, "window", f"items dated {window.start:%Y-%m-%d} to "
                                  f"{window.last_day:%Y-%m-%d} rank higher{note}"))
        for cand in candidates:
            when = parse_stamp(cand.item.metadata.get("timestamp") or "")
            if when is None:
                continue
            # A turn that names its own time ("yesterday", 上个月) tells when it happened, counted from
            # when it was said: that window, not the day it was said, is compared with the question's.
            told = told_window(cand.item.text, when) if self.config.time_told else None
            if told is None:
                score = 1.0 if window.holds(when) else 0.0
            elif told.within(window):
                score = 1.0
            else:  # said in the window, perhaps, of another time
                score = self.config.time_said_elsewhere if window.holds(when) else 0.0
            if score:
                cand.route_scores["time"] = score

    def _catalog_recent_turns(self, tenant: str, session_id: str, n: int) -> list[MemoryItem]:
        return catalog_recent_turns(self.services, tenant, session_id, n)

    def close(self) -> None:
        with self._use_lock:
            self._closed = True
            self._release_if_idle()

    def _release_if_idle(self) -> None:  # under _use_lock
        if self._closed and self._runs == 0 and self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None
            self.hop.pool = None

    def __enter__(self) -> "RetrievalPipeline":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
