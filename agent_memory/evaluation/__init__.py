"""The evaluation harness: evidence recall inside a bounded prompt (see ../shared/eval/README.md).

Its modules are imported by name (``agent_memory.evaluation.datasets``, ``.metric`` ...): the CLI's parser reads
``arguments.py`` for the eval command's flags, and importing the package loads nothing else.
"""
