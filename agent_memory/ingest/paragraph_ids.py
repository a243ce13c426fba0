"""Source IDs of titled paragraphs read together (HotpotQA- and MuSiQue-style pages, SQuAD articles)."""

from __future__ import annotations

import hashlib


def paragraph_source_id(title: str, text: str) -> str:
    """A titled paragraph is identified by its title (a changed text replaces it); an
    untitled one by a short content hash. Short IDs matter: every citation costs tokens.
    Paragraphs read together (one file) are named by :class:`ParagraphIds`, which tells two
    paragraphs of one title apart."""
    clean = " ".join(title.replace("[", "(").replace("]", ")").split())[:80]
    if clean:
        return clean
    return "para:" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


class ParagraphIds:
    """Source IDs for the titled paragraphs of one file, in the order they are read.

    A paragraph is its title's source (``paragraph_source_id``); a second, different paragraph under
    a title already taken is ``"Title #2"``, a third ``"Title #3"``: two paragraphs of one page
    (MuSiQue's pool holds 85 such titles) are two sources, not one source changed, and the second
    must not replace the first. The same text under the same title is the same source, wherever it
    appears (a paragraph several questions share is stored once). Reading the file again in the same
    order gives the same IDs."""

    def __init__(self) -> None:
        self._texts: dict[str, list[str]] = {}  # base ID -> digests of its distinct texts, in order read

    def __call__(self, title: str, text: str) -> str:
        base = paragraph_source_id(title, text)
        if base.startswith("para:"):  # untitled: already named by its content
            return base
        digest = hashlib.sha1(text.encode("utf-8")).hexdigest()
        texts = self._texts.setdefault(base, [])
        if digest not in texts:
            texts.append(digest)
        nth = texts.index(digest) + 1
        return base if nth == 1 else f"{base} #{nth}"
