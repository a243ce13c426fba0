"""Offline Chinese triples from jieba POS tags and a few sentence patterns.

Entities are runs of noun-like tokens (jieba flags nr person, ns place, nt organisation,
nz other proper noun, eng Latin words) plus book titles 《…》, dates, numbers, model
identifiers and ASCII paths or identifiers found by regex before segmentation (jieba would cut
"2011年3月", "X-200" or "src/pay/mod_47.py" apart). Relations come from patterns — "A是B" (is_a), "A位于B" (located_in), "A由B开发/
发行/…" (developed_by, published_by, …), "A的B" (has) — and, with lower confidence,
from co-occurrence of named entities within a sentence (related_to).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from agent_memory.core.chinese_words import load_posseg
from agent_memory.core.records import Triple
from agent_memory.core.text import split_sentences
from agent_memory.index.triples.base import (
    GENERIC,
    MODEL_ID,
    Entity,
    clean_name,
    dedupe_entities,
    dedupe_triples,
    without_number_sides,
)

# An ASCII path or identifier: a run of letters, digits and ``_ . / -`` holding a letter, and a ``/`` or ``_``
# between two of them, a ``.`` before a small letter, or a ``/`` first (src/pay/mod_47.py, read_file,
# vendor/billing_42/, config.yaml, /etc/hosts). jieba cuts one at every joiner (src / pay / mod_47 / py), and each
# piece became an entity of its own. A dot before a capital is a sentence's or an initial's with the space left
# out, as Chinese text often has it ("Army.Its", "Dr.Virginia Apgar", "Andrew W.Mellon"); a dotted number or
# version ("3.5", "GPT-3.5") is no path either (numbers and model IDs read them as before), nor a run beside a
# letter of another spaced script ("Kök Orda/Kük Urda": Latin-1, Latin Extended, Greek, Cyrillic), nor capitalised
# words between slashes, a name's spellings ("Diocese of Yingkou/Yingkow").
_PATH = (r"(?<![A-Za-z0-9_./~\u00c0-\u024f\u0370-\u052f-])(?=[A-Za-z0-9_./~-]*[A-Za-z])"
         r"(?![A-Z][a-z]+(?:/[A-Z][a-z]+)+(?![A-Za-z0-9_/~]|[.-][A-Za-z0-9]))"  # a name's spellings
         r"(?=[~.]*/|[A-Za-z0-9_./~-]*?[A-Za-z0-9_](?:[/_][A-Za-z0-9]|\.[a-z]))"
         # The run whole or not at all (a lookahead is atomic): never "src" of "src/café".
         r"(?=(?P<path_run>[./~]*[A-Za-z0-9_]+(?:(?:[/-]+|\.(?=[a-z0-9_]))[A-Za-z0-9_]+)*/?))(?P=path_run)"
         r"(?![A-Za-z0-9_\u00c0-\u024f\u0370-\u052f])")
# Spans cut out before segmentation, with the flag their token gets.
_SPECIAL = re.compile(
    r"(?P<title>《[^》]{1,40}》)"
    r"|(?P<date>(?:\d{1,4}|[一二三四五六七八九〇零十]{2,4})年(?:\d{1,2}月)?(?:\d{1,2}[日号])?|\d{1,2}月\d{1,2}[日号])"
    r"|(?P<path>" + _PATH + r")"
    r"|(?P<model>" + MODEL_ID.pattern + r")"
    r"|(?P<num>\d+(?:[.,]\d+)*%?)"
)
_PROPER = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz", "eng", "title", "model", "date", "path"})
# Flags of the spans cut out before segmentation: each is an entity of its own, never part of a longer noun run.
_STANDALONE = ("title", "date", "num", "model", "path")
_NOUNISH = _PROPER | frozenset({"n", "j", "vn", "ng", "num", "b"})
_CLAUSE_BREAK = frozenset("，,；;：:、（）()“”\"'!！?？。")
_ORG_SUFFIX = ("公司", "集团", "大学", "学院", "银行", "俱乐部", "学校", "中学", "小学", "协会", "委员会", "政府", "研究所", "医院")
_PLACE_SUFFIX = ("市", "省", "县", "州", "国", "区", "镇", "村", "岛", "山", "河", "湖")
# "由B<verb>": the verb names the relation, read from A's side.
_BY_VERBS = {
    "开发": "developed_by", "研发": "developed_by", "发行": "published_by", "出版": "published_by",
    "运营": "operated_by", "经营": "operated_by", "创立": "founded_by", "创办": "founded_by",
    "成立": "founded_by", "建立": "founded_by", "制作": "produced_by", "出品": "produced_by",
    "设计": "designed_by", "导演": "directed_by", "编写": "written_by", "撰写": "written_by",
    "主演": "starring", "收购": "acquired_by", "拥有": "owned_by", "管理": "managed_by",
}
# Verbs that only make sense in the "由B<verb>" frame or carry no relation of their own.
_BY_VERBS_ONLY_PASSIVE = frozenset({"是", "有", "为", "称为", "基于", "可以", "可能", "证实"})
_LOCATED = frozenset({"位于", "坐落于", "地处", "坐落在", "位在"})
# What may stand between a name and the 的 closing its relative clause: time words, adverbs, verbs and
# adjectives ("平时最喜欢", "常去", "最爱"); a noun or preposition between them ends the pattern.
_RELATIVE_FLAGS = frozenset({"t", "d", "v", "vd", "vi", "a", "ad"})




@dataclass
class _Tok:
    word: str
    flag: str


def tokenize(sentence: str) -> list[_Tok]:
    """POS-tagged tokens with titles, dates, numbers, model ids and paths kept whole."""
    pseg = load_posseg()
    out: list[_Tok] = []
    pos = 0
    for m in _SPECIAL.finditer(sentence):
        if m.start() > pos:
            out.extend(_Tok(w, f) for w, f in pseg.lcut(sentence[pos : m.start()]))
        out.append(_Tok(m.group(0), m.lastgroup or "n"))
        pos = m.end()
    if pos < len(sentence):
        out.extend(_Tok(w, f) for w, f in pseg.lcut(sentence[pos:]))
    return _verb_complements_joined(out)


# Directional complements: jieba cuts 王芳搬到上海 as 搬到 but 用户搬到上海 as 搬 / 到 (its HMM reads the
# noun before the verb differently), and the relation would be 到, which no functional relation lists.
_DIRECTIONAL = frozenset({"到", "去", "往", "进", "回"})


def _verb_complements_joined(toks: list[_Tok]) -> list[_Tok]:
    """A one-character verb and the directional complement jieba cut from it, one verb again (搬 + 到 → 搬到)."""
    out: list[_Tok] = []
    for tok in toks:
        if (out and tok.word in _DIRECTIONAL and tok.flag == "v" and out[-1].flag == "v"
                and len(out[-1].word) == 1 and out[-1].word not in _DIRECTIONAL):
            out[-1] = _Tok(out[-1].word + tok.word, "v")
        else:
            out.append(tok)
    return out


@dataclass
class _Phrase:
    start: int  # token index range [start, end)
    end: int
    entity: Entity
    proper: bool


def _entity_type(toks: list[_Tok]) -> str:
    head = toks[-1]
    name = "".join(t.word for t in toks)
    if len(toks) == 1 and head.flag in ("title", "model", "date", "num"):
        return {"title": "WORK_OF_ART", "model": "PRODUCT", "date": "DATE", "num": "NUMBER"}[head.flag]
    if any(t.flag == "nt" for t in toks) or name.endswith(_ORG_SUFFIX):
        return "ORG"
    if head.flag in ("nr", "nrfg", "nrt") and all(t.flag.startswith("nr") for t in toks):
        return "PERSON"
    if head.flag == "ns" or (name.endswith(_PLACE_SUFFIX) and any(t.flag == "ns" for t in toks)):
        return "GPE"
    return GENERIC


def _make_phrase(toks: list[_Tok], start: int, end: int) -> _Phrase | None:
    part = toks[start:end]
    name = clean_name("".join(t.word for t in part).strip())
    if not name or not any(ch.isalnum() for ch in name):
        return None
    proper = any(t.flag in _PROPER for t in part)
    return _Phrase(start, end, Entity(name, _entity_type(part)), proper)


def _nounish(tok: _Tok) -> bool:
    # jieba tags 运营/开发 as verbal nouns (vn) too; as pattern verbs they end a phrase.
    return tok.flag in _NOUNISH and tok.word not in _BY_VERBS and tok.word not in _LOCATED


def phrases(toks: list[_Tok]) -> list[_Phrase]:
    """Maximal runs of noun-like tokens, split where a place name modifies another proper
    noun ("韩国Nexon" -> 韩国 | Nexon) so the organisation is its own entity."""
    out: list[_Phrase] = []
    i = 0
    while i < len(toks):
        if not _nounish(toks[i]):
            i += 1
            continue
        j = i
        run_start = i
        while j < len(toks) and (
            _nounish(toks[j]) or (toks[j].word == " " and j + 1 < len(toks) and toks[j + 1].flag == "eng")
        ):
            if j > run_start and toks[j - 1].flag == "ns" and toks[j].flag in ("eng", "nr", "nt", "nz", "model"):
                p = _make_phrase(toks, run_start, j)
                if p:
                    out.append(p)
                run_start = j
            if toks[j].flag in _STANDALONE and j > run_start:
                p = _make_phrase(toks, run_start, j)  # special tokens stand alone
                if p:
                    out.append(p)
                run_start = j
            if toks[j].flag in _STANDALONE:
                p = _make_phrase(toks, j, j + 1)
                if p:
                    out.append(p)
                run_start = j + 1
            j += 1
        if j > run_start:
            p = _make_phrase(toks, run_start, j)
            if p:
                out.append(p)
        i = max(j, i + 1)
    return out


# Prepositions whose object does what the verb says: the agent of a passive ("被微软收购"), of "由B<verb>", and who
# does it with the subject ("与家康一同穿越伊贺": 家康 crossed it too).
_AGENT_PREPOSITIONS = frozenset({"被", "由", "与", "和", "跟", "同"})
# What may stand between a subject and the preposition opening its verb's phrase: adverbs ("张三也在北京学习").
_BEFORE_PREPOSITION = frozenset({"d", "ad"})


def _governed(toks: list[_Tok], ps: list[_Phrase], phrase: _Phrase) -> bool:
    """Whether ``phrase`` is a preposition's object ("对src/pay/mod_3.py", "在北京大学", "把文件"): the noun run it
    ends, with the measure words before it, follows a preposition other than an agent's. Such an object is where,
    to what or with what the verb is done, never its subject: "我将对src/pay/mod_3.py运行list_dir" read
    "src/pay/mod_3.py — 运行 → list_dir", "张三在北京大学学习计算机" "北京大学 — 学习 → 计算机"."""
    k = phrase.start
    while True:
        before = [p for p in ps if p.end == k and p.start < k]
        if not before:
            break
        k = before[-1].start
    while k > 0 and toks[k - 1].flag in ("m", "q", "mq"):
        k -= 1
    return k > 0 and toks[k - 1].flag == "p" and toks[k - 1].word not in _AGENT_PREPOSITIONS


class ChineseExtractor:
    """Pattern and co-occurrence triples for Chinese text."""

    def __init__(self, *, cooccurrence: bool = True, max_cooccurrence_pairs: int = 10):
        self.cooccurrence = cooccurrence
        self.max_cooccurrence_pairs = max_cooccurrence_pairs

    def extract(self, text: str, *, tenant: str, source_id: str, item_id: str) -> list[Triple]:
        out: list[Triple] = []
        for sentence in split_sentences(text or ""):
            for t in self._sentence_triples(sentence):
                t.tenant, t.source_id, t.item_id = tenant, source_id, item_id
                out.append(t)
        return dedupe_triples(without_number_sides(out))

    def entities(self, text: str, *, include_generic: bool = False) -> list[Entity]:
        found: list[Entity] = []
        for sentence in split_sentences(text or ""):
            found.extend(p.entity for p in phrases(tokenize(sentence)) if p.proper or include_generic)
        return dedupe_entities(found)

    def _sentence_triples(self, sentence: str) -> list[Triple]:
        toks = tokenize(sentence)
        ps = phrases(toks)
        evidence = sentence.strip()
        out: list[Triple] = []

        def before(i: int) -> _Phrase | None:
            """Nearest phrase ending at or before token i (earlier clauses included)."""
            cands = [p for p in ps if p.end <= i]
            return cands[-1] if cands else None

        def after(i: int, last_piece: bool = True) -> _Phrase | None:
            """The noun run starting right after token i (skipping measure words); its head."""
            k = i + 1
            while k < len(toks) and toks[k].flag in ("m", "q", "mq", "d", "uj", "p") and toks[k].word not in _CLAUSE_BREAK:
                if toks[k].flag == "p" and toks[k].word not in ("在", "于"):
                    break
                k += 1
            run = [p for p in ps if p.start >= k]
            if not run or run[0].start != k:
                return None
            chosen = run[0]
            for p in run[1:]:  # adjacent pieces of one run: the last one is the head
                if p.start == chosen.end and last_piece:
                    chosen = p
                else:
                    break
            return chosen

        def add(s: _Phrase | None, rel: str, o: _Phrase | None, conf: float) -> None:
            if s is None or o is None or s.entity.name == o.entity.name:
                return
            out.append(
                Triple(
                    subject=s.entity.name, relation=rel, object=o.entity.name, subject_type=s.entity.type,
                    object_type=o.entity.type, evidence=evidence, confidence=conf,
                )
            )

        for i, tok in enumerate(toks):
            w = tok.word
            if w == "是":
                obj = self._copula_object(toks, ps, i)
                add(before(i), "is_a", obj, 0.6)
            elif w in _LOCATED:
                add(before(i), "located_in", after(i), 0.7)
            elif w == "由":
                agent = after(i)
                if agent is None:
                    continue
                k = agent.end
                rels = []
                while k < len(toks) and toks[k].word not in _CLAUSE_BREAK and len(rels) < 4:
                    if toks[k].word in _BY_VERBS:
                        rels.append(_BY_VERBS[toks[k].word])
                    elif toks[k].flag not in ("p", "c", "d", "v", "ul"):
                        break
                    k += 1
                for rel in rels:
                    add(before(i), rel, agent, 0.7)
            elif tok.flag == "v" and w not in _BY_VERBS_ONLY_PASSIVE and not (i + 1 < len(toks) and toks[i + 1].word == "的"):
                # Plain SVO inside one clause: "该公司发布了X-200" (subject: nearest non-date
                # phrase of the same clause; dates/numbers are adverbials here).
                subj = self._clause_subject(toks, ps, i)
                k = i + 1
                while k < len(toks) and toks[k].flag in ("ul", "uz", "ug"):
                    k += 1
                obj = after(k - 1)
                if subj is not None and obj is not None and obj.entity.type not in ("DATE", "NUMBER"):
                    add(subj, w, obj, 0.5)
            elif w == "的" and i > 0:
                owner = before(i)
                if owner is not None and owner.end == i and owner.proper:
                    add(owner, "has", after(i, last_piece=False), 0.5)
                else:  # "李希烈最喜欢的食物": the N a name's short verb phrase qualifies is the name's
                    add(self._relative_owner(toks, ps, i), "has", after(i, last_piece=False), 0.4)
        if self.cooccurrence:
            out.extend(self._cooccurrence(ps, out, evidence))
        return out

    @staticmethod
    def _clause_subject(toks: list[_Tok], ps: list[_Phrase], i: int) -> _Phrase | None:
        """The verb at ``i``'s subject: the nearest phrase of its clause before it that is no date or number, nor a
        preposition's object (``_governed``), and when such an object stands between them, the one right before
        its preposition."""
        start = i
        while start > 0 and toks[start - 1].word not in _CLAUSE_BREAK:
            start -= 1
        cands = [p for p in ps if p.start >= start and p.end <= i and p.entity.type not in ("DATE", "NUMBER")]
        free = [p for p in cands if not _governed(toks, ps, p)]
        if not free or free[-1] is cands[-1]:
            return free[-1] if free else None
        # A preposition's phrase stands between: the subject is the phrase that opens it ("张三在北京大学学习"), not
        # one further back ("本能寺之变发生后与家康一同穿越伊贺" is no fact of 本能寺).
        k = free[-1].end
        while k < i and toks[k].flag in _BEFORE_PREPOSITION:
            k += 1
        return free[-1] if toks[k].flag == "p" else None

    @staticmethod
    def _relative_owner(toks: list[_Tok], ps: list[_Phrase], i: int) -> _Phrase | None:
        """The name that opens a relative clause ending in the 的 at ``i``, when only time words, adverbs,
        verbs and adjectives stand between them ("李希烈最喜欢的", "黄钧岳最爱的"): the clause says
        something of that name."""
        named = [p for p in ps if p.end <= i and p.proper]
        if not named:
            return None
        owner = named[-1]
        between = toks[owner.end:i]
        if not between or any(t.flag not in _RELATIVE_FLAGS or t.word in _CLAUSE_BREAK for t in between):
            return None
        return owner

    @staticmethod
    def _copula_object(toks: list[_Tok], ps: list[_Phrase], i: int) -> _Phrase | None:
        """"A是一种具苦味的物质": the head noun is the last phrase of the clause after 是."""
        end = i + 1
        while end < len(toks) and toks[end].word not in _CLAUSE_BREAK:
            end += 1
        cands = [p for p in ps if p.start > i and p.end <= end]
        return cands[-1] if cands else None

    def _cooccurrence(self, ps: list[_Phrase], found: list[Triple], evidence: str) -> list[Triple]:
        ents = dedupe_entities(p.entity for p in ps if p.proper and p.entity.type != "NUMBER")[:6]
        linked = {frozenset((t.subject, t.object)) for t in found}
        out: list[Triple] = []
        for a, b in itertools.combinations(ents, 2):
            if len(out) >= self.max_cooccurrence_pairs:
                break
            if frozenset((a.name, b.name)) in linked:
                continue
            out.append(
                Triple(
                    subject=a.name, relation="related_to", object=b.name, subject_type=a.type,
                    object_type=b.type, evidence=evidence, confidence=0.3,
                )
            )
        return out
