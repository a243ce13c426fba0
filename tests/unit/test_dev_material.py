"""benchmarks/make_dev_material.py and its generators (benchmarks/dev_material/): deterministic files that the
eval harness reads, every question's evidence in its tenant's material (chains: 3-4 supporting pages; pools:
documents and turns in one tenant)."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

from agent_memory.evaluation.datasets import load_dataset
from benchmarks.dev_material.chains import make_chains
from benchmarks.dev_material.pools import make_users
from benchmarks.dev_material.sources import Sources
from benchmarks.make_dev_material import generate

_PEOPLE = ["Ann Smith", "Bob Jones", "Cara Diaz", "Dan Kerr", "Eve Lund", "Finn Moss"]
_PLACES = ["Austin, Texas", "Dallas, Texas", "Reno, Nevada", "Elko, Nevada", "Salem, Oregon", "Bend, Oregon"]


def _sources(tmp_path: Path) -> Path:
    tmp_path.mkdir(parents=True)
    contexts = [{"title": p, "paragraph_text": f"{p} (born 1970) is an American actor.", "is_supporting": False}
                for p in _PEOPLE]
    contexts += [{"title": f"Place {i}", "paragraph_text": f"A shop in {place}. A mill near {place}.",
                  "is_supporting": False} for i, place in enumerate(_PLACES)]
    contexts += [{"title": "Rice College", "paragraph_text": "Rice College is a college.", "is_supporting": False},
                 {"title": "Acme Records", "paragraph_text": "Acme Records is a label.", "is_supporting": False}]
    (tmp_path / "hotpotqa_dev250.jsonl").write_text(json.dumps({"contexts": contexts}) + "\n", encoding="utf-8")
    articles = [{"title": f"文章{i}", "paragraphs": [{"context": text, "qas": []}]} for i, text in enumerate([
        "张伟和李娜去了北京，北京市很大。", "王芳在广州工作，广州市很热。刘洋住在上海，上海市很大。", "陈静毕业于四川大学。"])]
    (tmp_path / "cmrc2018_trial.json").write_text(json.dumps({"data": articles}, ensure_ascii=False), encoding="utf-8")
    session = [{"speaker": "Ann", "dia_id": f"D1:{i}", "text": f"Line {i}."} for i in range(1, 4)]
    (tmp_path / "locomo_dev.json").write_text(json.dumps([{"conversation": {
        "speaker_a": "Ann", "speaker_b": "Bo", "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": session}}]), encoding="utf-8")
    return tmp_path


def test_generation_is_deterministic_and_every_question_has_its_evidence_stored(tmp_path):
    source = _sources(tmp_path / "src")
    src = Sources.read(source)
    chains = make_chains(src, random.Random(3), people=40, companies=8, background=4, per_kind=5)
    assert chains == make_chains(src, random.Random(3), people=40, companies=8, background=4, per_kind=5)
    for rec in chains:
        supporting = [c for c in rec["contexts"] if c["is_supporting"]]
        assert len(supporting) == int(rec["type"][0])  # "3-hop" / "4-hop": that many pages on the path
    written = generate(source, tmp_path / "out", 3, ["chains", "zh", "en", "zh_events"])
    for kind, path in written.items():
        es = load_dataset(path)
        assert es.questions, kind
        (tenant,) = es.tenants_for(es.questions)  # one store per file
        material = es.material(tenant)
        stored = {d.source_id: d.text for d in material.documents} | {t.source_id: t.text for t in material.turns}
        for q in es.questions:
            assert all(stored.get(e.source_id) == e.text for e in q.evidence), (kind, q.text)
        if kind != "chains":
            assert material.documents and material.turns  # a pooled memory
            assert {e.source_id for q in es.questions for e in q.evidence} & {t.source_id for t in material.turns}


def test_zh_users_is_one_tenant_per_user_holding_only_that_users_chat(tmp_path):
    source = _sources(tmp_path / "src")
    src = Sources.read(source)
    records = make_users(src, random.Random(5), users=3, people=3, questions=6, chats=5, lectures=1)
    assert records == make_users(src, random.Random(5), users=3, people=3, questions=6, chats=5, lectures=1)
    written = generate(source, tmp_path / "out", 5, ["zh_users", "zh_users_mixed", "zh_users_events"])
    for path in written.values():
        es = load_dataset(path)
        tenants = es.tenants_for(es.questions)
        assert len(tenants) == 6  # the default number of users, each its own store
        for tenant in tenants:
            material = es.material(tenant)
            asked = [q for q in es.questions if q.tenant == tenant]
            turns = {t.source_id: t.text for t in material.turns}
            assert not material.documents  # a user's memory is what they said, not notes or foreign pages
            assert all(turns.get(e.source_id) == e.text for q in asked for e in q.evidence)
        kinds = Counter(qa["kind"] for rec in json.loads(path.read_text("utf-8")) for qa in rec["qa"])
        assert kinds["said-template"] == kinds["said-paraphrase"] > 0
    mixed = {qa["attribute"] for rec in json.loads(written["zh_users_mixed"].read_text("utf-8")) for qa in rec["qa"]}
    assert mixed & {"size", "lead"} and mixed & {"birthday", "hometown", "work"}  # events beside people
    records = json.loads(written["zh_users_events"].read_text("utf-8"))
    assert all(rec["sample_id"].startswith("zh-events-user") for rec in records)  # tenants of their own

    def turns(record: dict) -> int:
        return sum(len(v) for k, v in record["conversation"].items() if k.startswith("session_") and isinstance(v, list))

    plain = json.loads(written["zh_users"].read_text("utf-8"))
    assert all(turns(rec) > turns(other) for rec, other in zip(records, plain))  # a busier memory than the plain set
    asked = Counter(qa["attribute"] for rec in records for qa in rec["qa"])
    assert asked["size"] + asked["lead"] > asked["birthday"] + asked["hometown"] + asked["work"]  # mostly events


def test_the_unseen_kind_asks_by_time_words_the_events_kind_never_uses(tmp_path):
    from benchmarks.dev_material.pools import _ZH_EVENTS, UNSEEN_TIMES

    seen = {word for pair in _ZH_EVENTS["times"] for word in pair}
    unseen = {word for pair in UNSEEN_TIMES for word in pair}
    assert not seen & unseen
    source = _sources(tmp_path / "src")
    written = generate(source, tmp_path / "out", 5, ["zh_users_events", "zh_users_events_unseen"])
    records = json.loads(written["zh_users_events_unseen"].read_text("utf-8"))
    assert all(rec["sample_id"].startswith("zh-events-unseen") for rec in records)
    asked = [qa["question"] for rec in records for qa in rec["qa"]]
    assert sum(any(word in q for word in unseen) for q in asked) > len(asked) / 2  # mostly events, by their times
    assert not any(word in q for q in asked for word in seen)
    told = " ".join(t["text"] for rec in records for k, v in rec["conversation"].items()
                    if k.startswith("session_") and isinstance(v, list) for t in v)
    assert any(first in told for first, _ in UNSEEN_TIMES)
    # a pair's second spelling is only asked, never told (unless it is part of the first: 去年圣诞 / 去年圣诞节)
    assert not [second for first, second in UNSEEN_TIMES if second not in first and second in told]


def test_the_weekday_kind_names_each_day_two_ways_that_are_one_keyword_term(tmp_path):
    from agent_memory.core.text import keyword_terms
    from benchmarks.dev_material.pools import _ZH_EVENTS, UNSEEN_TIMES, WEEKDAY_TIMES

    others = {word for pair in (*_ZH_EVENTS["times"], *UNSEEN_TIMES) for word in pair}
    for first, second in WEEKDAY_TIMES:
        assert first != second and not {first, second} & others
        assert keyword_terms(first) == keyword_terms(second) and len(keyword_terms(first)) == 1, (first, second)
    source = _sources(tmp_path / "src")
    written = generate(source, tmp_path / "out", 5, ["zh_users_events_weekdays"])
    records = json.loads(written["zh_users_events_weekdays"].read_text("utf-8"))
    assert all(rec["sample_id"].startswith("zh-events-weekdays") for rec in records)
    asked = [qa["question"] for rec in records for qa in rec["qa"]]
    assert sum(any(second in q for _, second in WEEKDAY_TIMES) for q in asked) > len(asked) / 4


def _deterministic_kind(tmp_path: Path, kind: str, make, **small) -> Path:
    """``make`` (a small run) gives the same records twice from one seed; the kind's file as generated."""
    source = _sources(tmp_path / "src")
    src = Sources.read(source)
    assert make(src, random.Random(7), **small) == make(src, random.Random(7), **small)
    return generate(source, tmp_path / "out", 7, [kind])[kind]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_group_chat_facts_are_told_by_their_speaker_in_the_first_person(tmp_path, lang):
    from benchmarks.dev_material.group_chat import make_group_chats

    path = _deterministic_kind(tmp_path, f"{lang}_group", make_group_chats, lang=lang, groups=2, friends=3,
                               chats=10, questions=8)
    es = load_dataset(path)
    tenants = es.tenants_for(es.questions)
    assert len(tenants) == 6  # one store per group
    for tenant in tenants:
        turns = {t.source_id: t for t in es.material(tenant).turns}
        speakers = {t.speaker for t in turns.values()}
        for q in (q for q in es.questions if q.tenant == tenant):
            [evidence] = q.evidence
            said = turns[evidence.source_id]
            assert said.speaker in q.text and said.speaker in speakers  # the question names who said it
            assert said.text == evidence.text and said.speaker not in said.text  # ... and the turn does not
    kinds = Counter(qa["kind"] for rec in json.loads(path.read_text("utf-8")) for qa in rec["qa"])
    assert kinds["said-template"] == kinds["said-paraphrase"] > 0


def test_zh_dated_questions_carry_their_day_and_name_one_outing(tmp_path):
    from benchmarks.dev_material.dated import make_dated

    path = _deterministic_kind(tmp_path, "zh_dated", make_dated, users=2, sessions=40, outings=20, questions=6)
    es = load_dataset(path)
    assert es.questions
    for q in es.questions:
        assert q.question_date and q.question_date.startswith("2024/")  # the loader reads a set's dated questions
        [evidence] = q.evidence
        turns = {t.source_id: t for t in es.material(q.tenant).turns}
        told = turns[evidence.source_id]
        assert told.speaker == "小林" and q.answers[0] in told.text  # the outing's turn names the answer


def test_zh_dated_late_outings_are_told_by_their_own_time(tmp_path):
    """Each outing is told days or weeks after it happened, by the time it happened; the question's phrase
    names the months the outing happened in (the window a turn's own words give, counted from when it was said)."""
    from datetime import timedelta

    from agent_memory.retrieval.when import DateSlack, parse_stamp, question_window, told_window
    from benchmarks.dev_material.dated import make_dated

    path = _deterministic_kind(tmp_path, "zh_dated_late", make_dated, users=2, sessions=40, outings=20,
                               questions=6, late=True)
    es = load_dataset(path)
    assert es.questions
    for q in es.questions:
        [evidence] = q.evidence
        told = {t.source_id: t for t in es.material(q.tenant).turns}[evidence.source_id]
        assert told.text.startswith(("上周", "上个月", "三天前", "前天")) and q.answers[0] in told.text
        said = parse_stamp(told.timestamp)
        happened = told_window(told.text, said)
        asked = question_window(q.text, parse_stamp(q.question_date), DateSlack(0, 0))
        assert happened is not None and asked is not None and happened.start < asked.stop
        assert happened.stop <= said.replace(hour=0, minute=0) + timedelta(days=1)  # told after it happened


def test_en_users_events_is_the_english_per_user_events_set(tmp_path):
    from benchmarks.dev_material.users_en import EN_TIMES, make_en_users

    path = _deterministic_kind(tmp_path, "en_users_events", make_en_users, users=2, people=3, events=10,
                               chats=5, questions=8, lectures=1)
    es = load_dataset(path)
    tenants = es.tenants_for(es.questions)
    assert len(tenants) == 6  # one store per user
    for tenant in tenants:
        material = es.material(tenant)
        turns = {t.source_id: t.text for t in material.turns}
        assert not material.documents  # what the user said, not notes or foreign pages
        assert all(turns.get(e.source_id) == e.text for q in es.questions if q.tenant == tenant for e in q.evidence)
    records = json.loads(path.read_text("utf-8"))
    assert all(rec["sample_id"].startswith("en-events-user") for rec in records)
    kinds = Counter(qa["kind"] for rec in records for qa in rec["qa"])
    assert kinds["said-template"] == kinds["said-paraphrase"] > 0
    asked = Counter(qa["attribute"] for rec in records for qa in rec["qa"])
    assert asked["size"] + asked["lead"] > asked["birthday"] + asked["hometown"] + asked["work"]  # mostly events
    told = " ".join(t["text"] for rec in records for k, v in rec["conversation"].items()
                    if k.startswith("session_") and isinstance(v, list) for t in v)
    questions = [qa["question"] for rec in records for qa in rec["qa"]]
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in told + "".join(questions))  # English throughout
    assert any(first in told for first, _ in EN_TIMES)
    assert any(second in q for q in questions for _, second in EN_TIMES)  # paraphrases ask by the other spelling
    assert not [second for _, second in EN_TIMES if second in told]  # ... which is never told


def _named(phrase: str, day):
    """What an English time word of the dated kind names, said on ``day``, by ordinary calendar reading
    (written apart from the generator, so that the two must agree)."""
    from datetime import timedelta

    monday = day - timedelta(days=day.weekday())
    first_month = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
    for season, month in first_month.items():
        if phrase in (f"last {season}", f"this past {season}"):  # the latest such season over before the day
            year = day.year
            while (year + (month + 3 > 12), (month + 2) % 12 + 1) > (day.year, day.month):
                year -= 1
            return "season", month, year
        if phrase in (f"in the {season} of last year", f"during the {season} last year"):
            return "season", month, day.year - 1
    return {
        "last Friday": ("day", day - timedelta(days=(day.weekday() - 4) % 7 or 7)),
        "on Friday last week": ("day", monday - timedelta(days=3)),
        "next March": ("month", day.year + (day.month >= 3), 3), "in March next year": ("month", day.year + 1, 3),
        "the week before last": ("week", monday - timedelta(days=14)),
        "two weeks ago": ("week", monday - timedelta(days=14)),  # the week of the day fourteen days back
        "last month": ("month", *divmod(day.year * 12 + day.month - 2, 12)),
        "the previous month": ("month", *divmod(day.year * 12 + day.month - 2, 12)),
        "this Easter": ("easter", day.year), "over Easter this year": ("easter", day.year),
        "the year before last": ("year", day.year - 2), "two years ago": ("year", (day - timedelta(days=730)).year),
    }[phrase]


def test_en_users_events_dated_time_words_agree_with_the_sessions_dates_as_of_the_question_date(tmp_path):
    """Each time word a turn says names, counted from the day it was said, what the question's words (the
    template's or the paraphrase) name on the day the question is asked; the questions carry that day."""
    from agent_memory.retrieval.when import parse_stamp
    from benchmarks.dev_material.dated_sessions import ASKED
    from benchmarks.dev_material.users_en import EN_TIMES_DATED, make_en_users

    path = _deterministic_kind(tmp_path, "en_users_events_dated", make_en_users, users=2, people=3, events=10,
                               chats=5, questions=8, lectures=1, dated=True)
    es = load_dataset(path)
    assert es.questions and all(parse_stamp(q.question_date) == ASKED for q in es.questions)
    records = json.loads(path.read_text("utf-8"))
    assert all(rec["sample_id"].startswith("en-events-dated") for rec in records)
    checked = 0
    for rec in records:
        conversation = rec["conversation"]
        dates = [parse_stamp(conversation[f"session_{n}_date_time"])
                 for n in range(1, sum(k.endswith("_date_time") for k in conversation) + 1)]
        assert dates == sorted(dates) and dates[-1] < ASKED  # sessions in order, all before the question
        for number, said in enumerate(dates, 1):
            for turn in conversation[f"session_{number}"]:
                assert turn["dia_id"].startswith(f"D{number}:")
                for told, paraphrase, _ in EN_TIMES_DATED:
                    if told in turn["text"]:
                        named = _named(told, said.date())
                        assert named == _named(told, ASKED.date()) == _named(paraphrase, ASKED.date()), (
                            told, said, turn["text"])
                        checked += 1
    assert checked > 20
    for tenant in es.tenants_for(es.questions):  # the evidence followed its turns into the new sessions
        turns = {t.source_id: t.text for t in es.material(tenant).turns}
        assert all(turns.get(e.source_id) == e.text for q in es.questions if q.tenant == tenant for e in q.evidence)


def test_en_users_events_dated_words_would_disagree_on_the_undated_kinds_days():
    """The check above has teeth: said on a day of en_users_events' calendar, the week's and the month's words
    name other days than on the question's day."""
    from datetime import date

    from benchmarks.dev_material.dated_sessions import ASKED

    asked = ASKED.date()
    assert _named("last Friday", date(2024, 4, 11)) != _named("last Friday", asked)
    assert _named("last month", date(2024, 3, 20)) != _named("last month", asked)
    assert _named("last winter", asked) == _named("this past winter", asked)


def _zh_named(phrase: str, day):
    """What a Chinese time word of ``zh_users_events_dated`` names, said on ``day``: 上个月 / 上月 the month before
    it; the others (去年 / 今年 / 前年 / 明年 and a season, a festival or a month) a year counted from the day's."""
    if phrase in ("上个月", "上月"):
        return (day.year - (day.month == 1), (day.month - 2) % 12 + 1)
    return day.year


def test_zh_users_events_dated_time_words_agree_with_the_sessions_dates_as_of_the_question_date(tmp_path):
    from agent_memory.retrieval.when import parse_stamp
    from benchmarks.dev_material.dated_sessions import ASKED, ZH_TIMES_DATED, make_zh_users_dated

    path = _deterministic_kind(tmp_path, "zh_users_events_dated", make_zh_users_dated, users=2, people=3,
                               events=10, chats=5, questions=8, lectures=1)
    es = load_dataset(path)
    assert es.questions and all(parse_stamp(q.question_date) == ASKED for q in es.questions)
    checked = 0
    for rec in json.loads(path.read_text("utf-8")):
        assert rec["sample_id"].startswith("zh-events-dated")
        conversation = rec["conversation"]
        dates = [parse_stamp(conversation[f"session_{n}_date_time"])
                 for n in range(1, sum(k.endswith("_date_time") for k in conversation) + 1)]
        assert dates == sorted(dates) and dates[-1] < ASKED
        for number, said in enumerate(dates, 1):
            for turn in conversation[f"session_{number}"]:
                for told, paraphrase, _ in ZH_TIMES_DATED:
                    if told in turn["text"]:
                        assert _zh_named(told, said.date()) == _zh_named(told, ASKED.date()) == _zh_named(
                            paraphrase, ASKED.date()), (told, said, turn["text"])
                        checked += 1
    assert checked > 20
    assert _zh_named("上个月", datetime(2024, 3, 20).date()) != _zh_named("上个月", ASKED.date())  # the check has teeth


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_users_updates_ask_for_the_latest_change_and_the_one_before_it_on_a_day_after_both(tmp_path, lang):
    from benchmarks.dev_material.updates import make_updates

    path = _deterministic_kind(tmp_path, f"{lang}_users_updates", make_updates, lang=lang, users=2, sessions=12)
    es = load_dataset(path)
    records = {rec["sample_id"]: rec for rec in json.loads(path.read_text("utf-8"))}
    assert es.questions
    kinds = Counter()
    for rec in records.values():
        by_attribute: dict[str, dict[str, dict]] = {}
        for qa in rec["qa"]:
            kinds[qa["kind"].split("-")[0]] += 1
            by_attribute.setdefault(qa["attribute"], {})[qa["kind"].split("-")[0]] = qa
        conversation = rec["conversation"]
        last_session = max(int(k.split("_")[1]) for k in conversation if k.endswith("_date_time"))
        last_said = datetime.strptime(conversation[f"session_{last_session}_date_time"], "%I:%M %p on %d %B, %Y")
        for pair in by_attribute.values():
            now, before = pair["now"], pair["before"]
            assert datetime.strptime(now["question_date"], "%Y/%m/%d (%a) %H:%M") > last_said  # asked after all
            assert now["answer"] in before["question"]  # "where did I live before <the latest>?"
            sessions = []
            for qa in (before, now):
                [dia] = qa["evidence"]
                session, turn = dia[1:].split(":")
                said = conversation[f"session_{session}"][int(turn) - 1]
                assert said["speaker"] == conversation["speaker_a"] and qa["answer"] in said["text"]
                sessions.append(int(session))
            assert sessions[0] < sessions[1]  # the change asked about as "now" was told after the one before it
    assert kinds["now"] == kinds["before"] > 0


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_users_aggregates_ask_for_every_doing_of_a_kind_the_user_told_of(tmp_path, lang):
    from benchmarks.dev_material.aggregates import _EN_KINDS, _ZH_KINDS, make_aggregates

    path = _deterministic_kind(tmp_path, f"{lang}_users_aggregates", make_aggregates, lang=lang, users=2, sessions=12)
    table = _ZH_KINDS if lang == "zh" else _EN_KINDS
    assert load_dataset(path).questions
    shapes = Counter()
    for rec in json.loads(path.read_text("utf-8")):
        conversation = rec["conversation"]
        turns = {t["dia_id"]: t for k, v in conversation.items() if k.startswith("session_") and isinstance(v, list)
                 for t in v}
        for qa in rec["qa"]:
            shapes[qa["kind"]] += 1
            values = qa["answer"].split(", ")
            _, wordings, _, _, _ = table[qa["attribute"]]
            mine = {w.format(v=v): v for w in wordings for v in values}
            # The evidence is every turn in which the user tells of one of the values in the kind's own wordings,
            # one value a turn, each value once; nothing else the user said is worded so.
            told = [t for t in turns.values() if t["speaker"] == conversation["speaker_a"] and t["text"] in mine]
            assert sorted(t["dia_id"] for t in told) == sorted(qa["evidence"])
            assert sorted(mine[t["text"]] for t in told) == sorted(values) and 3 <= len(values) <= 4
            # The question names the kind, never the words its evidence is told in.
            assert not any(v in qa["question"] for v in values)
    assert shapes["count"] == shapes["list-template"] + shapes["list-paraphrase"] > 0


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_users_recalls_ask_for_what_the_assistant_recommended_in_a_named_situation(tmp_path, lang):
    from benchmarks.dev_material.recalls import _EN_TYPES, _ZH_TYPES, make_recalls

    path = _deterministic_kind(tmp_path, f"{lang}_users_recalls", make_recalls, lang=lang, users=2, sessions=16)
    table = _ZH_TYPES if lang == "zh" else _EN_TYPES
    values = [x for situations, _ in table.values() for *_, xs in situations for x in xs]
    assert not [(a, b) for a in values for b in values if a != b and a in b]  # no value said inside another
    assert load_dataset(path).questions
    shapes = Counter()
    for rec in json.loads(path.read_text("utf-8")):
        conversation = rec["conversation"]
        user, assistant = conversation["speaker_a"], conversation["speaker_b"]
        turns = [t for k, v in conversation.items() if k.startswith("session_") and isinstance(v, list) for t in v]
        before = {t["dia_id"]: turns[i - 1] for i, t in enumerate(turns) if i}
        assert 12 <= len(rec["qa"]) <= 16  # six to eight asks, two questions each
        asked = set()
        for qa in rec["qa"]:
            shapes[qa["kind"]] += 1
            asked.add(qa["attribute"])
            [(ask, answer)] = [(ask, answer) for ask, answer, questions, _ in table[qa["attribute"]][0]
                               if qa["question"] in questions]
            [dia] = qa["evidence"]
            # The evidence is the assistant's answer to the user's ask, and the only turn that says the answer.
            [said] = [t for t in turns if qa["answer"] in t["text"]]
            assert said["dia_id"] == dia and said["speaker"] == assistant
            assert said["text"] == answer.format(v=qa["answer"])
            assert before[dia]["speaker"] == user and before[dia]["text"] == ask
            assert qa["answer"] not in qa["question"]  # the question names the situation, not the answer
        for kind in asked:
            situations, others = table[kind]
            answers = {answer.format(v=x) for _, answer, _, xs in situations for x in xs}
            given = [t for t in turns if t["speaker"] == assistant and t["text"] in answers]
            # Other people's recommendations, told by the user in the type's own wordings.
            told = [t for t in turns if t["speaker"] == user and any(
                t["text"].endswith(w.split("{p}")[1].format(v=x)) for w in others for *_, xs in situations for x in xs)]
            # Of every asked type the assistant also answered a situation nobody asks about, and others recommended.
            assert len(given) > sum(qa["attribute"] == kind for qa in rec["qa"]) // 2 and told
    assert shapes["recall-template"] == shapes["recall-paraphrase"] > 0


# Words too common to link a question to a statement: what remains is a content word.
_FUNCTION_WORDS = {"about", "been", "could", "from", "have", "into", "just", "more", "should", "some", "than", "that",
                   "them", "then", "there", "these", "they", "this", "what", "when", "where", "which", "with", "would",
                   "your"}


def _shared_words(question: str, text: str, lang: str) -> set[str]:
    """What a question and a turn share by keywords: in Chinese any two Han characters in a row, in English any
    word of four letters or more beyond a few function words."""
    def words(t: str) -> set[str]:
        if lang == "zh":
            return {run[i:i + 2] for run in re.findall(r"[\u4e00-\u9fff]+", t) for i in range(len(run) - 1)}
        return set(re.findall(r"[a-z]{4,}", t.lower())) - _FUNCTION_WORDS

    return words(question) & words(text)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_users_preferences_ask_for_a_recommendation_the_users_own_preference_decides(tmp_path, lang):
    from benchmarks.dev_material.preferences import _EN_DOMAINS, _ZH_DOMAINS, make_preferences

    path = _deterministic_kind(tmp_path, f"{lang}_users_preferences", make_preferences, lang=lang, users=2,
                               sessions=16)
    table = _ZH_DOMAINS if lang == "zh" else _EN_DOMAINS
    values = [x for _, xs, _, _ in table.values() for x in xs]
    assert len(table) >= 10 and len(set(values)) == len(values) == 3 * len(table)
    assert not [(a, b) for a in values for b in values if a != b and a in b]  # no value said inside another
    # No question shares a content word with a statement of its domain, whichever value fills it.
    assert not [(q, s, x) for statements, xs, questions, _ in table.values() for s in statements for x in xs
                for q in questions if _shared_words(q, s.format(v=x), lang)]
    assert load_dataset(path).questions
    shapes = Counter()
    records = json.loads(path.read_text("utf-8"))
    for rec in records:
        conversation = rec["conversation"]
        said = [t for k, v in conversation.items() if k.startswith("session_") and isinstance(v, list) for t in v
                if t["speaker"] == conversation["speaker_a"]]
        mine = {qa["answer"] for qa in rec["qa"]}
        assert len(rec["qa"]) == 2 * len(mine) == 12  # six domains, two questions each
        for qa in rec["qa"]:
            shapes[qa["kind"]] += 1
            statements, xs, questions, _ = table[qa["attribute"]]
            assert qa["answer"] in xs and qa["question"] in questions
            # The evidence is the user's statement of the preference, the only turn of theirs that says it.
            [dia] = qa["evidence"]
            [told] = [t for t in said if qa["answer"] in t["text"]]
            assert told["dia_id"] == dia and told["text"] in {s.format(v=qa["answer"]) for s in statements}
            assert not _shared_words(qa["question"], told["text"], lang), (qa["question"], told["text"])
        # Each preference told in a session of its own.
        assert len({qa["evidence"][0].split(":")[0] for qa in rec["qa"]}) == len(mine)
        for domain in {qa["attribute"] for qa in rec["qa"]}:
            _, xs, _, others = table[domain]
            value = "(" + "|".join(map(re.escape, xs)) + ")"
            patterns = [re.compile(re.escape(w).replace(r"\{p\}", ".+?").replace(r"\{v\}", value)) for w in others]
            # Other people's preferences of the same domain, told by the user: never a value the user has.
            theirs = [m.group(1) for t in said for pattern in patterns if (m := pattern.fullmatch(t["text"]))]
            assert theirs and not set(theirs) & mine, (domain, theirs)
    assert shapes["preference-template"] == shapes["preference-paraphrase"] == 6 * len(records) > 0


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_users_preferences_changed_tell_each_preference_twice_and_ask_for_the_later(tmp_path, lang):
    from benchmarks.dev_material.preferences import _EN_DOMAINS, _ZH_DOMAINS, make_preferences

    path = _deterministic_kind(tmp_path, f"{lang}_users_preferences_changed", make_preferences, lang=lang, users=2,
                               sessions=16, changed=True)
    table = _ZH_DOMAINS if lang == "zh" else _EN_DOMAINS
    assert load_dataset(path).questions
    records = json.loads(path.read_text("utf-8"))
    assert all(rec["sample_id"].startswith(f"{lang}-preferences-changed") for rec in records)
    for rec in records:
        conversation = rec["conversation"]
        said = [t for k, v in conversation.items() if k.startswith("session_") and isinstance(v, list) for t in v
                if t["speaker"] == conversation["speaker_a"]]

        def session(dia: str) -> int:
            return int(dia[1:].split(":")[0])

        for qa in rec["qa"]:
            statements, xs, _, others = table[qa["attribute"]]
            own = [t for t in said if t["text"] in {s.format(v=x) for s in statements for x in xs}]
            # Told twice with two values, in two sessions; the evidence and the answer are the later one.
            assert len(own) == 2 and len({t["dia_id"] for t in own}) == 2
            earlier, later = sorted(own, key=lambda t: session(t["dia_id"]))
            assert session(earlier["dia_id"]) < session(later["dia_id"]) and qa["evidence"] == [later["dia_id"]]
            assert qa["answer"] in later["text"] and qa["answer"] not in earlier["text"]
            # Other people's preferences of the domain never carry a value the user told of themselves.
            told = {x for x in xs if any(x in t["text"] for t in own)}
            value = "(" + "|".join(map(re.escape, xs)) + ")"
            patterns = [re.compile(re.escape(w).replace(r"\{p\}", ".+?").replace(r"\{v\}", value)) for w in others]
            theirs = {m.group(1) for t in said for pattern in patterns if (m := pattern.fullmatch(t["text"]))}
            assert not theirs & told, (qa["attribute"], theirs, told)

