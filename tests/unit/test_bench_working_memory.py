"""The working-memory benchmark's generator and metrics on a tiny trajectory (figures never asserted)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_working_memory as bench  # noqa: E402
from wm_trajectories import coding, support, trajectories  # noqa: E402

from agent_memory.conversation import CompactionConfig, SessionManager  # noqa: E402
from agent_memory.conversation import messages as msgs  # noqa: E402


def test_trajectories_are_deterministic_and_plant_every_fact():
    assert [t.events for t in trajectories(3, 0.1)] == [t.events for t in trajectories(3, 0.1)]
    assert coding(3, "en", steps=30).events != coding(4, "en", steps=30).events
    full = coding(7, "en")
    users = [m for m, _ in full.events if msgs.is_user_turn(m)]
    assert full.tool_calls >= 200 and 5 <= len(users) <= 10
    for traj in (coding(5, "zh", steps=40), support(5, "en", turns=40), support(5, "zh", turns=40)):
        kinds = {f.kind for f in traj.facts}
        assert {"error_code", "constraint", "decision"} <= kinds and len(traj.facts) >= 4
        for fact in traj.facts:  # planted where it says, and only there
            assert fact.value in msgs.serialize(traj.events[fact.seq][0])
            assert sum(fact.value in msgs.serialize(m) for m, _ in traj.events) == 1
        assert not bench.orphans([m for m, _ in traj.events])


def test_the_metrics_on_a_tiny_trajectory(tmp_path):
    traj = coding(1, "en", user_turns=3, steps=24, payload_lines=30)
    window = 2500
    truncated = bench.run_truncate(traj, window)
    assert truncated["silent"] > 0 and truncated["reachable"] == truncated["visible"]
    assert len(truncated["visible"]) == len(traj.facts)
    two_stage = bench.run_micro_summary(traj, window)
    assert two_stage["orphans"] == 0 and two_stage["compact_ms"] > 0

    manager = SessionManager(tmp_path, bench.COUNTER, synchronous="OFF")
    session = manager.session("tiny", config=CompactionConfig(window_tokens=window))
    for message, retention in traj.events:
        session.append(message, retention=retention)
    view = session.view(window)
    assert bench.orphans(view) == 0 and session.stats()["compactions"] > 0
    shown = {e.seq for e in session._log.entries if e.shown in view or e.is_system}
    covered = bench.covered_by_notes(session, view)
    assert {e.seq for e in session._log.entries} <= shown | covered  # no silent drop
    # The user's constraint (strict) is still in the view or in a summary (the prompt's summaries route).
    constraint = traj.facts[0]
    assert constraint.kind == "constraint"
    assert constraint.value in bench.view_text(view) or any(constraint.value in s["text"]
                                                             for s in session.summaries())
    manager.close()


def test_the_graph_benchmarks_noise_rule():
    import tool_turn_triples as graph_bench

    text = '[tool_use:read_file] {"path": "src/pay/mod_59.py"}\n[tool_result:read_file] 0.1: def handler_9(req)\n' \
           "the retry loop is implemented in src/net/backoff_loop_48.py"
    judged = {name: graph_bench.noise(name, text) for name in
              ("handler_9(req", "0.1", "path", "mod", "retry loop", "src/net/backoff_loop_48.py")}
    assert judged == {"handler_9(req": "code", "0.1": "line number", "path": "JSON key or marker",
                      "mod": "piece of a path or identifier", "retry loop": None, "src/net/backoff_loop_48.py": None}
