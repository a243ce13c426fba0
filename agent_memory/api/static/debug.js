// The retrieval debug page: POST /v1/ask?debug=true and render what each stage did.
// Plain DOM, no build step. Every server string goes through textContent (never innerHTML).
"use strict";

const COLORS = { instructions: "#8a94a6", facts: "#d9822b", summaries: "#9b59b6", passages: "#2f6fde",
                 recent: "#16a34a", question: "#1d2330" };
const TITLES = { "Instructions": "instructions", "Known facts": "facts", "Summaries": "summaries",
                 "Retrieved passages": "passages", "Recent conversation": "recent", "Question": "question" };
const CITE = /\[S:([^\[\]\n]+)\]/g;
let last = null;

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v; else if (k === "style") node.style.cssText = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c ?? "")));
  return node;
}

function setStatus(text, isError = false) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

// Text with [S:id] tags turned into clickable spans.
function withCitations(text) {
  const frag = document.createDocumentFragment();
  let at = 0;
  for (const m of text.matchAll(CITE)) {
    frag.append(text.slice(at, m.index));
    const ids = m[1].split(/\s*[,;]\s*(?:S:)?/).filter(Boolean);
    for (const sid of ids) {
      const span = el("span", { class: "cite", "data-source": sid, title: "show the source passage" }, `[S:${sid}]`);
      span.addEventListener("click", () => showSource(sid, span));
      frag.append(span);
    }
    at = m.index + m[0].length;
  }
  frag.append(text.slice(at));
  return frag;
}

function table(headers, rows) {
  const head = el("tr", {}, ...headers.map((h) => el("th", {}, h)));
  const body = rows.map((cells) => el("tr", {}, ...cells.map((c) => {
    const numeric = typeof c === "number";
    return el("td", { class: numeric ? "num" : "text" }, numeric ? fmt(c) : c);
  })));
  return el("table", {}, el("thead", {}, head), el("tbody", {}, ...body));
}

function fmt(x) { return Number.isInteger(x) ? String(x) : x.toFixed(4); }

function renderTokens(dbg) {
  const bar = $("token-bar"), legend = $("token-legend");
  bar.replaceChildren(); legend.replaceChildren();
  const budget = dbg.budget || 1;
  for (const [name, tokens] of Object.entries(dbg.sections || {})) {
    const pct = (100 * tokens) / budget;
    const color = COLORS[name] || "#64748b";
    bar.append(el("div", { class: "seg", "data-section": name, title: `${name}: ${tokens} tokens`,
                           style: `width:${pct}%;background:${color}` }, pct > 6 ? name : ""));
    legend.append(el("li", {}, el("span", { class: "swatch", style: `background:${color}` }),
                     `${name} ${tokens}`));
  }
  $("token-total").textContent = `${dbg.total_tokens} of ${dbg.budget} tokens (${dbg.tokenizer})`;
}

function renderPrompt(prompt) {
  const box = $("prompt");
  box.replaceChildren();
  // Split only at the assembler's own section titles: passages may hold Markdown "## " headings too.
  const titles = Object.keys(TITLES).join("|");
  const parts = prompt.split(new RegExp(`\\n\\n(?=## (?:${titles})\\n)`));
  for (const part of parts) {
    const m = part.match(/^## ([^\n]+)\n?([\s\S]*)$/);
    const title = m ? m[1] : "";
    const name = TITLES[title] || "other";
    const tokens = last && last.debug.sections ? last.debug.sections[name] : undefined;
    const section = el("div", { class: "prompt-section", "data-section": name,
                                style: `border-left-color:${COLORS[name] || "#dfe3ea"}` });
    section.append(el("div", { class: "head" }, `## ${title}` + (tokens !== undefined ? ` · ${tokens} tokens` : "")));
    const pre = el("pre");
    pre.append(withCitations(m ? m[2] : part));
    section.append(pre);
    box.append(section);
  }
}

function showSource(sid, span) {
  document.querySelectorAll(".cite.active").forEach((n) => n.classList.remove("active"));
  document.querySelectorAll(`.cite`).forEach((n) => { if (n.dataset.source === sid) n.classList.add("active"); });
  $("passage-hint").hidden = true;
  $("passage-source").textContent = sid;
  const body = $("passage-body");
  body.replaceChildren();
  const dbg = last ? last.debug : null;
  const passages = dbg ? dbg.passages.filter((p) => p.source_id === sid) : [];
  for (const p of passages) {
    const meta = `${p.kind} · ${p.section} · score ${fmt(p.score)} · ${p.tokens} tokens` +
                 (p.compressed ? ` (compressed from ${p.original_tokens})` : "");
    body.append(el("div", { class: "passage" }, el("div", { class: "meta" }, meta), p.text));
  }
  const cited = (last && last.citations || []).find((c) => c.source_id === sid);
  if (!passages.length && cited) cited.passages.forEach((t) => body.append(el("div", { class: "passage" }, t)));
  if (!passages.length && !cited) {
    const lines = (dbg ? dbg.prompt : "").split("\n").filter((l) => l.includes(`[S:${sid}]`));
    lines.forEach((t) => body.append(el("div", { class: "passage" }, el("div", { class: "meta" }, "prompt line"), t)));
  }
  // Where this source stood in each route.
  const rows = [];
  for (const [route, hits] of Object.entries(dbg ? dbg.routes : {})) {
    for (const h of hits) if (h.source_id === sid && "score" in h) rows.push([route, h.rank, h.score, h.kind]);
  }
  if (rows.length) body.append(el("h3", {}, "Route ranks"), table(["route", "rank", "score", "kind"], rows));
}

function renderRoutes(dbg) {
  const box = $("routes");
  box.replaceChildren();
  for (const [route, hits] of Object.entries(dbg.routes || {})) {
    const details = el("details", { open: "", "data-route": route });
    details.append(el("summary", {}, `${route} · ${hits.length} candidates`));
    if (hits.length && "score" in hits[0]) {
      details.append(table(["#", "score", "kind", "source", "text"],
        hits.slice(0, 25).map((h) => [h.rank, h.score, h.kind, h.source_id, h.text])));
    } else if (hits.length) {
      details.append(table(["subject", "relation", "object", "source"],
        hits.slice(0, 25).map((h) => [h.subject, h.relation, h.object, h.source_id])));
    }
    box.append(details);
  }
}

function renderFused(dbg) {
  const rows = (dbg.fused || []).slice(0, 40).map((f, i) => [
    i + 1, f.fused, f.rerank, Object.entries(f.routes || {}).map(([r, k]) => `${r}#${k}`).join(" "),
    f.source_id, f.note || ""]);
  $("fused").replaceChildren(table(["pos", "fused", "rerank", "route ranks", "source", "note"], rows));
}

function renderDecisions(dbg) {
  const all = [...(dbg.decisions || []), ...(dbg.assembly_drops || [])];
  const rows = all.map((d) => [d.stage, d.action, d.target, d.reason,
                               d.tokens_before ? `${d.tokens_before}→${d.tokens_after}` : ""]);
  $("decisions").replaceChildren(rows.length ? table(["stage", "action", "target", "reason", "tokens"], rows)
                                             : el("p", { class: "muted" }, "No cuts, merges or compressions."));
}

function renderTimings(data) {
  const rows = Object.entries(data.debug.timings_ms || {}).map(([k, v]) => [k, v]);
  rows.push(["llm", data.timings_ms.llm || 0]);
  $("timings").replaceChildren(table(["stage", "ms"], rows));
}

function renderAnswer(data) {
  $("mode").textContent = data.mode;
  const box = $("answer");
  box.replaceChildren();
  if (data.answer) {
    box.append(withCitations(data.answer));
    if (data.unknown_citation_count) {
      box.append(el("p", { class: "muted" },
        `${data.unknown_citation_count} unknown citation(s) stripped: ${data.unknown_citations.join(", ")}`));
    }
  } else {
    box.append(el("p", { class: "muted" }, "No LLM answer (retrieval-only). Best supporting passages:"));
    for (const p of data.passages) {
      const item = el("div", { class: "passage" }, el("div", { class: "meta" }, `score ${fmt(p.score)}`));
      item.append(withCitations(`[S:${p.source_id}] ${p.text}`));
      box.append(item);
    }
  }
  $("llm-error").hidden = !data.llm_error;
  $("llm-error").textContent = data.llm_error ? `LLM failed, fell back: ${data.llm_error}` : "";
}

async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question) return;
  const body = { question, budget: parseInt($("budget").value, 10) || 1200 };
  const session = $("session").value.trim();
  if (session) body.session_id = session;
  if ($("preset").value) body.preset = $("preset").value;
  const overrides = $("overrides").value.trim();
  if (overrides) {
    try {
      body.overrides = JSON.parse(overrides);
    } catch (err) {
      setStatus(`overrides are not JSON: ${err.message}`, true);
      return;
    }
  }
  const key = $("apikey").value.trim();
  localStorage.setItem("agent-memory-key", key);
  const headers = { "content-type": "application/json" };
  if (key) headers["x-api-key"] = key;
  $("ask").disabled = true;
  setStatus("asking…");
  try {
    const res = await fetch("/v1/ask?debug=true", { method: "POST", headers, body: JSON.stringify(body) });
    const data = await res.json();
    if (!res.ok) {
      const err = data.error || {};
      setStatus(`${res.status} ${err.code || ""}: ${err.message || res.statusText}`, true);
      return;
    }
    last = data;
    renderAnswer(data);
    renderTokens(data.debug);
    renderPrompt(data.debug.prompt);
    renderRoutes(data.debug);
    renderFused(data.debug);
    renderDecisions(data.debug);
    renderTimings(data);
    $("passage-hint").hidden = false;
    $("passage-source").textContent = "";
    $("passage-body").replaceChildren();
    $("results").hidden = false;
    setStatus(`done in ${data.timings_ms.total} ms · ${data.debug.passages.length} passages · mode ${data.mode}`);
  } catch (err) {
    setStatus(`request failed: ${err}`, true);
  } finally {
    $("ask").disabled = false;
  }
}

$("apikey").value = localStorage.getItem("agent-memory-key") || "";
$("ask-form").addEventListener("submit", ask);
const params = new URLSearchParams(location.search);
if (params.get("q")) { $("question").value = params.get("q"); $("ask-form").requestSubmit(); }
