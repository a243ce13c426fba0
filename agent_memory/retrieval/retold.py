"""Told again: a user's statement that the best candidates hold is followed forward in time.

A user tells a standing fact and later tells it again with another value: "I went vegetarian last spring" in
March, "I've been vegan for a few months now" in August. A request that the fact decides ("Can you suggest a
recipe for dinner tonight?") finds one of the two by meaning; which one ranks higher is chance (the words each
is told in), and the later often falls out of a small prompt while the earlier is in it
(``*_users_preferences_changed``: in a fifth of the questions at 500 tokens). What the reader needs is the later.

So for each of the best ``anchors`` turns of a person that tell of nobody else, the same speaker's turns nearest to
it in meaning are searched (the anchor's own stored vector, in its own space); the nearest, past verbatim repeats and
turns that tell of others (叶背问我要不要一起去参加订婚宴, "Ye Bei asked whether I'd come to the engagement party",
told again with every party), is placed right after the anchor when it was told on a later day. The earlier stays
(the change is half the answer, and when both hold, as a second allergy does, both are). Where the nearest was told
earlier, the anchor is the later telling itself, and nothing moves. Only for a request for advice by default
(``questions``), where what the user is like decides the answer; a question about an event keeps its ranking (with
every question following, LoCoMo read the same figures: docs/journal/2026-12-08-told-again.md).

A guard was tried and dropped: the nearest had to stand a calibrated deviation nearer than the next, to tell a
telling from one of many alike. It cost most of the gain (the other people's statements of the same domain stand
close behind a true telling) and saved little of the cost.
"""

from __future__ import annotations

import dataclasses
from datetime import date

from agent_memory.core.errors import StoreError
from agent_memory.core.records import MemoryItem
from agent_memory.core.roles import speaker_role
from agent_memory.index.told_of import TOLD_OF
from agent_memory.retrieval.types import Candidate, Decision
from agent_memory.retrieval.when import said_on


def _of_themself(item) -> bool:
    """A person's turn that tells of nobody else (``told_of``, agent_memory/index/told_of.py): 叶背问我要不要一起去参加
    订婚宴 tells of 叶背, and is told again with every party. (The English rules read no fact of "Kate asked whether I
    want to come to the party", so it passes: docs/journal/2026-12-08-told-again.md.)"""
    speaker = item.metadata.get("speaker")
    return (item.kind == "turn" and bool(speaker) and speaker_role(speaker) != "assistant"
            and not item.metadata.get(TOLD_OF))


def _anchor(cand: Candidate) -> bool:
    return _of_themself(cand.item) and cand.vector is not None and bool(cand.vector_space)


def _told_again(hits, day: date) -> MemoryItem | None:
    """The anchor's nearest turn (``hits``: the speaker's own, nearest first), if it was said on a later day."""
    if not hits:
        return None
    when = said_on(hits[0].item)
    return hits[0].item if when is not None and when > day else None


def bring_later_tellings(services, ranked: list[Candidate], flt, *, anchors: int, neighbours: int,
                         decisions: list[Decision]) -> list[Candidate]:
    """``ranked`` (best first) with, after each of its first ``anchors`` turns of a person that tell of nobody else,
    the same speaker's turn nearest to it in meaning (read among its ``neighbours`` nearest, past verbatim repeats and
    turns that tell of others) when that turn was said on a later day: moved up if it was a candidate, added if not."""
    if not anchors or not neighbours:
        return ranked
    out = list(ranked)
    by_id = {c.item.id: c for c in out}
    placed: set[str] = set()
    seen = 0
    for cand in ranked:
        if seen >= anchors:
            break
        if not _anchor(cand) or cand.item.id in placed:
            continue
        seen += 1
        day = said_on(cand.item)
        if day is None:
            continue
        speaker = cand.item.metadata["speaker"]
        metadata = dict(flt.metadata or {})
        metadata.setdefault("speaker", speaker)
        near = dataclasses.replace(flt, kinds=["turn"], metadata=metadata)
        try:
            hits = services.vectors.search_dense({cand.vector_space: cand.vector}, near, neighbours + 1)
        except StoreError:
            continue
        # A verbatim repeat tells nothing new (and de-duplication would drop it).
        near_hits = [h for h in hits if h.item.id != cand.item.id and h.item.text.strip() != cand.item.text.strip()
                     and h.item.metadata.get("speaker") == speaker and _of_themself(h.item)]
        later = _told_again(near_hits, day)
        if later is None or later.id in placed:
            continue
        ids = [c.item.id for c in out]
        follower = by_id.get(later.id) or Candidate(item=later)
        if later.id in ids:
            if ids.index(later.id) < ids.index(cand.item.id):
                continue  # ranked above its anchor already
            del out[ids.index(later.id)]
            ids.remove(later.id)
        follower.final = cand.final
        follower.route_scores["retold"] = 1.0
        out.insert(ids.index(cand.item.id) + 1, follower)
        placed.add(later.id)
        decisions.append(Decision("retold", later.id, "placed", f"{later.source_id}: {speaker}'s nearest turn to "
                                  f"{cand.item.source_id} ({day:%Y-%m-%d}), a best candidate, told on a later day: "
                                  "placed right after it"))
    return out
