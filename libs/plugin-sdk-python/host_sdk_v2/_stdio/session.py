"""The stdio runtime's JSON-RPC session: requests to the host and their answers (correlated by id, failed
at the request timeout), the log, and the routing of what the host sends to the method handlers.
"""

import threading
import time
from typing import Any, Dict, List, Mapping, Optional

from .._generated.catalog import RpcErrorCode
from .. import blocking
from ..answer import Answer
from ..context import Transport, upload_in_chunks
from ..errors import ERROR_CODES, HostCallError, PluginMessageError, PluginSdkError
from ..framing import encode_json
from .transport import FramedIO


class _StdioTransport(Transport):
    kind = "stdio"

    def __init__(self, runtime: "HostSession") -> None:
        self._runtime = runtime

    def reply(self, event: Mapping[str, Any], message: Dict[str, Any], target: Dict[str, str], body: Dict[str, Any]) -> "Answer[Any]":
        return self._runtime.call("messages.reply", {"eventId": event["eventId"], "message": message}, target)

    def send(self, message: Dict[str, Any], target: Dict[str, str], body: Dict[str, Any], event: Optional[Mapping[str, Any]]) -> "Answer[Any]":
        params: Dict[str, Any] = {"target": target, "message": message}
        if event is not None:
            params["eventId"] = event["eventId"]  # the handler's event (v2.md 4.7)
        return self._runtime.call("messages.send", params, target)

    def log(self, level: str, message: str, fields: Optional[Mapping[str, Any]], event_id: Optional[str] = None) -> None:
        self._runtime.log(level, message, fields, event_id)

    def upload_media(self, data: bytes, content_type: str, file_name: Optional[str]) -> "Answer[Dict[str, Any]]":
        return upload_in_chunks(lambda method, params: self._runtime.call(method, params, None), data, content_type, file_name)


def _host_failure(error: BaseException, target: Optional[Mapping[str, str]]) -> BaseException:
    """A refused message (MessageRejected with a message.* data.code, or PermissionDenied) becomes a
    PluginMessageError with from_host=True; other failures stay as they are."""
    if not isinstance(error, HostCallError):
        return error
    data_code = error.data.get("code") if isinstance(error.data, dict) else None
    if error.code == RpcErrorCode.MessageRejected and isinstance(data_code, str) and data_code in ERROR_CODES and data_code.startswith("message."):
        return PluginMessageError(data_code, str(error), target=target, from_host=True)
    if error.code == RpcErrorCode.PermissionDenied:
        return PluginMessageError("message.permission.denied", str(error), target=target, from_host=True)
    return error


class _Call:
    """A request to the host waiting for its answer."""

    __slots__ = ("method", "answer", "mapped", "target", "deadline")

    def __init__(self, method: str, answer: "Answer[Any]", mapped: bool, target: Optional[Mapping[str, str]], deadline: float) -> None:
        self.method = method
        self.answer = answer
        #: Whether refusals become PluginMessageError (requests made with ``call``), for ``target``.
        self.mapped = mapped
        self.target = target
        self.deadline = deadline

    def fail(self, error: BaseException) -> None:
        self.answer.set_exception(_host_failure(error, self.target) if self.mapped else error)


class HostSession(FramedIO):
    """Requests to the host, their answers and deadlines, and the dispatch of the host's requests."""

    # Requests to the host -----------------------------------------------------------------------------

    def call(self, method: str, params: Dict[str, Any], target: Optional[Mapping[str, str]]) -> "Answer[Any]":
        """A plugin-to-host request with the runtime token; callable from any thread. A refused message
        fails as PluginMessageError."""
        if self._init is None:
            raise PluginSdkError("SDK_NOT_INITIALIZED", f"{method} cannot be sent before host.initialize.")
        if threading.get_ident() != self._owner and not self._writable.is_set():
            blocking.about_to_block(None)
            self._writable.wait()
        return self._request(method, encode_json(params), True, target)

    def _request(self, method: str, params: str, mapped: bool = False, target: Optional[Mapping[str, str]] = None) -> "Answer[Any]":
        """Sends a request whose params (JSON text of an object) get the runtime token; callable from any
        thread (a handler thread registers and writes it itself, without a hop to the loop)."""
        answer: "Answer[Any]" = Answer()
        if self._closed:
            answer.set_exception(PluginSdkError("SDK_HOST_DISCONNECTED", f"{method} was not sent."))
            return answer
        request_id = next(self._ids)
        # Registered before it is written, so its answer always finds it.
        self._pending[request_id] = _Call(method, answer, mapped, target, time.monotonic() + self._request_timeout)
        if self._closed:
            # Closed meanwhile (by the loop): _close may have failed the pending requests before this one.
            if self._pending.pop(request_id, None) is not None:
                answer.set_exception(PluginSdkError("SDK_HOST_DISCONNECTED", f"{method} was not sent."))
            return answer
        rest = params[1:]
        self._emit(f'{{"jsonrpc":"2.0","id":{request_id},"method":"{method}","params":{{"token":{self._token_json}{"," if rest != "}" else ""}{rest}}}')
        if self._watchdog is None:
            self._arm_watchdog()
        return answer

    # Deadlines ----------------------------------------------------------------------------------------

    def _arm_watchdog(self) -> None:
        if threading.get_ident() == self._owner:
            self._watch()
        else:
            assert self._loop is not None
            try:
                self._loop.call_soon_threadsafe(self._watch)
            except RuntimeError:
                pass  # the loop closed: the process is ending

    def _watch(self) -> None:
        """Arms the one timer of request timeouts and handler deadlines (loop thread only). Requests and
        live events are each kept in the order of their deadlines; the timer fires at the earliest of
        them, and no later than one request timeout from now while anything is pending: so a handler
        thread that adds a request (due a request timeout from then) finds the timer early enough and
        never has to wake the loop to move it."""
        if self._watchdog is not None or self._closed:
            return
        due: Optional[float] = None
        # Snapshots: handler threads add requests while the loop reads them.
        for call in list(self._pending.values())[:1]:
            due = call.deadline
        for live in self._live.values():
            if live.deadline is not None:
                due = live.deadline if due is None else min(due, live.deadline)
                break
        if due is not None:
            assert self._loop is not None
            self._watchdog = self._loop.call_at(min(due, self._loop.time() + self._request_timeout), self._on_watchdog)

    def _on_watchdog(self) -> None:
        self._watchdog = None
        assert self._loop is not None
        now = self._loop.time()
        late = []
        for request_id, call in list(self._pending.items()):
            if call.deadline > now:
                break
            late.append(request_id)
        for request_id in late:
            call = self._pending.pop(request_id)
            call.fail(HostCallError(call.method, RpcErrorCode.RequestTimeout, f"no answer within {self._limits['requestTimeoutMilliseconds']} ms"))
        passed = []
        for event_id, live in self._live.items():
            if live.deadline is None:
                continue  # its deadline passed already, and its handler has not returned yet
            if live.deadline > now:
                break
            live.deadline = None
            passed.append(event_id)
        for event_id in passed:
            self._cancel(event_id, "deadline")
        self._watch()

    def log(self, level: str, message: str, fields: Optional[Mapping[str, Any]] = None, event_id: Optional[str] = None) -> None:
        line = f"[{level}] {message}"
        if fields:
            from ..context import describe

            line += " " + describe(dict(fields))
        if self._init is None or self._closed:
            self._stderr.write(line + "\n")
            return
        params: Dict[str, Any] = {"level": level, "message": message}
        if fields:
            params["fields"] = dict(fields)
        if event_id is not None:
            params["eventId"] = event_id  # the handler's event (v2.md 4.5)
        future = self._request("log.write", encode_json(params))
        future.add_done_callback(lambda f: f.exception() is not None and self._stderr.write(line + "\n"))

    # Requests from the host ---------------------------------------------------------------------------

    def _on_message(self, message: Dict[str, Any]) -> None:
        if "method" not in message:
            call = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
            if call is None:
                return
            if "error" in message:
                e = message["error"]
                call.fail(HostCallError(call.method, e["code"], e["message"], e.get("data")))
            else:
                call.answer.set_result(message["result"])
            return
        if "id" not in message:
            return  # notifications are not part of v2; unknown ones are ignored
        request_id, method, params = message["id"], message["method"], message.get("params")
        if method == "host.initialize":
            self._initialize(request_id, params)
            return
        if self._init is None:
            self._respond_error(request_id, RpcErrorCode.NotInitialized, f"{method} arrived before host.initialize; the plugin answers nothing else until the handshake.")
            return
        handler = self._handlers.get(method)
        if handler is None:
            self._respond_error(request_id, RpcErrorCode.MethodNotFound, f'method "{method}" is not part of protocol v2 for plugins')
            return
        handler(request_id, params)

    def _invalid(self, request_id: Any, method: str, issues: List[Dict[str, str]]) -> None:
        self._respond_error(request_id, RpcErrorCode.InvalidParams, f"{method} params are invalid: {'; '.join(i['message'] for i in issues)}", {"issues": issues})
