"""Summaries of compacted spans: one LLM call when configured, a structural digest otherwise.

A summary that fails (raises, times out, empty, too long, shares no words with the
span) is never stored: a warning is logged and the structural summary is used instead.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from agent_memory.conversation import messages as msgs
from agent_memory.conversation.significance import DATE, NUMBER, RULES, entities, identifiers, numbers
from agent_memory.core import summaries
from agent_memory.core.llm import CompletionClient
from agent_memory.core.prompt_data import DATA_RULE, data_block
from agent_memory.core.text import content_words, has_cjk, split_sentences

log = logging.getLogger(__name__)


# Compaction's summarizers summarize spans of messages.
Summarizer = summaries.Summarizer[list[dict[str, Any]]]


class SummaryRejected(ValueError):
    """The summarizer answered something unusable (empty, too long, unrelated)."""


_GOAL = re.compile(r"\?|？|\b(?:please|help|can you|could you|i want|i need|i'd like|how (?:do|can|to))\b|请|帮我|我想|如何|怎么",
                   re.IGNORECASE)
_QUESTION = re.compile(r"[?？]\s*$")


def _clip(text: str, limit: int = 160) -> str:
    """At most ``limit`` characters, ending on a sentence boundary when one is in reach (else a word's)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    kept = ""
    for sentence in split_sentences(text):
        sentence = sentence.strip()
        joined = f"{kept} {sentence}".strip() if kept and not has_cjk(sentence) else kept + sentence
        if len(joined) > limit:
            break
        kept = joined
    if kept:
        return kept
    cut = text[: limit - 3]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut) + "..."


def cut_lines(text: str, limit: int) -> str:
    """The first lines of ``text`` within ``limit`` characters: a digest ends on a whole item, never
    mid-sentence (a single over-long line is clipped at a sentence boundary)."""
    if len(text) <= limit:
        return text
    lines, used = [], 0
    for line in text.split("\n"):
        if used + len(line) + (1 if lines else 0) > limit:
            break
        lines.append(line)
        used += len(line) + (1 if len(lines) > 1 else 0)
    return "\n".join(lines) if lines else _clip(text, limit)


def _number_snippets(text: str, limit: int = 3) -> str:
    """The sentences of a tool payload that hold numbers or identifiers (payloads are long; those matter),
    whole, so the digest never cuts a sentence."""
    picked: list[str] = []
    for sentence in split_sentences(" ".join(text.split())):
        sentence = sentence.strip()
        if sentence and (NUMBER.search(sentence) or identifiers(sentence)) and sentence not in picked:
            picked.append(_clip(sentence, 120))
            if len(picked) >= limit:
                break
    return " ".join(picked)


class StructuralSummarizer:
    """Offline digest: goals, facts, tool numbers, decisions, open questions, status, entities."""

    name = "structural"
    PER_SECTION = 4

    def summarize(self, span: list[dict[str, Any]], *, max_tokens: int = 400) -> str:
        cjk = any(has_cjk(msgs.text_of(m)) for m in span[:20])
        heads = (
            ["用户目标", "已确认事实", "工具结果", "决定", "未决问题", "任务状态", "关键实体", "标识符"]
            if cjk
            else ["User goals", "Confirmed facts", "Tool results", "Decisions", "Open questions", "Task status",
                  "Key entities", "Identifiers"]
        )
        idents: dict[str, None] = {}  # in order of appearance, newest kept when room runs out
        goals, facts, tools, decisions, questions, asked = [], [], [], [], [], []
        tools_first: list[str] = []
        status = ""
        counts: Counter[str] = Counter()
        names: dict[str, str] = {}
        for message in span:
            names.update(msgs.call_names(message))
            role = message.get("role")
            text = msgs.text_of(message)
            counts.update(entities(text))
            for token in sorted(identifiers(msgs.readable([message]))):
                idents.pop(token, None)
                idents[token] = None
            if role == "tool" or msgs.result_ids(message):
                body = text if role == "tool" else msgs.readable([message])
                tool = message.get("name") or names.get(str(message.get("tool_call_id")), "tool")
                outcome = msgs.outcome_lines(body) if not msgs.is_truncated(body.strip()) else []
                if outcome:  # an error, a test result, a timing: ahead of payloads that only hold numbers
                    tools_first.append(f"{tool}: {' | '.join(outcome)}")
                elif numbers(body) and not msgs.is_truncated(body.strip()):
                    tools.append(f"{tool}: {_number_snippets(body)}")
                if role == "tool":
                    continue
            if role == "user" and text.strip() and not msgs.result_ids(message):
                questions = [q for q in questions if not q.startswith("(assistant)")]  # the user answered
            for sentence in split_sentences(text):
                if role == "user" and _GOAL.search(sentence):
                    goals.append(sentence)
                    if _QUESTION.search(sentence):
                        questions.append(sentence)
                elif role == "assistant" and _QUESTION.search(sentence):
                    asked.append(f"(assistant) {sentence}")
                if RULES["decision"].search(sentence):
                    decisions.append(sentence)
                elif numbers(sentence) or DATE.search(sentence) or RULES["fact"].search(sentence) \
                        or RULES["preference"].search(sentence):
                    facts.append(f"({role}) {sentence}")
            if role == "assistant" and text.strip():
                status = split_sentences(text)[0] if split_sentences(text) else text
                # An assistant reply answers the user's questions asked before it; the questions it asks
                # itself stay open until the user speaks again.
                questions, asked = asked, []

        tools = tools + tools_first  # the section reads newest first: outcomes come first
        key_entities = ", ".join(e for e, _ in counts.most_common(12))
        # Fewer items per section until the digest fits (~4 chars a token, ~1 for CJK).
        limit = max_tokens * (1 if cjk else 4)
        newest_idents = list(idents)[::-1]
        for per_section in range(self.PER_SECTION, 0, -1):
            ident_line = ", ".join(newest_idents[: per_section * 6][::-1])
            text = self._render(heads, per_section, goals, facts, tools, decisions, questions, status, key_entities,
                                ident_line)
            if len(text) <= limit:
                break
        if not text:
            text = "\n".join(f"- {_clip(msgs.text_of(m), 100)}" for m in span[-3:] if msgs.text_of(m).strip())
        return cut_lines(text, limit)

    @staticmethod
    def _render(heads, per_section, goals, facts, tools, decisions, questions, status, key_entities,
                ident_line="") -> str:
        def section(title: str, items: list[str], newest: bool = False) -> str:
            seen, out = set(), []
            pool = items[::-1] if newest else items
            for item in pool:
                key = item.lower()
                if key not in seen:
                    seen.add(key)
                    out.append(f"- {_clip(item)}")
                if len(out) >= per_section:
                    break
            return f"{title}:\n" + "\n".join(out) if out else ""

        parts = [
            section(heads[0], goals),
            f"{heads[7]}: {ident_line}" if ident_line else "",  # early: what an agent must keep verbatim
            section(heads[1], facts, newest=True),
            section(heads[2], tools, newest=True),
            section(heads[3], decisions, newest=True),
            section(heads[4], questions),
            f"{heads[5]}: {_clip(status)}" if status else "",
            f"{heads[6]}: {key_entities}" if key_entities else "",
        ]
        return "\n".join(p for p in parts if p)


class LLMSummarizer:
    """One chat call over the readable serialization of the span."""

    name = "llm"

    def __init__(self, client: CompletionClient, *, max_input_chars: int = 24000) -> None:
        self.client = client
        self.max_input_chars = max_input_chars

    def summarize(self, span: list[dict[str, Any]], *, max_tokens: int = 400) -> str:
        text = msgs.readable(span)
        if len(text) > self.max_input_chars:  # keep the newest part; older parts were likely summarized before
            text = "...\n" + text[-self.max_input_chars:]
        language = "Chinese" if has_cjk(text) else "the language of the conversation"
        system = (
            "You compress an AI agent's conversation history so the agent can continue the task. "
            f"Write the summary in {language} (the conversation's own language). Keep user goals, confirmed "
            "facts, every number, date, name and identifier, tool results with their numbers, decisions, open "
            f"questions and the task status. Be concise: at most {int(max_tokens * 0.7)} words. "
            f"Output only the summary. {DATA_RULE}"
        )
        # The span's messages are stored text (tool results, documents pasted in): fenced as data.
        result = self.client.complete(
            [{"role": "system", "content": system}, {"role": "user", "content": data_block(text)}],
            max_tokens=max_tokens,
        )
        return result.text


def check_summary(summary: str, span_text: str, *, span_tokens: int, summary_tokens: int,
                  max_tokens: int) -> None:
    """Raise :class:`SummaryRejected` for garbage: empty, too long, or no word shared with the span."""
    if not summary or not summary.strip():
        raise SummaryRejected("empty summary")
    limit = max(max_tokens, 0)
    if summary_tokens > limit or (span_tokens >= 200 and summary_tokens > span_tokens):
        raise SummaryRejected(f"summary too long: {summary_tokens} tokens (limit {limit}, span {span_tokens})")
    span_words = set(content_words(span_text))
    if span_words and not span_words & set(content_words(summary)):
        raise SummaryRejected(f"summary shares no words with the span: {summary[:80]!r}")


@dataclass
class Validation:
    """How much of a span a summary kept. ``compression_ratio`` is original/summary tokens (5.0 = five
    times smaller); key terms are the numbers and names of the span's significant sentences."""

    numbers_kept: float
    entities_kept: float
    key_terms_kept: float
    compression_ratio: float
    span_tokens: int
    summary_tokens: int
    method: str
    lost: list[str]
    identifiers_kept: float = 1.0  # hex codes, paths, versions, error codes (significance.identifiers)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def acceptable(self, min_numbers: float, min_entities: float, min_key_terms: float,
                   min_identifiers: float = 0.0) -> bool:
        return (self.numbers_kept >= min_numbers and self.entities_kept >= min_entities
                and self.key_terms_kept >= min_key_terms and self.identifiers_kept >= min_identifiers)


def key_terms(span_text: str) -> set[str]:
    """Numbers and names of the sentences that state decisions, facts, preferences, commitments or dates."""
    terms: set[str] = set()
    for sentence in split_sentences(span_text):
        if DATE.search(sentence) or any(rule.search(sentence) for rule in RULES.values()):
            terms |= numbers(sentence) | entities(sentence)
    return terms


def validate(span_text: str, summary: str, span_tokens: int, summary_tokens: int, method: str) -> Validation:
    """Share of the span's numbers, named entities and key terms that survive in the summary, plus compression."""
    nums, ents, keys = numbers(span_text), entities(span_text), key_terms(span_text)
    idents = identifiers(span_text)
    summary_lower = summary.lower()
    # Identifiers first: a lost error code or path is what an agent misses most.
    lost = sorted(t for t in idents if t.lower() not in summary_lower)
    lost += sorted(t for t in nums | ents if t.lower() not in summary_lower and t not in lost)

    def kept(terms: set[str]) -> float:
        return round(sum(1 for t in terms if t.lower() in summary_lower) / len(terms), 4) if terms else 1.0

    ratio = span_tokens / summary_tokens if summary_tokens else 0.0
    return Validation(kept(nums), kept(ents), kept(keys), round(ratio, 4), span_tokens, summary_tokens, method,
                      lost[:10], kept(idents))


def summarize_span(span: list[dict[str, Any]], primary: Summarizer | None, fallback: Summarizer,
                   counter, *, span_tokens: int, max_tokens: int) -> tuple[str, Validation]:
    """Primary summarizer with checks; on any failure a warning and the fallback's summary."""
    span_text = msgs.readable(span)
    checked = msgs.readable(span, salient=True)  # validation: payload noise is not what a summary keeps
    if primary is not None:
        try:
            summary = primary.summarize(span, max_tokens=max_tokens).strip()
            tokens = counter.count(summary)
            check_summary(summary, span_text, span_tokens=span_tokens, summary_tokens=tokens,
                          max_tokens=max_tokens)
            return summary, validate(checked, summary, span_tokens, tokens, primary.name)
        except Exception as exc:  # noqa: BLE001 - any failure means: do not trust this summary
            log.warning("summarizer %s failed (%s: %s); using the %s summary instead",
                        getattr(primary, "name", primary), type(exc).__name__, exc, fallback.name)
    summary = fallback.summarize(span, max_tokens=max_tokens).strip()
    tokens = counter.count(summary)
    return summary, validate(checked, summary, span_tokens, tokens, fallback.name)
