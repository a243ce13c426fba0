"""Entity and triple extraction for the knowledge graph (offline rules or an LLM) and
entity resolution before the triples reach the graph store."""

from agent_memory.index.triples.base import Entity, TripleExtractor, is_model_id
from agent_memory.index.triples.chinese import ChineseExtractor
from agent_memory.index.triples.english import EnglishExtractor
from agent_memory.index.triples.llm_extractor import Extraction, LLMExtractor, Relation
from agent_memory.index.triples.question_entities import entities_in_question
from agent_memory.index.triples.resolution import EntityResolver, Merge, Resolution
from agent_memory.index.triples.router import RuleBasedExtractor

__all__ = [
    "ChineseExtractor", "EnglishExtractor", "Entity", "EntityResolver", "Extraction", "LLMExtractor", "Merge",
    "Relation", "Resolution", "RuleBasedExtractor", "TripleExtractor", "entities_in_question", "is_model_id",
]
