"""A minimal OpenAI-compatible chat client over httpx, configured only by environment variables.

Environment (no credential ever lives in code or in the repository):

* ``RADAR_LLM_BASE_URL``   — e.g. ``http://127.0.0.1:8000/v1`` (the ``/chat/completions`` path is appended);
  unset = offline mode (deterministic guard, rule router, extractive writer).
* ``RADAR_LLM_API_KEY``    — sent as ``Authorization: Bearer …`` when set.
* ``RADAR_LLM_MODEL_LARGE`` / ``RADAR_LLM_MODEL_SMALL`` — model names (small defaults to large).
* ``RADAR_LLM_TIMEOUT_S`` (default 60), ``RADAR_LLM_MAX_RETRIES`` (default 1, only on 429/5xx/connection errors),
  ``RADAR_LLM_MAX_TOKENS`` (default 1200).

Every call returns an ``LLMReply`` with token usage (from the provider's ``usage``; estimated as
characters/4 and flagged when the provider sends none) and latency. Failures raise ``LLMError``
with ``kind`` in ``timeout``, ``http``, ``connection``, ``malformed`` — the runner then answers in
degraded mode (the failing role and the later ones of the run use their offline counterparts; see
``runner``), never as "no evidence".
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class LLMSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RADAR_LLM_", extra="ignore", use_attribute_docstrings=True)

    base_url: str | None = None
    """an OpenAI-compatible endpoint for the agent; unset (or no model) = the deterministic offline mode"""
    api_key: SecretStr | None = None
    """bearer key of that endpoint"""
    model_large: str | None = None
    """model of the analyst and the writer"""
    model_small: str | None = None
    """model of the guard and the router (default: the large one)"""
    timeout_s: float = 60.0
    """timeout of one model call"""
    max_retries: int = 1
    """retries of a failed model call"""
    max_tokens: int = 1200
    """most tokens one model answer may have"""
    temperature: float = 0.0
    """sampling temperature of every model call"""

    @property
    def enabled(self) -> bool:
        """True when an endpoint and a model are configured (otherwise the agent runs offline)."""
        return bool(self.base_url and (self.model_large or self.model_small))

    def model_for(self, size: str) -> str:
        if size == "small":
            return self.model_small or self.model_large or ""
        return self.model_large or self.model_small or ""


class LLMError(Exception):
    """A model-provider failure. ``kind``: timeout | http | connection | malformed."""

    def __init__(self, kind: str, message: str, *, status: int | None = None):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.status = status


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text, validated by the tool box


@dataclass
class LLMReply:
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    estimated_usage: bool = False
    ms: float = 0.0
    model: str = ""
    finish_reason: str | None = None


class LLMClient:
    """Synchronous client; thread-safe (one ``httpx.Client`` with a connection pool)."""

    def __init__(self, settings: LLMSettings, transport: httpx.BaseTransport | None = None):
        if not settings.enabled:
            raise ValueError("LLM endpoint not configured (RADAR_LLM_BASE_URL / RADAR_LLM_MODEL_LARGE)")
        self.settings = settings
        headers = {"Content-Type": "application/json"}
        if settings.api_key is not None and settings.api_key.get_secret_value():
            headers["Authorization"] = f"Bearer {settings.api_key.get_secret_value()}"
        self._http = httpx.Client(
            base_url=settings.base_url.rstrip("/"),
            headers=headers,
            timeout=httpx.Timeout(settings.timeout_s, connect=min(10.0, settings.timeout_s)),
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def chat(
        self,
        messages: list[dict],
        *,
        size: str = "large",
        tools: list[dict] | None = None,
        json_mode: bool = False,
        max_tokens: int | None = None,
    ) -> LLMReply:
        """One ``/chat/completions`` call. Raises ``LLMError``."""
        model = self.settings.model_for(size)
        body: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "temperature": self.settings.temperature,
            "max_tokens": max_tokens or self.settings.max_tokens,
        }
        if tools:
            body["tools"] = tools
            body["tool_choice"] = "auto"
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        t0 = time.perf_counter()
        attempt = 0
        while True:
            try:
                resp = self._http.post("/chat/completions", json=body)
            except httpx.TimeoutException as exc:
                raise LLMError("timeout", f"no answer within {self.settings.timeout_s}s") from exc
            except httpx.HTTPError as exc:
                if attempt < self.settings.max_retries:
                    attempt += 1
                    time.sleep(0.3 * attempt)
                    continue
                raise LLMError("connection", type(exc).__name__) from exc
            if resp.status_code in (429, 500, 502, 503, 504) and attempt < self.settings.max_retries:
                attempt += 1
                time.sleep(0.3 * attempt)
                continue
            if resp.status_code >= 400:
                raise LLMError("http", f"provider answered HTTP {resp.status_code}", status=resp.status_code)
            break
        ms = (time.perf_counter() - t0) * 1000
        try:
            data = resp.json()
            choice = data["choices"][0]
            msg = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError("malformed", "response is not an OpenAI chat completion") from exc
        content = msg.get("content") or ""
        calls = []
        for i, tc in enumerate(msg.get("tool_calls") or []):
            fn = (tc or {}).get("function") or {}
            args = fn.get("arguments")
            calls.append(
                ToolCall(
                    id=str(tc.get("id") or f"call_{i}"),
                    name=str(fn.get("name") or ""),
                    arguments=args if isinstance(args, str) else json.dumps(args or {}),
                )
            )
        usage = data.get("usage") or {}
        estimated = "prompt_tokens" not in usage
        tin = int(usage.get("prompt_tokens") or sum(len(str(m.get("content") or "")) for m in messages) // 4)
        tout = int(usage.get("completion_tokens") or (len(content) + sum(len(c.arguments) for c in calls)) // 4)
        return LLMReply(
            content=content,
            tool_calls=calls,
            input_tokens=tin,
            output_tokens=tout,
            estimated_usage=estimated,
            ms=round(ms, 1),
            model=model,
            finish_reason=choice.get("finish_reason"),
        )


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def parse_json_object(text: str) -> dict:
    """The first JSON object in a model reply (bare, or inside a ```json fence, or amid prose).

    Raises ``LLMError('malformed')`` when there is none.
    """
    candidates = [m.group(1) for m in _FENCE.finditer(text or "")] + [text or ""]
    for cand in candidates:
        cand = cand.strip()
        try:
            obj = json.loads(cand)
            if isinstance(obj, dict):
                return obj
        except ValueError:
            pass
        start = cand.find("{")
        while start != -1:
            depth = 0
            in_str = esc = False
            for i in range(start, len(cand)):
                ch = cand[i]
                if in_str:
                    if esc:
                        esc = False
                    elif ch == "\\":
                        esc = True
                    elif ch == '"':
                        in_str = False
                elif ch == '"':
                    in_str = True
                elif ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    if depth == 0:
                        try:
                            obj = json.loads(cand[start : i + 1])
                            if isinstance(obj, dict):
                                return obj
                        except ValueError:
                            pass
                        break
            start = cand.find("{", start + 1)
    raise LLMError("malformed", "the model did not return a JSON object")
