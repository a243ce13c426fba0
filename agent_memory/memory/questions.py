"""``Memory``'s question calls: the bounded prompt, the ranked search, the answer with checked citations,
and the importance an answer's citations raise; ``AskResult``, what ``ask`` returns. ``Memory`` inherits
them, as it does the document and session calls.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from agent_memory.answer import Answer
from agent_memory.core.errors import StoreError
from agent_memory.core.limits import MAX_ANSWER_TOKENS, MAX_SEARCH_LIMIT, whole_number
from agent_memory.core.tokens import MAX_PROMPT_BUDGET
from agent_memory.index.importance import raise_importance
from agent_memory.ingest.upkeep import empty_tenant_note, tenants_with_data
from agent_memory.memory.arguments import check_question, expect_type, filter_args
from agent_memory.retrieval.types import Decision, Passage, PromptResult

log = logging.getLogger(__name__)


@dataclass
class AskResult:
    """An answer and the prompt it was drawn from. In ``retrieval-only`` mode (no LLM configured, or
    it failed) ``answer`` is the best passage's text (None when nothing was recalled) and
    ``citations`` names that passage's source."""

    answer: str | None
    mode: str  # "llm" or "retrieval-only"
    citations: list[dict[str, Any]]  # source IDs the answer cites, with the prompt text behind each
    result: PromptResult
    details: Answer = field(repr=False)  # usage, timings, invented citations, the LLM's error


# The decisions of a prompt that change what the caller gets and that the caller is told (the MCP recall's
# ``notes``): the tenant holds nothing, the session named does not exist, archiving was still catching up.
NOTE_ACTIONS = ("empty tenant", "no such session", "archive catching up")


def prompt_notes(result: PromptResult) -> list[str]:
    """The reasons of ``result``'s decisions in ``NOTE_ACTIONS``, in order."""
    return [d.reason for d in result.decisions if d.action in NOTE_ACTIONS]

class QuestionMethods:
    """The question calls of ``Memory`` (its base class). They use what ``Memory`` builds and holds:
    ``services``, ``settings``, ``pipeline`` and ``pipeline_for``, ``settle``, ``_answerer``,
    ``name_other_tenants``, ``check_space``, ``_importance_lock``, ``_tenant`` and (from the session calls)
    ``_session_id`` and ``session_exists``."""

    def prompt(self, question: str, *, budget: int = 1800, session_id: str | None = None,
               filters: Mapping[str, Any] | Any | None = None, debug: bool = False,
               question_date: str | None = None, tenant: str | None = None, preset: str | None = None,
               overrides: Mapping[str, Any] | None = None) -> PromptResult:
        """The bounded prompt for ``question``: recalled passages tagged ``[S:<source id>]``, the
        session's recent turns, never more than ``budget`` tokens. ``filters`` takes ``source_ids``,
        ``kinds``, ``created_after``, ``created_before`` (Unix time). ``preset`` and ``overrides`` change
        the retrieval settings for this call (agent_memory/retrieval/config.py); unknown names raise ConfigError.
        On a tenant that holds nothing, ``decisions`` says so and names the tenants that hold data."""
        # The API's caps (core/limits.py): the same call works locally and through a server, or neither.
        check_question(question)
        whole_number(expect_type(budget, int, "budget", "an int (tokens)"), "budget", 1, MAX_PROMPT_BUDGET)
        tenant = self._tenant(tenant)
        if session_id is not None:
            self._session_id(session_id, tenant)
        pending = self.settle(tenant)
        result = self.pipeline_for(preset, overrides).run(question, tenant=tenant, session_id=session_id, budget=budget,
                                 debug=debug, question_date=question_date, **filter_args(filters))
        note = None if result.passages else empty_tenant_note(self.services, tenant,
                                                               name_others=self.name_other_tenants)
        if note:
            result.decisions.append(Decision("retrieve", tenant, "empty tenant", note))
        if pending:
            result.decisions.append(Decision("retrieve", tenant, "archive catching up", pending))
        if session_id is not None and not self.session_exists(session_id, tenant=tenant):
            # A misspelled session ID answers from long-term memory alone: said, so the caller can tell.
            result.decisions.append(Decision("recent", session_id, "no such session",
                                             f"no session {session_id!r} for this tenant: no recent turns "
                                             "shared the budget (answered from long-term memory alone)"))
        return result

    def tenants(self) -> list[str]:
        """The tenants that hold stored memory, by name."""
        self.settle()
        return tenants_with_data(self.services)

    def search(self, query: str, *, limit: int = 10, session_id: str | None = None,
               filters: Mapping[str, Any] | Any | None = None, tenant: str | None = None) -> list[Passage]:
        """Ranked passages with their scores (best first), as the prompt would place them: at most
        ``limit`` (1 to MAX_SEARCH_LIMIT; what the search budget holds may return fewer)."""
        check_question(query, "query")
        whole_number(limit, "limit", 1, MAX_SEARCH_LIMIT)  # -1 would slice off the last; the API's cap
        result = self.prompt(query, budget=self.pipeline.config.search_budget, session_id=session_id, filters=filters, tenant=tenant)
        ranked = [p for p in result.passages if p.section != "recent"]
        return sorted(ranked, key=lambda p: p.score, reverse=True)[:limit]

    def ask(self, question: str, *, budget: int = 1800, session_id: str | None = None,
            filters: Mapping[str, Any] | Any | None = None, max_answer_tokens: int = 512, debug: bool = False,
            question_date: str | None = None, tenant: str | None = None, preset: str | None = None,
            overrides: Mapping[str, Any] | None = None) -> AskResult:
        """An answer from the configured LLM with citations checked against the prompt's own tags;
        without an LLM (or when it fails) a retrieval-only answer (``mode == "retrieval-only"``): the
        best passage's text, citing its source (``answer`` is None only when nothing was recalled;
        ``details.llm_error`` says why an LLM answer failed)."""
        # Checked before the prompt is built: a refused call costs no retrieval, as through the API.
        whole_number(max_answer_tokens, "max_answer_tokens", 1, MAX_ANSWER_TOKENS)
        result = self.prompt(question, budget=budget, session_id=session_id, filters=filters, debug=debug,
                             question_date=question_date, tenant=tenant, preset=preset, overrides=overrides)
        details = self._answerer.answer(result, max_tokens=max_answer_tokens)
        if details.mode == "llm":
            self.reinforce(result, [c["source_id"] for c in details.citations], tenant=tenant)
            return AskResult(details.answer, details.mode, details.citations, result, details)
        # Recalled memory first: the session's own recent turns are what the caller just said.
        recalled = [p for p in result.passages if p.section != "recent"] or result.passages
        best = max(recalled, key=lambda p: p.score, default=None)
        if best is None:
            return AskResult(None, details.mode, [], result, details)
        return AskResult(best.text, details.mode, [{"source_id": best.source_id, "passages": [best.text]}], result,
                         details)

    def reinforce(self, result: PromptResult, cited: Sequence[str], *, tenant: str | None = None) -> dict[str, float]:
        """Raise the importance of what an answer cited by ``importance_citation_step`` (capped at 1.0): the
        passages placed under each cited source ID, or, for a source cited only through a fact, all its
        items. Best effort: a store failure is logged and the answer stands. Returns item ID -> importance."""
        step = self.settings.importance_citation_step
        if step <= 0 or not cited:
            return {}
        tenant = self._tenant(tenant)
        placed: dict[str, list[str]] = {}
        for passage in result.passages:
            if passage.section != "recent":  # the live session's turns are not long-term items yet
                placed.setdefault(passage.source_id, []).extend(passage.item_ids)
        try:
            self.check_space("raising importance")  # a payload write too: never on a nearly full disk
            with self._importance_lock:
                ids = [i for sid in dict.fromkeys(cited)
                       for i in (placed.get(sid) or self.services.vectors.ids_for_source(tenant, sid))]
                return raise_importance(self.services.vectors, ids, step)
        except StoreError as exc:
            log.warning("raising the importance of cited sources %s failed: %s", list(cited)[:5], exc)
            return {}
