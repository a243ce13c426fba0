"""A turn's first person named: what its speaker says of themself becomes a fact about them.

"I moved to Paris" said by Maria holds the fact (Maria, moved to, Paris); read alone, its subject is "I",
which no extractor keeps as an entity, so a conversation's statements about its own speakers gave no
triples at all. Before extraction (never in the stored text), a turn whose speaker is a name (not a role:
``core/roles.py``) has its first-person words replaced by that name: I, me, myself → Maria, my / mine →
Maria's, I'm → Maria is; 我 → 王芳 (not 我们, "we"). What the turn says of others is left as it is.

The ``user`` role (user, human, 用户) is the tenant's user: one person, whose memory a tenant is. Their
"I live in Lisbon" is a fact about ``User`` (``用户`` in a Chinese sentence), and a question's own first
person ("where do I live now?", 我住哪) names them too, as does "the user" or 用户 in an agent's question
(:func:`user_subjects_asked`), so what an agent's user tells of their life is kept, dated and superseded as
a named speaker's is. The assistant's, the system's and a tool's first person stay unread: they speak of no
one whose facts a memory keeps. A tenant that holds several people's messages names them (a message's
``name``), and each is then their own subject.
"""

from __future__ import annotations

import re

from agent_memory.core.roles import is_role, speaker_role
from agent_memory.core.text import has_cjk

# Longest first: "I'm" must be read before "I". Curly and straight apostrophes both.
_APOSTROPHE = "['\u2019]"
_ENGLISH = [
    (re.compile(rf"\bI{_APOSTROPHE}m\b|\bI am\b"), "{name} is"),
    (re.compile(rf"\bI{_APOSTROPHE}ve\b"), "{name} has"),
    (re.compile(rf"\bI{_APOSTROPHE}ll\b"), "{name} will"),
    (re.compile(rf"\bI{_APOSTROPHE}d\b"), "{name} would"),
    (re.compile(r"\bI\b"), "{name}"),
    (re.compile(r"\b(?:[Mm]yself|me)\b"), "{name}"),
    (re.compile(r"\b(?:[Mm]y|[Mm]ine)\b"), "{name}'s"),
]
# "I live" named is "Maria live", which the tagger does not parse as a sentence ("Bob live in Madrid" gave
# related_to): the present verbs that state the facts a speaker's first person keeps (updates.py
# FUNCTIONAL_RELATIONS) and the auxiliaries agree with the name, after any of a few adverbs. Only these: a
# past tense ("I left", "I put") must stay as it is, and "lefts" would be a word no tagger knows.
_THIRD_PERSON = {"have": "has", "do": "does", "go": "goes", "don't": "doesn't", "don\u2019t": "doesn\u2019t"}
_PRESENT_VERBS = ("live", "reside", "stay", "move", "relocate", "settle", "work", "prefer", "own", "rent",
                  *_THIRD_PERSON)
_ADVERBS = "still|also|now|currently|really|just|actually|already|only|usually|mostly|even|never|always|often"
_I_VERB = re.compile(rf"\bI((?:\s+(?:{_ADVERBS}))*\s+)({'|'.join(re.escape(v) for v in _PRESENT_VERBS)})(?![\w'\u2019])")
# Someone else's words, quoted or reported after a colon ("My friend said: I live in Rome", 他说：“我住在罗马。”),
# keep their own first person: it is not the speaker's. Single quotes are apostrophes too often to count.
_QUOTED = re.compile(r'"[^"\n]*"|\u201c[^\u201d\n]*\u201d|\u300c[^\u300d\n]*\u300d|\u300e[^\u300f\n]*\u300f'
                     r"|(?:\b(?:say|says|said|tell \w+|tells \w+|told \w+|write|writes|wrote|ask|asks|asked)|[说道])"
                     r"\s*[:\uff1a][^\n.!?\u3002\uff01\uff1f]*[.!?\u3002\uff01\uff1f]?")
# 我 but not 我们 / 我俩 / 我家 ("we", "the two of us", "our home" read as a place of its own).
_CHINESE = re.compile(r"我(?![们俩家])")
_NAME = re.compile(r"[^\W\d_][\w .'\-\u00b7]{0,63}", re.UNICODE)
# The tenant's user, as a fact's subject: in English and in Chinese text (each extractor reads its own).
USER_SUBJECTS = ("User", "用户")
# "Me" and "Mine" capitalized are most often a title's words; "My" opens many a question.
_QUESTION_FIRST_PERSON = re.compile(rf"\b(?:I|I{_APOSTROPHE}(?:m|ve|ll|d)|me|mine|[Mm]y|[Mm]yself)\b|我(?![们俩])")
# An agent's own question about its user names them in the third person ("Where does the user live?",
# 用户住在哪); the compounds that name a thing of users (the user interface, 用户名, 用户数) do not.
_QUESTION_THE_USER = re.compile(
    r"\b[Tt]he user\b(?!s\b|\s+(?:interface|experience|manual|guide|base|account|id|name|input|data|agent|stor(?:y|ies))\b)"
    r"|用户(?![界名数体量群们协手端])")


def speaker_name(metadata: dict) -> str | None:
    """The turn's speaker when it is a person's name: not a role ("user", "助手"), not empty, not odd text."""
    speaker = str(metadata.get("speaker") or "").strip()
    if not speaker or is_role(speaker) or not _NAME.fullmatch(speaker):
        return None
    return speaker


def fact_subjects(metadata: dict) -> tuple[str, str] | None:
    """Whom a turn's first person names, in its English and its Chinese sentences: its speaker's name in
    both, or ``User`` / ``用户`` for the user role (each extractor reads its own sentences, so a mixed
    message's "I moved to Paris" is the user's as its 我 is); None for any other role or an odd label."""
    if speaker_role(metadata.get("speaker")) == "user":
        return USER_SUBJECTS
    name = speaker_name(metadata)
    return None if name is None else (name, name)


def one_user(triple, named: tuple[str, ...]):
    """``triple`` with the user's Chinese name (``用户``, which the Chinese extractor needs to read a
    sentence) stored as ``User``: one subject whichever language they spoke, so "I live in Berlin" and a
    later 我搬到上海了 are one person's homes, the later superseding the earlier. ``named``: the names the
    turn's first person was given (a 用户 the turn wrote itself is not among them, and stays)."""
    if USER_SUBJECTS[1] in named:
        for side in ("subject", "object"):
            if getattr(triple, side) == USER_SUBJECTS[1]:
                setattr(triple, side, USER_SUBJECTS[0])
    return triple


def names_in(name: str, text: str) -> bool:
    """Whether ``text`` names ``name`` itself: as a word where the name is written in letters that make words
    (Lin in "Lin's", not in "Lindberg"; Tim not in "Timothy"), anywhere in Chinese (王芳说), which has no spaces."""
    if has_cjk(name):
        return name in text
    return re.search(rf"(?<![^\W_]){re.escape(name)}(?![^\W_])", text) is not None


def asks_about_asker(question: str) -> bool:
    """Whether the question is asked in the first person ("Where do I live now?", 我住哪): about its asker."""
    return _QUESTION_FIRST_PERSON.search(question) is not None


# A question in the second person asks of the one it is put to, the assistant: what it said ("Which restaurant did
# you suggest for our anniversary?", "Can you remind me of the app you mentioned?", 你让我带什么书？).
_QUESTION_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself)\b|你|您", re.IGNORECASE)


def asks_of_assistant(question: str) -> bool:
    """Whether the question is asked in the second person: of what the assistant said."""
    return _QUESTION_SECOND_PERSON.search(question) is not None


def user_subjects_asked(question: str) -> list[str]:
    """The user's subjects when the question asks about the user: in the first person (its asker is the user)
    or as "the user" / 用户 (an agent asking about the person it serves)."""
    asked = asks_about_asker(question) or _QUESTION_THE_USER.search(question)
    return list(USER_SUBJECTS) if asked else []


def first_person_named(text: str, name: str, chinese_name: str | None = None) -> str:
    """``text`` with its speaker's first-person words replaced by ``name`` (see the module's note); its 我 by
    ``chinese_name`` when given (the user: ``User`` in English sentences, ``用户`` in Chinese ones). Quoted
    words are left as they are: their first person is whoever is quoted."""
    parts, start = [], 0
    for quoted in _QUOTED.finditer(text):
        parts += [_named(text[start:quoted.start()], name, chinese_name or name), quoted.group()]
        start = quoted.end()
    return "".join([*parts, _named(text[start:], name, chinese_name or name)])


def _named(text: str, name: str, chinese_name: str) -> str:
    text = _I_VERB.sub(lambda m: f"{name}{m[1]}{_THIRD_PERSON.get(m[2], m[2] + 's')}", text)
    for pattern, replacement in _ENGLISH:
        text = pattern.sub(replacement.format(name=name).replace("\\", "\\\\"), text)
    return _CHINESE.sub(chinese_name.replace("\\", "\\\\"), text)
