"""A named speaker's first person is that speaker, for triple extraction only (index/triples/speaker.py)."""

from __future__ import annotations

import pytest

from agent_memory.index.triples.speaker import first_person_named, speaker_name


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


def test_a_speaker_fact_group_the_functional_relations_lack_is_refused_at_start(tmp_path):
    from agent_memory.core.config import load_settings
    from agent_memory.core.errors import ConfigError

    assert load_settings(data_dir=tmp_path, speaker_fact_groups=["residence", "employer"]).speaker_fact_groups
    with pytest.raises(ConfigError, match="'hobby'"):
        load_settings(data_dir=tmp_path, speaker_fact_groups=["hobby"])
