"""Helpers of the test suite: a host that drives a real plugin process over stdio."""

import json
import os
import queue
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional

from host_sdk_v2.framing import FrameDecoder, encode_frame

SDK_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(SDK_ROOT, "tests", "fixtures")
VECTORS = os.path.join(SDK_ROOT, "..", "protocol", "vectors")
TOKEN = "t" * 40


def wait_until(condition: Callable[[], Any], timeout: float = 10.0, interval: float = 0.005) -> Any:
    """Polls ``condition`` until it returns something true (which it returns) or ``timeout`` seconds
    pass (AssertionError): for state that no event announces, e.g. a runtime's table on another thread."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"the condition did not hold within {timeout} s")
        time.sleep(interval)


def fixture_env() -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = SDK_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def init_params(plugin_id: str = "com.example.pyecho", **runtime: Any) -> Dict[str, Any]:
    return {
        "supportedProtocolVersions": [2],
        "instanceId": "instance-1",
        "pluginId": plugin_id,
        "hostVersion": "2.0.0",
        "directories": {"pluginDirectory": "/p", "pluginDataDirectory": "/d", "pluginConfigDirectory": "/c", "pluginCacheDirectory": "/k"},
        "token": TOKEN,
        "encoding": "json",
        "runtime": runtime,
        "settings": {},
    }


def message_event(event_id: str, text: str, command: Optional[Dict[str, str]] = None, conversation: str = "group") -> Dict[str, Any]:
    event: Dict[str, Any] = {
        "eventId": event_id,
        "eventType": "message.created",
        "timestamp": "2026-01-01T00:00:00Z",
        "source": "console",
        "bot": {"botAccountId": "bot-1", "platform": "console"},
        "conversation": {"type": conversation, "conversationId": "g1"},
        "sender": {"provider": "console", "mentionId": "u1", "displayName": "Alice"},
        "message": {"id": "m-" + event_id, "content": text},
        "messageReference": {"messageId": "m-" + event_id, "targetType": "group" if conversation == "group" else "user", "targetId": "g1"},
    }
    if command:
        event["command"] = command
    return event


def cmd(name: str, args: str = "") -> Dict[str, str]:
    return {"name": name, "word": name, "prefix": "/", "args": args}


class StdioHost:
    """Starts a plugin process, speaks the protocol as the host does, and records what the plugin sends.
    Plugin-to-host requests are answered like the host: log.write and events.completed accepted, replies
    and sends accepted (or refused by ``refuse``)."""

    def __init__(self, directory: str, args: Optional[List[str]] = None, python: str = sys.executable) -> None:
        self.proc = subprocess.Popen(
            [python, *(args or ["plugin.py", "--host-stdio"])],
            cwd=directory,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=fixture_env(),
        )
        self.decoder = FrameDecoder()
        self.responses: Dict[Any, Dict[str, Any]] = {}
        self.requests: List[Dict[str, Any]] = []
        self.errors: List[str] = []
        self.stderr: List[str] = []
        self.refuse: Optional[Callable[[Dict[str, Any]], Optional[Dict[str, Any]]]] = None
        #: Answers other plugin-to-host requests (media.upload, ...) with the result it returns.
        self.answer: Optional[Callable[[Dict[str, Any]], Optional[Dict[str, Any]]]] = None
        self._next = 1000
        #: Cleared, the host stops reading the plugin's stdout (as the real host does when it is behind).
        self.reading = threading.Event()
        self.reading.set()
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        threading.Thread(target=self._read, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        while True:
            self.reading.wait()
            chunk = self.proc.stdout.read1(65536)  # type: ignore[attr-defined]
            events = self.decoder.push(chunk) if chunk else self.decoder.end()
            for event in events:
                with self._changed:
                    if event[0] == "error":
                        self.errors.append(event[1])
                    else:
                        self._on_message(event[1])
                    self._changed.notify_all()
            if not chunk:
                return

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._changed:
                self.stderr.append(line.decode("utf-8", "replace"))
                self._changed.notify_all()

    def _on_message(self, message: Dict[str, Any]) -> None:
        if "method" not in message:
            self.responses[message["id"]] = message
            return
        self.requests.append(message)
        method = message["method"]
        params = message.get("params", {})
        error = self.refuse(message) if self.refuse else None
        if error is not None:
            self._send({"jsonrpc": "2.0", "id": message["id"], "error": error})
        elif method == "log.write":
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": {"accepted": True}})
        elif method == "events.completed":
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": {"recorded": True}})
        elif method == "messages.reply":
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": {"accepted": True, "messageId": "sent-1", "target": {"type": "group", "id": "g1"}}})
        elif method == "messages.send":
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": {"accepted": True, "target": params.get("target")}})
        elif self.answer is not None:
            result = self.answer(message)
            if result is not None:
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def _send(self, message: Dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(encode_frame(message))
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    def write_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, method: str, params: Any = None) -> int:
        with self._lock:
            self._next += 1
            request_id = self._next
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)
        return request_id

    def wait(self, predicate: Callable[[], Any], timeout: float = 10.0) -> Any:
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                value = predicate()
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out; requests={json.dumps(self.requests)[:2000]} stderr={''.join(self.stderr)[-2000:]}")
                self._changed.wait(left)

    def response(self, request_id: int, timeout: float = 10.0) -> Dict[str, Any]:
        return self.wait(lambda: self.responses.get(request_id), timeout)

    def call(self, method: str, params: Any = None, timeout: float = 10.0) -> Dict[str, Any]:
        return self.response(self.request(method, params), timeout)

    def initialize(self, **runtime: Any) -> Dict[str, Any]:
        return self.call("host.initialize", init_params(**runtime))

    def requests_of(self, method: str) -> List[Dict[str, Any]]:
        with self._lock:
            return [r for r in self.requests if r["method"] == method]

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def exit_code(self, timeout: float = 10.0) -> int:
        """Waits for the process to exit, and for its stderr to be read to the end."""
        code = self.proc.wait(timeout)
        self._stderr_reader.join(timeout)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass
