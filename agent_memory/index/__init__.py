"""What a stored item is, for ingestion that writes it and retrieval that reads it: the text that is
embedded, the turn-context texts, which items carry sentence vectors, the entities a text (or a question)
names, and the importance an item starts with."""
