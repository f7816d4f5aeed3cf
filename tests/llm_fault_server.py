"""A loopback OpenAI-compatible /v1/chat/completions server that injects faults (a test helper only).

It answers each request with the next scripted action (then `default`):
  "ok"        valid rubric JSON (level from `verdict`, default 4)     "chatty"  the JSON wrapped in prose
  "garbage"   text with no JSON in it                                  "bad"     JSON with an out-of-range level
  "429" / "500" / "503" / "401"  that HTTP status with an error body   "hang"    sleep past the client timeout
  "echo-auth" a 401 whose message repeats the Authorization header (as a careless proxy might)
It is only a fault injector: the verdicts are canned, never a model.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

VALID = {"level": 4, "confidence": 7, "stance": "supports", "aspects": ["head", "relation", "tail"],
         "rationale": "The sentence reports the effect the query asks about."}


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out and hung up is the point of the "hang" fault, not an error


class FaultServer:
    def __init__(self) -> None:
        self.script: list[str] = []
        self.default = "ok"
        self.verdict: Callable[[dict[str, Any]], dict[str, Any]] = lambda body: dict(VALID)
        self.reply: Callable[[dict[str, Any]], str] | None = None  # free text instead of a verdict ("ok" only)
        self.requests: list[dict[str, Any]] = []
        self.usage = {"prompt_tokens": 1000, "completion_tokens": 50}
        self.hang_seconds = 3.0
        self._lock = threading.Lock()
        self.httpd = _QuietServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.api_base = f"http://127.0.0.1:{self.port}/v1"

    def next_action(self) -> str:
        with self._lock:
            return self.script.pop(0) if self.script else self.default

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # /v1/models, for readiness checks
                self._send(200, {"object": "list", "data": [{"id": "fault", "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                with server._lock:
                    server.requests.append({"path": self.path, "headers": headers, "body": body})
                action = server.next_action()
                if action == "hang":
                    time.sleep(server.hang_seconds)
                    action = "ok"
                if action in ("429", "500", "503", "401"):
                    self._send(int(action), {"error": {"message": f"injected {action}", "type": "fault"}})
                    return
                if action == "echo-auth":
                    self._send(401, {"error": {"message": f"bad key {headers.get('authorization', '')}",
                                               "type": "auth"}})
                    return
                verdict = server.verdict(body)
                if server.reply is not None and action == "ok":
                    action = "free"
                content = {
                    "free": server.reply(body) if server.reply is not None else "",
                    "ok": json.dumps(verdict),
                    "chatty": "Sure! Here is my assessment:\n```json\n" + json.dumps(verdict) + "\n```\nHope it helps.",
                    "garbage": "I think this sentence is quite relevant, maybe a four.",
                    "bad": json.dumps({**verdict, "level": 9}),
                }[action]
                self._send(200, {
                    "id": "chatcmpl-fault", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "fault"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {**server.usage,
                              "total_tokens": server.usage["prompt_tokens"] + server.usage["completion_tokens"]},
                })

        return Handler

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]


@contextmanager
def fault_server() -> Iterator[FaultServer]:
    srv = FaultServer()
    thread = threading.Thread(target=srv.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.httpd.shutdown()
        srv.httpd.server_close()
