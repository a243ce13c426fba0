"""A request for advice reads what the user said of themselves.

"Can you suggest a recipe for dinner tonight?" is rightly answered by "I went vegetarian last spring", told
once, months ago, in passing: a standing preference, habit or constraint of the user's. The request shares no
word with it and little meaning (recipes meet every meal the user ever mentioned), so neither the keyword
route nor plain similarity to the question finds it among months of chatter. What sets it apart is what kind
of statement it is: the user telling what they are like (they eat, avoid, love, fear, can't, are on, have at
home), not what happened on a day.

So a question that asks for a recommendation, a suggestion or a plan (``asks_for_advice``) ranks every turn
candidate also by its greatest calibrated similarity to the configured examples of such statements
(``AdviceConfig.examples``), z-scored over the candidates and weighted by ``AdviceConfig.signal``
(agent_memory/retrieval/rerank/reranker.py). The examples are written in general words (naming no dish, condition or
other value a user would tell) in English and Chinese; a deployment adds its own. Any other question, and a question
about advice once given ("What did you recommend for…", 你上次推荐的…), is ranked as before.

No route of its own: a search by the question's vector plus the examples' mean found nothing the routes had not
(en_users_preferences and zh_users_preferences seed 12: with the route at blends 0.5, 1 and 2, the figures of the
signal alone, and with the route alone those of neither), since a user's statements are among the dense route's
candidates already.
"""

from __future__ import annotations

import re
import threading
from typing import Sequence

import numpy as np

from agent_memory.core.embedding_spaces import QueryVectors
from agent_memory.retrieval.config_parts import AdviceConfig

# A request in its form ("What should I…", "When's a good time…", "Could you plan…"), or by its words
# (recommend, tips, ideas …) where the question is the asker's own: in the first or second person, or a bare
# "Any tips…?". Alone, the words also ask about advice given ("What book did Caroline recommend?").
_ENGLISH_FORM = re.compile(
    r"\bshould I\b|\b(?:what|when|where|which)(?:'s| is) (?:the best|a good)\b"
    r"|\b(?:could|can|would|will) you (?:plan|put together|help me)\b",
    re.IGNORECASE)
_ENGLISH_WORDS = re.compile(r"\b(?:recommend\w*|suggest\w*|advice|advise|ideas?|tips?|picks?)\b", re.IGNORECASE)
_ENGLISH_OWN = re.compile(r"\b(?:I|me|my|we|us|our|you|your)\b|^\s*(?:got )?any\b", re.IGNORECASE)
# Chinese asks in its form ("点什么好？", "几点去比较合适？", "帮我排个…", "我该…") or by its words with a person (你推荐…).
_CHINESE_FORM = re.compile(
    r"点子|主意|有啥推荐|我[^？?。，,]{0,4}应?该|有没有[^？?。]{0,12}(?:推荐|适合)|帮我(?:排|安排|选|挑|想|规划)|怎么安排"
    r"|(?:什么|啥|哪儿|哪里|哪|几点|怎么)[^？?。]{0,12}(?:好|合适|方便)[吗吧呢啊]?[？?]?$")
_CHINESE_WORDS = re.compile(r"推荐|建议|办法|适合")
_CHINESE_OWN = re.compile(r"[我你您咱]")
# Asked of advice already given: a recall question, answered by the assistant's own turn. In Chinese, by a time
# before now (上次, 那次, 你之前 …; 之前 alone is also "before" a plan: 出发之前帮我安排), a 过, or 你推荐的 ("the one you
# recommended"); 你说 alone is also how a request asks ("你说我该去哪儿？").
_ADVICE_GIVEN = re.compile(
    r"\b(?:did|had) you (?:recommend|suggest|advise|pick|choose)|\byou (?:recommended|suggested|advised|picked|chose)\b"
    r"|\bwhat (?:was|were) (?:the|your) (?:recommendations?|suggestions?|advice|tips?|ideas?)\b"
    r"|上次|那次|那天|当时|你(?:之前|以前)|(?:之前|以前)你|你(?:推荐|建议|让我|叫我)[^？?]*过|你(?:推荐|建议|挑|选)的",
    re.IGNORECASE)


def asks_for_advice(question: str) -> bool:
    """Whether ``question`` asks for a recommendation, a suggestion or a plan now, rather than of the past."""
    text = question.strip()
    asks = (_ENGLISH_FORM.search(text) or (_ENGLISH_WORDS.search(text) and _ENGLISH_OWN.search(text))
            or _CHINESE_FORM.search(text)
            or (_CHINESE_WORDS.search(text) and _CHINESE_OWN.search(text)))
    return bool(asks) and _ADVICE_GIVEN.search(text) is None


class StandingExamples:
    """The configured examples of standing statements, each embedded once as a question is in every space
    (the first advice request pays for it; the examples of a config do not change)."""

    def __init__(self, embedder, config: AdviceConfig) -> None:
        self.embedder = embedder
        self.config = config
        self._vectors: list[QueryVectors] | None = None
        self._lock = threading.Lock()

    def vectors(self) -> list[QueryVectors]:
        with self._lock:
            if self._vectors is None:
                self._vectors = [self.embedder.embed_query(text) for text in self.config.examples]
            return self._vectors

    def similarity(self, vectors: np.ndarray, spaces: Sequence[str], langs: Sequence[str]) -> np.ndarray:
        """Each row's greatest calibrated similarity to one of the examples."""
        if not len(spaces):
            return np.zeros(0)
        return np.max([self.embedder.similarities(vectors, spaces, langs, ex) for ex in self.vectors()], axis=0)

