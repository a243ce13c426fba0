"""Memory over time through the Python API: expiry stamps a document brings, a fact that changes
(in English and Chinese, across a restart), and question dates that name no day."""

from __future__ import annotations

import time

import pytest

from agent_memory import Memory
from agent_memory.core.config import load_settings
from agent_memory.core.errors import AgentMemoryError
from agent_memory.core.records import SearchFilter
from agent_memory.ingest.upkeep import expire, stats


def _memory(tmp_path, **settings) -> Memory:
    return Memory(settings=load_settings(data_dir=tmp_path / "data", triple_extractor="rules", qdrant_url=None,
                                         neo4j_uri=None, postgres_url=None, **settings))


def test_a_documents_own_expiry_of_any_form_never_stops_gc_or_stats(tmp_path):
    """A document's metadata may carry ``expires_at`` as an ISO date, Unix seconds or a word; one ISO date
    used to make ``stats`` and ``gc`` fail for the whole data dir (float('2020-01-01'))."""
    with _memory(tmp_path, ttl_days={}) as memory:
        memory.add("The Glorpax coupon WIN20 is valid.", source_id="notes/coupon", metadata={"expires_at": "2020-01-01"})
        memory.add("The Glorpax numeric note.", source_id="notes/num", metadata={"expires_at": time.time() - 60})
        memory.add("The Glorpax future note.", source_id="notes/later", metadata={"expires_at": "2999-01-01T00:00:00Z"})
        memory.add("The Glorpax vague note.", source_id="notes/vague", metadata={"expires_at": "soon"})
        memory.add("The Glorpax office is on floor 9.", source_id="notes/office")
        assert stats(memory.services, "default", soon_days=1)["default"]["expiring_soon"] == 2
        removed = expire(memory.services, memory.ingestion.forget)
        assert removed["sources"] == 2 and removed["items"] == 2
        left = {i.source_id for i in memory.services.vectors.scroll(SearchFilter(tenant="default"))}
        assert left == {"notes/later", "notes/vague", "notes/office"}
        assert memory.services.catalog.get("default", "notes/coupon") is None
        assert expire(memory.services, memory.ingestion.forget) == {"sources": 0, "items": 0, "triples": 0,
                                                                    "session_messages": 0}


def test_an_expired_item_is_never_recalled_even_before_gc(tmp_path):
    with _memory(tmp_path, ttl_days={"source:drafts/": 0}) as memory:  # drafts live no time at all
        memory.add("The Glorpax coupon WIN20 gives 20% off.", source_id="notes/coupon",
                   metadata={"expires_at": time.time() - 60})
        memory.add("The Glorpax coupon FALL10 gives 10% off.", source_id="notes/fall")
        memory.add("The Glorpax coupon DRAFT5 gives 5% off.", source_id="drafts/five")
        result = memory.prompt("Which Glorpax coupons are there?", budget=800, debug=True)
        assert "notes/fall" in result.used_source_ids
        assert not {"notes/coupon", "drafts/five"} & set(result.used_source_ids), result.used_source_ids
        assert any(d.stage == "expiry" for d in result.decisions)


def _facts(memory: Memory, subject: str, tenant: str = "default") -> dict[str, str]:
    """object -> valid_to of the subject's facts ('' while current), once the archive of the appends is done."""
    memory.settle()
    return {r["object"]: r["valid_to"] for r in memory.services.graph.subject_facts(tenant, [subject])}


def test_a_move_supersedes_the_older_home_in_english_and_chinese_across_a_restart(tmp_path):
    """'Maria lives in Berlin' then 'Maria moved to Paris': the tagger typed Maria NORP in one and ORG in
    the other, two entity keys, so nothing was superseded. 小王住在北京 then 小王搬到上海了: 住 and 搬到 were
    no functional relation."""
    with _memory(tmp_path) as memory:
        memory.add_message("s1", {"role": "user", "name": "Maria", "content": "Maria lives in Berlin.",
                                  "timestamp": "2024-03-10T10:00:00Z"})
        memory.add_message("s2", {"role": "user", "name": "Maria", "content": "Maria moved to Paris.",
                                  "timestamp": "2024-06-15T10:00:00Z"})
        memory.add_message("z1", {"role": "user", "content": "小王住在北京。", "timestamp": "2024-03-10T10:00:00Z"})
        memory.add_message("z2", {"role": "user", "content": "小王搬到上海了。", "timestamp": "2024-06-15T10:00:00Z"})
    with _memory(tmp_path) as memory:
        assert _facts(memory, "Maria") == {"Berlin": "2024-06-15T10:00:00", "Paris": ""}
        assert _facts(memory, "小王") == {"北京": "2024-06-15T10:00:00", "上海": ""}
        where = memory.prompt("Where does Maria live?", budget=3000, debug=True)
        shown = [t for t in where.routes.get("graph_facts", []) if t["subject"] == "Maria"]
        facts = where.prompt.split("## Retrieved passages")[0]
        assert {t["object"] for t in shown} >= {"Berlin", "Paris"}, shown
        # The current home is stated beside the superseded one, though "moved to" is another relation.
        assert "Paris" in facts and "Berlin" in facts, where.prompt
        march = memory.prompt("小王三月住在哪里？", budget=3000, question_date="2024-08-01", debug=True)
        assert any(d.stage == "facts" and d.target == "三月" for d in march.decisions), march.decisions
        assert "北京 (2024-03-10 to 2024-06-15, superseded)" in march.prompt


def test_a_named_speakers_own_move_in_the_first_person_supersedes_their_old_home(tmp_path):
    """'I moved to Paris' said by Maria: its subject was "I", no entity, so an agent's user telling of
    their own life gave no fact at all. The assistant names nobody: its first person stays unread."""
    with _memory(tmp_path) as memory:
        memory.add_message("s1", {"role": "user", "name": "Maria", "content": "I live in Berlin.",
                                  "timestamp": "2024-03-10T10:00:00Z"})
        memory.add_message("s1", {"role": "user", "name": "Maria", "content": "I moved to Paris.",
                                  "timestamp": "2024-06-15T10:00:00Z"})
        memory.add_message("z1", {"role": "user", "name": "王芳", "content": "我住在北京。",
                                  "timestamp": "2024-03-10T10:00:00Z"})
        memory.add_message("z1", {"role": "user", "name": "王芳", "content": "我搬到上海了。",
                                  "timestamp": "2024-06-15T10:00:00Z"})
        memory.add_message("a1", {"role": "assistant", "content": "I live in the cloud."})
    with _memory(tmp_path) as memory:
        assert _facts(memory, "Maria") == {"Berlin": "2024-06-15T10:00:00", "Paris": ""}
        assert _facts(memory, "王芳") == {"北京": "2024-06-15T10:00:00", "上海": ""}
        assert _facts(memory, "assistant") == {} and _facts(memory, "I") == {}
        stored = [i.text for i in memory.services.vectors.scroll(SearchFilter(tenant="default"))]
        assert "I moved to Paris." in stored and not any("Maria moved" in t for t in stored)  # extraction only


def test_the_users_own_move_supersedes_their_old_home_and_a_first_person_question_finds_it(tmp_path):
    """A plain user message (no name) is the tenant's user: "I live in Berlin" then "I moved to Paris" is
    the user's move, in English and in Chinese, and "where do I live now?" is a question about them."""
    with _memory(tmp_path) as memory:
        memory.add_message("u1", {"role": "user", "content": "I live in Berlin.", "timestamp": "2024-03-10T10:00:00Z"})
        memory.add_message("u2", {"role": "user", "content": "I moved to Paris.", "timestamp": "2024-06-15T10:00:00Z"})
        memory.add_message("z1", {"role": "user", "content": "我住在北京。", "timestamp": "2024-03-10T10:00:00Z"},
                           tenant="zh")
        memory.add_message("z2", {"role": "user", "content": "我搬到上海了。", "timestamp": "2024-06-15T10:00:00Z"},
                           tenant="zh")
    with _memory(tmp_path) as memory:
        assert _facts(memory, "User") == {"Berlin": "2024-06-15T10:00:00", "Paris": ""}
        assert _facts(memory, "User", "zh") == {"北京": "2024-06-15T10:00:00", "上海": ""}  # one name in both
        for question, current, older, tenant in (("Where do I live now?", "Paris", "Berlin", "default"),
                                                 ("Where does the user live now?", "Paris", "Berlin", "default"),
                                                 ("我现在住在哪里？", "上海", "北京", "zh"),
                                                 ("用户现在住在哪里？", "上海", "北京", "zh")):
            facts = memory.prompt(question, budget=3000, debug=True, tenant=tenant).routes.get("graph_facts", [])
            assert {t["object"]: t["valid_to"] for t in facts if t["object"] in (current, older)} == {
                current: "", older: "2024-06-15T10:00:00"}, question
        # A question in the third person names nobody new: the user's facts are not its seeds; nor are they
        # where the setting is off.
        assert not memory.prompt("Where does the band play?", budget=3000, debug=True).routes.get("graph_facts")
        assert not memory.prompt("Where do I live now?", budget=3000, debug=True,
                                 overrides={"graph_first_person_user": False}).routes.get("graph_facts")


def test_a_named_speakers_present_tense_home_is_a_fact(tmp_path):
    """Bob's "I live in Madrid", read as "Bob live in Madrid", gave no home (related_to, or nothing)."""
    with _memory(tmp_path) as memory:
        memory.add_message("b1", {"role": "user", "name": "Bob", "content": "I live in Madrid and I work at Acme.",
                                  "timestamp": "2024-03-10T10:00:00Z"})
        assert _facts(memory, "Bob") == {"Madrid": ""}


def test_the_users_move_told_in_a_mixed_language_message_supersedes_their_old_home(tmp_path):
    """"I moved to Paris. 我很开心。" was named "用户 moved to Paris" as a whole (it holds Chinese): the English
    extractor read no fact in it, and Berlin stayed the user's home."""
    with _memory(tmp_path) as memory:
        memory.add_message("u1", {"role": "user", "content": "I live in Berlin.", "timestamp": "2024-03-10T10:00:00Z"})
        memory.add_message("u2", {"role": "user", "content": "I moved to Paris. 我很开心。",
                                  "timestamp": "2024-06-15T10:00:00Z"})
        memory.add_message("z1", {"role": "user", "content": "我住在北京。I love it.", "timestamp": "2024-03-10T10:00:00Z"},
                           tenant="zh")
        assert _facts(memory, "User") == {"Berlin": "2024-06-15T10:00:00", "Paris": ""}
        assert _facts(memory, "User", "zh") == {"北京": ""}


def test_the_user_is_one_person_in_either_language(tmp_path):
    """"I live in Berlin", then 我搬到上海了: the user moved (their Chinese sentences were the subject 用户, their
    English ones User, and nothing was superseded). A 用户 the user writes themself ("user feedback") stays."""
    with _memory(tmp_path) as memory:
        memory.add_message("u1", {"role": "user", "content": "I live in Berlin.", "timestamp": "2024-03-10T10:00:00Z"})
        memory.add_message("z1", {"role": "user", "content": "我搬到上海了。", "timestamp": "2024-06-15T10:00:00Z"})
        memory.add_message("z2", {"role": "user", "content": "用户住在深圳。", "timestamp": "2024-07-01T10:00:00Z"})
        assert _facts(memory, "User") == {"Berlin": "2024-06-15T10:00:00", "上海": ""}
        assert _facts(memory, "用户") == {"深圳": ""}


@pytest.mark.parametrize("home, english, chinese", [
    # "I live in the city" (a common noun) after "I moved to Munich" superseded Munich (seen on LongMemEval).
    ("Munich", "I live in the city and I moved into a small apartment.", "我住在城里。"),
    # "My friend said: I live in Rome" made Rome the user's home, superseding Paris.
    ("Paris", "My friend said: I live in Rome.", "我朋友说：“我住在罗马。”"),
])
def test_what_names_no_new_home_of_the_users_keeps_their_home(tmp_path, home, english, chinese):
    with _memory(tmp_path) as memory:
        memory.add_message("u1", {"role": "user", "content": f"I moved to {home}.", "timestamp": "2024-03-10T10:00:00Z"})
        memory.add_message("u2", {"role": "user", "content": english, "timestamp": "2024-06-15T10:00:00Z"})
        memory.add_message("z1", {"role": "user", "content": chinese, "timestamp": "2024-06-15T10:00:00Z"})
        assert _facts(memory, "User") == {home: ""}


def test_forgetting_or_rewriting_the_newer_fact_makes_the_older_one_current_again(tmp_path):
    """The move's source forgotten, the old home stayed marked "superseded" by a fact no longer stored;
    the same when the move's source was rewritten to say something else."""
    with _memory(tmp_path) as memory:
        memory.add("Maria lives in Berlin.", source_id="notes/berlin", metadata={"date": "2024-03-10"})
        memory.add("Maria moved to Paris.", source_id="notes/paris", metadata={"date": "2024-06-15"})
        assert _facts(memory, "Maria") == {"Berlin": "2024-06-15T00:00:00", "Paris": ""}
        memory.forget("notes/paris")
        assert _facts(memory, "Maria") == {"Berlin": ""}
        assert "superseded" not in memory.prompt("Where does Maria live?", budget=3000).prompt
        memory.add("Maria moved to Madrid.", source_id="notes/move", metadata={"date": "2024-07-01"})
        assert _facts(memory, "Maria") == {"Berlin": "2024-07-01T00:00:00", "Madrid": ""}
        memory.add("Maria likes green tea.", source_id="notes/move", metadata={"date": "2024-07-01"})
        assert _facts(memory, "Maria")["Berlin"] == ""
        assert memory.services.graph.superseded_count("default") == 0


@pytest.mark.parametrize("when", ["version 3", "Tuesday", "14:30"])
def test_a_question_date_that_names_no_year_is_refused(tmp_path, when):
    """A fuzzy parse filled the missing parts from today: 'version 3' was asked on the 3rd of this month."""
    with _memory(tmp_path) as memory:
        memory.add("The Velmora badge code is 4471.", source_id="notes/badge")
        with pytest.raises(AgentMemoryError, match=repr(when)):
            memory.prompt("What is the badge code?", budget=300, question_date=when)


def test_a_question_date_that_is_no_text_is_a_type_error_naming_it(tmp_path):
    with _memory(tmp_path) as memory:
        with pytest.raises(TypeError, match="question_date must be a date as text.*got int 1722470400"):
            memory.prompt("Where does Maria live?", question_date=1722470400)


def test_a_conversation_spanning_months_shows_each_turn_under_its_own_day(tmp_path):
    with _memory(tmp_path) as memory:
        for content, role, stamp in (("I adopted a cat named Miso.", "user", "2026-01-05T09:00:00Z"),
                                     ("Congrats on adopting Miso!", "assistant", "2026-01-05T09:00:05Z"),
                                     ("Miso got sick and went to the vet.", "user", "2026-06-20T09:00:00Z"),
                                     ("Miso turned one year old today, we had a party.", "user", "2026-11-30T09:00:00Z")):
            memory.add_message("s", {"role": role, "content": content, "timestamp": stamp})
        result = memory.prompt("When did Miso go to the vet?", budget=300)
    lines = result.prompt.splitlines()
    vet = next(i for i, line in enumerate(lines) if "went to the vet" in line)
    assert next(line for line in reversed(lines[:vet]) if line.startswith("#")) == "### s, 20 Jun"
    assert [line for line in lines if line.startswith("### ")] == ["### s, 5 Jan 2026", "### s, 20 Jun", "### s, 30 Nov"]
    assert result.total_tokens <= 300
