"""Assembly of the prompt under a hard token budget.

Sections, in order: instructions, known facts, summaries, retrieved passages, recent
conversation, question. Each section has an upper share of the budget; what it leaves
unused flows to the passages. Passages that do not fit whole are compressed
query-focused. After rendering, the whole prompt is counted again and trimmed from the
lowest-ranked content until it fits, so the budget holds for any tokenizer.
"""

from __future__ import annotations

from agent_memory.core.citations import inline, tag_ids
from agent_memory.core.entities import normalize_name
from agent_memory.core.errors import BudgetError
from agent_memory.core.records import MemoryItem, Triple
from agent_memory.core.tokens import TokenCounter
from agent_memory.index.triples.base import GENERIC  # the type of a noun phrase that names no entity
from agent_memory.retrieval.compress import compress, compress_lines
from agent_memory.retrieval.config import RetrievalConfig
from agent_memory.retrieval.headings import DOCUMENTS_HEADING, heading_year, shown_heading
from agent_memory.retrieval.render import (
    TITLES,
    Entry,
    Sections,
    is_code,
    item_line,
    question_text,
    render,
    session_group,
    shown_text,
    tag,
)
from agent_memory.retrieval.spread import spread_sessions
from agent_memory.retrieval.types import Candidate, Decision, Passage, PromptResult
from agent_memory.retrieval.validity import fact_dates

# More characters than any text has per token (cl100k: about 4 in English prose, under 2 in Chinese).
_MAX_CHARS_PER_TOKEN = 8


class Assembler:
    def __init__(self, counter: TokenCounter, config: RetrievalConfig) -> None:
        self.counter = counter
        self.config = config

    def check_fits(self, question: str, budget: int, question_date: str | None = None) -> None:
        """BudgetError when the question alone (without instructions) exceeds ``budget``: checked
        before retrieval, so such a question costs one token count, not an embedding and a search."""
        fixed = self.counter.count(render(Sections(question=question_text(question, question_date)))[0])
        if fixed > budget:
            raise BudgetError(f"budget of {budget} tokens is smaller than the question itself ({fixed} tokens)")

    def assemble(self, question: str, budget: int, *, facts: list[Triple], summaries: list[Candidate],
                 passages: list[Candidate], recent: list[MemoryItem], entities: list[str],
                 question_date: str | None = None) -> PromptResult:
        count = self.counter.count
        result = PromptResult(question=question, prompt="", budget=budget, total_tokens=0,
                              tokenizer=getattr(self.counter, "name", "?"))
        sections = Sections(instructions=self.config.instructions, question=question_text(question, question_date))
        fixed = count(render(sections)[0])
        if fixed > budget:
            sections.instructions = ""
            result.decisions.append(Decision("assemble", "instructions", "dropped", "budget below instructions"))
            fixed = count(render(sections)[0])
            if fixed > budget:
                raise BudgetError(f"budget of {budget} tokens is smaller than the question itself ({fixed} tokens)")
        free = budget - fixed
        shares = self.config.shares
        # A section's title is paid for when its first entry goes in.
        title_cost = {name: count(title) + 2 for name, title in TITLES.items()}
        used_sources: set[str] = set()

        # Recent conversation first: it keeps the thread; it is capped by its share.
        cap = int(budget * shares.recent)
        recent_headers: set[tuple[str, str]] = set()  # (session, heading): a session spanning days has several
        for rank, item in enumerate(reversed(recent)):
            entry = self._entry(item, shown_text(item), 1000.0 - rank, "recent")
            group, title = session_group(item)
            header_cost = count(title) + 1 if group and (group, title) not in recent_headers else 0
            cost = count(entry.text) + 1 + header_cost + (0 if sections.recent else title_cost["recent"])
            if cost > min(cap, free):
                break
            if group:
                recent_headers.add((group, title))
            entry.group, entry.group_title, entry.group_year = group, title, heading_year(item) if group else ""
            entry.order = (int(item.metadata.get("seq", 0) or 0), item.chunk_index)
            sections.recent.insert(0, entry)
            cap -= cost
            free -= cost
            used_sources.add(item.source_id)

        cap = int(budget * shares.facts)
        for rank, fact in enumerate(self._facts_worth_room(facts, passages, free, result)):
            line = (f"- {inline(fact.subject)} — {inline(fact.relation)} → {inline(fact.object)}{fact_dates(fact)}"
                    f" {tag(fact.source_id)}")
            cost = count(line) + 1 + (0 if sections.facts else title_cost["facts"])
            if cost > min(cap, free):
                continue
            sections.facts.append(Entry(line, 500.0 - rank))
            cap -= cost
            free -= cost

        cap = int(budget * shares.summaries)
        for rank, cand in enumerate(summaries):
            placed = self._summary(question, cand, min(cap, free), 0 if sections.summaries else title_cost["summaries"],
                                   entities, result)
            if placed is None:
                continue
            line, shown, compressed, cost = placed
            sections.summaries.append(Entry(line, 300.0 - rank,
                                            self._passage(cand, shown, line, compressed, "summaries")))
            cap -= cost
            free -= cost

        if passages:
            free -= title_cost["passages"]
        self._pack_passages(question, passages, entities, sections, free, used_sources, result)
        self._finish(sections, budget, result)
        return result

    def _summary(self, question: str, cand: Candidate, room: int, title: int, entities: list[str],
                 result: PromptResult) -> tuple[str, str, bool, int] | None:
        """A summary's line, its text, whether cut and its cost within ``room``; None, recorded, where it does not
        fit. A live session's summary longer than the room is cut to its lines that carry the question's terms
        (``live_summaries.lines``): it is a digest of many messages, of which the question wants one or two."""
        count = self.counter.count
        live = cand.item.metadata.get("scope") == "working-memory"
        target = cand.item.id if live else cand.item.source_id
        shown = shown_text(cand.item)
        line = item_line(cand.item, shown)
        cost = count(line) + 1 + title
        if cost <= room:
            result.decisions.append(Decision("assemble", target, "placed", f"summary whole, score {cand.final:.2f}"))
            return line, shown, False, cost
        overhead = count(item_line(cand.item, "")) + 1 + title
        cuttable = self.config.live_summaries.lines and live and room - overhead >= self.config.min_compressed_tokens
        cut = (compress_lines(shown, question, room - overhead, self.counter, entities, self.config.compression)
               if cuttable else "")
        if not cut:
            why = ("summaries share full; no line of it carries the question's terms" if cuttable
                   else "summaries share full")
            result.assembly_drops.append(Decision("assemble", target, "dropped", why, cost, 0))
            return None
        line = item_line(cand.item, cut)
        new_cost = count(line) + 1 + title
        result.decisions.append(Decision("compact", target, "compressed",
                                         f"summary longer than the summaries' room, score {cand.final:.2f}; kept its "
                                         "lines with the question's terms", cost, new_cost))
        return line, cut, True, new_cost

    def _facts_worth_room(self, facts: list[Triple], passages: list[Candidate], free: int,
                          result: PromptResult) -> list[Triple]:
        """The facts that tell the reader something the passages will not.

        A weak fact (below ``facts_min_confidence``: the co-occurrence edges the graph route walks)
        is not shown, nor one with a common noun on either side (``facts_named_only``: "dream — have
        → family" is parse residue, "Ed Wood — direct → Plan 9" is knowledge), nor one whose own
        passage is among those that will be placed whole (the best-ranked passages that fit the
        room), since the passage states it in full. A fact of a subject and relation that changed
        over time stays: its dates and the "superseded" mark are what the passage cannot say."""
        if not facts:
            return facts
        placed: set[str] = set()
        room = free
        for cand in passages:
            cost = self.counter.count(cand.item.text)
            if cost > room:
                break
            room -= cost
            placed.add(cand.item.source_id)
        # The fact that replaced a superseded one began when that one ended (core/updates.validity_changes),
        # whatever its relation ("moved to" replaces "lives in"): it is the current answer, kept beside it.
        replaced_at = {(normalize_name(f.subject), f.valid_to) for f in facts if f.superseded}
        kept = []
        for fact in facts:
            dated_change = fact.superseded or (
                bool(fact.valid_from) and (normalize_name(fact.subject), fact.valid_from) in replaced_at)
            weak = fact.confidence < self.config.facts_min_confidence
            generic = self.config.facts_named_only and GENERIC in (fact.subject_type, fact.object_type)
            if dated_change or not (weak or generic or fact.source_id in placed):
                kept.append(fact)
        if len(kept) < len(facts):
            result.decisions.append(Decision("assemble", "facts", "dropped",
                                             f"{len(facts) - len(kept)} facts weak or stated by a placed passage"))
        return kept

    def _pack_passages(self, question, passages, entities, sections, free, used_sources, result) -> None:
        count = self.counter.count
        spread = spread_sessions(question, passages, self.config.aggregation_spread)
        if spread is not passages:
            result.decisions.append(Decision("assemble", "passages", "spread",
                                             "a question asking for a collection: each further passage of a session "
                                             f"packs {self.config.aggregation_spread} lower"))
            passages = spread
        headers_used: set[str] = set()
        # The session headings placed, by (session, heading): a session spanning days has one per day.
        days_used: set[tuple[str, str]] = set()
        year = ""  # the year of the last session heading placed (written again only where it changes)
        # Under a tight budget one long passage would crowd out every other source: above this
        # share of the passages' room, a passage is compressed to its question-bearing sentences.
        cap = int(free * self.config.max_passage_share) if self.config.max_passage_share < 1 else None
        for rank, cand in enumerate(passages):
            if free <= 0:
                result.assembly_drops.extend(Decision("assemble", c.item.source_id, "dropped", "budget full")
                                      for c in passages[rank:])
                break
            item = cand.item
            if free < self.config.min_compressed_tokens and len(item.text) > free * _MAX_CHARS_PER_TOKEN:
                # No compressed passage fits any more, but a short one that fits whole still does
                # (a 20-token note in the last 23 tokens): the rest are read for those; a text this
                # long cannot be one, and is not counted.
                result.assembly_drops.append(Decision("assemble", item.source_id, "dropped", "budget full"))
                continue
            if item.source_id in used_sources and item.kind == "turn":
                result.assembly_drops.append(Decision("assemble", item.source_id, "dropped", "already in recent turns"))
                continue
            group, title = session_group(item)
            # The documents' heading is written once documents and sessions share the section: it is
            # paid by whichever passage brings the second kind in.
            sessions_placed = any(not g.startswith("doc:") for g in headers_used - {DOCUMENTS_HEADING})
            docs_placed = any(g.startswith("doc:") for g in headers_used)
            if group is None:  # a document's chunk or summary
                group = f"doc:{item.source_id}"
                header_cost = 0
                if sessions_placed and DOCUMENTS_HEADING not in headers_used:
                    header_cost = count(DOCUMENTS_HEADING) + 1
            else:
                group_year = heading_year(item)
                header_cost = 0 if (group, title) in days_used else count(shown_heading(title, group_year, year)) + 1
                if docs_placed and DOCUMENTS_HEADING not in headers_used:
                    header_cost += count(DOCUMENTS_HEADING) + 1
            text, compressed = shown_text(item), False
            line = item_line(item, text)
            cost = count(line) + 1 + header_cost
            overhead = header_cost + count(item_line(item, "")) + 1
            # The share cap applies only where it leaves room for a compressed passage: under a
            # tiny budget the tag and header alone may exceed it.
            limit = cap
            if self.config.sentence_pack_tokens and rank >= self.config.sentence_pack_after:
                # Below the best passages, a long one brings its question-bearing sentences only.
                tail = self.config.sentence_pack_tokens + overhead
                limit = tail if limit is None else min(limit, tail)
            over_cap = limit is not None and cost > limit and limit - overhead >= self.config.min_compressed_tokens
            if cost > free or over_cap:
                room = min(free, limit if over_cap else free) - overhead
                if room < self.config.min_compressed_tokens:
                    result.assembly_drops.append(Decision("assemble", item.source_id, "dropped", "budget full", cost, 0))
                    continue
                whole = text
                text = compress(text, question, room, self.counter, entities, self.config.compression)
                if not text and over_cap and rank == len(passages) - 1 and free - overhead > room:
                    # The share's room holds no sentence of it and no passage comes after it to use
                    # the rest (a tiny budget, one long passage): compressed past its share beats none.
                    # Before the last passage the share holds: on zh_events at 300 tokens, a long note
                    # compressed into the free room took the place of a short one (0.950 -> 0.944).
                    room = free - overhead
                    text = compress(whole, question, room, self.counter, entities, self.config.compression)
                if not text:
                    result.assembly_drops.append(Decision("assemble", item.source_id, "dropped",
                                                   "its best sentence does not fit the remaining budget", cost, 0))
                    continue
                if text != whole and count(item_line(item, text)) + 1 + header_cost >= cost:
                    text = whole  # the cut saves no token of the line: no cut (placed whole where it fits)
                if text != whole:
                    line = item_line(item, text)
                    compressed = True
                    new_cost = count(line) + 1 + header_cost
                    why = "longer than one passage's share" if over_cap and cost <= free else "did not fit whole"
                    result.decisions.append(Decision("compact", item.source_id, "compressed",
                                                     f"{why}; kept the sentences with the question's terms",
                                                     cost, new_cost))
                    cost = new_cost
                # else one sentence: never cut, so placed whole where it fits
                if cost > free:
                    result.assembly_drops.append(Decision("assemble", item.source_id, "dropped", "budget full", cost, 0))
                    continue
            passage = self._passage(cand, text, line, compressed)
            order = (int(item.metadata.get("seq", 0) or 0), item.chunk_index)
            entry = Entry(line, 100.0 - rank, passage, group, title, order=order, code=is_code(item))
            if not group.startswith("doc:"):
                entry.group_year = heading_year(item)
                if (group, title) not in days_used:
                    year = entry.group_year or year
                    days_used.add((group, title))
            sections.passages.append(entry)
            headers_used.add(group)
            if (sessions_placed and group.startswith("doc:")) or (docs_placed and not group.startswith("doc:")):
                headers_used.add(DOCUMENTS_HEADING)
            free -= cost

    def _passage(self, cand: Candidate, text: str, line: str, compressed: bool,
                 section: str = "passages") -> Passage:
        return Passage(source_id=cand.item.source_id, text=text, kind=cand.item.kind, score=cand.final,
                       tokens=self.counter.count(line), compressed=compressed,
                       original_tokens=self.counter.count(cand.item.text), item_ids=[cand.item.id], section=section)

    def _entry(self, item: MemoryItem, text: str, rank: float, section: str) -> Entry:
        line = item_line(item, text)
        passage = Passage(source_id=item.source_id, text=text, kind=item.kind, score=rank,
                          tokens=self.counter.count(line), original_tokens=self.counter.count(item.text),
                          item_ids=[item.id], section=section)
        return Entry(line, rank, passage)

    def _finish(self, sections: Sections, budget: int, result: PromptResult) -> None:
        """Count the rendered prompt; trim the lowest-ranked entries until it fits."""
        while True:
            prompt, parts = render(sections)
            total = self.counter.count(prompt)
            if total <= budget:
                break
            victim_section, victim = None, None
            for name in ("passages", "summaries", "facts", "recent"):
                for entry in getattr(sections, name):
                    if victim is None or entry.rank < victim.rank:
                        victim_section, victim = name, entry
            if victim is None:  # only fixed text left: already checked to fit, but be safe
                raise BudgetError(f"prompt of {total} tokens cannot fit a budget of {budget}")
            getattr(sections, victim_section).remove(victim)
            result.assembly_drops.append(Decision("assemble", victim.passage.source_id if victim.passage else "fact",
                                           "dropped", "trimmed after final count", 0, 0))
        result.prompt = prompt
        result.total_tokens = total
        result.sections = {name: self.counter.count(text) for name, text in parts.items()}
        result.passages = [e.passage for name in ("summaries", "passages", "recent")
                           for e in getattr(sections, name) if e.passage]
        used = []
        for p in result.passages:
            if p.source_id not in used:
                used.append(p.source_id)
        result.used_source_ids = used
        # Each fact line ends with its tag; its subject, relation and object are inlined (neutralized).
        result.fact_source_ids = tag_ids(parts.get("facts", "").partition("\n")[2])
