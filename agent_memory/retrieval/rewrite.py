"""Follow-up questions made standalone before recall.

"Where does she work now?" embeds badly: "she" is whoever the conversation was about. With a
session, the question is rewritten against the session's recent turns: pronouns resolved to
the entity last talked about, "what about X?" read as the previous question about X, "the
second one" as the second item of the assistant's last list; the same in Chinese (她, 那小王呢？,
第二个). Offline rules; one LLM call
when an LLM is configured (the rules answer when it fails). The routes then search with the
rewritten question, the original and the entities alone run the dense and keyword routes too,
and each route's lists are fused by reciprocal rank; the debug dump shows every variant and
what it found. Without a session, or with nothing to resolve, nothing changes.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Callable

from agent_memory.core.llm import CompletionClient
from agent_memory.core.prompt_data import DATA_RULE, data_block, data_inline
from agent_memory.core.records import MemoryItem
from agent_memory.core.roles import speaker_role
from agent_memory.core.text import chinese_number, has_cjk
from agent_memory.retrieval.fusion import rrf
from agent_memory.retrieval.types import Decision

log = logging.getLogger(__name__)

_PERSON = frozenset({"he", "she", "him", "her", "his", "hers", "himself", "herself"})
_THING = {"it", "its", "they", "them", "their", "theirs", "there"}
_PLURAL = frozenset({"they", "them", "their", "theirs"})
_PRONOUN = re.compile(r"\b(he|she|him|her|his|hers|himself|herself|it|its|they|them|their|theirs|there|"
                      r"this one|that one)\b", re.IGNORECASE)
_ABOUT = re.compile(r"^\s*(?:and|but|ok|okay|so)?[\s,]*(?:what|how)\s+about\s+(.+?)\s*[?？.!]*\s*$", re.IGNORECASE)
_ORDINAL = re.compile(r"\b(?:the\s+)?(first|second|third|fourth|fifth|last)\s+(?:one|option|item|choice)\b",
                      re.IGNORECASE)
_ORDINALS = {"first": 0, "second": 1, "third": 2, "fourth": 3, "fifth": 4, "last": -1}
_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(.+)$", re.MULTILINE)
_NAME = re.compile(r"\b[A-Z][\w'-]*(?:\s+(?:of\s+|de\s+|van\s+)?[A-Z][\w-]*)*")
# Capitalized, but not names: sentence starters, question words, pronouns, months and days.
_NOT_NAMES = frozenset(
    "I The A An This That These Those It We You He She They My Your Our Their His Her Its What Which Who Whom "
    "Whose When Where Why How Yes No Ok Okay Please Thanks Thank Sure Hi Hello Here There Also But And Or So If "
    "Then Let Can Could Would Should Will Do Does Did Is Are Was Were Be Have Has Had Not Just Now Great Good "
    "Tell Give Show Find Remind Note Sorry Well Maybe Any Some All Each Every After Before Since In On At By To "
    "For Of As With From Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April "
    "May June July August September October November December".split())
_POSSESSIVE_NEXT = re.compile(r"^\s+(?!(?:to|in|on|at|for|with|from|about|and|or|that|now|today|again|"
                              r"yesterday|\?|\.|,)\b)[a-z]", re.IGNORECASE)


def names(text: str) -> list[str]:
    """Capitalized names in order of appearance ("Maria Lopez", "Falkenrath Logistics", "X-300")."""
    found: list[str] = []
    for match in _NAME.finditer(text):
        words = match.group(0).split()
        first = len(words)
        while words and words[0] in _NOT_NAMES:
            words = words[1:]
        start = len(words) == first and (not text[:match.start()].strip()
                                         or text[:match.start()].rstrip()[-1] in ".!?\n:")
        if start and len(words) == 1 and (words[0].endswith(("ed", "ly", "ing"))
                                          or re.match(r"\s*[,.!?;:]", text[match.end():])):
            continue  # "Noted, thanks." "Honestly ..." : a sentence's first word, not a name
        name = " ".join(words)
        name = name[:-2] if name.endswith(("'s", "’s")) else name
        if name and name not in _NOT_NAMES and name not in found:
            found.append(name)
    return found


@dataclass
class Variant:
    name: str  # original | rewritten | entities
    text: str
    found: list[str] = field(default_factory=list)  # source IDs of its best hits (debug)


@dataclass
class Variants:
    items: list[Variant]
    how: str = ""  # rules | llm | "" (nothing to resolve)
    resolved: list[str] = field(default_factory=list)  # the session's entities the rewrite used

    @property
    def search_text(self) -> str:
        """What the routes search with: the rewritten question when there is one."""
        return next((v.text for v in self.items if v.name == "rewritten"), self.items[0].text)

    def decisions(self) -> list[Decision]:
        """For the debug dump: each variant, how it was made, and the sources it found first."""
        if len(self.items) < 2:
            return []
        return [Decision("rewrite", v.name, self.how if v.name != "original" else "asked",
                         f"{v.text!r} found {', '.join(v.found[:5]) or 'nothing'}") for v in self.items]


def _possessive(name: str) -> str:
    return name + ("'" if name.endswith("s") else "'s")


def _replace_pronouns(question: str, person: str | None, thing: str | None, keep: frozenset[str] = frozenset()) -> str:
    def swap(match: re.Match) -> str:
        word = match.group(1).lower()
        if word in keep:
            return match.group(0)
        target = person if word in _PERSON else thing
        if not target:
            return match.group(0)
        after = question[match.end():]
        if word in ("his", "its", "their", "theirs", "hers") or (word == "her" and _POSSESSIVE_NEXT.match(after)):
            return _possessive(target)
        if word == "there":
            return f"in {target}" if not re.search(r"\bin\s*$", question[:match.start()]) else target
        return target

    return _PRONOUN.sub(swap, question)


def _by_assistant(turn: MemoryItem) -> bool:
    """An assistant's turn, under any of its labels ("assistant", "ai", "助手"; agent_memory/core/roles.py) or "bot"."""
    speaker = turn.metadata.get("speaker")
    return speaker_role(speaker) == "assistant" or str(speaker or "").strip().lower() == "bot"


def _listed(turns: list[MemoryItem], index: int) -> str | None:
    """Item ``index`` (-1: the last) of the newest list an assistant's turn holds (any turn's, when the
    session holds one turn), or None."""
    for turn in reversed(turns):
        if _by_assistant(turn) or len(turns) == 1:
            items = _LIST_ITEM.findall(turn.text)
            if items and (index == -1 or 0 <= index < len(items)):
                return items[index]
    return None


def _asked_before(turns: list[MemoryItem]) -> str | None:
    """The newest question the user asked (a turn not the assistant's that ends with "?" or "？")."""
    for turn in reversed(turns):
        text = turn.text.rstrip()
        if not _by_assistant(turn) and text.endswith(("?", "？")):
            return text
    return None


def rule_rewrite(question: str, recent: list[MemoryItem]) -> tuple[str, list[str]]:
    """The standalone question and the entities it borrowed from the turns (newest last); the
    question itself and no entities when there is nothing to resolve."""
    turns = [t for t in recent if t.text.strip() and t.text.strip() != question.strip()]
    if not turns:
        return question, []
    if has_cjk(question):
        return chinese_rule_rewrite(question, turns)
    if (m := _ORDINAL.search(question)) and (item := _listed(turns, _ORDINALS[m.group(1).lower()])):
        chosen = names(item) or [item.strip().rstrip(".:")[:80]]
        return question[:m.start()] + chosen[0] + question[m.end():], chosen[:1]
    if (m := _ABOUT.match(question)) and (asked := _asked_before(turns)):
        target = m.group(1)
        earlier = names(asked)
        if earlier:
            return asked.replace(earlier[0], target, 1), [earlier[0]]
        return f"{asked} {target}", []
    if not _PRONOUN.search(question):
        return question, []
    own = set(names(question))
    person = thing = None
    for turn in reversed(turns):  # the newest turn that names something
        found = [n for n in names(turn.text) if n not in own]
        # A person's name is one or two words without digits; "it" prefers another name of the turn.
        person = next((n for n in found if len(n.split()) <= 2 and not any(c.isdigit() for c in n)), None)
        thing = next((n for n in found if n != person), None)
        if found:
            break
    # A question that names a person already has the likeliest referent of its personal and plural
    # pronouns: "How did Gina promote her store?", "What have Nate and Joanna both painted for their ..."
    # stay as asked (resolved to the session's last name they pointed at someone else).
    named = any(len(n.split()) <= 2 and not any(c.isdigit() for c in n) for n in own)
    keep = _PERSON | _PLURAL if named else frozenset()
    rewritten = _replace_pronouns(question, person or thing, thing or person, keep)
    used = [n for n in dict.fromkeys([person, thing]) if n and n in rewritten]
    return (rewritten, used) if rewritten != question else (question, [])


# ---- Chinese follow-ups --------------------------------------------------------------------------
# The same three rules for a question written in Chinese, where no capital marks a name: names are the
# proper nouns jieba tags (the Chinese triple extractor's phrases), a pronoun is a pronoun token (so 其他
# and 吉他 are not 他), "那小王呢？" is the previous question about 小王, and "第二个" the second item of the
# assistant's last list.
_ZH_PERSON = frozenset({"他", "她", "他们", "她们"})
_ZH_THING = frozenset({"它", "它们"})
_ZH_PLACE = frozenset({"那里", "那儿", "那边"})
_ZH_ABOUT = re.compile(r"^\s*(?:那么|那|还有)?\s*(\S{1,12}?)\s*呢\s*[？?]?\s*$")
_ZH_ORDINAL = re.compile(r"第([一二三四五六七八九十\d]{1,3})个|最后一个")


def chinese_names(text: str) -> list[tuple[str, str]]:
    """(name, entity type) of the proper nouns in a Chinese text, in order of appearance: the Chinese
    triple extractor's entities, so the graph and the rewrite agree on what a name is."""
    from agent_memory.index.triples.chinese import ChineseExtractor

    return [(e.name, e.type) for e in ChineseExtractor().entities(text)]


def chinese_rule_rewrite(question: str, turns: list[MemoryItem]) -> tuple[str, list[str]]:
    """``rule_rewrite`` for a question written in Chinese (``turns`` not empty)."""
    from agent_memory.index.triples.chinese import tokenize

    if m := _ZH_ORDINAL.search(question):
        last = m.group(0) == "最后一个"
        index = -1 if last else chinese_number(m.group(1)) - 1  # 第N个 counts from one: 第0个 names no item
        if (last or index >= 0) and (item := _listed(turns, index)):
            # The item's head ("中通快递" of "中通快递，便宜"), else the first name it holds.
            head = re.split(r"[，,：:。；;]", item.strip())[0].strip()
            named = [n for n, _ in chinese_names(item)]
            chosen = head if 0 < len(head) <= 20 or not named else named[0]
            return question[:m.start()] + chosen + question[m.end():], [chosen]
    m = _ZH_ABOUT.match(question)
    if (m and all(t.flag.startswith("n") or t.flag == "eng" for t in tokenize(m.group(1)))
            and (asked := _asked_before(turns))):
        target = m.group(1)  # a noun or a name: "为什么呢？" asks something of its own
        earlier = [n for n, _ in chinese_names(asked)]
        if earlier:
            return asked.replace(earlier[0], target, 1), [earlier[0]]
        return f"{asked} {target}", []
    tokens = tokenize(question)
    pronouns = [t for t in tokens if t.flag.startswith("r") and t.word in _ZH_PERSON | _ZH_THING | _ZH_PLACE]
    if not pronouns:
        return question, []
    in_question = chinese_names(question)
    own = {n for n, _ in in_question}
    person = thing = place = None
    for turn in reversed(turns):  # the newest turn that names something
        found = [(n, kind) for n, kind in chinese_names(turn.text) if n not in own]
        person = next((n for n, kind in found if kind == "PERSON"), None)
        place = next((n for n, kind in found if kind == "GPE"), None)
        thing = next((n for n, kind in found if n != person), None)
        if found:
            break
    # As in English: a question that names a person keeps its personal pronouns.
    named = any(kind == "PERSON" for _, kind in in_question)
    out, used = [], []
    for tok in tokens:
        target = None
        if tok in pronouns:
            if tok.word in _ZH_PERSON and not named:
                target = person or thing
            elif tok.word in _ZH_THING:
                target = thing or person
            elif tok.word in _ZH_PLACE:
                target = place or thing
        out.append(target or tok.word)
        if target and target not in used:
            used.append(target)
    rewritten = "".join(out)
    return (rewritten, used) if rewritten != question else (question, [])


class QueryRewriter:
    """``recent_turns(tenant, session_id, n)`` reads the session (working memory or ingested turns); ``turns``:
    the config's rewrite_turns."""

    def __init__(self, recent_turns: Callable[[str, str, int], list[MemoryItem]], *, turns: int,
                 llm: CompletionClient | None = None, enabled: bool = True) -> None:
        self.recent_turns = recent_turns
        self.llm = llm
        self.turns = turns
        self.enabled = enabled  # the config's query_rewrite: off, every question is searched as asked

    def variants(self, question: str, tenant: str, session_id: str | None) -> Variants:
        original = Variant("original", question)
        if not session_id or not self.enabled:
            return Variants([original])
        try:
            recent = self.recent_turns(tenant, session_id, self.turns)
        except Exception as exc:  # noqa: BLE001 - rewriting is an aid; the question stands as asked
            log.warning("query rewriting: reading session %s failed: %s", session_id, exc)
            return Variants([original])
        rewritten, used = rule_rewrite(question, recent)
        how = "rules" if rewritten != question else ""
        if self.llm is not None and recent:
            answer = self._llm_rewrite(question, recent)
            if answer and answer != question:
                rewritten, how = answer, "llm"
                used = [n for n in names(answer) if n not in names(question)]
        if rewritten == question:
            return Variants([original])
        entities = " ".join(dict.fromkeys(used + names(rewritten)))
        items = [original, Variant("rewritten", rewritten)]
        if entities and entities != rewritten:
            items.append(Variant("entities", entities))
        return Variants(items, how, used)

    def _llm_rewrite(self, question: str, recent: list[MemoryItem]) -> str | None:
        # The turns are stored text: one line each (a turn cannot forge another speaker's), fenced as data.
        lines = "\n".join(f"{data_inline(str(t.metadata.get('speaker') or 'user'))}: {data_inline(t.text[:500])}"
                          for t in recent[-self.turns:])
        try:
            result = self.llm.complete([
                {"role": "system", "content": "Rewrite the last question so it stands alone: replace pronouns and "
                                              "ellipsis with what they refer to in the conversation. Output only the "
                                              f"question. {DATA_RULE}"},
                {"role": "user", "content": f"Conversation:\n{data_block(lines)}\n\nQuestion: {question}"}],
                max_tokens=120)
            text = " ".join(result.text.split())
            return text if 0 < len(text) <= 4 * len(question) + 200 else None
        except Exception as exc:  # noqa: BLE001 - the rules answer instead
            log.warning("LLM query rewriting failed, using rules: %s", exc)
            return None

    def recall(self, pipeline, query, variants: Variants, outputs: dict) -> None:
        """The dense and keyword routes also for the other variants; per route, the lists of all
        variants fused by reciprocal rank (the config's rrf_k; the searched variant's list weighs 1,
        each other one rewrite_variant_weight; the searched variant first on ties)."""
        if len(variants.items) < 2:
            return
        import dataclasses

        from agent_memory.core.records import ScoredItem

        searched = variants.search_text
        for name in ("dense", "keyword"):
            route = pipeline.routes.get(name)
            if route is None or name not in outputs:
                continue
            lists = [outputs[name].hits]
            for variant in variants.items:
                if variant.text == searched:
                    variant.found = [h.item.source_id for h in outputs[name].hits[:5]]
                    continue
                other = dataclasses.replace(query, text=variant.text)
                if name == "dense":
                    other.dense = pipeline.services.embedder.embed_query(variant.text)
                else:
                    other.sparse = pipeline.services.sparse_encoder.encode_query(variant.text)
                hits = route.recall(other, getattr(pipeline.config, name).limit).hits
                variant.found = list(dict.fromkeys(variant.found + [h.item.source_id for h in hits[:5]]))
                lists.append(hits)
            other_weight = pipeline.config.rewrite_variant_weight
            weights = [1.0] + [other_weight] * (len(lists) - 1)
            score = rrf(zip(weights, ([hit.item.id for hit in hits] for hits in lists)), pipeline.config.rrf_k)
            best: dict[str, ScoredItem] = {}
            for hits in lists:
                for hit in hits:
                    if hit.item.id not in best or hit.score > best[hit.item.id].score:
                        best[hit.item.id] = hit
            order = sorted(score, key=lambda i: -score[i])[: getattr(pipeline.config, name).limit]
            outputs[name] = dataclasses.replace(outputs[name], hits=[best[i] for i in order])
