"""An archived tool turn is embedded once per piece: no context vector, no sentence vectors (the agent's
previous step and a payload's lines buy no recall, and cost an encoder pass on each tool result's append).
Turns without tool parts are recorded and embedded exactly as before: the same records (no ``tools``
named, the message's own retention class) and the same texts handed to the encoder."""

from __future__ import annotations

import json

import numpy as np

from agent_memory.conversation.pass_records import PassNotes, pass_records
from agent_memory.core.config import load_settings
from agent_memory.core.records import MemoryItem
from agent_memory.index.context import context_text
from agent_memory.index.sentences import sentence_texts
from agent_memory.ingest.vectors import point_vectors

LONG_USER = ("Morning! Before I forget, my sister Ines just adopted a greyhound called Pixel last week. "
             "Anyway, can we go over my running plan for the half marathon in October? "
             "I can run four days a week and I want to keep the long run on Sundays, "
             "because Saturdays I help at the bakery until noon.")


class RecordingEmbedder:
    def __init__(self) -> None:
        self.texts: list[str] = []
        self.computed = 0

    def embed_documents(self, texts, spaces):
        self.texts += list(texts)
        self.computed += len(texts)
        return np.arange(len(texts) * 3, dtype=np.float32).reshape(len(texts), 3) + len(self.texts)


def turn(text: str, speaker: str, **metadata) -> MemoryItem:
    return MemoryItem(id=f"i-{speaker}", tenant="default", source_id="chat/m3", kind="turn", text=text,
                      metadata={"speaker": speaker, "session_id": "chat", "seq": 3, **metadata})


def encoded(item: MemoryItem, settings) -> tuple[list[str], object]:
    embedder = RecordingEmbedder()
    own = f"{item.metadata['speaker']}: {item.text}"
    contexts = {item.id: context_text(item, None, settings.turn_context_previous_max_words)}
    vectors = point_vectors(embedder, [item], [own], ["minilm"], contexts, settings)
    return embedder.texts, vectors


def test_a_plain_turn_is_embedded_with_its_context_and_sentences_as_before(tmp_path):
    settings = load_settings(data_dir=tmp_path)
    item = turn(LONG_USER, "user", previous_turn={"speaker": "assistant", "text": "How is training going?", "seq": 1})
    texts, vectors = encoded(item, settings)
    assert texts[:2] == [f"user: {LONG_USER}", f"assistant: How is training going?\nuser: {LONG_USER}"]
    assert texts[2:] == sentence_texts(item, settings) == [
        "user: Before I forget, my sister Ines just adopted a greyhound called Pixel last week.",
        "user: Anyway, can we go over my running plan for the half marathon in October?",
        "user: I can run four days a week and I want to keep the long run on Sundays, because Saturdays I help at "
        "the bakery until noon."]
    assert not np.array_equal(vectors.context[0], vectors.dense[0]) and vectors.sentences[0].shape == (3, 3)


def test_a_tool_turn_is_embedded_once_its_context_its_own_vector(tmp_path):
    settings = load_settings(data_dir=tmp_path)
    # As a late result in Anthropic's format is: a user message, long enough for sentences.
    item = turn(f"[tool_result:read_file] {LONG_USER}", "user", tools=["read_file"],
                previous_turn={"speaker": "assistant", "text": "Step 3: I will read notes.txt.", "seq": 1})
    texts, vectors = encoded(item, settings)
    assert texts == [f"user: [tool_result:read_file] {LONG_USER}"]
    assert np.array_equal(vectors.context[0], vectors.dense[0]) and vectors.sentences[0] is None
    assert sentence_texts(item, settings) == []


def row(seq: int, message: dict, retention: str = "fuzzy") -> dict:
    return {"seq": seq, "message": message, "retention": retention, "significant": False, "created_at": 1.7e9 + seq}


NO_NOTES = PassNotes(reasons=lambda seq: None, inferred=lambda seq: False, rows_before=lambda seq: [])


def records(rows: list[dict]):
    return pass_records(rows, -1, tenant="default", session_id="chat", notes=NO_NOTES)[0]


def test_turns_without_tool_parts_give_the_records_they_gave_before():
    rows = [row(0, {"role": "system", "content": "Be brief."}, "strict"),
            row(1, {"role": "user", "content": "Can you lend me the tent?"}),
            row(2, {"role": "assistant", "content": "Sure, I'll bring it tomorrow!", "name": "Ann"}, "strict"),
            row(3, {"role": "user", "content": "ok"}, "forgettable"),
            row(4, {"role": "system", "content": "Stay friendly."}, "strict"),
            row(5, {"role": "user", "content": "Thanks, see you at the lake."})]
    made = records(rows)
    assert [(r.turn_id, r.speaker, r.text, r.seq) for r in made] == [
        ("m1", "user", "Can you lend me the tent?", 1), ("m2", "Ann", "Sure, I'll bring it tomorrow!", 2),
        ("m5", "user", "Thanks, see you at the lake.", 5)]
    base = {"promoted": True, "archived": True, "significant": False, "reasons": []}
    assert [r.metadata for r in made] == [
        {**base, "retention": "fuzzy", "role": "user"},
        {**base, "retention": "strict", "role": "assistant"},
        {**base, "retention": "fuzzy", "role": "user",
         "previous_turn": {"speaker": "user", "text": "ok", "seq": 3}}]


def test_a_tool_turn_is_marked_and_takes_the_class_of_what_it_keeps():
    call = {"role": "assistant", "content": "Looking.", "tool_calls": [
        {"id": "c0", "type": "function", "function": {"name": "grep", "arguments": json.dumps({"q": "retry"})}}]}
    rows = [row(0, {"role": "user", "content": "Where is the retry loop?"}), row(1, call, "forgettable"),
            row(2, {"role": "tool", "tool_call_id": "c0", "content": "src/net/backoff.py:12"})]
    pair = records(rows)[1]
    assert pair.text == '[tool_use:grep] {"q": "retry"}\n[tool_result:grep] src/net/backoff.py:12'
    assert pair.metadata["retention"] == "fuzzy"
    assert pair.metadata["tools"] == ["grep"]
