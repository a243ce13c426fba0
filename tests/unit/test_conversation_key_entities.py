"""The ``[Key entities]`` line of a session's view names the people, places, organisations and products a
conversation is about: not the words that open its sentences ("Understood.", "Sure!"), not the units and
currencies of its numbers ("900 USD", "50 MB"), not the Chinese replies jieba's dictionary tags as names
(谢谢, 明白, 拜拜). Each candidate is judged once, not each message."""

from __future__ import annotations

import pytest

from agent_memory.conversation import SessionManager, entity_filter
from agent_memory.conversation.entity_filter import is_name_in
from agent_memory.conversation.significance import entities
from agent_memory.core.tokens import TiktokenCounter

COUNTER = TiktokenCounter("cl100k_base")

TRAVEL = [
    ("user", "Hi! I need to book a flight from Boston to Lisbon for Maria Chen on June 12. Budget is 900 USD."),
    ("assistant", "Understood. We decided on the TAP Air Portugal flight for 845 USD."),
    ("user", "Sure, hold it. Also the hotel should be within 2 km of the Alfama district."),
    ("assistant", "Sure! Hotel Solar do Castelo is 0.8 km away, 180 EUR per night. Thanks for waiting."),
    ("user", "Thanks. Please charge it to the Acme Corp card and send the receipt to Maria."),
    ("assistant", "Done. Receipt sent to Maria. Anything else?"),
    ("user", "Absolutely perfect. Actually, one more thing: the upload limit is 50 MB, right?"),
    ("assistant", "Certainly. Honestly, 50 MB is plenty. Lisbon will be around 24 C."),
    ("user", "Perfect. Got it. Noted, my budget is 1200 GBP total. OK, thanks!"),
]
TRAVEL_NAMES = {"Boston", "Lisbon", "Maria", "Chen", "Alfama", "Acme"}
FILLER = {"Hi", "Budget", "Understood", "Sure", "Thanks", "Receipt", "Anything", "Absolutely", "Actually",
          "Certainly", "Honestly", "Perfect", "Got", "Noted", "OK", "Done", "USD", "EUR", "GBP", "MB"}

ORDER = [
    ("user", "你好，我想订一张从北京到上海的高铁票，给王芳，6月12日出发，预算500元。"),
    ("assistant", "好的，明白。我们决定订G1次列车，二等座553元。"),
    ("user", "可以，谢谢。另外张伟说酒店要在南京东路附近，用阿里巴巴公司的卡支付。"),
    ("assistant", "明白了，已经订好。"),
    ("user", "太好了，谢谢你。拜拜。"),
]
ORDER_NAMES = {"北京", "上海", "王芳", "张伟", "南京东路", "阿里巴巴公司"}
ORDER_FILLER = {"谢谢", "明白", "拜拜", "谢谢你"}


@pytest.fixture()
def manager(tmp_path):
    mgr = SessionManager(tmp_path, COUNTER, synchronous="OFF")
    yield mgr
    mgr.close()


def header_names(session) -> set[str]:
    header = next(m["content"] for m in session.view(4000) if m["content"].startswith("[Key entities]"))
    return set(header.removeprefix("[Key entities] ").split(", "))


@pytest.mark.parametrize(("turns", "names", "filler"), [(TRAVEL, TRAVEL_NAMES, FILLER),
                                                        (ORDER, ORDER_NAMES, ORDER_FILLER)])
def test_the_session_header_names_what_the_conversation_is_about(manager, turns, names, filler):
    session = manager.session("trip")
    for role, text in turns:
        session.append({"role": role, "content": text})
    shown = header_names(session)
    assert names <= shown and not filler & shown, shown


def test_the_model_reads_each_candidate_once_when_a_view_is_built_never_on_append(manager, monkeypatch):
    judged: list[str] = []
    real = entity_filter.model_reads

    def counting(snippets: list[str]) -> list[bool]:
        judged.extend(snippets)
        return real(snippets)

    monkeypatch.setattr(entity_filter, "_OPENERS", {})  # nothing read before this test
    monkeypatch.setattr(entity_filter, "model_reads", counting)
    session = manager.session("trip")
    for _ in range(3):  # the same filler again and again ("Sure", "Thanks", "Understood"), a view each turn
        for role, text in TRAVEL:
            read = len(judged)
            session.append({"role": role, "content": text})
            assert len(judged) == read  # the append itself read nothing
            session.view(4000)
    candidates = set().union(*(entities(text) for _, text in TRAVEL))
    assert judged and len(judged) <= len(candidates)  # the model never read a candidate twice
    read = len(judged)
    first = header_names(session)
    assert "Understood" not in first and header_names(session) == first and len(judged) == read


def test_a_word_judged_filler_is_judged_again_when_a_later_message_names_it(manager):
    session = manager.session("apps")
    session.append({"role": "user", "content": "Notion is slow today. Redis is down again."})
    session.append({"role": "user", "content": "Notion again."})
    assert not {"Notion", "Redis"} & set(session.entities())
    session.append({"role": "user", "content": "Please move the notes from Notion to Obsidian, and restart Redis."})
    assert {"Notion", "Redis", "Obsidian"} <= header_names(session)


def test_the_header_survives_a_reload(tmp_path):
    mgr = SessionManager(tmp_path, COUNTER, synchronous="OFF")
    session = mgr.session("trip")
    for role, text in TRAVEL:
        session.append({"role": role, "content": text})
    before = header_names(session)
    mgr.close()
    again = SessionManager(tmp_path, COUNTER, synchronous="OFF")
    try:
        assert header_names(again.session("trip")) == before
    finally:
        again.close()


def test_a_name_opening_a_sentence_is_still_a_name():
    for text, name in [("Lisbon will be warm next week.", "Lisbon"), ("Maria confirmed the order.", "Maria"),
                       ("Kubernetes restarted the pod twice.", "Kubernetes"),
                       ("[user] Alice shipped the X-200 to Berlin.", "Alice")]:
        assert name in entities(text) and is_name_in(name, text), text
    # Elsewhere in the same message mid-sentence: a name wherever it stands.
    assert is_name_in("Slack", "Slack is down.\nPlease post the outage in Slack too.")
    for text, word in [("Understood. Moving on.", "Understood"), ("Receipt sent to Maria.", "Receipt"),
                       ("Honestly, 50 MB is plenty.", "Honestly"), ("Yep, we did.", "Yep"),
                       ("Congrats, Melanie!", "Congrats"), ("Woohoo Melanie!", "Woohoo")]:
        assert word in entities(text) and not is_name_in(word, text), text


def test_codes_next_to_numbers_are_units_not_names():
    text = "Total: 1,200 USD (approx. 1,100 EUR), upload 50 MB, USD 900 at most."
    assert {"USD", "EUR", "MB"} <= entities(text)
    assert not any(is_name_in(code, text) for code in ("USD", "EUR", "MB"))
    assert all(is_name_in(name, "Ship 40 X-300 units to Lyon via DHL.") for name in ("X-300", "Lyon", "DHL"))


def test_latin_names_inside_chinese_text_are_found():
    assert {"AWS", "Kubernetes"} <= entities("我们用AWS和Kubernetes部署，G1次列车")


def test_chinese_replies_are_not_names_but_names_alone_in_a_clause_are():
    text = "收到！谢谢，好的，明白了。拜拜"
    assert not any(is_name_in(word, text) for word in entities(text))
    assert all(is_name_in(name, "张伟，明天去深圳出差") for name in ("张伟", "深圳"))


def test_names_with_letters_beyond_ascii_are_names(manager):
    text = "We visited the Jerónimos Monastery and Café Würth with Zoë and Łukasz in Kraków. I also met Ólafur near Ærø."
    assert {"Jerónimos", "Würth", "Zoë", "Łukasz", "Kraków", "Ólafur", "Ærø"} <= entities(text)
    session = manager.session("travel")
    session.append({"role": "user", "content": text})
    assert {"Zoë", "Łukasz", "Kraków", "Ólafur", "Ærø"} <= header_names(session)


def test_a_coding_task_is_named_by_its_files_and_codes(manager):
    session = manager.session("fix")
    session.append({"role": "user", "content": "Please fix config.py and tests/test_api.py; the CI run fails with "
                                               "ModuleNotFoundError in utils/helpers.py (pydantic v2.7.1)."})
    session.append({"role": "user", "content": "Also ECONNREFUSED on port 6333 from Qdrant, see .github/workflows/ci.yml"})
    shown = header_names(session)
    assert {"config.py", "tests/test_api.py", "utils/helpers.py", "v2.7.1", "ModuleNotFoundError", "ECONNREFUSED",
            "Qdrant"} <= shown and "v2" not in shown, shown
