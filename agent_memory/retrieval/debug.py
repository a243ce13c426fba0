"""Human-readable debug dump of one retrieval run (the JSON form is ``PromptResult.debug_dict``)."""

from __future__ import annotations

from agent_memory.retrieval.types import PromptResult


def record_ranking(result: PromptResult, outputs: dict, reranked: list, facts: list, hop_found: list | None) -> None:
    """What a debug run keeps beside its prompt: each route's hits (``outputs``: route name → its output), what the
    second hop found, the graph's facts, and every candidate as fused and reranked."""
    result.routes = {
        name: [{"rank": r, "id": h.item.id, "source_id": h.item.source_id, "kind": h.item.kind,
                "score": round(float(h.score), 5), "text": h.item.text[:160]}
               for r, h in enumerate(out.hits, start=1)]
        for name, out in outputs.items()
    }
    if hop_found:
        result.routes["hop"] = hop_found
    if facts:
        result.routes["graph_facts"] = [
            {"subject": t.subject, "relation": t.relation, "object": t.object, "source_id": t.source_id,
             "valid_from": t.valid_from, "valid_to": t.valid_to}
            for t in facts]
    result.fused = [
        {"id": c.item.id, "source_id": c.item.source_id, "fused": round(c.fused, 5),
         "rerank": round(c.rerank, 5), "routes": c.route_ranks, "note": c.note,
         "importance": c.item.metadata.get("importance", 0.5)}
        for c in reranked]


def _one_line(value: object) -> str:
    """A stored value (source ID, entity, target) as part of one dump line: one holding a newline or
    another control character is quoted, so a crafted file name cannot fake a row of the dump."""
    text = str(value)
    return text if text.isprintable() else repr(text)


def render_dump(result: PromptResult, max_rows: int = 10) -> str:
    lines = [f"Question: {_one_line(result.question)}", f"Budget: {result.budget} tokens ({result.tokenizer}); "
             f"prompt: {result.total_tokens} tokens", ""]
    lines.append("== Routes ==")
    for route, rows in result.routes.items():
        lines.append(f"-- {route}: {len(rows)} candidates")
        for row in rows[:max_rows]:
            if "score" in row:
                lines.append(f"  #{row['rank']:<3} {row['score']:>9.4f}  [{row['kind']}] {_one_line(row['source_id'])}"
                             f"  {row['text'][:80]!r}")
            else:
                lines.append(f"  {_one_line(row['subject'])} — {_one_line(row['relation'])} → "
                             f"{_one_line(row['object'])}  [{_one_line(row['source_id'])}]")
    lines.append("")
    lines.append("== Fused and reranked ==")
    for pos, row in enumerate(result.fused[:max_rows * 2], start=1):
        note = f"  ({row['note']})" if row.get("note") else ""
        lines.append(f"  {pos:>3}. fused {row['fused']:.4f} rerank {row['rerank']:.4f}"
                     f" importance {row.get('importance', 0.5):.2f} routes {row['routes']}"
                     f"  {_one_line(row['source_id'])}{note}")
    lines.append("")
    lines.append("== Decisions (kept, cut, compressed, why) ==")
    for d in result.decisions + result.assembly_drops:
        tokens = f" tokens {d.tokens_before}→{d.tokens_after}" if d.tokens_before else ""
        lines.append(f"  [{d.stage}] {d.action} {_one_line(d.target)}: {_one_line(d.reason)}{tokens}")
    lines.append("")
    lines.append("== Token accounting ==")
    for name, tokens in result.sections.items():
        lines.append(f"  {name:<14} {tokens:>6}")
    lines.append(f"  {'total':<14} {result.total_tokens:>6} / {result.budget}")
    lines.append("")
    lines.append("== Time per stage (ms) ==")
    lines.append("  " + ", ".join(f"{k} {v}" for k, v in result.timings_ms.items()))
    lines.append("")
    lines.append("== Prompt ==")
    lines.append(result.prompt)
    return "\n".join(lines)
