"""What a server writes to its log: answered health checks stay out of the access log (a compose health check
asks every 10 s), a failing one and every other request stay in; ``AGENT_MEMORY_LOG_LEVEL`` sets the level."""

from __future__ import annotations

import logging

import pytest

from agent_memory.api.server import QuietHealthChecks
from agent_memory.cli import LOG_LEVEL_VARIABLE, log_level, main


def access(path: str, status: int) -> logging.LogRecord:
    return logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
                             ("127.0.0.1:5000", "GET", path, "1.1", status), None)


def test_answered_health_checks_leave_the_access_log_and_the_rest_stay():
    quiet = QuietHealthChecks()
    assert not quiet.filter(access("/readyz", 200)) and not quiet.filter(access("/healthz?x=1", 200))
    assert quiet.filter(access("/readyz", 503))  # an unready server is news
    assert quiet.filter(access("/v1/prompt", 200)) and quiet.filter(access("/v1/readyz", 200))
    assert quiet.filter(logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, "plain", None, None))


def test_the_log_level_comes_from_v_then_the_environment(monkeypatch, capsys):
    monkeypatch.delenv(LOG_LEVEL_VARIABLE, raising=False)
    assert log_level(False) == logging.WARNING and log_level(True) == logging.INFO
    monkeypatch.setenv(LOG_LEVEL_VARIABLE, "debug")
    assert log_level(False) == logging.DEBUG and log_level(True) == logging.INFO
    monkeypatch.setenv(LOG_LEVEL_VARIABLE, "chatty")
    with pytest.raises(ValueError, match="AGENT_MEMORY_LOG_LEVEL='chatty' is not one of DEBUG, INFO, WARNING, ERROR"):
        log_level(False)
    assert main(["stats"]) == 2
    assert capsys.readouterr().err.strip() == ("error: AGENT_MEMORY_LOG_LEVEL='chatty' is not one of DEBUG, INFO, "
                                               "WARNING, ERROR")
