"""One small client for any OpenAI-compatible chat endpoint, shared by every LLM step.

Retries with exponential backoff on 408/409/429/5xx and connection errors are left to
the ``openai`` client (``max_retries``), which also honours ``Retry-After`` headers.
Every failure surfaces as :class:`agent_memory.core.errors.LLMError` naming the model and
the base URL, so callers can log it and fall back to their offline path.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent_memory.core.errors import LLMError


@dataclass
class TokenUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class LLMResult:
    text: str
    usage: TokenUsage = field(default_factory=TokenUsage)
    model: str = ""
    finish_reason: str | None = None


class CompletionClient(Protocol):
    """What every LLM step needs of a client: :meth:`LLMClient.complete` (tests pass fakes)."""

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        response_format: dict[str, Any] | None = None,
    ) -> LLMResult: ...


class LLMClient:
    """Chat completions with usage accounting; thread-safe (the openai client is)."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        deadline: float | None = None,
    ) -> None:
        if not model:
            raise LLMError(f"LLMClient needs a model name, got {model!r}")
        import openai

        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self.max_retries = max_retries
        # One deadline for the whole call, retries included: an endpoint that accepts and never
        # answers holds a caller (e.g. /v1/ask) for at most this long, not timeout x attempts.
        self.deadline = deadline if deadline is not None else timeout * (max_retries + 1)
        # A local endpoint often needs no key, but the openai client insists on one. Retries are
        # ours (below), so each attempt's timeout can be cut to what the deadline leaves.
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            timeout=timeout,
            max_retries=0,
        )
        self._lock = threading.Lock()
        self.usage = TokenUsage()

    def _where(self) -> str:
        return f"model {self.model!r} at {self.base_url or 'default OpenAI URL'}"

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        response_format: dict[str, Any] | None = None,
    ) -> LLMResult:
        import openai

        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": temperature}
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        if response_format is not None:
            kwargs["response_format"] = response_format
        try:
            response = self._create(kwargs)
        except openai.APITimeoutError as exc:
            raise LLMError(f"LLM call to {self._where()} timed out (deadline {self.deadline}s, "
                           f"timeout {self.timeout}s per attempt): {exc}") from exc
        except openai.APIStatusError as exc:
            raise LLMError(
                f"LLM call to {self._where()} failed with HTTP {exc.status_code}: {_short(str(exc))}"
            ) from exc
        except openai.APIError as exc:
            raise LLMError(f"LLM call to {self._where()} failed: {_short(str(exc))}") from exc
        except Exception as exc:  # noqa: BLE001 - malformed bodies raise pydantic/JSON errors
            raise LLMError(f"LLM call to {self._where()} returned an unusable response: {exc!r}") from exc

        choices = getattr(response, "choices", None) or []
        if not choices or choices[0].message is None:
            raise LLMError(f"LLM call to {self._where()} returned no choices")
        text = choices[0].message.content
        if text is None:
            raise LLMError(f"LLM call to {self._where()} returned no text content")
        usage = TokenUsage(calls=1)
        if response.usage is not None:
            usage.prompt_tokens = int(response.usage.prompt_tokens or 0)
            usage.completion_tokens = int(response.usage.completion_tokens or 0)
        with self._lock:
            self.usage.prompt_tokens += usage.prompt_tokens
            self.usage.completion_tokens += usage.completion_tokens
            self.usage.calls += 1
        return LLMResult(text=text, usage=usage, model=response.model or self.model,
                         finish_reason=choices[0].finish_reason)


    def _create(self, kwargs: dict[str, Any]):
        """One completion with retries on timeouts, connection errors, 429 and 5xx, all inside the deadline."""
        import openai

        stop = time.monotonic() + self.deadline
        attempt = 0
        while True:
            left = stop - time.monotonic()
            try:
                return self._client.with_options(timeout=max(0.05, min(self.timeout, left))).chat.completions.create(
                    **kwargs)
            except (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError,
                    openai.InternalServerError):
                attempt += 1
                pause = min(0.5 * 2 ** (attempt - 1), 4.0)
                if attempt > self.max_retries or time.monotonic() + pause >= stop:
                    raise
                time.sleep(pause)


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def llm_from_settings(settings) -> LLMClient | None:
    """The configured client, or None when no model is set (every caller then stays offline)."""
    if not getattr(settings, "llm_model", None):
        return None
    return LLMClient(
        settings.llm_model,
        base_url=settings.llm_base_url,
        api_key=settings.llm_api_key,
        timeout=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
        deadline=getattr(settings, "llm_deadline_s", None),
    )
