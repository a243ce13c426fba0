"""A user's statement among the best candidates followed to its later telling (agent_memory/retrieval/retold.py):
which turns anchor, which neighbour is read as told again, and where it is placed."""

from __future__ import annotations

import numpy as np

from agent_memory.core.errors import StoreError
from agent_memory.core.records import MemoryItem, ScoredItem, SearchFilter
from agent_memory.retrieval.retold import bring_later_tellings
from agent_memory.retrieval.types import Candidate, Decision


def item(source_id: str, text: str, stamp: str, speaker: str = "Lin", **metadata) -> MemoryItem:
    return MemoryItem(id=source_id, tenant="t", source_id=source_id, kind="turn", text=text,
                      metadata={"speaker": speaker, "timestamp": stamp, **metadata})


def candidate(it: MemoryItem, score: float) -> Candidate:
    return Candidate(item=it, rerank=score, final=score, vector=np.ones(3, dtype=np.float32), vector_space="minilm",
                     vector_lang="en")


class FakeVectors:
    """Answers each anchor's search with the neighbours given for it (cosines), nearest first."""

    def __init__(self, neighbours: dict[str, list[tuple[MemoryItem, float]]], fail: bool = False) -> None:
        self.neighbours = neighbours
        self.fail = fail
        self.asked: list[SearchFilter] = []
        self.current = ""

    def search_dense(self, query, flt: SearchFilter, limit: int) -> list[ScoredItem]:
        if self.fail:
            raise StoreError("the vector store is down")
        self.asked.append(flt)
        return [ScoredItem(item=i, score=s) for i, s in self.neighbours.get(self.current, [])][:limit]


class FakeServices:
    def __init__(self, vectors: FakeVectors) -> None:
        self.vectors = vectors


EARLIER = item("s/D3:5", "I went vegetarian last spring, and I'm sticking with it.", "2023-05-02T19:00:00")
LATER = item("s/D30:1", "Oh, I've been vegan for a few months now, feeling great on it.", "2024-02-02T19:00:00")
CHATTER = [item(f"s/D{i}:1", f"Had lunch at place {i} with Ana.", f"2023-0{i}-10T12:00:00") for i in range(6, 9)]


def ranked() -> list[Candidate]:
    return [candidate(EARLIER, 9.0)] + [candidate(c, 8.0 - i) for i, c in enumerate(CHATTER)]


def follow(services, candidates, *, anchors=1, flt=None) -> tuple[list[str], list[Decision]]:
    decisions: list[Decision] = []
    out = bring_later_tellings(services, candidates, flt or SearchFilter(tenant="t"), anchors=anchors, neighbours=5,
                               decisions=decisions)
    return [c.item.source_id for c in out], decisions


def services_for(neighbours: list[tuple[MemoryItem, float]], **kw) -> FakeServices:
    vectors = FakeVectors({EARLIER.id: neighbours}, **kw)
    vectors.current = EARLIER.id
    return FakeServices(vectors)


def test_a_later_telling_is_placed_right_after_its_anchor():
    services = services_for([(EARLIER, 1.0), (LATER, 0.55), (CHATTER[0], 0.30)])
    order, decisions = follow(services, ranked())
    assert order[:2] == ["s/D3:5", "s/D30:1"] and len(order) == 5
    assert [d.stage for d in decisions] == ["retold"] and decisions[0].target == LATER.id
    # The search reads the speaker's turns only, in the tenant, and keeps the caller's own filter.
    flt = services.vectors.asked[0]
    assert flt.kinds == ["turn"] and flt.metadata == {"speaker": "Lin"} and flt.tenant == "t"


def test_a_later_telling_among_the_candidates_moves_up_and_one_above_stays():
    services = services_for([(LATER, 0.55), (CHATTER[0], 0.30)])
    candidates = ranked() + [candidate(LATER, 1.0)]
    order, _ = follow(services, candidates)
    assert order == ["s/D3:5", "s/D30:1"] + [c.source_id for c in CHATTER]
    above = [candidate(LATER, 9.5)] + ranked()
    assert follow(services, above)[0] == [c.item.source_id for c in above]


def test_an_earlier_nearest_is_not_told_again():
    # The nearest was said before the anchor: the anchor is the later telling, and nothing is placed.
    before = item("s/D1:1", "I was vegetarian for a while.", "2023-01-02T19:00:00")
    assert follow(services_for([(before, 0.6), (LATER, 0.55)]), ranked())[1] == []


def test_repeats_other_people_and_other_speakers_are_skipped():
    repeat = item("s/D20:1", EARLIER.text, "2023-11-02T19:00:00")
    of_kate = item("s/D21:1", "Kate went vegan this year.", "2023-12-02T19:00:00", told_of=["Kate"])
    other = item("s/D22:1", "I've been vegan for years.", "2023-12-03T19:00:00", speaker="Ana")
    services = services_for([(repeat, 0.99), (of_kate, 0.8), (other, 0.7), (LATER, 0.5), (CHATTER[0], 0.2)])
    order, _ = follow(services, ranked())
    assert order[:2] == ["s/D3:5", "s/D30:1"]


def test_only_a_persons_own_turns_anchor():
    assistant = candidate(item("s/D3:6", "Noted: vegetarian.", "2023-05-02T19:00:00", speaker="assistant"), 9.5)
    of_kate = candidate(item("s/D4:1", "Kate asked whether I want to come.", "2023-05-03T19:00:00",
                             told_of=["Kate"]), 9.4)
    services = services_for([(LATER, 0.55), (CHATTER[0], 0.30)])
    order, _ = follow(services, [assistant, of_kate] + ranked())
    assert order[:4] == ["s/D3:6", "s/D4:1", "s/D3:5", "s/D30:1"]


def test_a_failing_store_leaves_the_ranking():
    services = services_for([(LATER, 0.55)], fail=True)
    order, decisions = follow(services, ranked())
    assert order == [c.item.source_id for c in ranked()] and decisions == []


def test_no_anchors_is_off():
    services = services_for([(LATER, 0.55), (CHATTER[0], 0.30)])
    assert follow(services, ranked(), anchors=0)[0] == [c.item.source_id for c in ranked()]
    assert services.vectors.asked == []
