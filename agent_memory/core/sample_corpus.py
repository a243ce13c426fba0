"""Where the sample corpus lives: inside the package (``agent_memory/samples/``, package data), so that
``agent-memory demo`` and the API's test helpers find it in any install, a wheel's as well as a checkout's."""

from __future__ import annotations

from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
