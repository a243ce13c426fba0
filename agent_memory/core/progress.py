"""Progress: whether a command shows it on stderr (``AGENT_MEMORY_NO_PROGRESS=1``, the Docker image, scripts and
tests, turns every display off, a local job's bar and an upload's line alike), and the stages counted inside one
unit of a file, beside the units a job reports: ``progress(stage, done, total)``."""

from __future__ import annotations

import os
from typing import Callable, Mapping

NO_PROGRESS_ENV = "AGENT_MEMORY_NO_PROGRESS"
# What a caller is told as a job goes: ``progress(stage, done, total)``.
Progress = Callable[[str, int, int], None]
# The progress stage whose counts are chunks, not units: ``progress(CHUNKS_STAGE, done, total)`` is reported
# while a file's unit (a whole PDF, a Markdown file) is embedded and stored: the chunks of the file stored so
# far, of those split so far (ingest/file_ingestion.py). A job records them beside its stage and units.
CHUNKS_STAGE = "chunks"
# The progress stage of a unit's facts: ``progress(GRAPH_STAGE, done, total)``, the unit's texts (chunks, turns)
# read for entity triples so far, of those to read; done reaches total once the facts are written into the
# graph. Extraction runs beside the embedding and goes on after the chunks are stored (ingest/pipeline.py):
# without this stage a job sat at all its chunks, saying nothing, while the graph was still being written.
GRAPH_STAGE = "graph"
# How each stage inside a unit is shown after its counts, in this order.
_SHOWN_AS = {CHUNKS_STAGE: "chunks", GRAPH_STAGE: "texts read for the graph"}


def progress_shown(asked: bool = True) -> bool:
    """Whether to show the progress a caller ``asked`` for: not when the environment turns it off."""
    return asked and os.environ.get(NO_PROGRESS_ENV) != "1"


def unit_progress(counts: Mapping[str, tuple[int, int]]) -> str:
    """The stages inside a unit as a display shows them: ``{stage: (done, total)}`` → "80/80 chunks, 20/80 texts
    read for the graph"; a stage with no total is left out."""
    return ", ".join(f"{counts[stage][0]}/{counts[stage][1]} {shown}" for stage, shown in _SHOWN_AS.items()
                     if stage in counts and counts[stage][1])
