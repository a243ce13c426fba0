"""Entity resolution: one canonical name per entity before triples reach the graph.

Three steps, in order of trust:
1. names equal after :func:`agent_memory.core.entities.normalize_name` (case, width,
   whitespace, quotes/punctuation at the ends) are one entity ("normalized");
2. user-supplied aliases map a name onto a canonical one ("alias");
3. near-identical names merge when their embeddings' cosine similarity reaches the
   threshold ("embedding"), unless their digits differ ("X-200" vs "X-300" embed
   alike but are different products).
Entities of different types never merge: ("Paris", GPE) and ("Paris", PERSON) stay apart.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from agent_memory.core.entities import normalize_name, normalize_type
from agent_memory.core.records import Triple

Embed = Callable[[list[str]], np.ndarray]
_DIGITS = re.compile(r"\d+")
# Dates and numbers are values: "March 2011" and "March 2012" embed alike but differ.
_NO_EMBEDDING_MERGE = frozenset({"date", "number"})


@dataclass(frozen=True)
class Merge:
    alias: str
    canonical: str
    reason: str  # "normalized" | "alias" | "embedding"
    similarity: float


@dataclass
class Resolution:
    """``canonical[(name, type)]`` is the name to store; ``merges`` says why."""

    canonical: dict[tuple[str, str], str] = field(default_factory=dict)
    merges: list[Merge] = field(default_factory=list)

    def name_for(self, name: str, type_: str = "entity") -> str:
        return self.canonical.get((name, type_), name)

    def report(self) -> list[tuple[str, str, str, float]]:
        return [(m.alias, m.canonical, m.reason, m.similarity) for m in self.merges]


class EntityResolver:
    def __init__(
        self,
        embed: Embed | None = None,
        *,
        threshold: float = 0.92,
        aliases: Mapping[str, str] | None = None,
    ):
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {threshold}")
        self.embed = embed
        self.threshold = threshold
        # alias (normalized) -> canonical surface name
        self.aliases = {normalize_name(a): c for a, c in (aliases or {}).items() if normalize_name(a)}

    def resolve(self, entities: Iterable[tuple[str, str]]) -> Resolution:
        """Resolve (name, type) mentions; repeated mentions count as frequency."""
        counts = Counter((n, t or "entity") for n, t in entities if n and normalize_name(n))
        res = Resolution()
        # 1. group by (normalized name, type); the most frequent (then longest) surface form wins.
        groups: dict[tuple[str, str], Counter] = {}
        for (name, typ), c in counts.items():
            groups.setdefault((normalize_name(name), normalize_type(typ)), Counter())[name] += c
        group_canon: dict[tuple[str, str], str] = {}
        group_weight: dict[tuple[str, str], int] = {}
        for key, names in groups.items():
            best = max(names, key=lambda n: (names[n], len(n)))  # ties: first seen
            group_canon[key] = best
            group_weight[key] = sum(names.values())
            for n in names:
                if n != best:
                    res.merges.append(Merge(n, best, "normalized", 1.0))
        # 2. aliases: a group whose normalized name is a known alias joins its canonical.
        redirect: dict[tuple[str, str], str] = {}
        for key in list(group_canon):
            target = self.aliases.get(key[0])
            if target and normalize_name(target) != key[0]:
                redirect[key] = target
                res.merges.append(Merge(group_canon[key], target, "alias", 1.0))
        # 3. embeddings, per type, most frequent groups first so they become the canonicals.
        if self.embed is not None:
            self._embedding_merges(group_canon, group_weight, redirect, res)
        for (name, typ) in counts:
            key = (normalize_name(name), normalize_type(typ))
            res.canonical[(name, typ)] = redirect.get(key, group_canon[key])
        return res

    def _embedding_merges(self, group_canon, group_weight, redirect, res: Resolution) -> None:
        pending = [k for k in group_canon if k not in redirect and k[1] not in _NO_EMBEDDING_MERGE]
        if len(pending) < 2:
            return
        names = [group_canon[k] for k in pending]
        vecs = np.asarray(self.embed(names), dtype=np.float32)
        if vecs.ndim != 2 or vecs.shape[0] != len(names):
            raise ValueError(f"embed() returned shape {vecs.shape} for {len(names)} names")
        vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        by_type: dict[str, list[int]] = {}
        for i, k in enumerate(pending):
            by_type.setdefault(k[1], []).append(i)
        for idxs in by_type.values():
            idxs.sort(key=lambda i: (-group_weight[pending[i]], -len(names[i])))
            canon_rows: list[int] = []
            for i in idxs:
                if canon_rows:
                    sims = vecs[canon_rows] @ vecs[i]
                    for j in np.argsort(-sims):
                        c = canon_rows[int(j)]
                        sim = float(sims[j])
                        if sim < self.threshold:
                            break
                        if _DIGITS.findall(names[i]) == _DIGITS.findall(names[c]):
                            redirect[pending[i]] = names[c]
                            res.merges.append(Merge(names[i], names[c], "embedding", round(sim, 4)))
                            break
                    if pending[i] in redirect:
                        continue
                canon_rows.append(i)

    def apply(self, triples: Sequence[Triple]) -> tuple[list[Triple], Resolution]:
        """Rewrite subjects/objects of a batch of triples to canonical names."""
        mentions = [(t.subject, t.subject_type) for t in triples] + [(t.object, t.object_type) for t in triples]
        res = self.resolve(mentions)
        out = [
            replace(
                t,
                subject=res.name_for(t.subject, t.subject_type or "entity"),
                object=res.name_for(t.object, t.object_type or "entity"),
            )
            for t in triples
        ]
        return out, res
