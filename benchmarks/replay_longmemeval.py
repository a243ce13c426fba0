"""Replay LongMemEval-S questions through a working-memory session with a bounded view.

    python benchmarks/replay_longmemeval.py [--data ../shared/eval/longmemeval_s_dev30.json] [--budget 4000]

For each question, every haystack turn is appended in order (the agent views its context
after each user turn, as a real agent would), then the question arrives as the pending
user turn and the view is taken. Reported per question: are the ``has_answer`` turns
still verbatim in the view, and how many of the gold answer's content words the view holds.

``replay(..., recall=fn)`` also measures reachability through recall: ``fn(question, session)``
returns texts (e.g. from the long-term store); a has_answer turn is reachable when its
text is in the view or at least 80% of its words are among the recalled texts.

``--recall`` wires the product: each question gets its own tenant, significant turns are
promoted to long-term memory as they are appended (agent_memory.conversation.working_memory), and the
retrieval pipeline's prompt for the question (``--recall-budget`` tokens) is the recall.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_memory.conversation import CompactionConfig, Session, SessionManager  # noqa: E402
from agent_memory.core.errors import BudgetError  # noqa: E402
from agent_memory.core.text import content_words  # noqa: E402
from agent_memory.core.tokens import TiktokenCounter  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "eval" / "longmemeval_s_dev30.json"
Recall = Callable[[str, Session], list[str]]


def _in(text: str, haystack: list[str]) -> bool:
    return any(text in h for h in haystack)


def _covered(text: str, recalled: list[str]) -> bool:
    """80% of the turn's words are in the recalled passages (long turns come back as chunks)."""
    from agent_memory.core.text import words

    wanted = words(text)
    have = set(words(" ".join(recalled)))
    return bool(wanted) and sum(w in have for w in wanted) / len(wanted) >= 0.8


def replay_question(manager: SessionManager, item: dict[str, Any], budget: int,
                    recall: Recall | None = None, session_key: Callable[[str], str] = str) -> dict[str, Any]:
    session = manager.session(session_key(item["question_id"]), config=CompactionConfig(window_tokens=budget))
    answer_turns: list[str] = []
    oversized = 0
    for haystack in item["haystack_sessions"]:
        for turn in haystack:
            session.append({"role": turn["role"], "content": turn["content"]})
            if turn.get("has_answer"):
                answer_turns.append(turn["content"])
            if turn["role"] == "user":
                try:
                    session.view(budget)
                except BudgetError:
                    oversized += 1  # a single user turn larger than the whole budget: nothing can fit it
    session.append({"role": "user", "content": item["question"]}, retention="strict")
    view = session.view(budget)
    texts = [m["content"] for m in view if isinstance(m.get("content"), str)]
    view_words = set(content_words(" ".join(texts)))
    gold = set(content_words(str(item["answer"])))
    in_view = [t for t in answer_turns if _in(t, texts)]
    row = {
        "question_id": item["question_id"], "type": item["question_type"],
        "messages": session.stats()["messages"], "view_tokens": session.count_view(view),
        "answer_turns": len(answer_turns), "answer_turns_in_view": len(in_view),
        "all_answer_turns_in_view": bool(answer_turns) and len(in_view) == len(answer_turns),
        "gold_words_in_view": round(len(gold & view_words) / len(gold), 3) if gold else None,
        "summaries": session.stats()["summaries"], "oversized_user_turns": oversized,
    }
    if recall is not None:
        recalled = list(recall(item["question"], session))
        reachable = [t for t in answer_turns if _in(t, texts) or _covered(t, recalled)]
        row["answer_turns_reachable"] = len(reachable)
    return row


def replay(data: Path = DEFAULT_DATA, budget: int = 4000, recall: Recall | None = None,
           limit: int | None = None, product_recall_budget: int | None = None) -> dict[str, Any]:
    items = json.loads(Path(data).read_text(encoding="utf-8"))[:limit]
    rows = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        if product_recall_budget:
            rows, promoted = _replay_with_product(items, budget, product_recall_budget, Path(tmp))
        else:
            manager = SessionManager(tmp, TiktokenCounter("cl100k_base"), synchronous="OFF")
            for item in items:
                rows.append(replay_question(manager, item, budget, recall))
            manager.close()
    with_answers = [r for r in rows if r["answer_turns"]]
    summary = {
        "questions": len(rows), "budget": budget, "seconds": round(time.perf_counter() - started, 1),
        "questions_with_all_answer_turns_in_view": sum(r["all_answer_turns_in_view"] for r in with_answers),
        "questions_with_any_answer_turn_in_view": sum(r["answer_turns_in_view"] > 0 for r in with_answers),
        "questions_with_answer_turns": len(with_answers),
        "mean_gold_words_in_view": round(sum(r["gold_words_in_view"] or 0 for r in rows) / max(1, len(rows)), 3),
        "max_view_tokens": max((r["view_tokens"] for r in rows), default=0),
    }
    if product_recall_budget:
        summary["promoted_turns"] = promoted
    if recall is not None or product_recall_budget:
        summary["questions_with_all_answer_turns_reachable"] = sum(
            r["answer_turns_reachable"] == r["answer_turns"] for r in with_answers)
    return {"summary": summary, "questions": rows}


def _replay_with_product(items, budget: int, recall_budget: int, data_dir: Path):
    """Working memory with promotion into the real stores; recall is the retrieval prompt."""
    from agent_memory.conversation.archived_turns import session_key
    from agent_memory.conversation.working_memory import WorkingMemory
    from agent_memory.core.config import load_settings
    from agent_memory.ingest.pipeline import IngestionPipeline
    from agent_memory.retrieval.pipeline import RetrievalPipeline
    from agent_memory.services import build_services

    settings = load_settings(data_dir=data_dir, triple_extractor="none")
    rows = []
    with build_services(settings) as services:
        memory = WorkingMemory(services, promote=IngestionPipeline(services, summaries=False).ingest_turns)
        pipeline = RetrievalPipeline.from_services(services, preset="conversation",
                                                   recent_turns=memory.recent_turns,
                                                   session_summaries=memory.summaries)

        for item in items:
            qid = item["question_id"]

            def recall(question: str, session, qid=qid) -> list[str]:
                result = pipeline.run(question, tenant=qid, session_id=qid, budget=recall_budget)
                return [p.text for p in result.passages]

            rows.append(replay_question(memory.sessions, item, budget, recall,
                                        session_key=lambda q: session_key(q, q)))
            print(f"{qid}: reachable {rows[-1]['answer_turns_reachable']}/{rows[-1]['answer_turns']}",
                  file=sys.stderr)
        pipeline.close()
        promoted = memory.promoted
        memory.close()
    return rows, promoted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--budget", type=int, default=4000)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None, help="write the full JSON report here")
    parser.add_argument("--recall", action="store_true", help="promote significant turns and recall with the product")
    parser.add_argument("--recall-budget", type=int, default=2000)
    args = parser.parse_args()
    report = replay(args.data, args.budget, limit=args.limit,
                    product_recall_budget=args.recall_budget if args.recall else None)
    for row in report["questions"]:
        print(f"{row['question_id']:<16} {row['type']:<26} msgs={row['messages']:<4} "
              f"answer_turns_in_view={row['answer_turns_in_view']}/{row['answer_turns']} "
              f"gold_words_in_view={row['gold_words_in_view']}")
    print(json.dumps(report["summary"], indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
