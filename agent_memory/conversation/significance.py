"""Which turns matter: a rule-based detector offline, LLM judgement when configured.

Also the extractors shared with compaction validation: numbers and named entities
(capitalized words, identifiers like ``X-200``, jieba ``nr/ns/nt/nz`` for Chinese): candidates, cheap enough
for every append; which of them a header or a digest shows is ``entity_filter``'s judgement.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from dataclasses import dataclass, field
from typing import Protocol

from agent_memory.core.chinese_words import load_posseg
from agent_memory.core.errors import LLMError
from agent_memory.core.prompt_data import DATA_RULE, data_block
from agent_memory.core.text import CJK_RANGES, STOPWORDS, has_cjk

log = logging.getLogger(__name__)

# Not after a Latin letter or digit ("v2", "abc123"), but right after a Chinese character ("端口8004"):
# \w would match the Chinese character too and hide the number.
NUMBER = re.compile(r"(?<![A-Za-z0-9_.])\d+(?:[.,:/-]\d+)*%?")
# Word edges that a Chinese character makes too: \b sees none between 用 and AWS (both are \w), so
# "我们用AWS和Kubernetes部署" would name nothing.
_START = rf"(?<![^\W{CJK_RANGES}])"
_END = rf"(?![^\W{CJK_RANGES}])"
IDENTIFIER = re.compile(rf"{_START}[A-Za-z]+[-_]?\d+[A-Za-z0-9-]*{_END}|{_START}[A-Z]{{2,}}[A-Z0-9]*{_END}")
# A word of letters (any script's, Chinese characters apart: jieba reads those); which of them are capitalized
# (Zoë, Kraków, Łukasz, McDonald) is :func:`capitalized`'s call: ``re`` has no class for upper-case letters.
_LETTERS = re.compile(rf"{_START}[^\W\d_{CJK_RANGES}]+{_END}")


def capitalized(word: str) -> bool:
    """Whether ``word`` is capitalized as a name is: humps of one upper-case letter and lower-case ones after it
    ("Kraków", "McDonald"; not "I", "USA", "iPhone" or "HELLO")."""
    humps = 0
    for n, char in enumerate(word):
        if char.isupper():
            if n and word[n - 1].isupper():
                return False
            humps += 1
        elif not (char.islower() and humps):
            return False
    return humps > 0 and not word[-1].isupper()


def capitalized_words(text: str):
    """The capitalized words of ``text`` as matches, in order."""
    return (match for match in _LETTERS.finditer(text) if capitalized(match.group(0)))
DATE = re.compile(
    r"\b\d{4}[-/]\d{1,2}[-/]\d{1,2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}\b"
    r"|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|yesterday|next week)\b"
    r"|\d{1,2}月\d{1,2}[日号]|\d{4}年",
    re.IGNORECASE,
)
# Words that start sentences or address the assistant; capitalized but never entities.
_NOT_ENTITIES = frozenset(
    "I The A An This That These Those It We You He She They My Your Our Their What Which Who When Where Why How "
    "Yes No Ok Okay Please Thanks Thank Sure Hi Hello Here There Also But And Or So If Then Let Can Could Would "
    "Should Will Do Does Did Is Are Was Were Be Have Has Had Not Just Now Great Good Note Some Many Most Each "
    "Every Any All For In On At By To Of As With From After Before First Second Third Finally However".split()
)

# Month and day names are dates, not entities (DATE catches the dates they make).
_CALENDAR = frozenset(
    "January February March April May June July August September October November December Jan Feb Mar Apr Jun "
    "Jul Aug Sep Sept Oct Nov Dec Monday Tuesday Wednesday Thursday Friday Saturday Sunday Today Tomorrow "
    "Yesterday".split()
)
# Verbs an agent or a user starts a sentence with ("Fix the bug", "Read config.yaml", "Order 40 units"):
# capitalized only by their position, so never entities.
_VERBS = frozenset(
    "Add Apply Ask Book Build Buy Call Cancel Change Check Clean Clear Click Close Compare Compile Configure "
    "Confirm Convert Copy Create Debug Delete Deploy Describe Do Download Draft Edit Email Enable Disable Explain "
    "Export Fetch Fill Find Fix Follow Get Give Go Grep Help Implement Import Include Inspect Install Keep Let List "
    "Load Log Look Make Mark Merge Move Note Open Order Pay Pick Plan Post Print Push Pull Put Read Rebuild "
    "Refactor Reload Remember Remind Remove Rename Replace Reply Report Request Reserve Reset Restart Retry Return "
    "Review Revert Rewrite Run Save Schedule Search See Send Set Show Skip Sort Start Stop Submit Summarize Switch "
    "Take Tell Test Think Try Turn Undo Update Upgrade Upload Use Verify View Wait Want Watch Write "
    "Added Applied Built Changed Checked Created Deleted Done Fixed Found Installed Moved Opened Ran Read Removed "
    "Renamed Replaced Sent Started Stopped Tested Tried Updated Used Wrote Running Reading Checking Looking "
    "Searching Fixing Writing Trying".split()
)

RULES: dict[str, re.Pattern[str]] = {
    "decision": re.compile(
        r"\b(?:decided|decide|decision|let'?s go with|going with|we(?:'ll| will) use|agreed|chose|choose|"
        r"settled on|approved)\b|决定|选择了|就用|同意",
        re.IGNORECASE,
    ),
    "preference": re.compile(
        r"\bI (?:really )?(?:like|love|prefer|hate|dislike|always|never|usually|enjoy|can't stand)\b|"
        r"\bmy favou?rite\b|我(?:喜欢|偏好|讨厌|总是|从不|一直|更喜欢)",
        re.IGNORECASE,
    ),
    "commitment": re.compile(
        r"\b(?:I(?:'ll| will)|we(?:'ll| will)|promise|remind me|deadline|due (?:on|by)|by (?:tomorrow|friday|"
        r"monday|next week)|todo|to-do|must|need to)\b|记得|提醒我|截止|必须|答应",
        re.IGNORECASE,
    ),
    "fact": re.compile(
        r"\b(?:my name is|I am|I'm|I have|I live|I work|I bought|I moved|is located|was born|costs?|"
        r"confirmed|my \w+ is)\b|我是|我叫|我住|我在|我有",
        re.IGNORECASE,
    ),
}




def numbers(text: str) -> set[str]:
    return {m.group(0).rstrip(".,") for m in NUMBER.finditer(text)}


# What an agent must keep verbatim: hex codes (0x000007), paths (src/app/main.py, C:\\logs\\x.log),
# file names with an extension, versions (v2.3.1, 1.10.0), error codes (E1234, ERR_TIMEOUT, HTTP-503).
IDENTIFIERS = re.compile(
    r"\b0x[0-9A-Fa-f]+\b"
    r"|(?:[A-Za-z]:)?(?:~|\.{1,2})?[\\/]?(?:[\w.-]+[\\/])+[\w.-]*"
    r"|\b[\w-]+\.(?:py|js|ts|tsx|jsx|go|rs|java|kt|c|h|cc|cpp|hpp|rb|php|sh|sql|json|ya?ml|toml|ini|cfg|conf|"
    r"md|txt|csv|log|lock|html|css|xml|env)\b"
    r"|\bv\d+(?:\.\d+)+\b|(?<![\w.])\d+\.\d+\.\d+(?:[-+][\w.]+)?\b"
    r"|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b[A-Z]{1,6}-?\d{2,}\b"
)


_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,4}$")


def identifiers(text: str) -> set[str]:
    """Hex codes, paths, file names, versions and error codes (a summary that loses one fails validation)."""
    return set(identifier_list(text))


def identifier_list(text: str) -> list[str]:
    """:func:`identifiers` in order of first appearance."""
    found: dict[str, None] = {}
    for match in IDENTIFIERS.finditer(text):
        token = match.group(0).rstrip(".,:;")
        separators = token.count("/") + token.count("\\")
        if separators:
            # A path needs a letter ("1/2" is a fraction, "2024/05/01" a date) and a path's shape: a root,
            # two separators or a file extension ("km/h" and "and/or" are words).
            if not any(c.isalpha() for c in token):
                continue
            if separators < 2 and not token.startswith(("/", "~", ".", "\\")) and not _EXTENSION.search(token):
                continue
        if len(token) > 2:
            found.setdefault(token, None)
    return list(found)


def is_entity_word(token: str) -> bool:
    """False for calendar names and sentence-initial verbs, which capitalization alone made look like names."""
    return token not in _CALENDAR and token not in _VERBS and token not in _NOT_ENTITIES


def entities(text: str) -> set[str]:
    """Named things: capitalized words, identifiers (X-200, API), Chinese nr/ns/nt/nz words.

    Line by line, each line's result cached: compaction validates span after span over the same
    messages, and tagging Chinese with jieba is the slow part (a tool loop re-read it thousands of times)."""
    found: set[str] = set()
    for line in text.split("\n"):
        if line.strip():
            found |= _line_entities(line)
    return found


@functools.lru_cache(maxsize=32768)
def _line_entities(text: str) -> frozenset[str]:
    found: set[str] = set()
    for match in IDENTIFIER.finditer(text):
        token = match.group(0)
        if not token.isdigit():
            found.add(token)
    for match in capitalized_words(text):
        token = match.group(0)
        if is_entity_word(token) and token.lower() not in STOPWORDS:
            found.add(token)
    if has_cjk(text):
        for word, flag in load_posseg().cut(text):
            if flag in ("nr", "ns", "nt", "nz") and len(word.strip()) > 1:
                found.add(word.strip())
    return frozenset(found)


@dataclass
class Judgement:
    significant: bool
    reasons: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)


class SignificanceDetector(Protocol):
    def judge(self, role: str, text: str) -> Judgement: ...


class RuleDetector:
    """Offline: decisions, preferences, commitments, facts with numbers/dates, named entities."""

    def judge(self, role: str, text: str) -> Judgement:
        if not text.strip() or role not in ("user", "assistant"):
            return Judgement(False)
        reasons = [name for name, pattern in RULES.items() if pattern.search(text)]
        if role == "assistant":
            # Assistants say "I'll" and "must" constantly; only their decisions count.
            reasons = [r for r in reasons if r == "decision"]
        if DATE.search(text) or (numbers(text) and "fact" not in reasons and role == "user"):
            reasons.append("number_or_date")
        found = sorted(entities(text))
        return Judgement(bool(reasons), reasons, found)


class LLMDetector:
    """One small JSON call per turn; any failure falls back to the rules (and is logged)."""

    PROMPT = (
        "Decide if this conversation turn holds something worth remembering long-term: a decision, a fact "
        "about the user or the task (with numbers or dates), a user preference, a commitment, or key named "
        'entities. Answer only JSON: {"significant": true|false, "reasons": [...], "entities": [...]}. '
        + DATA_RULE
    )

    def __init__(self, client, fallback: SignificanceDetector | None = None) -> None:
        self.client = client
        self.fallback = fallback or RuleDetector()

    def judge(self, role: str, text: str) -> Judgement:
        rules = self.fallback.judge(role, text)
        if not text.strip() or role not in ("user", "assistant"):
            return rules
        try:
            # The turn is stored text: fenced as data, so it cannot tell the judge what to answer.
            turn = f"[{role}]\n{data_block(text)}"
            result = self.client.complete(
                [{"role": "system", "content": self.PROMPT}, {"role": "user", "content": turn}],
                max_tokens=200,
                response_format={"type": "json_object"},
            )
            data = json.loads(result.text)
            return Judgement(
                bool(data["significant"]),
                [str(r) for r in data.get("reasons", [])],
                sorted(set(map(str, data.get("entities", []))) | set(rules.entities)),
            )
        except (LLMError, ValueError, KeyError, TypeError) as exc:
            log.warning("significance LLM judgement failed, using rules: %s", exc)
            return rules
