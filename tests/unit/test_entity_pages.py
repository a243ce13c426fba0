"""Entity pages: title keys, the catalog's title index, and the names a text mentions."""

from __future__ import annotations

import sqlite3

from agent_memory.retrieval.pages import mentioned_names
from agent_memory.stores.catalog import Catalog, SourceEntry, title_key


def test_title_key_drops_disambiguation_article_and_case():
    assert title_key("The Conversation (website)") == title_key("the conversation") == "conversation"
    assert title_key("Winner (band)") == title_key("WINNER") == "winner"
    assert title_key("End of Days (film)") == "end of days"
    # A title that is only a parenthesis keeps its text rather than becoming empty.
    assert title_key("(untitled)") == "untitled"
    assert title_key("") == ""


def test_mentioned_names_are_capitalized_spans_with_free_inner_words():
    names = mentioned_names('The song was on the soundtrack to the film "End of Days" by Guns N\' Roses.')
    assert "End of Days" in names and "Guns N' Roses" in names
    assert "soundtrack" not in names and "The" not in names
    assert "王法慧" in mentioned_names("于是晋孝武帝娶了王法慧")


def _entry(source_id: str, title: str) -> SourceEntry:
    return SourceEntry(tenant="t", source_id=source_id, kind="document", content_hash="h", title=title)


def test_catalog_finds_pages_by_title_and_forgets_them(tmp_path):
    catalog = Catalog(tmp_path / "catalog.sqlite")
    catalog.put_many([_entry("p1", "Winner (band)"), _entry("p2", "2014 S/S"), _entry("p3", "")])
    assert catalog.titled("t", ["WINNER", "nobody", "2014 S/S"]) == {"WINNER": ["p1"], "2014 S/S": ["p2"]}
    assert catalog.titled("other-tenant", ["WINNER"]) == {}
    # A retitled source moves; a deleted one is gone.
    catalog.put_many([_entry("p1", "Loser (band)")])
    assert catalog.titled("t", ["winner", "loser"]) == {"loser": ["p1"]}
    assert catalog.delete("t", "p1")
    assert catalog.titled("t", ["loser"]) == {}
    catalog.close()


def test_a_catalog_from_before_the_title_index_is_backfilled(tmp_path):
    path = tmp_path / "catalog.sqlite"
    old = Catalog(path)
    old.put_many([_entry("p1", "Catwoman (film)")])
    old.close()
    with sqlite3.connect(path) as conn:  # what a catalog written by an older version holds
        conn.execute("DROP TABLE titles")
    reopened = Catalog(path)
    assert reopened.titled("t", ["Catwoman"]) == {"Catwoman": ["p1"]}
    reopened.close()
