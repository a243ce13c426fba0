"""A speaker's name in the question leaves the dense query, on real stores and embeddings."""

from __future__ import annotations

import pytest

from agent_memory.retrieval.pipeline import RetrievalPipeline
from tests.helpers import ingest_dialogue

LINES = [
    ("Caroline", "I went hiking in the mountains with my dog last weekend."),
    ("Melanie", "That sounds lovely! What else is new with you?"),
    ("Caroline", "I've decided to study counseling so I can work in mental health."),
    ("Melanie", "I painted a sunrise over the lake for my kids."),
    ("Caroline", "My favourite book this year was about a family of trans women."),
    ("Melanie", "We took the kids camping and roasted marshmallows."),
]


@pytest.fixture
def pipeline(services):
    ingest_dialogue(services, LINES)
    with RetrievalPipeline.from_services(services, "conversation") as pipe:
        yield pipe


def test_the_dense_query_leaves_out_a_named_speaker(pipeline):
    result = pipeline.run("What career is Caroline pursuing?", tenant="default", budget=300, debug=True)
    [decision] = [d for d in result.decisions if d.stage == "encode"]
    assert decision.action == "re-embedded" and "): 'What career is pursuing?'" in decision.reason
    assert result.fused[0]["source_id"] == "chat/t2"
    assert "[S:chat/t2]" in result.prompt


def test_a_question_without_a_speaker_name_is_embedded_once(pipeline):
    result = pipeline.run("Who painted a sunrise?", tenant="default", budget=300, debug=True)
    assert not [d for d in result.decisions if d.stage == "encode"]
    assert result.fused[0]["source_id"] == "chat/t3"


def test_the_names_can_stay(services, pipeline):
    from agent_memory.retrieval.config import load_preset

    with RetrievalPipeline(services, load_preset("conversation", dense_without_speakers=False)) as plain:
        result = plain.run("What career is Caroline pursuing?", tenant="default", budget=300, debug=True)
    assert not [d for d in result.decisions if d.stage == "encode"]


def test_only_the_space_of_the_speakers_turns_is_re_embedded(services, pipeline):
    """A Chinese document beside the English conversation: the question is embedded in both
    spaces, and only the English turns' space needs it without the speaker's name."""
    from agent_memory.core.records import Document
    from agent_memory.ingest.pipeline import IngestionPipeline
    from agent_memory.ingest.report import IngestReport

    IngestionPipeline(services).ingest_documents(
        [Document(source_id="zh/career", title="职业", text="卡罗琳决定学习心理咨询，以便将来从事心理健康工作。")],
        IngestReport())
    result = pipeline.run("What career is Caroline pursuing?", tenant="default", budget=300, debug=True)
    [decision] = [d for d in result.decisions if d.stage == "encode"]
    english, multilingual = services.embedder.default, services.embedder.multilingual
    assert multilingual in services.vectors.occupied_spaces()
    assert f"({english})" in decision.reason and multilingual not in decision.reason
    assert result.fused[0]["source_id"] == "chat/t2"


def test_a_speaker_of_the_tenant_costs_one_embedding(services, pipeline, monkeypatch):
    """The tenant's speaker directory names the speaker before any route answers: the question is
    embedded once, already without the name."""
    calls = []
    embed_query = services.embedder.embed_query
    monkeypatch.setattr(services.embedder, "embed_query",
                        lambda text, spaces=None: calls.append(text) or embed_query(text, spaces))
    result = pipeline.run("What career is Caroline pursuing?", tenant="default", budget=300, debug=True)
    assert calls == ["What career is pursuing?"]
    assert [d.action for d in result.decisions if d.stage == "encode"] == ["re-embedded"]
    assert result.fused[0]["source_id"] == "chat/t2"


def test_without_the_keyword_route_the_speaker_is_still_named_first(services):
    """No keyword route: the directory still names the speaker before the question is embedded."""
    from agent_memory.retrieval.config import load_preset

    ingest_dialogue(services, LINES)
    with RetrievalPipeline(services, load_preset("conversation", keyword={"enabled": False})) as plain:
        result = plain.run("What career is Caroline pursuing?", tenant="default", budget=300, debug=True)
    [decision] = [d for d in result.decisions if d.stage == "encode"]
    assert "): 'What career is pursuing?'" in decision.reason
    assert result.fused[0]["source_id"] == "chat/t2"


def test_a_failing_keyword_route_costs_neither_the_speaker_nor_the_answer(pipeline, monkeypatch, caplog):
    """A route's failure is reported like any route's; the speaker is named by the directory."""

    def broken(query, limit):
        raise RuntimeError("keyword index corrupt")

    monkeypatch.setattr(pipeline.routes["keyword"], "recall", broken)
    _asked_without_the_name(pipeline, caplog, logged="route keyword failed: keyword index corrupt")


def _asked_without_the_name(pipeline, caplog, *, logged: str) -> None:
    """The question names Caroline: the failure is logged, the name still leaves the dense query,
    and her career turn still ranks first."""
    import logging

    with caplog.at_level(logging.WARNING, logger="agent_memory.retrieval.pipeline"):
        result = pipeline.run("What career is Caroline pursuing?", tenant="default", budget=300, debug=True)
    assert logged in caplog.text
    [decision] = [d for d in result.decisions if d.stage == "encode"]
    assert "): 'What career is pursuing?'" in decision.reason
    assert result.fused[0]["source_id"] == "chat/t2"


def test_a_keyword_store_that_is_down_stops_the_question(pipeline, monkeypatch):
    from agent_memory.core.errors import StoreError

    def down(query, limit):
        raise StoreError("vector store unreachable")

    monkeypatch.setattr(pipeline.routes["keyword"], "recall", down)
    with pytest.raises(StoreError, match="unreachable"):
        pipeline.run("What career is Caroline pursuing?", tenant="default", budget=300)


def test_without_the_directory_the_routes_turns_still_take_the_name_out(services, pipeline, monkeypatch, caplog):
    """The directory's store failing is logged; the turns the routes found name the speaker, and the
    dense route runs again without the name."""
    from agent_memory.core.errors import StoreError

    def down(tenant):
        raise StoreError("facet unavailable")

    monkeypatch.setattr(services.vectors, "speakers", down)
    _asked_without_the_name(pipeline, caplog, logged="speaker directory unavailable: facet unavailable")


def test_the_directory_knows_what_this_process_wrote_at_once(services, pipeline):
    from agent_memory.core.records import TurnRecord
    from agent_memory.ingest.pipeline import IngestionPipeline
    from agent_memory.ingest.report import IngestReport

    english, multilingual = services.embedder.default, services.embedder.multilingual
    assert services.vectors.speakers("default") == {english: {"Caroline", "Melanie"}}
    IngestionPipeline(services).ingest_turns(
        [TurnRecord(session_id="zh", turn_id="t0", speaker="马超", text="我最爱吃的是成都的火锅。", tenant="default")],
        IngestReport())
    assert services.vectors.speakers("default") == {english: {"Caroline", "Melanie"}, multilingual: {"马超"}}


# Friends telling things about themselves in Chinese: only the speaker says whose fact a turn holds,
# and the chat names the others (benchmarks/dev_material/group_chat.py is the same at scale).
GROUP = [
    ("王芳", "我最喜欢的运动是游泳。"),
    ("李强", "我最喜欢的运动是登山。"),
    ("张伟", "王芳，周末一起去打羽毛球吗？"),
    ("王芳", "好呀！"),
    ("张伟", "我最喜欢的运动是羽毛球。"),
    ("李强", "王芳上次推荐的小笼包真不错。"),
]


@pytest.mark.parametrize("question, turn", [("王芳最喜欢的运动是什么？", "chat/t0"), ("李强平时爱做什么锻炼？", "chat/t1")])
def test_a_chinese_question_names_its_speaker(services, question, turn):
    ingest_dialogue(services, GROUP)
    with RetrievalPipeline.from_services(services, "conversation") as pipe:
        result = pipe.run(question, tenant="default", budget=300, debug=True)
    [decision] = [d for d in result.decisions if d.stage == "encode"]
    assert decision.action == "re-embedded" and question[2:] in decision.reason  # the name left out
    assert result.fused[0]["source_id"] == turn
