"""The people a turn tells of: whom its facts are about, when that is someone other than its speaker.

A user's memory holds what they told of themself ("My new manager is Fazle Newcombe.", "We've finally settled
into our flat in Atlanta.") beside what they told of others ("Helen Shank's new manager is Daniel.", 高卢最近开始
练篮球。, "Kate got a job at Texas Tech."), worded alike. A question in the first person ("Who do I report
to these days?", 我现在住在哪里？) asks about the first; the embedding and the words rank both the same
(agent_memory/retrieval/rerank/signals.py ``tells_of_others`` reads this record).

Read from the facts the graph keeps of the turn (index/triples): each subject typed a person, other than the
speaker, whose first person the extractor was given as their name (index/triples/speaker.py), so "I report to
Daniel" is the speaker's (Lin, or ``User`` for the user role) and tells of nobody else. Stored in the turn's
metadata as ``told_of`` (the names as the facts write them), by the ingestion that extracted the facts
(agent_memory/ingest/pipeline.py); a turn whose facts name no other person has none.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Iterable, Sequence

from agent_memory.core.entities import normalize_name
from agent_memory.core.records import MemoryItem, Triple
from agent_memory.index.triples.speaker import fact_subjects, names_in

TOLD_OF = "told_of"  # the metadata key
PERSON = "PERSON"  # the entity type both rule-based extractors give people (spaCy's and jieba's "nr")
# The relation that says who a person is ("My friend Melissa": Melissa is_a User's friend): naming the speaker on its
# other side, it still tells of the person, not of the speaker.
KIND_OF = "is_a"
# A possessive the extractor keeps on a subject ("Helen Shank's new manager is Daniel." gives "Helen Shank's").
_POSSESSIVE = re.compile(r"(?:['\u2019]s|的)$")


def people_told_of(items: Iterable[MemoryItem], triples: Sequence[Triple]) -> dict[str, list[str]]:
    """Item ID -> the people each turn of ``items`` tells of (sorted), from ``triples`` (those read from these
    items); turns that tell of nobody else are left out, and so is every item that is not a person's turn."""
    # A person's turns only (the user's, a named speaker's): an assistant's turn tells of whoever its task was about (a
    # script's characters, a biography's subject), not of the life the user told; its own prior ranks it.
    turns = {item.id: item for item in items if item.kind == "turn" and fact_subjects(item.metadata) is not None}
    own_names = {item_id: _own_names(item.metadata) for item_id, item in turns.items()}
    found: dict[str, set[str]] = defaultdict(set)
    of_the_speaker: dict[str, set[str]] = defaultdict(set)  # people a fact ties to the speaker: in their story
    for triple in triples:
        item = turns.get(triple.item_id)
        if item is None or str(triple.subject_type or "").upper() != PERSON:
            continue
        name = _POSSESSIVE.sub("", triple.subject.strip()).strip()
        own = own_names[item.id]
        if not name or normalize_name(name) in own or not _opens_a_sentence(name, item.text):
            continue
        if triple.relation != KIND_OF and _names_own(triple.object, own):
            of_the_speaker[item.id].add(name)
        found[item.id].add(name)
    # A turn split into parts (a long message) is one statement: each part carries whom the whole turn tells of, so
    # that a question naming any of them leaves every part in place (LongMemEval: a brief that tells of Andy and
    # Roger in its first part, of John and Ruth in its second).
    by_source: dict[tuple[str, str], set[str]] = defaultdict(set)
    for item_id, names in found.items():
        item = turns[item_id]
        by_source[(item.tenant, item.source_id)] |= names - of_the_speaker[item_id]
    return {item.id: sorted(names) for item in turns.values() if (names := by_source.get((item.tenant, item.source_id)))}


def _opens_a_sentence(name: str, text: str) -> bool:
    """Whether the person opens a sentence of the turn, where a statement's subject stands ("Helen Shank's new manager
    is Daniel.", 高卢最近开始练篮球。). Elsewhere the extractors' subject is mostly whom the speaker was with or met
    ("Went to Chiswick with Molly", "Bumped into Donna on the train today", 周末和叶柄去台北逛了逛: the speaker's own
    outing, its 我 dropped) or a word the tagger took for a name."""
    return re.search(rf"(?:^|[.!?。！？\n])[\s\"'“‘「]*{re.escape(name)}", text) is not None


def _names_own(side: str, own: set[str]) -> bool:
    """Whether a fact's other side names the speaker ("Marion took over as my boss": ``User's boss``; 杨笑问我):
    a fact of the speaker's life, whoever its subject."""
    words = normalize_name(side or "")
    return any(names_in(name, words) for name in own if name)


def _own_names(metadata: dict) -> set[str]:
    """The speaker's names, normalized: their label and the names their first person was read as."""
    names = [str(metadata.get("speaker") or ""), *(fact_subjects(metadata) or ())]
    return {normalize_name(name) for name in names if name.strip()}
