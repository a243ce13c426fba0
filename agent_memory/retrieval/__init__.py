"""Recall to prompt: routes → fusion → rerank → de-duplication → compaction → assembly."""
