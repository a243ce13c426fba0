"""The ``[Key entities]`` line of a session's view and the key entities of a compaction digest name the
people, places, organisations and products a conversation is about: not the words that open its
sentences ("Understood.", "Sure!"), not the units and currencies of its numbers ("900 USD", "50 MB"),
not the Chinese replies jieba's dictionary tags as names (谢谢, 明白, 拜拜)."""

from __future__ import annotations

import pytest

from agent_memory.conversation import SessionManager, StructuralSummarizer
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


def digest_names(turns, head: str) -> set[str]:
    digest = StructuralSummarizer().summarize([{"role": r, "content": t} for r, t in turns], max_tokens=400)
    line = next(line for line in digest.splitlines() if line.startswith(head))
    return set(line.removeprefix(head).strip().split(", "))


@pytest.mark.parametrize(("turns", "names", "filler"), [(TRAVEL, TRAVEL_NAMES, FILLER),
                                                        (ORDER, ORDER_NAMES, ORDER_FILLER)])
def test_the_session_header_names_what_the_conversation_is_about(manager, turns, names, filler):
    session = manager.session("trip")
    for role, text in turns:
        session.append({"role": role, "content": text})
    shown = header_names(session)
    assert names <= shown and not filler & shown, shown


def test_the_compaction_digest_keeps_names_and_leaves_filler_out():
    english = digest_names(TRAVEL, "Key entities:")
    assert {"Boston", "Lisbon", "Maria", "Alfama", "TAP"} <= english and not FILLER & english, english
    chinese = digest_names(ORDER, "关键实体:")
    assert ORDER_NAMES <= chinese and not ORDER_FILLER & chinese, chinese


def test_a_name_opening_a_sentence_is_still_a_name():
    for text, name in [("Lisbon will be warm next week.", "Lisbon"), ("Maria confirmed the order.", "Maria"),
                       ("Kubernetes restarted the pod twice.", "Kubernetes"), ("- Redis is down again.", "Redis"),
                       ("[user] Alice shipped the X-200 to Berlin.", "Alice")]:
        assert name in entities(text), text
    # Elsewhere in the same message mid-sentence: a name wherever it stands.
    assert "Slack" in entities("Slack is down.\nPlease post the outage in Slack too.")


def test_codes_next_to_numbers_are_units_not_names():
    assert not entities("Total: 1,200 USD (approx. 1,100 EUR), upload 50 MB, USD 900 at most.")
    assert entities("价格300USD，文件20MB") == set()
    assert entities("Ship 40 X-300 units to Lyon via DHL.") == {"X-300", "Lyon", "DHL"}


def test_latin_names_inside_chinese_text_are_found():
    assert {"AWS", "Kubernetes"} <= entities("我们用AWS和Kubernetes部署，G1次列车")


def test_chinese_replies_are_not_names_but_names_alone_in_a_clause_are():
    assert entities("收到！谢谢，好的，明白了。拜拜") == set()
    assert entities("张伟，明天去深圳出差") == {"张伟", "深圳"}  # a name jieba found outside its dictionary
