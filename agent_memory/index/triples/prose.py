"""What the graph reads of a text: its prose. Of an archived tool turn (conversation/tool_turns.py), not its
payloads; of any other text, not its code.

A tool turn holds the call's words, its arguments (JSON) and its results whole: code, listings, JSON, logs,
stack traces. Read as they are, they made the graph an index of code fragments: on the working-memory
benchmark's coding loops (benchmarks/bench_working_memory.py) 99.9% of the English tool turns' triples had a
side such as ``handler_9(req`` or ``limit=923``, and every triple of the Chinese calls' words a piece of a
path (``src``, ``py``, ``mod``: jieba cuts ``src/pay/mod_47.py``). What a later question asks of a tool
turn is a fact stated in words: "the retry loop is implemented in src/net/backoff_loop_48.py", "p95 latency
226.4 ms". So the extractor reads, of a tool turn:

- the words of its messages (the call's own text), but for their lines of code (:func:`reads_as_code`);
- of a call's arguments and of a result, the lines that read as prose (:func:`reads_as_prose`), and of a
  JSON line the string values that do (never its keys);

and a triple read from it is kept unless a side is code (brackets, ``=``, quotes) or a piece of a longer
path or identifier of the text read (:func:`kept`). The turn itself is stored and searched whole: this
decides only what becomes a fact.

Any other text, a plain turn or a document's chunk, is read but for its code (:func:`plain_prose`): its fenced
blocks and its sentences of code, judged by the same tokens with a stricter count, since a prose sentence holds
an initial's dots or a fraction as often as code does; a text without code is read as written.
"""

from __future__ import annotations

import json
import re

from agent_memory.conversation.messages import readable_parts
from agent_memory.core.text import CJK_RANGES, UNSPACED_RANGES, split_sentences

# A line is prose when it holds at least this many words, and more than this many times as many words as
# code tokens (``def handler_9(req): return process(req, limit=923)``: 2 words, 3 code tokens).
PROSE_MIN_WORDS = 3
PROSE_WORDS_PER_CODE_TOKEN = 2
# In a plain turn or a document, a sentence is code only with at least this many code tokens: one or two are as
# often an initial's or an abbreviation's dots ("J.K. Rowling", split after "J.K."; "MrJims.Pizza is a U.S."), a
# fraction ("146+1/2 lb , i.e.") or a smiley as code. (HotpotQA's first 250 questions' paragraphs: none of their
# sentences reads as code with 3; with 2, five did, all prose.)
PLAIN_MIN_CODE_TOKENS = 3
# Characters of scripts written without spaces count one word per this many (as core/text.py estimates).
UNSPACED_CHARS_PER_WORD = 2

_UNSPACED = re.compile(f"[{CJK_RANGES}\u3041-\u30ff{UNSPACED_RANGES}]")
_EDGE_PUNCTUATION = ".,;:!?\"'()[]{}<>“”‘’«»…《》「」『』【】〈〉（）"
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
# Code inside a token: brackets, assignment, quotes, a path or a dotted or snake_case name.
_CODE = re.compile(r"[(){}\[\]=<>;|$`\"\\]|_|/|::|->|[^\W\d_]\.[^\W\d_]")
# Keywords of programming languages that are no English words (or hardly are, in a tool's output): code tokens.
_KEYWORDS = frozenset({"def", "elif", "lambda", "return", "const", "var", "func", "fn", "impl", "struct", "self",
                       "None", "null", "nil", "async", "await", "printf", "println"})
# A line that ends opening a block or a call is code even when its tokens are words ("for item in items:").
_OPENS_BLOCK = (":", "{", "(", "[", ",", ";", "\\")
# A Python or Java stack frame, a long listing's line (its mode first): words around a path, never a fact.
_FRAME = re.compile(r'^\s*(?:File ".*", line \d+|at [\w$.]+\(.*\)$|[-dlcbps][-rwxsStT]{9}[@+.]?\s)')
# A fenced code block's opening line (Markdown: up to three spaces, then three or more backticks or tildes).
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
# A JSON member: "key": "string value" (the value's escapes kept for json.loads).
_JSON_MEMBER = re.compile(r'"(?:[^"\\]|\\.)*"\s*:\s*("(?:[^"\\]|\\.)*")?')
# A side of a triple that is code: brackets, assignment, quotes, a call.
_CODE_NAME = re.compile(r"[(){}\[\]=<>;`\"\\]|\w\(")
# What joins the pieces of a path or identifier ("src/net/x.py", "list_dir", "a.b.c", "x-200").
_JOINERS = "/\\_.-:"


def prose_of(text: str) -> str:
    """The lines of an archived tool turn's text that the extractor reads, one a line."""
    kept: list[str] = []
    for part, line in readable_parts(text):
        if part == "words":  # the call's own text: all of it but its code
            if not reads_as_code(line):
                kept.append(line)
            continue
        values = json_string_values(line)
        if values is not None:
            kept += [v for v in values if reads_as_prose(v)]
        elif reads_as_prose(line):
            kept.append(line)
    return "\n".join(line for line in kept if line.strip())


def json_string_values(line: str) -> list[str] | None:
    """The string values of a line holding JSON members (``{"path": "a.py", "body": "..."}``); None when it
    holds none. Keys and other values are left out."""
    members = list(_JSON_MEMBER.finditer(line))
    if not members:
        return None
    values = []
    for member in members:
        if member.group(1):
            try:
                values.append(json.loads(member.group(1)))
            except ValueError:  # a cut escape: the raw text between the quotes
                values.append(member.group(1)[1:-1])
    return values


def reads_as_prose(line: str) -> bool:
    """A line of words: at least ``PROSE_MIN_WORDS`` of them, and not code (:func:`reads_as_code`)."""
    words, _ = _tokens(line)
    return words >= PROSE_MIN_WORDS and not reads_as_code(line)


def reads_as_code(line: str) -> bool:
    """A line of code, not words: a line that opens a block or a call, or one whose tokens are code
    (:func:`tokens_are_code`)."""
    line = line.strip()
    return line.endswith(_OPENS_BLOCK) or tokens_are_code(line)


def tokens_are_code(text: str, min_code_tokens: int = 1) -> bool:
    """Code by its tokens: at least ``min_code_tokens`` code tokens and one for every
    ``PROSE_WORDS_PER_CODE_TOKEN`` words or fewer, a stack frame, a long listing's line. (How a line ends is no
    sign in prose, where a sentence may end with a colon.)"""
    text = text.strip()
    if _FRAME.match(text):
        return True
    words, code = _tokens(text)
    return code >= max(1, min_code_tokens) and words <= PROSE_WORDS_PER_CODE_TOKEN * code


def plain_prose(text: str) -> str:
    """What the extractor reads of a plain turn or a document chunk: ``text`` but its code, that is fenced
    blocks (```` ``` ```` or ``~~~``) and the sentences whose tokens are code (:func:`tokens_are_code`, with
    ``PLAIN_MIN_CODE_TOKENS``); the rest as written, and so ``text`` itself when it holds no code. An agent's
    messages hold code beside their words (a reply that quotes a function, a listing pasted into a question),
    and spaCy reads a line of code as a sentence (``handler_9(req | is_a | limit=45``)."""
    out: list[str] = []
    fence, block = "", []
    for line in text.splitlines(keepends=True):
        if fence:  # inside a block, to its closing fence
            block.append(line)
            if line.strip().startswith(fence):
                fence, block = "", []
            continue
        opened = _FENCE.match(line)
        if opened:
            # A fence closed on its own line ("```x = 1```") is inline code: that line alone.
            fence = "" if opened.group(1) in line.strip()[len(opened.group(1)):] else opened.group(1)
            continue
        out.append(_prose_sentences(line))
    # A fence never closed may be a block's end (a chunk cut inside it): what follows it is read by its sentences.
    out += [_prose_sentences(line) for line in block]
    return "".join(out)


def _prose_sentences(line: str) -> str:
    """``line`` but its sentences of code, each kept sentence with the space before it."""
    sentences = split_sentences(line)
    code = [tokens_are_code(s, PLAIN_MIN_CODE_TOKENS) for s in sentences]
    if not any(code):
        return line
    kept, at = [], 0
    for sentence, is_code in zip(sentences, code):
        start = line.find(sentence, at)
        if not is_code:
            kept.append(line[at:start + len(sentence)] if kept else sentence)
        at = start + len(sentence)
    return "".join(kept) + line[len(line.rstrip("\r\n")):] if kept else ""


def _tokens(line: str) -> tuple[int, int]:
    """The words and the code tokens of ``line`` (numbers and IDs such as ``0x1C2320`` are neither)."""
    words = len(_UNSPACED.findall(line)) // UNSPACED_CHARS_PER_WORD
    code = 0
    for token in _UNSPACED.sub(" ", line).split():
        bare = token.strip(_EDGE_PUNCTUATION)
        if bare in _KEYWORDS or _CODE.search(bare):
            code += 1
        elif _WORD.fullmatch(bare):
            words += 1
    return words, code


def kept(triple, text: str) -> bool:
    """Whether a triple read from ``text`` (a tool turn's prose) is kept: neither side is code or a piece of
    a longer path or identifier in ``text`` ("src" of ``src/pay/mod_47.py``, "list" of ``list_dir``)."""
    return not any(_CODE_NAME.search(name) or _fragment(name, text) for name in (triple.subject, triple.object))


def _fragment(name: str, text: str) -> bool:
    """Every mention of ``name`` in ``text`` is joined to more of a path or identifier on one side."""
    name = name.strip()
    mentions = list(re.finditer(re.escape(name), text, re.IGNORECASE)) if name else []
    return bool(mentions) and all(_joined(text, m.start() - 1, -1, name[0]) or _joined(text, m.end(), 1, name[-1])
                                  for m in mentions)


def _joined(text: str, at: int, step: int, edge: str) -> bool:
    """The character at ``at``, beside a mention whose character there is ``edge``, continues a name: a
    Latin letter or digit beside a Latin one ("list" of "listdir"; not 模块 of 模块26), or a joiner followed
    (in the direction ``step``) by a letter or digit ("src" of "src/pay")."""
    if not 0 <= at < len(text):
        return False
    if _latin(text[at]) and _latin(edge):
        return True
    beyond = at + step
    return text[at] in _JOINERS and 0 <= beyond < len(text) and text[beyond].isalnum()


def _latin(char: str) -> bool:
    return char.isascii() and char.isalnum()
