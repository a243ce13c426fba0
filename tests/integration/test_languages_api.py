"""One tenant, two languages, through the HTTP API on default settings: every text gets a dense
vector from a model that reads it; paraphrases and cross-lingual questions find their passage;
per-request presets and overrides are validated strictly."""

from __future__ import annotations

import httpx
import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread, wait_ready
from agent_memory.core.config import load_settings

DOCS = {
    # Chinese: a plant's opening and its output. The Chinese question below shares no word with it.
    "zh/factory": "这家工厂于二零一九年在苏州投产，主要生产电动汽车使用的锂电池，每年可供应四十万辆汽车。",
    "zh/tea": "西湖龙井是一种绿茶，产于浙江杭州西湖一带，以色绿、香郁、味甘、形美著称。",
    # Stated only in Chinese: the English question below asks about it.
    "zh/bridge": "港珠澳大桥全长五十五公里，连接香港、珠海和澳门，是世界上最长的跨海大桥。",
    "en/orchard": "The orchard behind the old mill grows twelve varieties of heritage apples and opens to "
                  "pickers every September.",
    "en/observatory": "The mountain observatory houses a two-metre reflecting telescope used to study "
                      "distant galaxies on clear winter nights.",
    "en/ferry": "The night ferry leaves the harbour at eleven and reaches the island before dawn.",
}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    settings = load_settings(data_dir=tmp_path_factory.mktemp("languages"), triple_extractor="none")
    with serve_in_thread(create_app(settings)) as url, httpx.Client(base_url=url, timeout=120) as http:
        wait_ready(http)
        for source_id, text in DOCS.items():
            response = http.post("/v1/documents", json={"source_id": source_id, "text": text})
            assert response.status_code == 200, response.text
        yield http


def top_source(client, question: str, **body) -> str:
    response = client.post("/v1/prompt", json={"question": question, "budget": 400, **body})
    assert response.status_code == 200, response.text
    passages = [p for p in response.json()["passages"] if p["section"] == "passages"]
    assert passages, response.json()["prompt"]
    return max(passages, key=lambda p: p["score"])["source_id"]


def test_a_chinese_paraphrase_finds_its_passage(client):
    assert top_source(client, "哪个厂子做车用电池？") == "zh/factory"  # no word of the passage


def test_an_english_paraphrase_finds_its_passage(client):
    assert top_source(client, "Where can I look at faraway star systems through a big mirror?") == "en/observatory"


def test_an_english_question_finds_a_fact_stated_only_in_chinese(client):
    assert top_source(client, "How long is the longest sea-crossing bridge linking Hong Kong and Macau?") \
        == "zh/bridge"


def test_per_request_presets_and_overrides_are_validated_by_name(client):
    ok = client.post("/v1/prompt", json={"question": "apples", "preset": "documents",
                                         "overrides": {"chunk_weights": {"dense": 0.9}}})
    assert ok.status_code == 200
    for body, name in (({"preset": "nope"}, "nope"), ({"overrides": {"chunk_weights": {"densse": 1}}}, "densse"),
                       ({"overrides": {"rerank_top": 0}}, "rerank_top")):
        bad = client.post("/v1/prompt", json={"question": "apples", **body})
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_retrieval_settings"
        assert name in bad.json()["error"]["message"]
