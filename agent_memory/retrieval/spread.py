"""Evidence spread across sessions: aggregation questions read more sessions, fewer turns of each.

"What activities does Melanie partake in?", "How many hikes has Joanna been on?": the answer is
several short turns said in different sessions (issue 34: LoCoMo's multi-hop and open-domain
questions lose where the evidence is spread). The reranker's session signal lifts every turn of a
strong session together, so one session can fill the budget with its turns. For a question of
this form, each further passage of a session (or of a document) already ahead of it in the
ranking costs ``aggregation_spread`` of its score before packing: a session's best turn keeps its
place, its fifth competes with the best turns of other sessions.
"""

from __future__ import annotations

import re

from agent_memory.retrieval.types import Candidate

# The forms that ask for a collection: how many / how often, a plural "what <things> has X ...",
# "where has X ...", "did X and Y both ...", "list ...", Chinese "哪些" (which ones), a count of occasions, kinds
# or works (几场, 几次, 几种, 几本, 多少次: how many concerts, times, sports, books; 几个人 counts the people of one
# event, a single fact), and 都 before the question word (我都去过哪儿？, 都看过谁的现场？, 都学了些什么？: "all
# the places / people / things that").
_AGGREGATION = re.compile(
    r"\bhow many\b"
    r"|^\s*(what|which)\s+(?:[\w+/-]+\s+){0,3}?[\w+/-]{2,}s\s+(has|have|does|do|did|are|were)\b"
    r"|^\s*what\s+has\b|\bwhat are (some|all)\b"
    r"|^\s*where\s+(has|have)\b"
    r"|\bboth\b|\ball the\b|^\s*(list|name)\b|\bin what ways\b"
    r"|哪些|(?:几|多少)[场次种门本道部首篇趟回项样类届]|都[^，,。？?]{0,6}?(?:什么|谁|哪)",
    re.IGNORECASE,
)


def is_aggregation(question: str) -> bool:
    """Whether the question asks for a collection of facts rather than one fact."""
    return bool(_AGGREGATION.search(question))


def group_of(cand: Candidate) -> str:
    """A turn's session, else the passage's source: the unit whose repeats are spread."""
    session = cand.item.metadata.get("session_id")
    if cand.item.kind == "turn" and session:
        return f"session:{session}"
    return f"source:{cand.item.source_id}"


def spread_sessions(question: str, passages: list[Candidate], penalty: float) -> list[Candidate]:
    """``passages`` (best first) reordered for an aggregation question: the k-th passage of a group
    (k from 0) ranks by its score less ``penalty`` x k. Order within a group is kept; any other
    question, or a zero penalty, returns the list as it is."""
    if penalty <= 0 or len(passages) < 2 or not is_aggregation(question):
        return passages
    seen: dict[str, int] = {}
    keyed: list[tuple[float, int, Candidate]] = []
    for rank, cand in enumerate(passages):
        group = group_of(cand)
        k = seen.get(group, 0)
        seen[group] = k + 1
        keyed.append((cand.final - penalty * k, rank, cand))
    keyed.sort(key=lambda t: (-t[0], t[1]))
    return [cand for _, _, cand in keyed]
