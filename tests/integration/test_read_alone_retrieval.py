"""An assistant's acknowledgement is read alone: on real stores and embeddings through the served default, "Okay,
noted." after the user's "Finished reading Pachinko last night." takes neither that turn's similarity (its
turn-context vector) nor a share of its score, so the prompt's room goes to what the user said
(agent_memory/retrieval/rerank/signals.py ``read_alone``, the config's ``context_read_alone``)."""

from __future__ import annotations

import pytest

from agent_memory.core.records import TurnRecord
from agent_memory.evaluation.metric import cited_ids
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.retrieval.config import load_preset
from agent_memory.retrieval.pipeline import RetrievalPipeline

# Sessions of (user, assistant) pairs: the user's doings of one kind weeks apart, the assistant's acknowledgements.
PAIRS = {
    "en": [("Finished reading Pachinko last night.", "Okay, noted."),
           ("Went to the Hozier gig yesterday, still buzzing.", "Sure, saved."),
           ("Just got to the end of The Overstory, what an ending.", "Got it, I'll remember that."),
           ("Did my first judo class this morning.", "Okay, noted."),
           ("Read Circe on the train this week, couldn't put it down.", "Sure, saved.")],
    "zh": [("昨晚读完了《活着》。", "好的，记下了。"),
           ("昨天去了五月天的演唱会，现在还很兴奋。", "收到，我记住了。"),
           ("终于把《围城》看完了，结尾太震撼了。", "好的，已经记录。"),
           ("今天上午上了第一节柔道课。", "好的，记下了。"),
           ("这周在地铁上读了《白夜行》，根本停不下来。", "收到，我记住了。")],
}
QUESTIONS = {"en": "Which books have I read?", "zh": "我读过哪些书？"}
BOOKS = {"en": ["s-0/t0", "s-2/t0", "s-4/t0"], "zh": ["s-0/t0", "s-2/t0", "s-4/t0"]}


@pytest.fixture
def ingested(services):
    pipeline = IngestionPipeline(services)
    for tenant, pairs in PAIRS.items():
        pipeline.ingest_turns([
            TurnRecord(session_id=f"s-{i}", turn_id=f"t{j}", speaker=speaker, text=text, tenant=tenant,
                       timestamp=f"2024/0{i + 1}/02 (Tue) 19:0{j}")
            for i, pair in enumerate(pairs) for j, (speaker, text) in enumerate(zip(("user", "assistant"), pair))])
    return services


def _run(services, tenant: str, config, budget: int):
    with RetrievalPipeline(services, config) as pipe:
        return pipe.run(QUESTIONS[tenant], tenant=tenant, budget=budget, debug=True)


@pytest.mark.parametrize("tenant", ["en", "zh"])
def test_the_assistants_acknowledgements_rank_below_every_statement_of_the_user(ingested, tenant):
    served = {row["source_id"]: row["rerank"] for row in _run(ingested, tenant, load_preset("default"), 400).fused}
    read_after = {row["source_id"]: row["rerank"]
                  for row in _run(ingested, tenant, load_preset("default", context_read_alone=[]), 400).fused}
    books, acks = BOOKS[tenant], [b.replace("/t0", "/t1") for b in BOOKS[tenant]]
    assert max(served[a] for a in acks) < min(served[b] for b in books), served
    # Read after the best book, its acknowledgement rode on that book's similarity and score; read alone it does not.
    best = max(books, key=served.get)
    assert served[best.replace("/t0", "/t1")] < read_after[best.replace("/t0", "/t1")] - 1.0, (served, read_after)


@pytest.mark.parametrize("tenant", ["en", "zh"])
def test_a_small_prompt_holds_every_book(ingested, tenant):
    cited = cited_ids(_run(ingested, tenant, load_preset("default"), 260).prompt)
    assert set(BOOKS[tenant]) <= set(cited), cited


# An answer goes with its question (``context_answer_with_ask``): asked "what did you tell me?", the memory's best
# match is the user's ask, and the assistant's answer after it says what it is about only read with it.
ASKS = {
    "en": [("Flying to Urumqi next week, five hours. A novel for the plane?",
            "For those five hours to Urumqi, take White Deer Plain; the plot carries you."),
           ("My nephew just started third grade and loves adventure stories. A book for him?",
            "For an eight-year-old who loves adventures, The Wild Robot is a safe bet."),
           ("Finished reading Pachinko last night.", "Okay, noted."),
           ("Any place in Porto for a farewell dinner for twelve?", "In Porto, O Gaveto takes big groups.")],
    "zh": [("下周要飞乌鲁木齐，五个多小时，推荐本小说路上看？", "飞乌鲁木齐那五个多小时，带本《白鹿原》吧，情节抓人，一下就到了。"),
           ("侄子刚上三年级，特别喜欢冒险故事，送他什么书好？", "三年级爱冒险的孩子，送《荒野机器人》准没错。"),
           ("昨晚读完了《活着》。", "好的，记下了。"),
           ("同事要调走，十几个人在杭州吃散伙饭，去哪儿好？", "十几个人的话，去外婆家，包间大，菜也实惠。")],
}
ASKED = {"en": "Which book did you tell me to take on the flight to Xinjiang?", "zh": "去新疆的航班上，你让我带什么书？"}


@pytest.fixture
def asked(services):
    pipeline = IngestionPipeline(services)
    for lang, pairs in ASKS.items():
        pipeline.ingest_turns([
            TurnRecord(session_id=f"s-{i}", turn_id=f"t{j}", speaker=speaker, text=text, tenant=f"ask-{lang}",
                       timestamp=f"2024/0{i + 1}/02 (Tue) 19:0{j}")
            for i, pair in enumerate(pairs) for j, (speaker, text) in enumerate(zip(("user", "assistant"), pair))])
    return services


def _ranks(services, lang: str, question: str, **overrides) -> dict[str, float]:
    with RetrievalPipeline(services, load_preset("default", **overrides)) as pipe:
        fused = pipe.run(question, tenant=f"ask-{lang}", budget=400, debug=True).fused
    return {row["source_id"]: row["rerank"] for row in fused}


def test_asked_what_the_assistant_said_its_answer_ranks_with_its_question(asked):
    served, alone = _ranks(asked, "en", ASKED["en"]), _ranks(asked, "en", ASKED["en"], context_answer_with_ask=False)
    # The answer to the flight's ask takes that ask's share and reads with it, above every other answer.
    assert served["s-0/t1"] > alone["s-0/t1"] + 0.5, (served, alone)
    assert served["s-0/t1"] > max(served[f"s-{i}/t1"] for i in (1, 2, 3)), served


@pytest.mark.parametrize("lang, question", [("en", "Which novel did I take on the flight to Xinjiang?"),
                                            ("zh", "我去新疆的航班上带了什么书？")])
def test_asked_of_anything_else_an_answer_stays_alone(asked, lang, question):
    # A question in the first person asks what the user did: the assistant's turns are read alone as before.
    assert _ranks(asked, lang, question) == _ranks(asked, lang, question, context_answer_with_ask=False)
