"""Ingestion pipeline: loading, splitting, embedding and graph extraction."""
