"""The stdio runtime (docs/protocol/v2.md section 3): JSON-RPC over stdin/stdout with the host.

Handshake first; each event's decision (ACK) as soon as it is known and ``events.completed`` when its
handler ended; at most ``maxConcurrentEvents`` running handlers (``Overloaded`` beyond); ``events.cancel``
and the handler deadline cancel a handler's ``ctx.cancellation``; pings answered while handlers run;
``plugin.stop`` finishes running handlers within the grace period; the process exits when stdin closes.

The protocol runs on an asyncio event loop. Sync handlers run on the loop's thread while they return
quickly (no thread hand-off per event); one that waits or runs long there is noticed by a sentinel thread,
which carries on the loop's work until the handler returns, and from then on that handler runs on worker
threads (see ``_Sentinel``).

The runtime is one object made of parts, each in a module of ``host_sdk_v2._stdio``: ``transport``
(frames in and out of the pipes, the writer thread, the inbox of other threads' work), ``session``
(requests to the host and their answers, the log, the routing of the host's requests), ``events`` (the
event runner: admission, handlers, the worker threads, cancellation), ``sentinel`` (sync handlers on the
loop's thread) and ``lifecycle`` (handshake, on_start, stop, settings, exit). This module puts them
together and keeps the names it always had.
"""

import asyncio
import concurrent.futures
import select
import sys
import threading
from typing import IO, TYPE_CHECKING, Any, Callable, Dict, List, Optional

from ._generated.catalog import HOST_STDIO_FLAG
from . import blocking

# Every name this module had before the runtime was split into parts is imported here, so it is still
# importable from host_sdk_v2.stdio (the public ones, and the private ones tests and tools reach for).
from ._stdio.events import _HANDLER_THREADS, EventRunner, _check_event, _LiveEvent, _now, _Workers
from ._stdio.lifecycle import (
    GC_YOUNG_THRESHOLD,
    ORPHAN_STOP_SECONDS,
    USAGE_EXIT_CODE,
    Lifecycle,
    _enter_protocol_mode,
    _StagedSettings,
    _tune_gc,
    exit_process,
    usage,
)
from ._stdio.sentinel import INLINE_STALL_SECONDS, InlineRunner, _Sentinel
from ._stdio.session import HostSession, _Call, _host_failure, _StdioTransport
from ._stdio.state import RuntimeState
from ._stdio.transport import _FLUSH_FRAMES, _HEADER, _READ_SIZE, _WRITE_HIGH_WATER, FramedIO, _FrameWriter, _frame, _id_json, _Inbox, _PipeOutput

if TYPE_CHECKING:
    from .plugin import Plugin


class StdioRuntime(Lifecycle):
    """One plugin process speaking to its host. Create it and ``await run()``; returns the exit code."""

    def __init__(self, plugin: "Plugin", stdin: IO[bytes], stdout: IO[bytes], stderr: IO[str]) -> None:
        super().__init__(plugin, stdin, stdout, stderr)
        self._transport = _StdioTransport(self)
        self._handlers: Dict[str, Callable[[Any, Any], None]] = {
            "events.message": self._on_event,
            "events.deliver": self._on_deliver,
            "events.cancel": self._on_cancel,
            "plugin.ping": self._on_ping,
            "plugin.stop": self._on_stop,
            "settings.changed": self._on_settings_changed,
        }

    async def run(self) -> int:
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(max_workers=_HANDLER_THREADS, thread_name_prefix="host-sdk-handler"))
        self._inbox = _Inbox(self._loop, self._batched)
        self._workers = _Workers(self._inbox, _HANDLER_THREADS)
        self._done = self._loop.create_future()
        self._idle = asyncio.Event()
        self._idle.set()
        self._io.acquire()
        self._owner = self._loop_thread
        if await self._connect_pipes():
            if hasattr(select, "poll"):  # not on Windows: sync handlers run on worker threads there
                self._sentinel = _Sentinel(self)
                blocking.install(self._about_to_block)
        else:
            # Not pipes (a file, a terminal): a reader thread and the writer thread instead, and sync
            # handlers on worker threads only (the sentinel serves the loop's work from the pipes).
            self._writer = _FrameWriter(self._stdout)
            threading.Thread(target=self._read, name="host-sdk-reader", daemon=True).start()
        try:
            return await self._done
        finally:
            blocking.install(None)


def run_stdio(plugin: "Plugin", argv: Optional[List[str]] = None, stdin: Optional[IO[bytes]] = None, stdout: Optional[IO[bytes]] = None, stderr: Optional[IO[str]] = None) -> int:
    """Runs ``plugin`` over stdio; returns the exit code. Without ``--host-stdio`` in ``argv`` (default
    ``sys.argv[1:]``) it prints help to stderr and returns 2."""
    args = sys.argv[1:] if argv is None else argv
    err = stderr or sys.stderr
    if HOST_STDIO_FLAG not in args:
        err.write(usage(plugin))
        err.flush()
        return USAGE_EXIT_CODE
    plugin.check()
    if stdin is None or stdout is None:
        stdin, stdout = _enter_protocol_mode()
    runtime = StdioRuntime(plugin, stdin, stdout, err)
    # Not asyncio.run(): it joins the handler threads, and a handler that ignores its cancellation
    # must not keep a stopped plugin alive.
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(runtime.run())
    finally:
        for task in asyncio.all_tasks(loop):
            task.cancel()
        loop.run_until_complete(asyncio.sleep(0))
        executor = getattr(loop, "_default_executor", None)
        if executor is not None:
            executor.shutdown(wait=False)
        loop.close()
