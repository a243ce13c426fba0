"""Summaries of chunks and documents: an LLM when configured, extractive otherwise.

The extractive summarizer scores sentences by numbers, percentages, conclusion words,
position and length, keeps the best within a token target, and returns them in their
original order, so a summary never states anything its source did not.
"""

from __future__ import annotations

import logging
import re

from agent_memory.core.errors import LLMError
from agent_memory.core.llm import CompletionClient
from agent_memory.core.prompt_data import DATA_RULE, data_block
from agent_memory.core.sentence_scoring import Mark, SentenceWeights, score_sentence
from agent_memory.core.summaries import Summarizer
from agent_memory.core.text import split_sentences
from agent_memory.core.tokens import TokenCounter

log = logging.getLogger(__name__)

_NUMBER = re.compile(r"\d")
_PERCENT = re.compile(r"\d\s*(%|percent|％)|百分之")
_CONCLUSION = re.compile(
    r"\b(therefore|thus|in conclusion|overall|as a result|consequently|we found|results? show|concluded?|"
    r"key|important|significant|decided|summary)\b|因此|所以|总之|综上|结果|表明|决定|重要",
    re.IGNORECASE,
)


# What a summary keeps: numbers, percentages and conclusions; the lead sentence (it carries the topic in
# most prose), then the last, then the earlier ones; not a fragment, nor an over-long sentence.
SUMMARY_SENTENCE_WEIGHTS = SentenceWeights(
    marks=(
        Mark(1.0, lambda s: bool(_NUMBER.search(s))),
        Mark(1.0, lambda s: bool(_PERCENT.search(s))),
        Mark(1.5, lambda s: bool(_CONCLUSION.search(s))),
    ),
    first=2.0, last=0.5, early=1.0, short=-1.0, short_chars=20, long=-0.5, long_chars=400,
)


# Ingestion's summarizers summarize texts.
SourceSummarizer = Summarizer[str]


class ExtractiveSummarizer:
    name = "extractive"

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter

    def score(self, sentence: str, position: int, total: int) -> float:
        return score_sentence(sentence, position, total, SUMMARY_SENTENCE_WEIGHTS)

    def summarize(self, text: str, /, *, max_tokens: int) -> str:
        sentences = split_sentences(text)
        if not sentences:
            return ""
        ranked = sorted(
            range(len(sentences)), key=lambda i: -self.score(sentences[i], i, len(sentences))
        )
        chosen: list[int] = []
        used = 0
        for index in ranked:
            cost = self.counter.count(sentences[index])
            if used + cost > max_tokens:
                continue
            chosen.append(index)
            used += cost
        if not chosen:  # even the best sentence is over budget: keep its opening words
            return _cut_words(sentences[ranked[0]], max_tokens, self.counter)
        return " ".join(sentences[i] for i in sorted(chosen))


def _cut_words(sentence: str, max_tokens: int, counter: TokenCounter) -> str:
    words = sentence.split()
    while words and counter.count(" ".join(words) + " …") > max_tokens:
        words = words[: max(1, len(words) * 3 // 4)] if len(words) > 1 else []
    return (" ".join(words) + " …") if words else ""


class LLMSourceSummarizer:
    """One LLM call per text; falls back to the extractive summarizer on any failure."""

    name = "llm"

    def __init__(self, llm: CompletionClient, fallback: ExtractiveSummarizer) -> None:
        self.llm = llm
        self.fallback = fallback
        self.failures = 0

    def summarize(self, text: str, /, *, max_tokens: int) -> str:
        # The text is a stored document: fenced as data, so nothing in it instructs the summarizer.
        prompt = (
            f"Summarize the text below in at most {max_tokens} tokens, in the text's own language. Keep names, "
            f"numbers, dates and conclusions. Reply with the summary only. {DATA_RULE}\n\n{data_block(text)}"
        )
        try:
            result = self.llm.complete([{"role": "user", "content": prompt}], max_tokens=max_tokens * 2)
            summary = (result.text or "").strip()
            if not summary or self.fallback.counter.count(summary) > max_tokens * 2:
                raise LLMError(f"unusable summary of {len(summary)} chars")
            return summary
        except Exception as exc:  # noqa: BLE001 - any LLM failure means: use the offline summary
            self.failures += 1
            log.warning("LLM summary failed (%s); using extractive summary", exc)
            return self.fallback.summarize(text, max_tokens=max_tokens)


def make_summarizer(counter: TokenCounter, llm: CompletionClient | None = None) -> SourceSummarizer:
    extractive = ExtractiveSummarizer(counter)
    return LLMSourceSummarizer(llm, extractive) if llm is not None else extractive
