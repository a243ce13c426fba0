"""Entity and triple extraction for the knowledge graph (offline rules or an LLM) and
entity resolution before the triples reach the graph store."""

from .base import Entity, TripleExtractor, is_model_id
from .chinese import ChineseExtractor
from .english import EnglishExtractor
from .llm_extractor import Extraction, LLMExtractor, Relation
from .question_entities import entities_in_question
from .resolution import EntityResolver, Merge, Resolution
from .router import RuleBasedExtractor

__all__ = [
    "ChineseExtractor", "EnglishExtractor", "Entity", "EntityResolver", "Extraction", "LLMExtractor", "Merge",
    "Relation", "Resolution", "RuleBasedExtractor", "TripleExtractor", "entities_in_question", "is_model_id",
]
