"""The evaluation harness: evidence recall inside a bounded prompt (see ../shared/eval/README.md)."""

from agent_memory.evaluation.datasets import (
           EvalSet,
           Evidence,
           Material,
           Question,
           detect_format,
           load_dataset,
           parse_dataset,
)
from agent_memory.evaluation.metric import parse_citations, score_question, word_coverage

__all__ = ["EvalSet", "Evidence", "Material", "Question", "detect_format", "load_dataset", "parse_dataset",
           "parse_citations", "score_question", "word_coverage"]
