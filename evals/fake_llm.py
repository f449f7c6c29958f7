"""A local fake OpenAI-compatible server (real HTTP on 127.0.0.1, in a thread): the model endpoint
of the Stage-2 evaluation's degraded runs (``evals/stage2.py``) and of the model-path tests.

Replies are scripted per role: the role is read from the first line of the system message
(``ROL: orquestador`` …, see ``radar_pipeline.agent.prompts``). A script entry is a dict or a
callable ``(request_json) -> dict``:

* ``{"content": "..."}`` — a normal assistant message;
* ``{"tool_calls": [("read_chunks", {...} or "raw json"), ...]}``;
* ``{"status": 500}`` — an HTTP error; ``{"raw": "..."}`` — a non-JSON body;
* ``{"sleep": 2.0, ...}`` — wait first (timeouts);
* ``{"usage": (prompt, completion)}`` — token usage to report (default (100, 20)).

When a role's script is empty, ``DEFAULTS`` answer sensibly. ``fail(role, entry)`` makes every call
of a role (``"*"``: of every role) answer ``entry`` until ``reset`` — a role's outage, e.g.
``fail("redactor", {"status": 503})`` or ``fail("*", {"sleep": 3})`` (hang past the client's
timeout). Every request is kept in ``requests``.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PASSAGE_MARK = re.compile(r"<<<PASAJE \[([0-9a-f]{16}):([0-9a-f]{16}-\d+)\]")
LISTED_ID = re.compile(r"^- ([0-9a-f]{16}-\d+) ", re.M)


def _role(body: dict) -> str:
    for m in body.get("messages", []):
        if m.get("role") == "system":
            first = (m.get("content") or "").splitlines()[0]
            if first.startswith("ROL: "):
                return first[5:].strip()
    return "unknown"


def cite_first(body: dict, hyphen: str = "-") -> dict:
    """Writer reply citing the first fenced passage (``hyphen`` replaces '-' in the chunk id)."""
    text = "\n".join(m.get("content") or "" for m in body["messages"] if m["role"] == "user")
    m = PASSAGE_MARK.search(text)
    if not m:
        return {"content": "No hay pasajes."}
    doc, chunk = m.group(1), m.group(2).replace("-", hyphen)
    return {
        "content": f"Los documentos describen el fenómeno consultado con detalle suficiente para el análisis [ {doc} : {chunk} ]."
    }


def read_listed(body: dict, extra_ids: tuple[str, ...] = ()) -> dict:
    """Analyst reply: read_chunks on the first two ids listed in the search results (+ extra ids)."""
    text = "\n".join(m.get("content") or "" for m in body["messages"] if m["role"] == "user")
    ids = LISTED_ID.findall(text)[:2] + list(extra_ids)
    return {"tool_calls": [("read_chunks", {"chunk_ids": ids, "window": 0})]}


DEFAULTS = {
    "guardia": lambda b: {"content": '{"veredicto": "permitir", "categoria": null}'},
    "orquestador": lambda b: {
        "content": '{"tipo": "pregunta", "ruta": "text", "formulaciones": ["GPS spoofing incidents satellites"]}'
    },
    "analista": lambda b: {"content": "LISTO"} if any(m["role"] == "tool" for m in b["messages"]) else read_listed(b),
    "redactor": cite_first,
    "verificador": lambda b: {"content": '{"fiel": true, "motivo": "", "frases_sin_soporte": []}'},
    "premisa": lambda b: {"content": '{"estado": "no_verificada", "chunk_id": null, "fragmento": null}'},
    "visualizador": lambda b: {
        "content": '{"componentes": ["linea_tiempo"], "filtros": {"fenomeno": "space_security"}}'
    },
}


class FakeOpenAI:
    def __init__(self):
        self.scripts: dict[str, list] = {}
        self.failing: dict[str, dict] = {}
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                role = _role(body)
                with outer.lock:
                    outer.requests.append(
                        {"role": role, "body": body, "path": self.path, "auth": self.headers.get("Authorization")}
                    )
                    queue = outer.scripts.get(role) or []
                    entry = outer.failing.get(role) or outer.failing.get("*")
                    if entry is None:
                        entry = queue.pop(0) if queue else DEFAULTS.get(role, lambda b: {"content": "{}"})
                spec = entry(body) if callable(entry) else dict(entry)
                if spec.get("sleep"):
                    time.sleep(spec["sleep"])
                if "status" in spec:
                    self._send(spec["status"], json.dumps({"error": {"message": "scripted failure"}}).encode())
                    return
                if "raw" in spec:
                    self._send(200, spec["raw"].encode())
                    return
                msg = {"role": "assistant", "content": spec.get("content")}
                if spec.get("tool_calls"):
                    msg["tool_calls"] = [
                        {
                            "id": f"call_{i}_{len(outer.requests)}",
                            "type": "function",
                            "function": {
                                "name": name,
                                "arguments": args if isinstance(args, str) else json.dumps(args),
                            },
                        }
                        for i, (name, args) in enumerate(spec["tool_calls"])
                    ]
                pt, ct = spec.get("usage", (100, 20))
                data = {
                    "id": "cmpl-fake",
                    "object": "chat.completion",
                    "model": body.get("model"),
                    "choices": [
                        {
                            "index": 0,
                            "message": msg,
                            "finish_reason": "tool_calls" if spec.get("tool_calls") else "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
                }
                self._send(200, json.dumps(data).encode())

            def _send(self, status, payload: bytes):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def script(self, role: str, *entries) -> None:
        with self.lock:
            self.scripts.setdefault(role, []).extend(entries)

    def fail(self, role: str, entry: dict) -> None:
        """Answer every call of ``role`` (``"*"``: every role) with ``entry`` until ``reset``."""
        with self.lock:
            self.failing[role] = entry

    def reset(self) -> None:
        with self.lock:
            self.scripts.clear()
            self.failing.clear()
            self.requests.clear()

    def calls(self, role: str | None = None) -> list[dict]:
        return [r for r in self.requests if role is None or r["role"] == role]

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
