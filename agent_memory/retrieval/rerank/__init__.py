"""The ranking's one home: the reranker and its signals, one small unit per signal (signals.py)."""

from agent_memory.retrieval.rerank.reranker import DefaultReranker, Reranker, Similarity

__all__ = ["DefaultReranker", "Reranker", "Similarity"]
