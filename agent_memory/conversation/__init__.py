"""Working memory: a persistent conversation buffer with retention classes and tiered compaction.

    manager = SessionManager(data_dir, TiktokenCounter("cl100k_base"))
    session = manager.session("s1")            # or manager.session("s1", agent_id="researcher")
    session.append({"role": "user", "content": "..."}, retention="strict")
    prompt = session.view(4000)                # always within 4,000 tokens

Unclassified appends default to ``fuzzy`` (counted in ``stats()["unclassified_appends"]``).
"""

from agent_memory.conversation.compaction import CompactionConfig, Retention
from agent_memory.conversation.manager import SessionManager
from agent_memory.conversation.messages import micro_compact
from agent_memory.conversation.session import Session, SignificantTurn
from agent_memory.conversation.significance import Judgement, LLMDetector, RuleDetector, SignificanceDetector
from agent_memory.conversation.summarize import LLMSummarizer, StructuralSummarizer, Summarizer

__all__ = [
    "CompactionConfig", "Judgement", "LLMDetector", "LLMSummarizer", "Retention", "RuleDetector", "Session",
    "SessionManager", "SignificanceDetector", "StructuralSummarizer", "Summarizer", "SignificantTurn",
    "micro_compact",
]
