"""Working memory: a persistent conversation buffer with retention classes and tiered compaction.

    manager = SessionManager(data_dir, TiktokenCounter("cl100k_base"))
    session = manager.session("s1")            # or manager.session("s1", agent_id="researcher")
    session.append({"role": "user", "content": "..."}, retention="strict")
    prompt = session.view(4000)                # always within 4,000 tokens

Unclassified appends default to ``fuzzy`` (counted in ``stats()["unclassified_appends"]``).
"""

from typing import TYPE_CHECKING

from agent_memory.core.lazy_names import lazy_names

# Each name from the module that defines it, imported on first use (PEP 562): importing one small module of this
# package (``archived_turns``, the names of archived turns, which ingestion and the HTTP client's upload read) does not
# load the session machinery and numpy with it.
_HOMES = {name: f"agent_memory.conversation.{module}" for name, module in {
    "CompactionConfig": "compaction", "Retention": "compaction", "SessionManager": "manager",
    "micro_compact": "messages", "Session": "session", "SignificantTurn": "session", "Judgement": "significance",
    "LLMDetector": "significance", "RuleDetector": "significance", "SignificanceDetector": "significance",
    "LLMSummarizer": "summarize", "StructuralSummarizer": "summarize", "Summarizer": "summarize",
}.items()}

__all__ = [
    "CompactionConfig", "Judgement", "LLMDetector", "LLMSummarizer", "Retention", "RuleDetector", "Session",
    "SessionManager", "SignificanceDetector", "StructuralSummarizer", "Summarizer", "SignificantTurn",
    "micro_compact",
]

if TYPE_CHECKING:  # what type checkers and editors read; at run time __getattr__ below
    from agent_memory.conversation.compaction import CompactionConfig, Retention
    from agent_memory.conversation.manager import SessionManager
    from agent_memory.conversation.messages import micro_compact
    from agent_memory.conversation.session import Session, SignificantTurn
    from agent_memory.conversation.significance import Judgement, LLMDetector, RuleDetector, SignificanceDetector
    from agent_memory.conversation.summarize import LLMSummarizer, StructuralSummarizer, Summarizer


__getattr__ = lazy_names(__name__, _HOMES)
