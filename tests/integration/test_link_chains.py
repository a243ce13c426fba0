"""A chain of three pages (person → company → city): the question names only the person; the
company is linked from the person's page, the city only from the company's page. One round of
links reaches the company; further rounds (link_rounds) reach the city, and the sentence that
names it sharing the question's words ("head office") strengthens its link
(link_sentence_match)."""

from __future__ import annotations

import pytest

from agent_memory.retrieval.config import load_preset
from agent_memory.retrieval.pipeline import RetrievalPipeline
from tests.helpers import titled_pages_services

QUESTION = "In which region is the head office of the company that employs Orla Venn?"
PAGES = {
    "Orla Venn": "Orla Venn is a chemist from the coast. Orla Venn works for Kestrel Dynamics. "
                 "She often visits Marlow Harbour.",
    "Kestrel Dynamics": "Kestrel Dynamics is a maker of pumps and valves. It sponsors the Tollen Rovers. "
                        "The head office of Kestrel Dynamics is in Brantwick.",
    "Brantwick": "Brantwick is a market town. It lies in the Vesper Vale.",
    # Named too, but not on the path.
    "Marlow Harbour": "Marlow Harbour is a fishing port with a lighthouse and a ferry.",
    "Tollen Rovers": "Tollen Rovers is a football club that plays in the second division of its region.",
    # Look-alikes: they share the question's words, not its entities.
    "Harrow Works": "Harrow Works is a company whose head office is in a northern region. The company "
                    "employs four hundred people.",
    "Penfold Group": "Penfold Group is a company that employs engineers; its head office is in the region "
                     "of the capital.",
    "Quill and Sons": "Quill and Sons is a company with a head office in the eastern region, which employs "
                      "carpenters.",
    "Dunmore Trading": "Dunmore Trading is a company that moved its head office to another region.",
}
BUDGET = 250
ROUNDS = {"link_rounds": 3, "link_sentence_match": 1.0}


@pytest.fixture(scope="module")
def services(tmp_path_factory):
    with titled_pages_services(tmp_path_factory.mktemp("chain") / "data", PAGES) as svc:
        yield svc


def _run(services, **overrides):
    # What the links do alone: the second hop (on by default) reaches a chain's pages by name too.
    overrides = {"second_hop": False, **overrides}
    with RetrievalPipeline(services, load_preset("documents", overrides)) as pipe:
        return pipe.run(QUESTION, tenant="default", budget=BUDGET, debug=True)


def _order(result) -> list[str]:
    return list(dict.fromkeys(row["source_id"] for row in result.fused))


def _note(result, source_id: str) -> str:
    return next((row["note"] for row in result.fused if row["source_id"] == source_id), "") or ""


def test_the_third_page_of_a_chain_is_reached_only_with_more_rounds_and_sentence_match(services):
    once = _run(services, link_sentence_match=0.0)
    chained = _run(services, **ROUNDS)
    # One round: the company is linked from the person's page; nothing links the city.
    assert "named in Orla Venn" in _note(once, "Kestrel Dynamics")
    assert "Brantwick" not in _note(once, "Brantwick")
    assert _order(once).index("Brantwick") >= 5 and "[S:Brantwick]" not in once.prompt
    # More rounds: the company's page is followed in its turn, and the city joins the top.
    assert _note(chained, "Brantwick") == "page of 'Brantwick', named in Kestrel Dynamics"
    assert set(_order(chained)[:3]) == {"Orla Venn", "Kestrel Dynamics", "Brantwick"}
    assert "[S:Brantwick]" in chained.prompt and chained.total_tokens <= BUDGET


def test_the_sentence_that_names_a_page_strengthens_the_link_the_question_asks_about(services):
    rounds_only = _run(services, link_rounds=3, link_sentence_match=0.0)
    both = _run(services, **ROUNDS)
    # The company's page links the club and the city; only the city's sentence ("The head office
    # of Kestrel Dynamics is in Brantwick.") shares the question's words, so its link counts double.
    assert _order(both).index("Brantwick") < _order(rounds_only).index("Brantwick")
    assert _order(both).index("Brantwick") < _order(both).index("Tollen Rovers")


def test_the_defaults_follow_links_once_with_sentence_match():
    # Sentence match held HotpotQA (0.970 / 0.944 vs 0.968 / 0.940 at 1,000); more rounds lost a
    # little there (soft 0.966), so they stay off (docs/journal/evaluation-diary.md).
    config = load_preset("default")
    assert config.link_rounds == 1 and config.link_sentence_match == 1.0


def test_the_second_hop_reaches_the_third_page_with_one_round_of_links(services):
    # The served default: one round of links reaches the company, and the hop from the company's page
    # (its names the question lacks, with the words it leaves unanswered) reaches the city.
    # By keyword alone the hop starts from the company's page; read by meaning too (the served default),
    # the person's page leads there first ("Kestrel Dynamics" with "region head office").
    by_keyword = _run(services, second_hop=True, link_sentence_match=0.0, hop_dense=False)
    assert "named in Kestrel Dynamics" in _note(by_keyword, "Brantwick")
    result = _run(services, second_hop=True, link_sentence_match=0.0)
    assert _note(result, "Brantwick").startswith("found by 'Kestrel Dynamics'")
    assert _order(result).index("Brantwick") <= _order(by_keyword).index("Brantwick")
