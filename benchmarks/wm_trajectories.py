"""Deterministic agent trajectories with planted facts, for ``bench_working_memory.py``.

Two kinds, English and Chinese: a coding agent's tool loop (5-10 user turns, >= 200 tool calls of
reasoning + call + result) and a support chat (many short turns, a few lookups). Facts a later
step needs are planted in passing: an error code or a path in a tool result, a number in a test
run, a user constraint, a decision the assistant states. Each fact has the string that must be
seen (``value``) and the question a later step asks. The same seed gives the same trajectory.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

TOOLS = ("read_file", "grep", "run_tests", "list_dir", "edit_file")


@dataclass
class Fact:
    kind: str  # error_code | path | number | constraint | decision
    value: str  # the exact string an agent must still be able to see
    question: str
    seq: int = -1  # the message it was planted in


@dataclass
class Trajectory:
    name: str
    lang: str
    events: list[tuple[dict[str, Any], str | None]] = field(default_factory=list)  # (message, retention)
    facts: list[Fact] = field(default_factory=list)

    def add(self, message: dict[str, Any], retention: str | None = None, fact: Fact | None = None) -> None:
        if fact is not None:
            fact.seq = len(self.events)
            self.facts.append(fact)
        self.events.append((message, retention))

    @property
    def tool_calls(self) -> int:
        return sum(len(m.get("tool_calls") or []) for m, _ in self.events)


def _hex(rng: random.Random) -> str:
    return f"0x{rng.randrange(16 ** 6):06X}"


def _filler(rng: random.Random, lang: str, n: int, step: int) -> str:
    """A tool payload: code or log lines an agent reads once (numbers in it are not facts)."""
    if lang == "zh":
        rows = [f"第{step}.{i}行：模块{rng.randint(1, 40)}处理了{rng.randint(10, 999)}条记录，耗时{rng.randint(1, 90)}毫秒。"
                for i in range(n)]
    else:
        rows = [f"{step}.{i}: def handler_{rng.randint(1, 40)}(req): return process(req, limit={rng.randint(10, 999)})"
                for i in range(n)]
    return "\n".join(rows)


T = {
    "en": {
        "system": "You are a coding agent. Use the tools; keep the user's constraints.",
        "task": "Task {n}: continue the payment service refactor; step {n} of the plan is module {mod}.",
        "think": "Step {s}: I will run {tool} on {path} to check the next part of the plan.",
        "after": "The output of {tool} looks as expected for step {s}; moving on.",
        "error": "FATAL checksum mismatch in segment store, error code {v} (see logs).",
        "path": "match: the retry loop is implemented in {v} at line {line}.",
        "number": "benchmark finished: p95 latency {v} ms over 10000 requests.",
        "constraint": "Important: never touch the directory {v}; it belongs to another team.",
        "decision": "We decided to pin protobuf to version {v} instead of upgrading.",
        "q": {"error_code": "Which error code did the checksum mismatch report?",
              "path": "Which file implements the retry loop?",
              "number": "What p95 latency did the benchmark report, in ms?",
              "constraint": "Which directory must never be touched?",
              "decision": "Which protobuf version did we decide to pin?"},
        "s_system": "You are a support agent for an online shop.",
        "s_user": "Message {n}: I am still waiting on my parcel, can you check again?",
        "s_reply": "I understand, let me look at this for you right away.",
        "s_order": "My order number is {v}, please use it for everything.",
        "s_constraint": "Please only deliver after {v} on weekdays, I am at work before that.",
        "s_error": "payment gateway declined the card with code {v}.",
        "s_decision": "We agreed on a replacement; the refund of {v} EUR is cancelled.",
        "s_q": {"error_code": "Which code did the payment gateway return?",
                "number": "What is the customer's order number?",
                "constraint": "After what time may we deliver?",
                "decision": "How much was the cancelled refund, in EUR?"},
    },
    "zh": {
        "system": "你是一个编程助手。使用工具，遵守用户的约束。",
        "task": "任务{n}：继续重构支付服务；计划的第{n}步是模块{mod}。",
        "think": "第{s}步：我将对{path}运行{tool}，检查计划的下一部分。",
        "after": "第{s}步的{tool}输出符合预期，继续。",
        "error": "严重错误：段存储校验和不匹配，错误码{v}（见日志）。",
        "path": "匹配：重试循环实现在{v}第{line}行。",
        "number": "基准测试完成：10000个请求的p95延迟为{v}毫秒。",
        "constraint": "重要：永远不要修改目录{v}，它属于另一个团队。",
        "decision": "我们决定把protobuf固定在{v}版本，不升级。",
        "q": {"error_code": "校验和不匹配报告了哪个错误码？", "path": "哪个文件实现了重试循环？",
              "number": "基准测试报告的p95延迟是多少毫秒？", "constraint": "哪个目录永远不能修改？",
              "decision": "我们决定把protobuf固定在哪个版本？"},
        "s_system": "你是一家网店的客服助手。",
        "s_user": "第{n}条消息：我还在等包裹，能再查一下吗？",
        "s_reply": "明白，我马上为您查询。",
        "s_order": "我的订单号是{v}，请一直用这个号码。",
        "s_constraint": "工作日请在{v}以后再送货，之前我在上班。",
        "s_error": "支付网关拒绝了这张卡，代码{v}。",
        "s_decision": "我们同意换货；{v}欧元的退款取消。",
        "s_q": {"error_code": "支付网关返回了什么代码？", "number": "客户的订单号是多少？",
                "constraint": "几点以后可以送货？", "decision": "取消的退款是多少欧元？"},
    },
}


def coding(seed: int, lang: str = "en", user_turns: int = 6, steps: int = 216, payload_lines: int = 14) -> Trajectory:
    """A coding agent's tool loop: ``steps`` tool calls spread over ``user_turns`` instructions."""
    rng = random.Random(f"coding-{lang}-{seed}")
    t, text = Trajectory(f"coding-{lang}", lang), T[lang]
    values = {"error_code": _hex(rng), "path": f"src/net/backoff_{rng.choice(['policy', 'loop', 'timer'])}_"
                                               f"{rng.randint(10, 99)}.py",
              "number": f"{rng.randint(120, 980)}.{rng.randint(1, 9)}", "constraint": f"vendor/billing_{rng.randint(10, 99)}/",
              "decision": f"4.{rng.randint(20, 29)}.{rng.randint(1, 9)}"}
    # Where each fact is planted: early, in the first half of the loop (later steps need them).
    def at(low: float, high: float) -> int:
        return rng.randint(int(steps * low), max(int(steps * low), int(steps * high)))

    plant = {at(0.02, 0.09): "error_code", at(0.12, 0.2): "path", at(0.23, 0.32): "number",
             at(0.35, 0.44): "decision"}
    t.add({"role": "system", "content": text["system"]}, "strict")
    per_turn = steps // user_turns
    for s in range(steps):
        if s % per_turn == 0 and s // per_turn < user_turns:
            n = s // per_turn
            task = text["task"].format(n=n, mod=rng.randint(1, 40))
            if n == 0:  # the user's constraint comes with the first instruction
                constraint = text["constraint"].format(v=values["constraint"])
                t.add({"role": "user", "content": f"{task} {constraint}"}, "strict",
                      Fact("constraint", values["constraint"], text["q"]["constraint"]))
            else:
                t.add({"role": "user", "content": task}, "strict")
        tool = TOOLS[rng.randrange(len(TOOLS))]
        path = f"src/pay/mod_{rng.randint(1, 60)}.py"
        kind = plant.get(s)
        think = text["think"].format(s=s, tool=tool, path=path)
        if kind == "decision":
            t.add({"role": "assistant", "content": f"{think} " + text["decision"].format(v=values["decision"])},
                  None, Fact("decision", values["decision"], text["q"]["decision"]))
        else:
            t.add({"role": "assistant", "content": think})
        call_id = f"call_{s}"
        t.events[-1][0]["tool_calls"] = [{"id": call_id, "type": "function",
                                          "function": {"name": tool, "arguments": json.dumps({"path": path})}}]
        body = _filler(rng, lang, payload_lines + rng.randint(0, 10), s)
        fact = None
        if kind in ("error_code", "path", "number"):
            line = text["error" if kind == "error_code" else kind].format(v=values[kind], line=rng.randint(10, 400))
            body = f"{body[: len(body) // 2]}\n{line}\n{body[len(body) // 2:]}"
            fact = Fact(kind, values[kind], text["q"][kind])
        retention = "forgettable" if tool == "list_dir" else None  # as an agent classifies: little
        t.add({"role": "tool", "tool_call_id": call_id, "content": body}, retention, fact)
        if s % 3 == 2:
            t.add({"role": "assistant", "content": text["after"].format(s=s, tool=tool)})
    return t


def support(seed: int, lang: str = "en", turns: int = 60) -> Trajectory:
    """A support chat: many short turns, a lookup tool now and then, facts said in passing."""
    rng = random.Random(f"support-{lang}-{seed}")
    t, text = Trajectory(f"support-{lang}", lang), T[lang]
    values = {"number": f"SO-{rng.randint(100000, 999999)}", "constraint": f"{rng.randint(17, 19)}:{rng.choice(['15', '30', '45'])}",
              "error_code": f"PAY-{rng.randint(4000, 4999)}",
              "decision": f"{rng.randint(40, 400)}.{rng.choice(['25', '50', '75'])}"}
    def at(low: float, high: float) -> int:
        return rng.randint(int(turns * low), max(int(turns * low), int(turns * high)))

    plant = {at(0.03, 0.05): "number", at(0.08, 0.16): "constraint", at(0.2, 0.33): "error_code",
             at(0.37, 0.5): "decision"}
    t.add({"role": "system", "content": text["s_system"]}, "strict")
    for n in range(turns):
        kind = plant.get(n)
        user = text["s_user"].format(n=n)
        if kind in ("number", "constraint"):
            key = "s_order" if kind == "number" else "s_constraint"
            t.add({"role": "user", "content": f"{user} {text[key].format(v=values[kind])}"}, None,
                  Fact(kind, values[kind], text["s_q"][kind]))
        else:
            t.add({"role": "user", "content": user})
        if n % 3 == 1 or kind == "error_code":
            call_id = f"lookup_{n}"
            t.add({"role": "assistant", "content": text["s_reply"], "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": "lookup_order", "arguments": json.dumps({"query": f"parcel status {n}"})}}]})
            body = _filler(rng, lang, 8 + rng.randint(0, 8), n)
            fact = None
            if kind == "error_code":
                body += "\n" + text["s_error"].format(v=values["error_code"])
                fact = Fact("error_code", values["error_code"], text["s_q"]["error_code"])
            t.add({"role": "tool", "tool_call_id": call_id, "content": body}, None, fact)
        if kind == "decision":
            t.add({"role": "assistant", "content": text["s_decision"].format(v=values["decision"])}, None,
                  Fact("decision", values["decision"], text["s_q"]["decision"]))
        else:
            t.add({"role": "assistant", "content": text["s_reply"] + " " + _filler(rng, lang, 3, n).replace("\n", " ")})
    return t


def trajectories(seed: int = 7, scale: float = 1.0) -> list[Trajectory]:
    """The benchmark's set: coding and support, English and Chinese (``scale`` < 1 for a quick run)."""
    steps = max(12, int(216 * scale))
    turns = max(8, int(60 * scale))
    return [coding(seed, "en", steps=steps), coding(seed, "zh", steps=steps),
            support(seed, "en", turns=turns), support(seed, "zh", turns=turns)]
