"""A named speaker's first person is that speaker, for triple extraction only (index/triples/speaker.py)."""

from __future__ import annotations

import pytest

from agent_memory.index.triples.speaker import fact_subjects, first_person_named, speaker_name, user_subjects_asked


@pytest.mark.parametrize("text, named", [
    ("I moved to Paris.", "Maria moved to Paris."),
    ("I'm a nurse; my sister called me.", "Maria is a nurse; Maria's sister called Maria."),
    ("I\u2019ve been to Oslo, I\u2019ll go again and I'd stay.", "Maria has been to Oslo, Maria will go again and Maria would stay."),
    ("My cat is mine. I did it myself.", "Maria's cat is Maria's. Maria did it Maria."),
    ("Is it Iris or IBM? Mike and Mia mean it.", "Is it Iris or IBM? Mike and Mia mean it."),  # no word is I
])
def test_english_first_person_words_become_the_speaker(text, named):
    assert first_person_named(text, "Maria") == named


def test_chinese_first_person_but_not_we():
    assert first_person_named("我住在北京，我们常去上海，我的猫叫小白。", "王芳") == "王芳住在北京，我们常去上海，王芳的猫叫小白。"


def test_a_name_with_a_backslash_is_text_not_a_group_reference():
    assert first_person_named("I left.", r"A\1") == r"A\1 left."


@pytest.mark.parametrize("speaker, name", [
    ("Caroline", "Caroline"), ("王芳", "王芳"), ("Mary-Jane O'Neil", "Mary-Jane O'Neil"),
    ("user", None), ("Assistant", None), ("助手", None), ("", None), ("\n[S:x] ignore", None), ("42", None),
])
def test_only_a_speaker_that_is_a_name_is_used(speaker, name):
    assert speaker_name({"speaker": speaker}) == name


@pytest.mark.parametrize("speaker, text, subject", [
    ("Maria", "I moved.", "Maria"), ("user", "I moved to Paris.", "User"), ("Human", "I moved.", "User"),
    ("user", "我搬到上海了。", "用户"), ("用户", "我搬家了。", "用户"), ("assistant", "I moved.", None),
    ("tool", "I moved.", None), ("system", "I moved.", None), ("", "I moved.", None),
])
def test_the_user_role_is_the_tenants_user_and_other_roles_name_nobody(speaker, text, subject):
    names = fact_subjects({"speaker": speaker})
    if subject is None:
        assert names is None
    else:
        assert first_person_named(text, *names).startswith(subject)  # each text opens with its first person


@pytest.mark.parametrize("question, asks_of_user", [
    ("Where do I live now?", True), ("What's my cat called?", True), ("Did I'm ... tell me?", True),
    ("我现在住在哪里？", True), ("Where does Maria live?", False), ("What is an iPhone?", False),
    ("我们上次去哪了？", False), ("Who wrote Mine Kampf-like books?", False),
    # An agent asks about the person it serves in the third person; a thing of users is not the user.
    ("Where does the user live now?", True), ("What is the user's cat called?", True), ("用户住在哪？", True),
    ("用户现在住哪里", True), ("How does the user interface load?", False), ("What do the users want?", False),
    ("用户名是什么？", False), ("用户数有多少？", False), ("Where does the username go?", False),
])
def test_a_question_in_the_first_person_or_about_the_user_asks_of_the_user(question, asks_of_user):
    assert bool(user_subjects_asked(question)) == asks_of_user


def test_a_verb_jieba_cut_from_its_directional_complement_is_one_relation_again():
    from agent_memory.index.triples.chinese import ChineseExtractor

    found = ChineseExtractor().extract("用户搬到上海了。", tenant="t", source_id="s", item_id="i")
    assert ("用户", "搬到", "上海") in {(t.subject, t.relation, t.object) for t in found}


def test_a_speaker_fact_group_the_functional_relations_lack_is_refused_at_start(tmp_path):
    from agent_memory.core.config import load_settings
    from agent_memory.core.errors import ConfigError

    assert load_settings(data_dir=tmp_path, speaker_fact_groups=["residence", "employer"]).speaker_fact_groups
    with pytest.raises(ConfigError, match="'hobby'"):
        load_settings(data_dir=tmp_path, speaker_fact_groups=["hobby"])


@pytest.mark.parametrize("text, named", [
    # "Bob live in Madrid" is no sentence the tagger parses: Bob's home was read as related_to, or nothing.
    ("I live in Madrid.", "Bob lives in Madrid."),
    ("I still live in Rome and I work at Acme.", "Bob still lives in Rome and Bob works at Acme."),
    ("I have a cat; I do, I go, I don't.", "Bob has a cat; Bob does, Bob goes, Bob doesn't."),
    ("I moved, I left, I can stay.", "Bob moved, Bob left, Bob can stay."),  # past tense and modals stay
])
def test_a_present_verb_after_the_first_person_agrees_with_the_name(text, named):
    assert first_person_named(text, "Bob") == named


def test_the_user_is_named_by_each_sentences_script():
    """A mixed message's English first person is User and its Chinese one 用户: each extractor reads its own
    run, and "用户 moved to Paris" gave the English extractor no fact at all."""
    assert first_person_named("I moved to Paris. 我很开心。", "User", "用户") == "User moved to Paris. 用户很开心。"
    assert first_person_named("I moved. 我很开心。", "王芳") == "王芳 moved. 王芳很开心。"  # a name is one name


@pytest.mark.parametrize("text, named", [
    # Someone else's words, quoted, are theirs: the user's friend lives in Rome, not the user.
    ("My friend said: I live in Rome.", "User's friend said: I live in Rome."),
    ('I told her "I live in Rome" and I moved.', 'User told her "I live in Rome" and User moved.'),
    ("我朋友说：“我住在罗马。”我搬家了。", "用户朋友说：“我住在罗马。”用户搬家了。"),
])
def test_quoted_words_keep_their_own_first_person(text, named):
    assert first_person_named(text, "User", "用户") == named


@pytest.mark.parametrize("speaker, text, kept", [
    # "my boss" named is "Lin's boss": a fact naming Lin only through the first person, not a home, is chat
    ("Lin", "Marion Lindberg took over as my boss today.", set()),
    ("Tim", "Timothy Reed took over as my boss today.", set()),
    # the turn names its speaker itself: its facts are kept as any other text's
    ("Lin", "Lin's boss is Marion Lindberg, I said.", {("Lin", "Marion Lindberg")}),
    ("Lin", "I just moved to Atlanta.", {("Lin", "Atlanta")}),  # a home: kept
])
def test_a_speaker_is_named_by_a_turn_only_as_a_word_not_inside_another_name(speaker, text, kept):
    from agent_memory.core.records import MemoryItem
    from agent_memory.index.triples import RuleBasedExtractor
    from agent_memory.ingest.graph_writes import extract_triples
    from agent_memory.ingest.items import SourceItems

    unit = SourceItems("acme", "chat/m1", "turn", "h")
    unit.items = [MemoryItem(id="i1", tenant="acme", source_id="chat/m1", kind="turn", text=text,
                             metadata={"speaker": speaker})]
    triples, _, _ = extract_triples(RuleBasedExtractor(), [unit],
                                    speaker_relations={"residence": ["live in", "move to"]})
    named = {(t.subject, t.object) for t in triples if speaker in (t.subject, t.object)}
    assert named == kept
