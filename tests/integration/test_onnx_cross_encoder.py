"""A BERT cross-encoder runs through ONNX Runtime without torch and gives transformers' logits; the retrieval
pipeline re-orders its first candidates with it where ``cross_encoder_model`` names one, and a folder that is
missing or holds another model is refused when the services start."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agent_memory.core.config import load_settings
from agent_memory.core.embedding import packaged_minilm_path
from agent_memory.core.errors import ConfigError
from agent_memory.core.onnx_cross_encoder import CrossEncoderDir, OnnxCrossEncoder
from agent_memory.services import build_services
from tests.helpers import REPO, embedded_cli_env, run_cli
from tests.tiny_cross_encoder import tiny_config, write_tiny_model

REFERENCE = json.loads((Path(__file__).parent.parent / "fixtures" / "cross_encoder_reference.json")
                       .read_text(encoding="utf-8"))
VARIABLE = "AGENT_MEMORY_CROSS_ENCODER_MODEL"


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("cross-encoder") / "tiny")


# ---- the runtime against transformers ------------------------------------------------------------

@pytest.mark.parametrize("prefix", ["bert.", ""], ids=["bert-prefix", "no-prefix"])
def test_logits_are_transformers_logits(tmp_path, prefix):
    """Against the logits transformers recorded (scripts/record_cross_encoder_reference.py): English pairs, a
    passage cut to the limit, Chinese, an empty passage; the tensors saved with and without ``bert.``."""
    model = OnnxCrossEncoder(write_tiny_model(tmp_path / "tiny", prefix))
    limit = REFERENCE["max_tokens"]
    ids, types, logits = [], [], []
    for question, passage in REFERENCE["pairs"]:
        pair_ids, pair_types = model.encode(question, [passage], limit)
        ids += pair_ids
        types += pair_types
        logits += model.score(question, [passage], max_tokens=limit)
    assert ids == REFERENCE["input_ids"] and types == REFERENCE["token_type_ids"]
    assert max(len(i) for i in ids) == limit  # the long passage was cut, the question kept whole
    assert np.abs(np.array(logits) - REFERENCE["logits"]).max() < 1e-4


def test_a_padded_batch_gives_each_pair_its_own_logit(tiny_dir):
    model = OnnxCrossEncoder(tiny_dir)
    question = REFERENCE["pairs"][0][0]
    passages = [p for q, p in REFERENCE["pairs"] if q == question]
    alone = [model.score(question, [p], max_tokens=REFERENCE["max_tokens"])[0] for p in passages]
    together = model.score(question, passages, max_tokens=REFERENCE["max_tokens"], batch=2)
    assert np.abs(np.array(alone) - together).max() < 1e-5
    assert model.score(question, []) == []


def test_a_question_longer_than_the_limit_is_cut_rather_than_refused(tiny_dir):
    model = OnnxCrossEncoder(tiny_dir)
    ids, types = model.encode("why " * 100, ["a passage", ""], 32)
    assert [len(i) for i in ids] == [32, 32] and types[0][-1] == 1  # the passage's [SEP] stays
    assert len(model.score("why " * 100, ["a passage"], max_tokens=32)) == 1


# ---- refused folders ---------------------------------------------------------------------------

def altered(folder: Path, **config) -> Path:
    """The tiny model with ``config`` over its config.json."""
    write_tiny_model(folder)
    (folder / "config.json").write_text(json.dumps({**tiny_config(30522), **config}), encoding="utf-8")
    return folder


def test_another_architecture_or_label_count_is_refused_naming_the_folder(tiny_dir, tmp_path):
    minilm = packaged_minilm_path()  # a sentence embedder: BertModel, no classifier
    with pytest.raises(ConfigError, match=r"cross-encoder model .*architectures \['BertModel'\] in config.json, "
                                          r"not \['BertForSequenceClassification'\]") as refused:
        CrossEncoderDir(minilm)
    assert minilm in str(refused.value)
    two = altered(tmp_path / "two-labels", id2label={"0": "no", "1": "yes"})
    with pytest.raises(ConfigError, match="a classifier of 2 labels, not 1") as refused:
        CrossEncoderDir(two)
    assert str(two) in str(refused.value)
    with pytest.raises(ConfigError, match="no such folder"):
        CrossEncoderDir(tmp_path / "nowhere")
    torn = altered(tmp_path / "torn")
    (torn / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(ConfigError, match=f"cross-encoder model {torn}: SafetensorError"):
        CrossEncoderDir(torn)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=f"cross-encoder model {tmp_path / 'empty'} has no config.json"):
        CrossEncoderDir(tmp_path / "empty")


def test_a_missing_folder_is_refused_by_the_services_and_the_python_api(tmp_path, monkeypatch):
    from agent_memory import Memory

    missing = tmp_path / "no-such-model"
    embedded_cli_env(monkeypatch, tmp_path / "data")
    monkeypatch.setenv(VARIABLE, str(missing))
    settings = load_settings()
    assert settings.cross_encoder_model == missing
    with build_services(settings) as services, pytest.raises(ConfigError) as refused:
        services.cross_encoder  # noqa: B018 - built lazily, refused when built
    assert str(refused.value) == f"cross-encoder model {str(missing)!r}: no such folder"
    with Memory(tmp_path / "data") as memory, pytest.raises(ConfigError, match="no such folder"):
        memory.prompt("what is stored?")


def test_serve_refuses_to_start_with_a_folder_of_another_model(tmp_path, monkeypatch, capsys):
    embedded_cli_env(monkeypatch, tmp_path / "data")
    monkeypatch.setenv(VARIABLE, packaged_minilm_path())
    code, out, err = run_cli(capsys, ["serve", "--host", "127.0.0.1", "--port", "8767"])
    assert code == 2 and out == ""
    assert err.strip().startswith(f"error: cross-encoder model {packaged_minilm_path()}: architectures ['BertModel']")
    assert not (tmp_path / "data").exists()  # refused before the data dir is made or the port is taken


def test_unset_or_blank_the_stage_is_off_and_its_runtime_never_imported(tmp_path):
    """Nothing changes without the setting: the services give no scorer and never import the runtime."""
    script = (
        "import sys\n"
        "from agent_memory.core.config import load_settings\n"
        "from agent_memory.services import build_services\n"
        "import agent_memory.retrieval.pipeline\n"
        f"for value in (None, '', '  '):\n"
        f"    extra = {{}} if value is None else {{'cross_encoder_model': value}}\n"
        f"    settings = load_settings(data_dir={str(tmp_path / 'data')!r}, **extra)\n"
        "    assert settings.cross_encoder_model is None, settings.cross_encoder_model\n"
        "    with build_services(settings) as services:\n"
        "        assert services.cross_encoder is None\n"
        "assert 'agent_memory.core.onnx_cross_encoder' not in sys.modules\n"
        "print('off')\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "off"


# ---- served -------------------------------------------------------------------------------------

def test_a_served_question_is_reordered_by_the_model_and_its_dump_says_so(tmp_path, tiny_dir):
    import httpx

    from agent_memory.api import create_app
    from agent_memory.api.testing import serve_in_thread, upload_samples, wait_ready

    settings = load_settings(data_dir=tmp_path / "data", triple_extractor="rules", cross_encoder_model=tiny_dir,
                             qdrant_url=None, neo4j_uri=None, postgres_url=None, llm_model=None)
    with serve_in_thread(create_app(settings)) as url, httpx.Client(base_url=url, timeout=120) as client:
        wait_ready(client)
        upload_samples(client)  # documents and a conversation: ten candidates for this question
        response = client.post("/v1/prompt", json={"question": "Which vector store is embedded, and why?",
                                                   "budget": 600})
    assert response.status_code == 200, response.text
    dump = response.json()
    moved = [d for d in dump["decisions"] if d["stage"] == "cross_encoder"]
    assert moved and {d["action"] for d in moved} == {"moved"}
    assert all(d["reason"].startswith("rank ") and ", logit " in d["reason"] for d in moved)
    assert "cross_encoder" in dump["timings_ms"] and dump["passages"]


def test_a_question_the_default_model_does_not_read_keeps_the_rerankers_order(tmp_path, tiny_dir):
    """A model trained from all-MiniLM-L6-v2 reads Chinese as unknown pieces: with a multilingual model set, a
    Chinese question is left in the reranker's order (``cross_encoder.questions``), an English one is not."""
    from agent_memory.core.records import Document
    from agent_memory.ingest.pipeline import IngestionPipeline
    from agent_memory.retrieval.config import load_preset
    from agent_memory.retrieval.pipeline import RetrievalPipeline

    settings = load_settings(data_dir=tmp_path / "data", triple_extractor="rules", cross_encoder_model=tiny_dir,
                             qdrant_url=None, neo4j_uri=None, postgres_url=None, llm_model=None)
    with build_services(settings) as services:
        assert services.embedder.multilingual is not None  # the served default layout routes Chinese
        texts = ["上个月小王去了杭州。", "小王喜欢喝龙井茶。", "Wang went to Hangzhou last month and drank tea.",
                 "The office moved to a new building in spring.", "Lunch is at noon."]
        IngestionPipeline(services).ingest_documents(
            [Document(source_id=f"note-{n}", tenant="t", text=text) for n, text in enumerate(texts)])

        def stages(question: str, overrides: dict | None = None) -> set[str]:
            with RetrievalPipeline(services, load_preset("default", overrides)) as pipeline:
                result = pipeline.run(question, tenant="t", budget=400)
            return {d.action for d in result.decisions if d.stage == "cross_encoder"}

        assert stages("小王上个月去了哪里？") == {"skipped"}
        assert "skipped" not in stages("小王上个月去了哪里？", {"cross_encoder": {"questions": "all"}})
        assert "skipped" not in stages("Where did Wang go last month?")
