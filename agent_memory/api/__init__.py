"""The question-answering HTTP API (FastAPI): ``create_app(settings)``, ``serve(host, port)``."""

from agent_memory.api.app import create_app

__all__ = ["create_app"]
