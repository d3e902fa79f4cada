"""The stdio runtime's lifecycle: the handshake (``host.initialize``), on_start, pings, settings changes,
``plugin.stop`` with its grace period, the end of the host's input, and the process's exit.
"""

import asyncio
import gc
import os
import sys
import time
from typing import IO, TYPE_CHECKING, Any, Dict, Mapping, NoReturn, Optional, Tuple

from .._generated.catalog import HOST_STDIO_FLAG, METHODS, PROTOCOL_VERSION, RpcErrorCode
from .._version import SDK_NAME, SDK_VERSION
from ..context import Directories, LifecycleContext, Session
from ..dispatch import call_handler
from ..errors import PluginSdkError
from ..framing import encode_json
from ..validation import validate_method
from .sentinel import InlineRunner

if TYPE_CHECKING:
    from ..plugin import Plugin


#: Exit code when the plugin is started without ``--host-stdio`` (it prints help instead).
USAGE_EXIT_CODE = 2
#: How long on_stop may run when stdin closed (the host is gone) before the process exits anyway.
ORPHAN_STOP_SECONDS = 1.0


#: The youngest generation's collection threshold while the plugin runs (CPython's default is 700).
GC_YOUNG_THRESHOLD = 10000


def _tune_gc() -> None:
    """Once the plugin started. What exists then (modules, the manifest, the plugin's own state) lives as
    long as the process: frozen, the cyclic collector no longer walks it. An event's objects are freed by
    reference counting alone (the SDK leaves no reference cycle per event), but with 32 events in flight
    they alone pass CPython's threshold of 700 young objects, and each collection would walk them and
    move them to older generations for nothing: the threshold is raised, unless the plugin set its own."""
    gc.collect()
    gc.freeze()
    young, middle, old = gc.get_threshold()
    if young == 700:
        gc.set_threshold(GC_YOUNG_THRESHOLD, middle, old)


def usage(plugin: "Plugin") -> str:
    m = plugin.manifest
    return "\n".join(
        [
            f"{m['name']} {m['version']} ({plugin.plugin_id}): a protocol v2 chat-bot plugin built with {SDK_NAME} {SDK_VERSION}.",
            "",
            f"The host starts this program with {HOST_STDIO_FLAG} and speaks JSON-RPC over stdin/stdout;",
            "it is not meant to be run by hand.",
            "",
            "  Install: pack it (python -m host_sdk_v2.pack) and upload artifacts/<pluginId>.zip to the host.",
            "  Test:    drive it with host_sdk_v2.testing.TestHost in a unit test.",
            f"  Debug:   run it with {HOST_STDIO_FLAG} and write Content-Length framed JSON-RPC to stdin.",
            "",
        ]
    )


class Lifecycle(InlineRunner):
    """From the handshake to the exit."""

    def _initialize(self, request_id: Any, params: Any) -> None:
        if self._init is not None:
            self._respond_error(request_id, RpcErrorCode.AlreadyInitialized, "host.initialize was already answered; it is sent once per process.")
            return
        init, issues = validate_method("host.initialize", "params", params if params is not None else {}, "initialize")
        if init is None:
            self._invalid(request_id, "host.initialize", issues)
            return
        refusal: Optional[str] = None
        if PROTOCOL_VERSION not in init["supportedProtocolVersions"]:
            refusal = f"the host supports protocol versions {init['supportedProtocolVersions']} but this plugin speaks {PROTOCOL_VERSION}; update the host or rebuild the plugin with a matching SDK"
        elif init["pluginId"] != self.plugin.plugin_id:
            refusal = f'host.initialize is for plugin "{init["pluginId"]}" but this process is plugin "{self.plugin.plugin_id}"; make manifest.json name the same pluginId, repack and reinstall'
        if refusal:
            self._respond_error(request_id, RpcErrorCode.PluginError, refusal)
            self._stderr.write(f"[error] {refusal}\n")
            self._close(1, run_stop=False)
            return
        self._init = init
        self._token_json = encode_json(init["token"])
        runtime = init["runtime"]
        self._limits.update({k: runtime[k] for k in self._limits if k in runtime})
        self._request_timeout = self._limits["requestTimeoutMilliseconds"] / 1000
        self._handler_deadline = self._limits["handlerDeadlineMilliseconds"] / 1000
        self._decoder.max_header_bytes = runtime["maxHeaderLength"]
        self._decoder.max_payload_bytes = runtime["maxPayloadLength"]
        d = init["directories"]
        self._session = Session(
            self.plugin.plugin_id,
            {**self.plugin.default_settings(), **init["settings"]},
            Directories(d["pluginDirectory"], d["pluginDataDirectory"], d["pluginConfigDirectory"], d["pluginCacheDirectory"]),
            self.plugin.manifest.get("permissions", []),
            self.plugin.intercepts,
        )
        self._respond(
            request_id,
            {
                "protocolVersion": PROTOCOL_VERSION,
                "pluginId": self.plugin.plugin_id,
                "sdkName": SDK_NAME,
                "sdkVersion": SDK_VERSION,
                "capabilities": [m for m, (direction, _, _) in METHODS.items() if direction == "hostToPlugin" and m != "host.initialize"],
                "encoding": "json",
            },
        )
        self._spawn(self._start())

    def _spawn(self, coroutine: Any) -> None:
        assert self._loop is not None
        task = self._loop.create_task(coroutine)  # also from the sentinel, while it serves the loop's work
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _start(self) -> None:
        if self.plugin._on_start is not None:
            try:
                await call_handler(self.plugin._on_start, LifecycleContext(self._transport, self._session), inline=False, runner=self._workers.run)  # type: ignore[arg-type]
            except Exception as error:
                self.log("error", f"on_start failed, stopping: {error!r}")
                self._close(1, run_stop=False)
                return
        self._started = True
        _tune_gc()
        self._pump()
    def _on_ping(self, request_id: Any, params: Any) -> None:
        result: Dict[str, Any] = {}
        if isinstance(params, dict) and isinstance(params.get("nonce"), str):
            result["nonce"] = params["nonce"]
        result["inFlightEvents"] = self._running
        result["queuedEvents"] = len(self._waiting)
        self._respond(request_id, result)

    def _on_stop(self, request_id: Any, params: Any) -> None:
        checked, issues = validate_method("plugin.stop", "params", params if params is not None else {}, "params")
        if checked is None:
            self._invalid(request_id, "plugin.stop", issues)
            return
        self._respond(request_id, {"accepted": True})
        if self._stopping:
            return
        self._stopping = True
        # Refused and cancelled now, not in the task below: a sync handler that waits on the loop's thread
        # for its cancellation would keep the task from starting.
        for live in list(self._waiting):
            self._waiting.remove(live)
            self._forget(live.event["eventId"])
            self._respond_error(live.request_id, RpcErrorCode.Stopping, "the plugin stopped before this queued event started")
        self._cancel_all(PluginSdkError("SDK_EVENT_CANCELLED", f"the plugin is stopping (plugin.stop, {checked['reason']})"))
        self._spawn(self._stop(checked["graceMilliseconds"] / 1000))

    async def _stop(self, grace: float) -> None:
        """Lets running handlers finish (their replies and completions still go out) within the grace
        period, runs on_stop, exits 0."""
        assert self._idle is not None
        started = time.monotonic()
        try:
            await asyncio.wait_for(self._idle.wait(), timeout=grace)
        except asyncio.TimeoutError:
            self._stderr.write(f"[warn] {self._running} handler(s) still running after the grace period; exiting anyway\n")
        await self._run_on_stop(max(0.1, grace - (time.monotonic() - started)))
        self._finish(0)

    async def _run_on_stop(self, limit: float) -> None:
        if self.plugin._on_stop is None or not self._started or self._session is None:
            return
        try:
            await asyncio.wait_for(call_handler(self.plugin._on_stop, LifecycleContext(self._transport, self._session), inline=False, runner=self._workers.run), timeout=limit)
        except asyncio.TimeoutError:
            self._stderr.write("[warn] on_stop did not finish in time\n")
        except Exception as error:
            self.log("error", f"on_stop failed: {error!r}")

    def _on_settings_changed(self, request_id: Any, params: Any) -> None:
        checked, issues = validate_method("settings.changed", "params", params, "params")
        if checked is None:
            self._invalid(request_id, "settings.changed", issues)
            return
        self._spawn(self._apply_settings(request_id, checked["settings"]))

    async def _apply_settings(self, request_id: Any, settings: Dict[str, Any]) -> None:
        assert self._session is not None
        previous = self._session.settings
        hook = self.plugin._on_settings_changed
        if hook is not None:
            settings_hook = hook
            try:
                staged = _StagedSettings(self._session, settings)
                await call_handler(lambda c: settings_hook(c, previous), LifecycleContext(self._transport, staged), inline=False, runner=self._workers.run)
            except Exception as error:
                self.log("error", f"on_settings_changed failed; keeping the previous settings: {error!r}")
                self._respond_error(request_id, RpcErrorCode.PluginError, f"on_settings_changed failed: {error}")
                return
        self._session.settings = dict(settings)
        self._respond(request_id, {"applied": True})

    # Ending -------------------------------------------------------------------------------------------

    def _close(self, code: int, run_stop: bool = True) -> None:
        """stdin closed, a framing error, or a refused handshake: exit promptly, failing pending requests."""
        if self._closed:
            return
        self._closed = True
        self._stopping = True
        self._writable.set()
        if self._sentinel is not None:
            self._sentinel.poke()  # it ends its watch
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        for request_id in list(self._pending):
            call = self._pending.pop(request_id, None)
            if call is not None:
                call.answer.set_exception(PluginSdkError("SDK_HOST_DISCONNECTED", f"{call.method} did not finish."))
        self._cancel_all(PluginSdkError("SDK_HOST_DISCONNECTED", "the host connection closed"))
        if run_stop:
            self._spawn(self._orphan_stop(code))
        else:
            self._finish(code)

    def _cancel_all(self, reason: Exception) -> None:
        """Cancels the session's token and every live event's."""
        if self._session is not None:
            self._session.cancellation.cancel(reason)
        for live in list(self._live.values()):
            live.cancellation.cancel(reason)

    async def _orphan_stop(self, code: int) -> None:
        await self._run_on_stop(ORPHAN_STOP_SECONDS)
        self._finish(code)

    def _finish(self, code: int) -> None:
        if self._exit_code is not None:
            return
        self._exit_code = code
        self._closed = True
        if self._writer is not None:
            self._writer.flush()
            self._resolve(code)
        else:
            self._spawn(self._drain_pipe(code))

    async def _drain_pipe(self, code: int) -> None:
        """Lets the pipe transport write what it holds (at most 5 s) before the process exits."""
        deadline = time.monotonic() + 5
        self._flush()
        while self._out is not None and self._out.unsent() > 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        self._resolve(code)

    def _resolve(self, code: int) -> None:
        if self._done is not None and not self._done.done():
            self._done.set_result(code)


class _StagedSettings(Session):
    """The session as on_settings_changed sees it: the new values, before they replace the old."""

    def __init__(self, session: Session, settings: Mapping[str, Any]) -> None:
        self.__dict__.update(session.__dict__)
        self.settings = dict(settings)


def _enter_protocol_mode() -> Tuple[IO[bytes], IO[bytes]]:
    """Reserves the real stdout for frames and stdin for the host: fd 1 and ``sys.stdout`` become stderr
    (so ``print()``, libraries and child processes never write into the protocol stream), fd 0 becomes
    /dev/null (children cannot read frames). Returns the protocol's (input, output) streams."""
    sys.stdout.flush()
    frames_out = os.dup(1)
    frames_in = os.dup(0)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout = sys.stderr
    return os.fdopen(frames_in, "rb", buffering=0), os.fdopen(frames_out, "wb", buffering=0)


def exit_process(code: int) -> NoReturn:
    """Exits at once with ``code`` after flushing: handler threads that ignored their cancellation
    must not keep the process alive (the host waits for it to exit)."""
    try:
        sys.stderr.flush()
    finally:
        os._exit(code)
