"""The HTTP transport (docs/protocol/v2.md section 8): the plugin as a WSGI application, and a one-call
development server on the standard library. Both verify the host's signature (http-signing.md)."""

import asyncio
import json
import os
import sys
import threading
import time
from socketserver import ThreadingMixIn
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from .answer import Answer, settled
from ._generated.catalog import ERROR_CODES, HTTP_DEFAULTS, HTTP_HEADERS, HTTP_PATHS, LIMITS
from .cancellation import Cancellation
from .context import Directories, LifecycleContext, Session, Transport
from .dispatch import call_handler, dispatch_event
from .errors import PluginSdkError
from .signing import ReplayGuard, verify_signature
from .validation import validate_document, validate_method

if TYPE_CHECKING:
    from .plugin import Plugin

#: The signing secret, several during a rotation, or a function asked on every request (None: not yet).
SecretSource = Union[str, Sequence[str], Callable[[], Union[None, str, Sequence[str]]]]
StartResponse = Callable[..., Any]


def secret_from_file(path: str) -> Callable[[], Optional[List[str]]]:
    """A secret source that reads ``path`` (one secret per line) again whenever the file changes, so the
    secret shown at registration can be written there without restarting. Missing or empty: no secret yet."""
    seen: Dict[str, Any] = {}

    def read() -> Optional[List[str]]:
        try:
            stat = os.stat(path)
        except OSError:
            return None
        key = (stat.st_mtime_ns, stat.st_size)
        if seen.get("key") != key:
            with open(path, "r", encoding="utf-8") as handle:
                lines = [line.strip() for line in handle.read().splitlines() if line.strip()]
            seen["key"] = key
            seen["secrets"] = lines or None
        return seen["secrets"]

    return read


def _secrets_of(source: SecretSource) -> List[str]:
    value = source() if callable(source) else source
    if value is None:
        return []
    values = [value] if isinstance(value, str) else list(value)
    if not values or any(not isinstance(s, str) or not s for s in values):
        raise PluginSdkError("SDK_HTTP_CONFIG_INVALID", '"secret" must be the signing secret shown at registration (for example os.environ["HOST_PLUGIN_SECRET"]); it is empty.')
    return values


class _Outbound(Transport):
    """Messages a handler makes become outboundMessages of the response."""

    kind = "http"

    def __init__(self, log: Callable[[str, str, Optional[Mapping[str, Any]]], None]) -> None:
        self.items: List[Dict[str, Any]] = []
        self.open = True
        self._log = log
        self._lock = threading.Lock()

    def _push(self, item: Dict[str, Any], target: Dict[str, str]) -> "Answer[Any]":
        with self._lock:
            if not self.open:
                raise PluginSdkError("SDK_SEND_UNAVAILABLE", "The event was already answered; over HTTP every message must be made before the handler returns.")
            if len(self.items) >= LIMITS["maxOutboundMessages"]:
                raise PluginSdkError("SDK_OUTBOUND_LIMIT", f"This event already has {LIMITS['maxOutboundMessages']} outbound messages.")
            self.items.append(item)
        return settled({"accepted": True, "target": target})

    def reply(self, event: Mapping[str, Any], message: Dict[str, Any], target: Dict[str, str], body: Dict[str, Any]) -> "Answer[Any]":
        item = {"format": message["format"], "parts": message["parts"]}
        if "keyboard" in message:
            item["keyboard"] = message["keyboard"]
        return self._push(item, target)

    def send(self, message: Dict[str, Any], target: Dict[str, str], body: Dict[str, Any], event: Optional[Mapping[str, Any]]) -> "Answer[Any]":
        item = {"target": target, "format": message["format"], "parts": message["parts"]}
        if "keyboard" in message:
            item["keyboard"] = message["keyboard"]
        return self._push(item, target)

    def log(self, level: str, message: str, fields: Optional[Mapping[str, Any]], event_id: Optional[str] = None) -> None:
        # No log.write over HTTP: the line goes to the service's own log, which keeps no event id.
        self._log(level, message, fields)


class _Lifecycle(Transport):
    kind = "http"

    def __init__(self, log: Callable[[str, str, Optional[Mapping[str, Any]]], None]) -> None:
        self._log = log

    def reply(self, event: Mapping[str, Any], message: Dict[str, Any], target: Dict[str, str], body: Dict[str, Any]) -> "Answer[Any]":
        raise PluginSdkError("SDK_SEND_UNAVAILABLE", "An HTTP plugin cannot send outside an event: the host takes messages only in event responses.")

    def send(self, message: Dict[str, Any], target: Dict[str, str], body: Dict[str, Any], event: Optional[Mapping[str, Any]]) -> "Answer[Any]":
        raise PluginSdkError("SDK_SEND_UNAVAILABLE", "An HTTP plugin cannot send outside an event: the host takes messages only in event responses.")

    def log(self, level: str, message: str, fields: Optional[Mapping[str, Any]], event_id: Optional[str] = None) -> None:
        # No log.write over HTTP: the line goes to the service's own log, which keeps no event id.
        self._log(level, message, fields)


def _stderr_log(level: str, message: str, fields: Optional[Mapping[str, Any]]) -> None:
    sys.stderr.write(f"[{level}] {message}{' ' + json.dumps(dict(fields), default=str) if fields else ''}\n")


class HttpApp:
    """A WSGI application serving ``GET /host/plugin/manifest``, ``POST /host/plugin/events/message`` and
    ``POST /host/plugin/events/deliver`` (the other event types the manifest subscribes to) for one plugin (paths are matched on ``PATH_INFO``, so mount it under any prefix).

    ``secret``: the signing secret shown at registration, several during a rotation, or a function asked
    on every request (:func:`secret_from_file`). Until it gives one, events get 401 ``signature.secret_unset``
    while the manifest is served. ``data_directory``: gives handlers ``ctx.directories`` laid out like a
    stdio plugin's. ``settings``: values handlers see (manifest defaults fill the gaps).
    ``max_concurrent_events``: beyond it, 503 with Retry-After (the host retries).
    """

    def __init__(
        self,
        plugin: "Plugin",
        secret: SecretSource,
        data_directory: Optional[str] = None,
        settings: Optional[Mapping[str, Any]] = None,
        tolerance_seconds: int = HTTP_DEFAULTS["signatureToleranceSeconds"],
        max_body_bytes: int = LIMITS["maxPayloadBytes"],
        max_concurrent_events: Optional[int] = None,
        verify_manifest_requests: bool = False,
        log: Optional[Callable[[str, str, Optional[Mapping[str, Any]]], None]] = None,
    ) -> None:
        if not callable(secret):
            _secrets_of(secret)
        plugin.check()
        plugin.http_manifest()  # fails now, not at the first request
        self.plugin = plugin
        self._secret = secret
        self._tolerance = tolerance_seconds
        self._max_body = max_body_bytes
        self._max_concurrent = max_concurrent_events
        self._verify_manifest = verify_manifest_requests
        self._log = log or _stderr_log
        self._replay = ReplayGuard()
        self._lock = threading.Lock()
        self._in_flight = 0
        self._closed = False
        directories = None
        if data_directory is not None:
            data = os.path.abspath(data_directory)
            directories = Directories(os.getcwd(), data, os.path.join(data, "config"), os.path.join(data, "cache"))
            for folder in (directories.config_directory, directories.cache_directory):
                os.makedirs(folder, exist_ok=True)
        self._session = Session(plugin.plugin_id, {**plugin.default_settings(), **(settings or {})}, directories, plugin.manifest.get("permissions", []), plugin.intercepts)
        self._start_error: Optional[BaseException] = None
        self._started = False
        self._start_lock = threading.Lock()

    # WSGI -------------------------------------------------------------------------------------------

    def __call__(self, environ: Dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        try:
            path = (environ.get("PATH_INFO") or "/").rstrip("/")
            method = environ.get("REQUEST_METHOD", "GET")
            if path == HTTP_PATHS["manifest"]:
                return self._manifest(environ, method, start_response)
            if path == HTTP_PATHS["messageEvents"] or path == HTTP_PATHS["otherEvents"]:
                return self._event(environ, method, start_response, path)
            return self._error(
                start_response,
                "http.not_found",
                f"no endpoint at {path or '/'}; the plugin serves {HTTP_PATHS['manifest']}, {HTTP_PATHS['messageEvents']} and {HTTP_PATHS['otherEvents']}",
            )
        except Exception as error:  # never leak a stack trace to the host
            self._log("error", f"request failed: {error!r}", None)
            return self._error(start_response, "plugin.internal_error", "the plugin failed to answer; see its log")

    def _json(self, start_response: StartResponse, status: int, body: Any, headers: Optional[List[Tuple[str, str]]] = None) -> List[bytes]:
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        reason = {200: "OK", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed", 413: "Payload Too Large", 400: "Bad Request", 409: "Conflict", 500: "Internal Server Error", 503: "Service Unavailable"}.get(status, "Error")
        start_response(
            f"{status} {reason}",
            [("Content-Type", "application/json; charset=utf-8"), ("Content-Length", str(len(data))), ("Cache-Control", "no-store")] + (headers or []),
        )
        return [data]

    def _error(self, start_response: StartResponse, code: str, message: str, details: Optional[Dict[str, Any]] = None, headers: Optional[List[Tuple[str, str]]] = None) -> List[bytes]:
        status = ERROR_CODES[code][2] or 500
        body: Dict[str, Any] = {"code": code, "message": message}
        if details is not None:
            body["details"] = details
        return self._json(start_response, status, {"error": body}, headers)

    @staticmethod
    def _headers(environ: Mapping[str, Any]) -> Dict[str, str]:
        return {key[5:].replace("_", "-").lower(): value for key, value in environ.items() if key.startswith("HTTP_")}

    def _manifest(self, environ: Dict[str, Any], method: str, start_response: StartResponse) -> List[bytes]:
        if method not in ("GET", "HEAD"):
            return self._error(start_response, "http.method_not_allowed", f"use GET for {HTTP_PATHS['manifest']}", headers=[("Allow", "GET, HEAD")])
        if self._verify_manifest:
            secrets = _secrets_of(self._secret)
            if not secrets:
                return self._error(start_response, "signature.secret_unset", "no signing secret is configured yet")
            check = verify_signature(self._headers(environ), b"", secrets, self._tolerance)
            if not check.ok:
                return self._error(start_response, check.code, check.message)
        return self._json(start_response, 200, self.plugin.http_manifest())

    def _read_body(self, environ: Dict[str, Any]) -> Optional[bytes]:
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > self._max_body:
            return None
        stream = environ["wsgi.input"]
        data = stream.read(length) if length > 0 else b""
        return data

    def _event(self, environ: Dict[str, Any], method: str, start_response: StartResponse, path: str) -> List[bytes]:
        if method != "POST":
            return self._error(start_response, "http.method_not_allowed", f"use POST for {path}", headers=[("Allow", "POST")])
        raw = self._read_body(environ)
        if raw is None:
            return self._error(start_response, "http.body_too_large", f"the request body is larger than {self._max_body} bytes")
        secrets = _secrets_of(self._secret)
        if not secrets:
            return self._error(start_response, "signature.secret_unset", "no signing secret is configured yet")
        headers = self._headers(environ)
        check = verify_signature(headers, raw, secrets, self._tolerance)
        if not check.ok:
            return self._error(start_response, check.code, check.message)
        claimed = headers.get(HTTP_HEADERS["pluginId"])
        if claimed is not None and claimed != self.plugin.plugin_id:
            return self._error(start_response, "plugin.id_mismatch", f'this service is plugin "{self.plugin.plugin_id}" but the host sent an event for "{claimed}"; register the right base URL')
        with self._lock:
            if self._closed:
                return self._error(start_response, "http.overloaded", "the plugin is shutting down", headers=[("Retry-After", "1")])
            # Answered before the delivery id is recorded, so the host's retry is not a replay.
            if self._max_concurrent is not None and self._in_flight >= self._max_concurrent:
                return self._error(start_response, "http.overloaded", f"the plugin is handling {self._in_flight} events (its limit); retry later", headers=[("Retry-After", "1")])
            now = time.time()
            if not self._replay.remember(check.delivery_id, check.timestamp + self._tolerance + 1, now):
                return self._error(start_response, "signature.replayed", f"delivery {check.delivery_id} was already received; a replayed request is refused")
            self._in_flight += 1
        try:
            try:
                body = json.loads(raw.decode("utf-8"))
            except ValueError as error:
                return self._error(start_response, "event.invalid", f"the body is not JSON: {error}")
            if path == HTTP_PATHS["messageEvents"]:
                event, issues = validate_document("message-event.schema.json", body, "event", owned=True)
                what = "a message event"
            else:
                event, issues = validate_method("events.deliver", "params", body, "event", owned=True)
                what = "an event of interaction.created, bot.added, bot.removed or conversation.opened"
            if event is None:
                return self._error(start_response, "event.invalid", f"the body is not {what}", {"issues": issues})
            if not self._ensure_started():
                return self._error(start_response, "plugin.start_failed", "the plugin failed to start (on_start raised); see its log")
            return self._json(start_response, 200, self._process(event))
        finally:
            with self._lock:
                self._in_flight -= 1

    def _ensure_started(self) -> bool:
        with self._start_lock:
            if not self._started:
                self._started = True
                hook = self.plugin._on_start
                if hook is not None:
                    try:
                        asyncio.run(call_handler(hook, LifecycleContext(_Lifecycle(self._log), self._session), inline=True))
                    except Exception as error:
                        self._start_error = error
                        self._log("error", f"on_start failed: {error!r}", None)
            return self._start_error is None

    def _process(self, event: Dict[str, Any]) -> Dict[str, Any]:
        """The response is decision and completion at once: it goes out when the handler ended."""
        outbound = _Outbound(self._log)
        acks: List[Dict[str, Any]] = []
        cancellation = Cancellation(self._session.cancellation)
        try:
            completion = asyncio.run(dispatch_event(self.plugin, event, outbound, self._session, acks.append, cancellation, inline=True))  # type: ignore[arg-type]
        finally:
            cancellation.detach()
        outbound.open = False
        ack = acks[0]
        error = ack.get("error") or (completion.error if completion else None)
        return {"accepted": bool(ack["accepted"]) and error is None, "intercepted": bool(ack["intercepted"]), "outboundMessages": outbound.items, "error": error}

    def close(self) -> None:
        """Refuses new events, cancels running handlers' cancellation, and runs on_stop."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._session.cancellation.cancel(PluginSdkError("SDK_EVENT_CANCELLED", "the HTTP plugin is closing"))
        while self._in_flight > 0:
            time.sleep(0.01)
        if self.plugin._on_stop is not None and self._started and self._start_error is None:
            asyncio.run(call_handler(self.plugin._on_stop, LifecycleContext(_Lifecycle(self._log), self._session), inline=True))


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


def make_http_server(plugin: "Plugin", secret: SecretSource, host: str = "127.0.0.1", port: int = 8787, **options: Any) -> Tuple[WSGIServer, HttpApp]:
    """A threading standard-library HTTP server for the plugin (not started); port 0 picks a free one."""
    app = HttpApp(plugin, secret, **options)
    server = make_server(host, port, app, server_class=_ThreadingServer, handler_class=_QuietHandler)
    return server, app


def serve(plugin: "Plugin", secret: SecretSource, host: str = "127.0.0.1", port: int = 8787, **options: Any) -> None:
    """Serves the plugin until interrupted (development; use a WSGI server such as gunicorn in production)."""
    server, app = make_http_server(plugin, secret, host, port, **options)
    sys.stderr.write(f"{plugin.plugin_id}: serving protocol v2 over HTTP on http://{host}:{server.server_address[1]}\n")
    sys.stderr.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        app.close()
