"""Offline English triples from spaCy's en_core_web_sm dependency parse.

Subject-verb-object triples (nsubj/nsubjpass + verb lemma [+ particle/preposition] +
dobj/attr/pobj), copulas ("X is a Y" -> is_a), appositions ("X, the CEO of Y"), and
named entities (with dates, numbers and model identifiers such as ``X-200``). Leading
articles are always dropped from names so that "The Conversation" at a sentence start
and "the Conversation" mid-sentence become one entity.
"""

from __future__ import annotations

import functools
import itertools
from typing import Iterator, Sequence

from agent_memory.core.english_nlp import load_nlp
from agent_memory.core.extras import import_lazily
from agent_memory.core.records import Triple
from agent_memory.core.text import split_sentences
from agent_memory.index.triples.base import (
    GENERIC,
    MODEL_ID,
    Entity,
    check_batch,
    clean_name,
    dedupe_entities,
    dedupe_triples,
    is_model_id,
    map_label,
    without_number_sides,
)

# spaCy's default max_length is 1M chars; blocks well under it keep memory flat.
_BLOCK_CHARS = 20_000
_ARTICLES = frozenset({"the", "a", "an"})
_MOD_DEPS = frozenset({"compound", "amod", "nummod", "nmod", "quantmod", "poss"})
_SUBJ_DEPS = frozenset({"nsubj", "nsubjpass", "csubj"})
_INHERIT_SUBJ = frozenset({"conj", "xcomp", "advcl"})
_PERSON_PRONOUNS = frozenset({"he", "she", "him", "her"})
_NOUNISH = frozenset({"NOUN", "PROPN", "NUM", "PRON", "X", "SYM"})
_COOCCUR_TYPES_SKIPPED = frozenset({"NUMBER"})


@functools.lru_cache(maxsize=4096)
def _verb_lemma(word: str) -> str:
    """Lemma of a hyphenated verb: lemmatize the last part ("co-founded" -> "co-found")."""
    doc_type = import_lazily("spacy.tokens").Doc
    nlp = load_nlp()
    prefix, _, last = word.rpartition("-")
    doc = doc_type(nlp.vocab, words=[last])
    doc[0].pos_ = "VERB"
    doc[0].tag_ = "VBD"
    lemmas = nlp.get_pipe("lemmatizer").rule_lemmatize(doc[0])
    return f"{prefix}-{lemmas[0] if lemmas else last}".lower()


def _lemma(tok) -> str:
    # Both sides of the last hyphen: chat cuts words off ("And yup, I do-"), and an empty last
    # part is no word to lemmatize.
    prefix, _, last = tok.text.rpartition("-")
    if prefix.strip("-") and last and tok.pos_ in ("VERB", "AUX"):
        return _verb_lemma(tok.text.lower())
    return tok.lemma_.lower()


def _strip_articles(span_tokens: list) -> list:
    while span_tokens and (span_tokens[0].lower_ in _ARTICLES or span_tokens[0].is_punct):
        span_tokens = span_tokens[1:]
    while span_tokens and span_tokens[-1].is_punct:
        span_tokens = span_tokens[:-1]
    return span_tokens


class _Sentence:
    """Per-sentence state: entity lookups and the argument-phrase builder."""

    def __init__(self, sent, last_person: str | None):
        self.sent = sent
        self.last_person = last_person
        self.ent_of = {}
        for ent in sent.ents:
            for t in ent:
                self.ent_of[t.i] = ent

    def entity_of(self, ent) -> Entity | None:
        toks = _strip_articles(list(ent))
        if not toks:
            return None
        name = clean_name(ent.doc[toks[0].i : toks[-1].i + 1].text)
        typ = "PRODUCT" if is_model_id(name) else map_label(ent.label_)
        return Entity(name, typ) if name else None

    def phrase(self, tok) -> tuple[Entity | None, bool]:
        """The entity a head token stands for, and whether a pronoun was resolved."""
        if tok.pos_ == "PRON" or tok.tag_ in ("WDT", "WP", "PRP", "PRP$", "EX"):
            if tok.lower_ in _PERSON_PRONOUNS and self.last_person:
                return Entity(self.last_person, "PERSON"), True
            return None, False
        if tok.pos_ not in _NOUNISH and tok.pos_ != "ADJ":
            return None, False
        ent = self.ent_of.get(tok.i)
        if ent is not None:
            return self.entity_of(ent), False
        # Noun phrase: the head plus its compound/modifier subtrees on the left.
        start = tok.i
        for child in tok.lefts:
            if child.dep_ in _MOD_DEPS and not (child.dep_ == "poss" and child.pos_ == "PRON"):
                start = min(start, child.left_edge.i)
        toks = _strip_articles([t for t in tok.doc[start : tok.i + 1] if not (t.dep_ == "poss" and t.pos_ == "PRON")])
        if not toks:
            return None, False
        name = clean_name(tok.doc[toks[0].i : toks[-1].i + 1].text)
        if not name or not any(ch.isalnum() for ch in name):
            return None, False
        if is_model_id(tok.text):
            typ = "PRODUCT"
        elif tok.pos_ == "NUM" or tok.like_num:
            typ = "NUMBER"
        else:
            typ = GENERIC
        return Entity(name, typ), False


def _with_conjuncts(tok) -> list:
    return [tok, *tok.conjuncts]


def _subjects(verb) -> list:
    subs = [c for c in verb.children if c.dep_ in _SUBJ_DEPS]
    if subs:
        out = []
        for s in subs:
            # "the company that developed X": the relative pronoun stands for the head noun.
            if s.tag_ in ("WDT", "WP") and verb.dep_ == "relcl":
                out.append(verb.head)
            else:
                out.extend(_with_conjuncts(s))
        return out
    if verb.dep_ in _INHERIT_SUBJ and verb.head is not verb and verb.head.pos_ in ("VERB", "AUX"):
        return _subjects(verb.head)
    if verb.dep_ in ("acl", "relcl") and verb.head.pos_ in _NOUNISH:
        return [verb.head]  # "a film directed by Nolan": the film is the subject
    return []


# Quantifiers that name a part of something ("one of my fellow volunteers"): the fact is about the
# whole their "of" names; without an "of", "one" stands for nothing ("Maria bought one").
_PARTITIVES = frozenset("one ones some many most all each none several few both any either neither half "
                        "two three four five".split())


def _partitive_whole(tok):
    """The token a fact should name in place of ``tok``: the object of a quantifier's "of" ("one of the
    puppies" -> "puppies"), None for a bare "one", else ``tok`` itself. In 69 of 760 LoCoMo prompts a
    fact read "John — friend with → one"."""
    if isinstance(tok, Entity) or tok.lower_ not in _PARTITIVES:
        return tok
    for prep in tok.children:
        if prep.dep_ == "prep" and prep.lower_ == "of":
            for pobj in prep.children:
                if pobj.dep_ == "pobj":
                    return pobj
    return None if tok.lower_ in ("one", "ones") else tok


def _prep_objects(head) -> Iterator[tuple[str, object]]:
    for p in head.children:
        if p.dep_ in ("prep", "agent"):
            for pobj in p.children:
                if pobj.dep_ == "pobj":
                    for o in _with_conjuncts(pobj):
                        yield p.lower_, o


class EnglishExtractor:
    """Rule-based English triples over the spaCy parse."""

    def __init__(
        self, *, cooccurrence: bool = True, max_cooccurrence_pairs: int = 10, batch_size: int = 32, n_process: int = 1
    ):
        # n_process > 1 forks spaCy workers (nlp.pipe): worth it only with idle cores.
        self.n_process = n_process
        self.cooccurrence = cooccurrence
        self.max_cooccurrence_pairs = max_cooccurrence_pairs
        self.batch_size = batch_size

    # -- public API ------------------------------------------------------------------
    def extract(self, text: str, *, tenant: str, source_id: str, item_id: str) -> list[Triple]:
        return self.extract_many([text], tenant=tenant, source_ids=[source_id], item_ids=[item_id])[0]

    def extract_many(
        self, texts: Sequence[str], *, tenant: str, source_ids: Sequence[str], item_ids: Sequence[str]
    ) -> list[list[Triple]]:
        """Batch form (nlp.pipe): one triple list per text, in order."""
        check_batch(texts, source_ids, item_ids)
        out: list[list[Triple]] = [[] for _ in texts]
        last_person: dict[int, str | None] = {}
        for idx, doc in self._docs(texts):
            triples, last_person[idx] = self._doc_triples(doc, last_person.get(idx))
            for t in triples:
                t.tenant, t.source_id, t.item_id = tenant, source_ids[idx], item_ids[idx]
            out[idx].extend(triples)
        return [dedupe_triples(without_number_sides(ts)) for ts in out]

    def entities(self, text: str) -> list[Entity]:
        """Named entities, model ids and proper-noun chunks of the text."""
        found: list[Entity] = []
        for _, doc in self._docs([text]):
            for sent in doc.sents:
                found.extend(self._sentence_entities(_Sentence(sent, None)))
                in_ents = {t.i for e in sent.ents for t in e}
                for chunk in sent.noun_chunks:
                    if chunk.root.pos_ == "PROPN" and chunk.root.i not in in_ents:
                        toks = _strip_articles([t for t in chunk if t.pos_ != "PRON"])
                        if toks:
                            name = clean_name(doc[toks[0].i : toks[-1].i + 1].text)
                            if name:
                                found.append(Entity(name, GENERIC))
        return dedupe_entities(found)

    # -- internals -------------------------------------------------------------------
    def _docs(self, texts: Sequence[str]):
        nlp = load_nlp()

        def blocks() -> Iterator[tuple[str, int]]:
            for i, text in enumerate(texts):
                if not text or not text.strip():
                    continue
                if len(text) <= _BLOCK_CHARS:
                    yield text, i
                    continue
                buf: list[str] = []
                size = 0
                for s in split_sentences(text):
                    if size + len(s) > _BLOCK_CHARS and buf:
                        yield " ".join(buf), i
                        buf, size = [], 0
                    buf.append(s)
                    size += len(s) + 1
                if buf:
                    yield " ".join(buf), i

        for doc, idx in nlp.pipe(blocks(), as_tuples=True, batch_size=self.batch_size, n_process=self.n_process):
            yield idx, doc

    def _sentence_entities(self, ctx: _Sentence) -> list[Entity]:
        # Model ids tagged CARDINAL/FAC by the NER become PRODUCT through entity_of.
        ents = [e for e in (ctx.entity_of(ent) for ent in ctx.sent.ents) if e is not None]
        for m in MODEL_ID.finditer(ctx.sent.text):
            if is_model_id(m.group(0)):
                ents.append(Entity(m.group(0), "PRODUCT"))
        return dedupe_entities(ents)

    def _doc_triples(self, doc, last_person: str | None) -> tuple[list[Triple], str | None]:
        triples: list[Triple] = []
        for sent in doc.sents:
            ctx = _Sentence(sent, last_person)
            triples.extend(self._sentence_triples(ctx))
            for ent in sent.ents:
                if ent.label_ == "PERSON":
                    e = ctx.entity_of(ent)
                    if e is not None:
                        last_person = e.name
        return triples, last_person

    def _sentence_triples(self, ctx: _Sentence) -> list[Triple]:
        sent = ctx.sent
        evidence = sent.text.strip()
        out: list[Triple] = []

        def add(s_tok, rel: str, o_tok, conf: float) -> None:
            s_tok, o_tok = _partitive_whole(s_tok), _partitive_whole(o_tok)
            if s_tok is None or o_tok is None:
                return
            s, s_pron = ctx.phrase(s_tok) if not isinstance(s_tok, Entity) else (s_tok, False)
            o, o_pron = ctx.phrase(o_tok) if not isinstance(o_tok, Entity) else (o_tok, False)
            if s is None or o is None or not rel.strip():
                return
            if s_pron or o_pron:
                conf *= 0.8  # the pronoun guess may be wrong
            out.append(
                Triple(
                    subject=s.name, relation=rel.strip(), object=o.name, subject_type=s.type,
                    object_type=o.type, evidence=evidence, confidence=round(conf, 3),
                )
            )

        for tok in sent:
            # An apposition to the sentence's root is someone addressed, not described: "Nice one,
            # John!", "Congrats, Joanna!" (in 282 of 760 LoCoMo prompts, "Congrats — is_a → Joanna").
            if tok.dep_ == "appos" and tok.head.pos_ in _NOUNISH and tok.head.dep_ != "ROOT":
                self._apposition(tok, add)
            if tok.pos_ not in ("VERB", "AUX"):
                continue
            subjects = _subjects(tok)
            if not subjects:
                continue
            lemma = _lemma(tok)
            neg = "not " if any(c.dep_ == "neg" for c in tok.children) else ""
            prt = " ".join(c.lower_ for c in tok.children if c.dep_ == "prt")
            rel = f"{neg}{lemma}{' ' + prt if prt else ''}"
            for subj in subjects:
                if lemma == "be":
                    # A noun ("X is a Y", and "the CEO of Z") and an adjective with what it is of ("Ayesha is
                    # allergic to peanuts": without it such a sentence gave no fact, and told of nobody,
                    # index/told_of.py): each prepositional object of either is a fact.
                    for dep in ("attr", "acomp"):
                        for head in (c for c in tok.children if c.dep_ == dep):
                            for a in _with_conjuncts(head):
                                if dep == "attr":
                                    add(subj, f"{neg}is_a", a, 0.7)
                                for prep, pobj in _prep_objects(a):
                                    add(subj, f"{neg}{a.lemma_.lower()} {prep}", pobj, 0.7)
                for obj in (c for c in tok.children if c.dep_ in ("dobj", "dative", "oprd")):
                    for o in _with_conjuncts(obj):
                        add(subj, rel, o, 0.8)
                for prep, pobj in _prep_objects(tok):
                    add(subj, f"{rel} {prep}", pobj, 0.75)
        if self.cooccurrence:
            out.extend(self._cooccurrence(ctx, out, evidence))
        return out

    @staticmethod
    def _apposition(tok, add) -> None:
        head = tok.head
        # "the founder, John Smith": put the named one first.
        named = lambda t: t.pos_ == "PROPN" or bool(t.ent_type_)  # noqa: E731
        subj, desc = (tok, head) if named(tok) and not named(head) else (head, tok)
        add(subj, "is_a", desc, 0.7)
        for prep, pobj in _prep_objects(desc):
            add(subj, f"{desc.lemma_.lower()} {prep}", pobj, 0.7)

    def _cooccurrence(self, ctx: _Sentence, found: list[Triple], evidence: str) -> list[Triple]:
        """Named entities in one sentence not already linked: weak "related_to" edges."""
        ents = [e for e in self._sentence_entities(ctx) if e.type not in _COOCCUR_TYPES_SKIPPED][:6]
        linked = {frozenset((t.subject.lower(), t.object.lower())) for t in found}
        out = []
        for a, b in itertools.combinations(ents, 2):
            if len(out) >= self.max_cooccurrence_pairs:
                break
            if frozenset((a.name.lower(), b.name.lower())) in linked or a.name.lower() == b.name.lower():
                continue
            out.append(
                Triple(
                    subject=a.name, relation="related_to", object=b.name, subject_type=a.type,
                    object_type=b.type, evidence=evidence, confidence=0.3,
                )
            )
        return out
