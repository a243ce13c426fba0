"""The "non_english" routing rule (agent_memory/core/embedding_spaces.py): a Latin-script text that the language
identifier reads as another language than English goes to the multilingual model; short or uncertain English
chit-chat, and an English text that quotes or names something in another language, stay with the English one."""

from __future__ import annotations

import pytest

from agent_memory.core.embedding_spaces import reads_as_other_language, reads_multilingual
from agent_memory.core.errors import ConfigError
from agent_memory.core.extras import has_extra

needs_identifier = pytest.mark.skipif(not has_extra("py3langid"), reason="the languages extra is not installed")

FRENCH = "Le mois dernier, je suis passée dans une agence de publicité à Lyon, dans le quartier de la Croix-Rousse."
GERMAN = "Letzten Monat habe ich zu einer Werbeagentur in Hamburg-Altona gewechselt."
SPANISH = "Me he comprado un iPhone 15, pero la batería se me acaba enseguida."
ITALIAN = "Mi sono comprata un iPhone 15, ma la batteria si scarica continuamente."
VIETNAMESE = "Hôm qua tôi đã đi chợ với mẹ và mua rất nhiều rau."
SHORT_FRENCH = "Bonne chance !"
SHORT_ENGLISH = ["Wow, thanks!", "Bye Nate!", "See ya!", "Joanna: See ya Nate!", "Ah ha ha, yeah, JUST DOING IT!", "ok", "Totally! Bye Nate!",
                 "Melanie went camping with her kids last weekend."]
ENGLISH_QUOTING_GERMAN = ('Anna said "Ich habe eine gebrauchte Kamera gekauft" and showed me the photos she took on '
                          "the coast near Travemünde last weekend.")
# Its Cyrillic letters are under the share; the rest is read as English, the Cyrillic left out.
ENGLISH_WITH_A_NATIVE_NAME = ("Pyotr Ilyich Tchaikovsky (Пётр Ильич Чайковский) was a Russian composer of the "
                              "Romantic period whose works include Swan Lake, The Nutcracker and six symphonies, "
                              "and who toured the United States in 1891 to open Carnegie Hall in New York.")
GERMAN_WITH_ENGLISH_WORDS = "Wir bringen nächste Woche eine neue App heraus, das Meeting mit dem Kunden ist am Montag."


@needs_identifier
@pytest.mark.parametrize("text", [FRENCH, GERMAN, SPANISH, ITALIAN, VIETNAMESE, SHORT_FRENCH, GERMAN_WITH_ENGLISH_WORDS])
def test_a_latin_script_text_in_another_language_goes_to_the_multilingual_model(text):
    assert reads_as_other_language(text)
    assert reads_multilingual(text, "non_english", 0.1)


@needs_identifier
@pytest.mark.parametrize("text", [*SHORT_ENGLISH, ENGLISH_QUOTING_GERMAN, ENGLISH_WITH_A_NATIVE_NAME])
def test_english_short_or_long_stays_with_the_english_model(text):
    assert not reads_multilingual(text, "non_english", 0.1)


@needs_identifier
@pytest.mark.parametrize("text", ["Und?", "Et alors ?", "", "1,234 km — 12:30", "VVVXV", "data:image/svg+xml;base64,"
                                  "PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxMDAgMTAwIj4="])
def test_a_text_too_short_or_in_no_language_stays(text):
    assert not reads_as_other_language(text)


@needs_identifier
def test_the_script_rules_never_ask_the_language():
    assert not reads_multilingual(FRENCH, "non_latin", 0.1) and not reads_multilingual(FRENCH, "cjk", 0.1)
    # Letters of other scripts send a text there under every rule that counts them, "non_english" too.
    for rule in ("non_latin", "non_english"):
        assert reads_multilingual("Ольга работает медсестрой в больнице.", rule, 0.1)


def test_the_rule_without_its_extra_is_a_config_error_naming_it(monkeypatch):
    from agent_memory.core import extras
    from agent_memory.core.embedding_spaces import EmbeddingSpaces, SpaceLayout

    class Stub:
        dimension = 384

    real_find_spec = extras.importlib.util.find_spec
    monkeypatch.setattr(extras.importlib.util, "find_spec",
                        lambda name, *a: None if name == "py3langid" else real_find_spec(name, *a))
    layout = SpaceLayout("english", "multilingual", 0.1, "non_english")
    with pytest.raises(ConfigError, match=r"multilingual_scripts='non_english'.*agent-memory\[languages\]"):
        EmbeddingSpaces({"english": Stub(), "multilingual": Stub()}, layout, {})
    # The script rules never need it.
    EmbeddingSpaces({"english": Stub(), "multilingual": Stub()}, SpaceLayout("english", "multilingual", 0.1,
                                                                            "non_latin"), {})
