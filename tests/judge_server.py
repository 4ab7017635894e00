"""An OpenAI-compatible chat-completions server on 127.0.0.1 for the judge tests: real HTTP, real auth,
and a real model answering (rc1's hf_judge backend over the built-in tiny model), with faults on cue.

`faults` is consumed one entry per request: "429" (rate limited, Retry-After 0), "500", "malformed"
(a 200 whose content is not a verdict), "slow:S" (answer after S seconds); an empty queue answers
normally.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class JudgeServer:
    def __init__(self, backend, key: str):
        self.backend = backend
        self.key = key
        self.faults: deque[str] = deque()
        self.requests: list[dict] = []
        self.authorizations: list[str] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                if self.path != "/v1/models":
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": [{"id": "tiny-judge", "object": "model", "created": 0, "owned_by": "rc1-tests"}],
                    },
                )

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.requests.append(body)
                    server.authorizations.append(self.headers.get("Authorization", ""))
                    fault = server.faults.popleft() if server.faults else "ok"
                if self.path != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                if self.headers.get("Authorization") != f"Bearer {server.key}":
                    return self._send(401, {"error": {"message": "invalid api key", "type": "invalid_request_error"}})
                if fault == "429":
                    return self._send(429, {"error": {"message": "rate limited"}}, {"Retry-After": "0"})
                if fault == "500":
                    return self._send(500, {"error": {"message": "internal error"}})
                if fault.startswith("slow:"):
                    time.sleep(float(fault.split(":", 1)[1]))
                if fault == "malformed":
                    text, prompt_tokens, completion_tokens = "I think the reply is correct.", 10, 7
                else:
                    answer = server.backend.ask(body["messages"])
                    text, prompt_tokens, completion_tokens = answer.text, answer.prompt_tokens, answer.completion_tokens
                self._send(
                    200,
                    {
                        "id": f"cmpl-{len(server.requests)}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body["model"],
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                        ],
                        "usage": {
                            "prompt_tokens": prompt_tokens,
                            "completion_tokens": completion_tokens,
                            "total_tokens": prompt_tokens + completion_tokens,
                        },
                    },
                )

            def _send(self, status: int, payload: dict, headers: dict | None = None):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def __enter__(self) -> JudgeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._http.shutdown()
        self._http.server_close()
