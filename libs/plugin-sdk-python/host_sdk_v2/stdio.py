"""The stdio runtime (docs/protocol/v2.md section 3): JSON-RPC over stdin/stdout with the host.

Handshake first; each event's decision (ACK) as soon as it is known and ``events.completed`` when its
handler ended; at most ``maxConcurrentEvents`` running handlers (``Overloaded`` beyond); ``events.cancel``
and the handler deadline cancel a handler's ``ctx.cancellation``; pings answered while handlers run;
``plugin.stop`` finishes running handlers within the grace period; the process exits when stdin closes.

The protocol runs on an asyncio event loop. Sync handlers run on the loop's thread while they return
quickly (no thread hand-off per event); one that waits or runs long there is noticed by a sentinel thread,
which carries on the loop's work until the handler returns, and from then on that handler runs on worker
threads (see ``_Sentinel``).
"""

import asyncio
import collections
import concurrent.futures
import gc
import inspect
import itertools
import os
import queue
import select
import stat
import sys
import threading
import time
import traceback
from typing import IO, TYPE_CHECKING, Any, Callable, Dict, List, Mapping, NoReturn, Optional, Tuple, Union

from ._generated.catalog import HOST_STDIO_FLAG, LIMITS, METHODS, PROTOCOL_VERSION, RUNTIME_DEFAULTS, RpcErrorCode
from . import blocking
from ._version import SDK_NAME, SDK_VERSION
from .answer import Answer
from .cancellation import Cancellation
from .context import Directories, LifecycleContext, Session, Transport, upload_in_chunks
from .dispatch import Completion, EventRun, call_handler
from .errors import ERROR_CODES, HostCallError, PluginMessageError, PluginSdkError
from .framing import FrameDecoder, encode_json
from .validation import owned_document_check, validate_method

_check_event = owned_document_check("message-event.schema.json", "event")

if TYPE_CHECKING:
    from .plugin import Plugin

#: Exit code when the plugin is started without ``--host-stdio`` (it prints help instead).
USAGE_EXIT_CODE = 2
#: How long on_stop may run when stdin closed (the host is gone) before the process exits anyway.
ORPHAN_STOP_SECONDS = 1.0
_READ_SIZE = 65536
#: Bytes of unsent frames past which handler threads wait before sending more (twice the largest
#: payload and 1 MiB, the amount the host lets a plugin leave unread the other way).
_WRITE_HIGH_WATER = 2 * LIMITS["maxPayloadBytes"] + 1024 * 1024
#: Threads that run sync handlers at most (events beyond them wait for a free thread).
_HANDLER_THREADS = 64
#: How long a sync handler may hold the event loop's thread before the sentinel takes over the loop's
#: work: it notices a handler still running after one to two of these, or at once when the handler
#: blocks in an SDK wait (a host answer, its cancellation, room to send).
INLINE_STALL_SECONDS = 0.005
#: Frames the loop's thread queues before they are written without waiting for the end of the chunk
#: being handled: the host starts on them while the rest is handled (at 32 events in flight this gave
#: 3 to 5 points more events/s than one write per chunk), and a sync handler on the loop's thread that
#: sends many meets the output's high-water mark (and waits) as a handler thread would.
_FLUSH_FRAMES = 24
_HEADER = b"Content-Length: %d\r\n\r\n"


def _frame(body: str) -> bytes:
    data = body.encode("utf-8")
    return _HEADER % len(data) + data


def _id_json(value: Any) -> str:
    """A JSON-RPC id (the decoder let through only strings, integers and, in answers, null) as JSON."""
    return str(value) if type(value) is int else encode_json(value)


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


def _now(step: Callable[[], None]) -> None:
    step()


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


class _FrameWriter:
    """Writes frames from its own thread and queue, one frame at a time, so a host that reads slowly
    only slows the plugin's writes and never the event loop, and frames never interleave."""

    def __init__(self, out: IO[bytes]) -> None:
        self._out = out
        self._queue: "queue.Queue[Union[bytes, threading.Event, None]]" = queue.Queue()
        self.broken = False
        self._thread = threading.Thread(target=self._run, name="host-sdk-writer", daemon=True)
        self._thread.start()

    def write(self, frame: bytes) -> None:
        self._queue.put(frame)

    def flush(self, timeout: float = 5.0) -> None:
        done = threading.Event()
        self._queue.put(done)
        done.wait(timeout)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if isinstance(item, threading.Event):
                item.set()
                continue
            if self.broken:
                continue
            try:
                view = memoryview(item)
                while view:
                    written = self._out.write(view)
                    view = view[written or len(view) :] if written is not None else view[len(view) :]
                self._out.flush()
            except (OSError, ValueError):
                self.broken = True  # the host closed the pipe; stdin's end stops the process


class _PipeOutput:
    """The protocol stream when stdout is a pipe or a socket. Frames are added from any thread and leave
    in that order, written without blocking by whichever thread flushes: the loop at the end of a batch
    (all its frames in one system call), a handler thread at once (no hop to the loop). One thread writes
    at a time, and none waits for another: a flush that finds the stream taken leaves its frames to the
    thread writing, which looks again before it lets go. What the pipe does not take waits in a backlog
    the loop writes when the pipe is writable again; past the high-water mark ``writable`` is cleared, so
    handler threads that send wait (the host stops reading a plugin that sends faster than it handles,
    v2.md 3.6.1) instead of growing the backlog."""

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop, loop_thread: int, writable: threading.Event) -> None:
        self._fd = fd
        self._loop = loop
        self._loop_thread = loop_thread
        self._writable = writable
        #: Appended by any thread, taken from the left by the thread holding the token (both atomic).
        self._frames: "collections.deque[bytes]" = collections.deque()
        #: Held by the thread writing; only ever taken without waiting, except by the loop's backlog writer.
        self._token = threading.Lock()
        self._backlog = bytearray()
        self._watching = False
        self.broken = False
        os.set_blocking(fd, False)

    def add(self, frame: bytes) -> int:
        """Queues a frame for the next :meth:`flush` (any thread); returns how many are queued."""
        frames = self._frames
        frames.append(frame)
        return len(frames)

    def flush(self) -> None:
        """Writes the queued frames (any thread), unless another thread is writing: it writes them."""
        frames = self._frames
        token = self._token
        while frames:
            if not token.acquire(False):
                return
            try:
                self._write_queued()
            finally:
                token.release()

    def _write_queued(self) -> None:
        frames = self._frames
        count = len(frames)
        if count == 0:
            return
        popleft = frames.popleft
        data = popleft() if count == 1 else b"".join([popleft() for _ in range(count)])
        if self.broken:
            return
        if self._backlog:
            self._backlog += data
        else:
            try:
                written = os.write(self._fd, data)
            except BlockingIOError:
                written = 0
            except OSError:
                self.broken = True  # the host closed the pipe; stdin's end stops the process
                return
            if written == len(data):
                return
            self._backlog += memoryview(data)[written:]
        if len(self._backlog) > _WRITE_HIGH_WATER:
            self._writable.clear()
        if not self._watching:
            self._watching = True
            if threading.get_ident() == self._loop_thread:
                self._loop.add_writer(self._fd, self.on_writable)
            else:
                self._loop.call_soon_threadsafe(self._loop.add_writer, self._fd, self.on_writable)

    @property
    def fd(self) -> int:
        return self._fd

    def backlogged(self) -> bool:
        """Whether bytes wait for the pipe to become writable."""
        return bool(self._backlog) and not self.broken

    def on_writable(self) -> None:
        """Writes the backlog (the loop's writer callback; the sentinel's while it serves)."""
        with self._token:
            if self._backlog and not self.broken:
                try:
                    written = os.write(self._fd, self._backlog)
                except BlockingIOError:
                    return
                except OSError:
                    self.broken = True
                    written = len(self._backlog)
                del self._backlog[:written]
            if len(self._backlog) <= _WRITE_HIGH_WATER // 4:
                self._writable.set()
            if not self._backlog:
                self._watching = False
                self._loop.remove_writer(self._fd)
        self.flush()  # frames left by threads that found the token taken

    def unsent(self) -> int:
        """Bytes not written yet."""
        return 0 if self.broken else len(self._backlog) + sum(len(f) for f in list(self._frames))


class _Inbox:
    """Work handed to the event loop from other threads, run in batches: one wake-up of the loop (a
    write to its self-pipe) for all the items posted before it drains, instead of one per item."""

    def __init__(self, loop: asyncio.AbstractEventLoop, batch: Callable[[Callable[[], None]], None]) -> None:
        self._loop = loop
        #: Runs the drain as one batch of the runtime (its frames leave in one write at the end).
        self._batch = batch
        self._items: "collections.deque[Tuple[Callable[..., None], Tuple[Any, ...]]]" = collections.deque()
        self._armed = False
        #: Wakes the sentinel while it serves the loop's work (the loop's thread is held by a handler).
        self.poke: Optional[Callable[[], None]] = None

    def post(self, fn: Callable[..., None], *args: Any) -> None:
        """Runs ``fn(*args)`` on the loop soon; raises RuntimeError when the loop is closed."""
        self._items.append((fn, args))
        if not self._armed:
            self._armed = True
            try:
                self._loop.call_soon_threadsafe(self._drain)
            except RuntimeError:
                self._armed = False
                raise
        poke = self.poke
        if poke is not None:
            poke()

    def _drain(self) -> None:
        # Disarmed first: an item posted while this runs either is taken below or arms a new drain.
        self._armed = False
        self._batch(self.run_items)

    def run_items(self) -> None:
        """Runs the items posted so far (the loop's drain; the sentinel's while it serves)."""
        items = self._items
        while items:
            fn, args = items.popleft()
            fn(*args)


class _Workers:
    """The threads sync handlers run on: started as needed (at most ``limit``), each taking the next job
    from one queue; a job's end reaches the loop through the inbox.

    A sleeping thread is woken only when no awake thread is between jobs: a thread that ends a job takes
    the next one queued, so a burst of events wakes a few threads instead of one per event. Every job
    still gets a thread of its own while threads are left: a thread that takes a job while more wait
    wakes another first, so a handler that blocks never holds up the jobs behind it."""

    def __init__(self, inbox: _Inbox, limit: int) -> None:
        self._inbox = inbox
        self._limit = limit
        self._jobs: "collections.deque[Callable[[], None]]" = collections.deque()
        self._lock = threading.Lock()
        self._threads = 0
        #: Awake threads not running a job (they take the next one without being woken).
        self._spare = 0
        #: The wake-up locks of sleeping threads (each held; released to wake its thread).
        self._sleeping: List[Any] = []

    def submit(self, job: Callable[[], None]) -> None:
        """Runs ``job()`` on a worker thread."""
        with self._lock:
            self._jobs.append(job)
            wake = self._wake()
        self._start(wake)

    def _wake(self) -> Any:
        """With the lock held: a thread for the queued jobs when no spare thread will take them (a
        sleeping thread's lock, True to start a thread, or None)."""
        if self._spare > 0:
            return None
        if self._sleeping:
            self._spare += 1
            return self._sleeping.pop()
        if self._threads < self._limit:
            self._threads += 1
            self._spare += 1
            return True
        return None  # every thread runs a handler: the job waits for the first that ends

    def _start(self, wake: Any) -> None:
        if wake is True:
            threading.Thread(target=self._work, name="host-sdk-handler", daemon=True).start()
        elif wake is not None:
            wake.release()

    def run(self, handler: Callable[[Any], Any], arg: Any) -> "asyncio.Future[Any]":
        """Runs ``handler(arg)`` on a worker thread; the future (of the running loop) has its result."""
        loop = asyncio.get_running_loop()
        waiter: "asyncio.Future[Any]" = loop.create_future()

        def settle(result: Any, error: Optional[BaseException]) -> None:
            if waiter.done():
                return
            if error is not None:
                waiter.set_exception(error)
            else:
                waiter.set_result(result)

        def job() -> None:
            try:
                result = handler(arg)
            except BaseException as error:  # handed to the awaiting coroutine, which reports it
                self._inbox.post(settle, None, error)
            else:
                self._inbox.post(settle, result, None)

        self.submit(job)
        return waiter

    def _work(self) -> None:
        wakeup = threading.Lock()
        wakeup.acquire()
        jobs = self._jobs
        while True:
            with self._lock:
                self._spare -= 1
                if jobs:
                    job: Optional[Callable[[], None]] = jobs.popleft()
                    wake = self._wake() if jobs else None
                else:
                    job = wake = None
                    self._sleeping.append(wakeup)
            if job is None:
                wakeup.acquire()  # until _wake hands this thread a job (counted spare again)
                continue
            self._start(wake)
            try:
                job()
            except RuntimeError:
                return  # the loop closed while the handler ran: nothing is left to report to
            with self._lock:
                self._spare += 1


class _Sentinel:
    """Watches the sync handlers that run on the event loop's thread (``StdioRuntime._run_inline``).

    It wakes every ``INLINE_STALL_SECONDS`` while such handlers run. When the same handler is still running
    (or at once, when the handler is about to block in an SDK wait) it takes over the loop's work on its own
    thread until the handler returns: frames left from the chunk being handled, new input, what handler
    threads post, timers and the output backlog; that handler runs on worker threads from then on. It sleeps
    while no handler runs on the loop's thread, and costs the events nothing but a counter and a flag."""

    def __init__(self, runtime: "StdioRuntime") -> None:
        self._runtime = runtime
        self.wake_fd, self._poke_fd = os.pipe()
        os.set_blocking(self.wake_fd, False)
        os.set_blocking(self._poke_fd, False)
        #: Asleep until poked: no handler ran on the loop's thread during its last period.
        self.parked = False
        #: Serving the loop's work (the loop's thread is held by a handler).
        self.serving = False
        #: The inline run that an SDK wait asked to hand over at once (its number), or -1.
        self.asked = -1
        self._poked = False
        #: Pokes are rare (a run after a quiet period, an SDK wait, work while serving): a lock keeps
        #: them off the pipe once it is closed.
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._watch, name="host-sdk-sentinel", daemon=True)
        self._thread.start()

    def poke(self) -> None:
        """Wakes the sentinel (any thread)."""
        if self._poked:
            return
        with self._lock:
            if self._closed:
                return
            self._poked = True
            try:
                os.write(self._poke_fd, b"!")
            except OSError:
                pass  # full: it is awake already

    def take_pokes(self) -> None:
        self._poked = False  # first: a poke after this writes again, and is seen below or next time
        try:
            while os.read(self.wake_fd, 512):
                pass
        except OSError:
            pass

    def _watch(self) -> None:
        runtime = self._runtime
        poller = select.poll()
        poller.register(self.wake_fd, select.POLLIN)
        seen = -1
        while not runtime._closed:
            poller.poll(None if self.parked else INLINE_STALL_SECONDS * 1000)
            self.take_pokes()
            number, running = runtime._inline_number, runtime._inline_running
            if running and (number == seen or number == self.asked):
                try:
                    runtime._take_over(self, number)
                except Exception:  # the watch must go on, or a stalled handler would hold the loop
                    runtime._stderr.write(f"[error] serving the event loop's work while a handler held its thread failed:\n{traceback.format_exc()}")
                seen = -1
                continue
            if not running and number == seen:
                self.parked = True
                if runtime._inline_number != number or runtime._inline_running:
                    self.parked = False  # a run started while parking: keep watching
            seen = number
        with self._lock:
            self._closed = True
            os.close(self.wake_fd)
            os.close(self._poke_fd)


class _StdioTransport(Transport):
    kind = "stdio"

    def __init__(self, runtime: "StdioRuntime") -> None:
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


class _LiveEvent:
    __slots__ = ("request_id", "event", "cancellation", "handler", "started", "deadline")

    def __init__(self, request_id: Any, event: Dict[str, Any], cancellation: Cancellation, handler: Callable[[Any], Any]) -> None:
        self.request_id = request_id
        self.event = event
        self.cancellation = cancellation
        self.handler = handler
        self.started = False
        #: When the handler deadline passes (loop time); None once it passed.
        self.deadline: Optional[float] = None


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


class StdioRuntime:
    """One plugin process speaking to its host. Create it and ``await run()``; returns the exit code."""

    def __init__(self, plugin: "Plugin", stdin: IO[bytes], stdout: IO[bytes], stderr: IO[str]) -> None:
        self.plugin = plugin
        self._stdin = stdin
        self._stderr = stderr
        self._stdout = stdout
        self._writer: Optional[_FrameWriter] = None
        self._out: Optional[_PipeOutput] = None
        self._batch_depth = 0
        self._flush_soon = False
        self._loop_thread = 0
        #: Held by the thread that does the loop's work: the loop's own, except while a sync handler runs
        #: on it (released) and the sentinel may take it. ``_owner`` is that thread (0 while none).
        self._io = threading.Lock()
        self._owner = 0
        self._sentinel: Optional[_Sentinel] = None
        #: The sync handler running on the loop's thread: its run's number, whether it runs, which.
        self._inline_number = 0
        self._inline_running = False
        self._inline_handler: Optional[Callable[[Any], Any]] = None
        #: Sync handlers that held the loop's thread too long once: they run on worker threads.
        self._threaded: "set[Callable[[Any], Any]]" = set()
        #: Decoded frames not handled yet (the sentinel handles the rest when a handler holds the loop).
        self._frames: "collections.deque[Any]" = collections.deque()
        #: The owner running ``_pump`` (it is not re-entered by an event that ends inside it).
        self._pumping = 0
        self._eof = False
        self._writable = threading.Event()
        self._writable.set()
        #: The runtime token as JSON, once the handshake gave it (every request to the host carries it).
        self._token_json = ""
        #: Whether each handler is a coroutine function (asked once per handler, not once per event).
        self._is_async: Dict[Any, bool] = {}
        self._decoder = FrameDecoder()
        self._transport = _StdioTransport(self)
        self._ids = itertools.count(1)
        # Both in the order of their deadlines (each kind has one fixed timeout), watched by one timer.
        self._pending: Dict[int, _Call] = {}
        self._watchdog: Optional[asyncio.TimerHandle] = None
        self._live: Dict[str, _LiveEvent] = {}
        self._waiting: List[_LiveEvent] = []
        self._running = 0
        self._init: Optional[Dict[str, Any]] = None
        self._session: Optional[Session] = None
        self._started = False
        self._stopping = False
        self._closed = False
        self._exit_code: Optional[int] = None
        self._idle: Optional[asyncio.Event] = None
        self._limits = {"maxConcurrentEvents": RUNTIME_DEFAULTS["maxConcurrentEvents"], "queueCapacity": RUNTIME_DEFAULTS["queueCapacity"], "requestTimeoutMilliseconds": RUNTIME_DEFAULTS["requestTimeoutMilliseconds"], "handlerDeadlineMilliseconds": RUNTIME_DEFAULTS["handlerDeadlineMilliseconds"]}
        self._request_timeout = self._limits["requestTimeoutMilliseconds"] / 1000
        self._handler_deadline = self._limits["handlerDeadlineMilliseconds"] / 1000
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._done: Optional["asyncio.Future[int]"] = None
        self._tasks: "set[asyncio.Task[Any]]" = set()
        self._handlers: Dict[str, Callable[[Any, Any], None]] = {
            "events.message": self._on_event,
            "events.deliver": self._on_deliver,
            "events.cancel": self._on_cancel,
            "plugin.ping": self._on_ping,
            "plugin.stop": self._on_stop,
            "settings.changed": self._on_settings_changed,
        }

    # I/O ----------------------------------------------------------------------------------------------

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

    async def _connect_pipes(self) -> bool:
        """stdin read by the event loop, stdout written without blocking by whichever thread has frames
        (see _PipeOutput): no thread hop per frame. Only for pipes and sockets."""
        assert self._loop is not None

        def is_pipe(stream: IO[bytes]) -> bool:
            try:
                mode = os.fstat(stream.fileno()).st_mode
            except (AttributeError, ValueError, OSError):
                return False
            return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)

        if not (is_pipe(self._stdin) and is_pipe(self._stdout)):
            return False
        try:
            fd = self._stdin.fileno()
            os.set_blocking(fd, False)
            self._loop.add_reader(fd, self._on_readable, fd)
        except (ValueError, OSError, NotImplementedError):
            return False
        try:
            self._out = _PipeOutput(self._stdout.fileno(), self._loop, self._loop_thread, self._writable)
        except (ValueError, OSError):
            self._loop.remove_reader(fd)
            return False
        return True

    @staticmethod
    def _read_input(fd: int) -> Optional[bytes]:
        """What the host wrote to the non-blocking stdin: bytes, b"" at its end (or when it broke), None
        when there is nothing now (another thread took it). At most ``_READ_SIZE`` bytes a time:
        asyncio's pipe transport reads 256 KiB, past the C allocator's threshold for mapping memory,
        and once a second thread exists every read could map and unmap a buffer."""
        try:
            return os.read(fd, _READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:
            return b""

    def _on_readable(self, fd: int) -> None:
        data = self._read_input(fd)
        if data is None:
            return  # the sentinel read it while a handler held this thread
        if data:
            self._on_data(data)
            return
        assert self._loop is not None
        self._loop.remove_reader(fd)
        self._on_eof()

    def _read(self) -> None:
        assert self._loop is not None
        read = getattr(self._stdin, "read1", None) or self._stdin.read
        while True:
            try:
                chunk = read(_READ_SIZE)
            except (OSError, ValueError):
                chunk = b""
            if not chunk:
                self._loop.call_soon_threadsafe(self._on_eof)
                return
            self._loop.call_soon_threadsafe(self._on_data, chunk)

    def _on_data(self, chunk: bytes) -> None:
        if self._closed:
            return
        self._batch_depth += 1
        try:
            self._on_frames(chunk)
        finally:
            self._batch_depth -= 1
            if self._batch_depth == 0:
                self._flush()

    def _batched(self, work: Callable[[], None]) -> None:
        """Runs ``work`` with the frames it writes held back and sent in one write when it ends (what a
        chunk of input or a batch from the handler threads causes: ACKs, requests, completions), without
        waiting for the next turn of the event loop."""
        self._batch_depth += 1
        try:
            work()
        finally:
            self._batch_depth -= 1
            if self._batch_depth == 0:
                self._flush()

    def _on_frames(self, chunk: bytes) -> None:
        self._frames.extend(self._decoder.push(chunk))
        self._next_frames()

    def _next_frames(self) -> None:
        """Handles the decoded frames in order (the loop's thread, or the sentinel for the rest when a
        handler holds the loop's thread)."""
        frames = self._frames
        while frames:
            item = frames.popleft()
            if item[0] == "error":
                frames.clear()
                self._stderr.write(f"[error] the host stream broke ({item[1]}): {item[2]}\n")
                self._close(1)
                return
            self._on_message(item[1])

    def _on_eof(self) -> None:
        if self._eof:
            return
        self._eof = True
        for item in self._decoder.end():
            self._stderr.write(f"[error] the host stream broke ({item[1]}): {item[2]}\n")
            self._close(1)
            return
        self._close(0)

    def _emit(self, body: str) -> None:
        """Sends one message (its JSON text); callable from any thread, frames leave in the order they
        were made (an event's ACK precedes its replies). The frames of one batch (a chunk of input, a
        batch from the handler threads) or of one turn of the loop leave in one write: a system call per
        frame costs more than the rest of an exchange, but a long batch is written every ``_FLUSH_FRAMES``
        frames. A handler thread writes its frame at once (with every frame queued before it), without
        waking the loop."""
        if self._closed and self._exit_code is None:
            return
        frame = _frame(body)
        out = self._out
        if out is None:
            if self._writer is not None:
                self._writer.write(frame)
            return
        queued = out.add(frame)
        if queued >= _FLUSH_FRAMES or threading.get_ident() != self._loop_thread:
            out.flush()
        elif self._batch_depth == 0 and not self._flush_soon:
            self._flush_soon = True
            assert self._loop is not None
            self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_soon = False
        if self._out is not None:
            self._out.flush()

    def _respond(self, request_id: Any, result: Any) -> None:
        self._emit(f'{{"jsonrpc":"2.0","id":{_id_json(request_id)},"result":{encode_json(result)}}}')

    def _ack(self, request_id: Any, ack: Dict[str, Any]) -> None:
        if ack["accepted"] and ack["error"] is None:
            # The usual ACK from a template: only the ids are encoded.
            intercepted = "true" if ack["intercepted"] else "false"
            self._emit(
                f'{{"jsonrpc":"2.0","id":{_id_json(request_id)},"result":{{"eventId":{encode_json(ack["eventId"])},"accepted":true,"intercepted":{intercepted},"error":null}}}}'
            )
        else:
            self._respond(request_id, ack)

    def _respond_error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        error: Dict[str, Any] = {"code": int(code), "message": message}
        if data is not None:
            error["data"] = data
        self._emit(f'{{"jsonrpc":"2.0","id":{_id_json(request_id)},"error":{encode_json(error)}}}')

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
            from .context import describe

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

    def _on_event(self, request_id: Any, params: Any) -> None:
        if self._stopping:
            self._respond_error(request_id, RpcErrorCode.Stopping, "the plugin is stopping and takes no new events")
            return
        event, issues = _check_event(params)
        if event is None:
            self._invalid(request_id, "events.message", issues)
            return
        self._admit(request_id, event)

    def _on_deliver(self, request_id: Any, params: Any) -> None:
        """``events.deliver``: an event of another type, answered and run like a message (v2.md 4.11)."""
        if self._stopping:
            self._respond_error(request_id, RpcErrorCode.Stopping, "the plugin is stopping and takes no new events")
            return
        event, issues = validate_method("events.deliver", "params", params, "event", owned=True)
        if event is None:
            self._invalid(request_id, "events.deliver", issues)
            return
        self._admit(request_id, event)

    def _admit(self, request_id: Any, event: Dict[str, Any]) -> None:
        event_id = event["eventId"]
        if event_id in self._live:
            self._respond_error(request_id, RpcErrorCode.InvalidParams, f"event {event_id} is already being handled; every delivery needs its own eventId")
            return
        handler = self.plugin.handler_for(event)
        if handler is None:
            # No handler takes it: the decision is known at once and holds no slot.
            self._respond(request_id, {"eventId": event_id, "accepted": False, "intercepted": False, "error": None})
            return
        assert self._session is not None and self._loop is not None
        # Without a link to the session's token: the runtime cancels live events itself when it stops.
        live = _LiveEvent(request_id, event, Cancellation(), handler)
        limit = self._limits["maxConcurrentEvents"]
        if self._started:
            if self._running >= limit or self._waiting:
                self._overloaded(request_id, event_id)
                return
        elif len(self._waiting) >= limit + self._limits["queueCapacity"]:
            self._overloaded(request_id, event_id)
            return
        self._live[event_id] = live
        # Counted from admission, as the host counts from sending (6.5): the SDK cancels the handler itself.
        live.deadline = time.monotonic() + self._handler_deadline
        self._watch()
        self._waiting.append(live)
        self._pump()

    def _overloaded(self, request_id: Any, event_id: str) -> None:
        limit, capacity = self._limits["maxConcurrentEvents"], self._limits["queueCapacity"]
        self._respond_error(request_id, RpcErrorCode.Overloaded, f"all {limit} event handler(s) are busy; event {event_id} was refused", {"maxConcurrentEvents": limit, "queueCapacity": capacity})

    def _pump(self) -> None:
        owner = self._owner
        if self._pumping == owner:
            return  # an event ended inside a handler this pump started: the loop below goes on
        outer, self._pumping = self._pumping, owner
        try:
            while self._started and not self._stopping and self._waiting and self._running < self._limits["maxConcurrentEvents"]:
                live = self._waiting.pop(0)
                live.started = True
                self._running += 1
                if self._running == 1:
                    assert self._idle is not None
                    self._idle.clear()
                handler = live.handler
                is_async = self._is_async.get(handler)
                if is_async is None:
                    is_async = self._is_async[handler] = inspect.iscoroutinefunction(handler)
                if is_async:
                    self._run_async(live, handler)
                else:
                    self._run_sync(live, handler)
        finally:
            self._pumping = outer

    def _event_run(self, live: _LiveEvent) -> EventRun:
        assert self._session is not None
        request_id = live.request_id
        try:
            return EventRun(live.event, self._transport, self._session, lambda ack: self._ack(request_id, ack), live.cancellation, any_thread=True, loop=self._loop)  # type: ignore[arg-type]
        except BaseException:
            self._end(live)
            raise

    def _run_async(self, live: _LiveEvent, handler: Callable[[Any], Any]) -> None:
        """An async handler: one task awaits it and ends the event in the same step as the handler's
        last (no wrapping coroutines of the generic dispatch, no done callback a turn of the loop later)."""
        run = self._event_run(live)
        try:
            coroutine = handler(run.ctx)
        except Exception as thrown:
            self._ended(live, run, thrown)
            return
        except BaseException:
            self._end(live)
            raise
        assert self._loop is not None
        self._loop.create_task(self._drive(live, run, coroutine))

    async def _drive(self, live: _LiveEvent, run: EventRun, coroutine: Any) -> None:
        thrown: Optional[Exception] = None
        try:
            await coroutine
        except Exception as raised:
            thrown = raised
        except BaseException:
            self._end(live)
            raise
        self._handler_ended(live, run, thrown)

    def _handler_ended(self, live: _LiveEvent, run: EventRun, thrown: Optional[Exception]) -> None:
        """The handler returned or raised (on the thread doing the loop's work): the ACK if still due,
        then ``events.completed`` once every message it started has its answer, and the slot is freed."""
        try:
            error = run.finish(thrown)
            run.ctx._when_settled(lambda: self._finish_run(live, run, error), self._on_loop)
        except BaseException:
            self._end(live)
            raise

    def _ended(self, live: _LiveEvent, run: EventRun, thrown: Optional[Exception]) -> None:
        """The handler returned or raised (any thread): the ACK if still due, then ``events.completed``
        once every message it started has its answer; the event's slot is freed on the loop."""
        try:
            error = run.finish(thrown)
            run.ctx._when_settled(lambda: self._on_loop(lambda: self._finish_run(live, run, error)), _now)
        except BaseException:
            self._on_loop(lambda: self._end(live))
            raise

    def _run_sync(self, live: _LiveEvent, handler: Callable[[Any], Any]) -> None:
        """A sync handler: on the loop's thread (``_run_inline``) unless it held that thread too long
        once, else on a worker thread, which also sends what it causes (its messages, the ACK if still
        due) without a hop to the loop; the completion goes out when the last answer arrives (on the
        loop). No task, no coroutine, no asyncio future per event."""
        run = self._event_run(live)
        if self._owner == self._loop_thread and self._sentinel is not None and handler not in self._threaded:
            self._run_inline(live, run, handler)
            return

        def job() -> None:
            try:
                result = handler(run.ctx)
            except Exception as thrown:
                self._ended(live, run, thrown)
                return
            except BaseException as thrown:  # reported on the loop, as an awaited handler's would be
                self._inbox.post(self._sync_ended, live, run, None, thrown)
                return
            if inspect.isawaitable(result):
                self._inbox.post(self._sync_ended, live, run, result, None)
            else:
                self._ended(live, run, None)

        self._workers.submit(job)

    def _run_inline(self, live: _LiveEvent, run: EventRun, handler: Callable[[Any], Any]) -> None:
        """A sync handler on the event loop's thread, with no thread hand-off: the loop's work is
        released to the sentinel while it runs (see ``_Sentinel``). asyncio sees no running loop in it,
        as on a worker thread."""
        sentinel = self._sentinel
        assert sentinel is not None
        self._inline_number += 1
        self._inline_handler = handler
        self._inline_running = True
        if sentinel.parked:
            sentinel.parked = False
            sentinel.poke()
        self._owner = 0
        self._io.release()
        asyncio._set_running_loop(None)
        result: Any = None
        thrown: Optional[BaseException] = None
        try:
            result = handler(run.ctx)
        except BaseException as raised:
            thrown = raised
        finally:
            self._inline_running = False
            asyncio._set_running_loop(self._loop)
            if sentinel.serving:
                sentinel.poke()  # it hands the loop's work back
            self._io.acquire()
            self._owner = self._loop_thread
            self._inline_handler = None
        self._sync_ended(live, run, result, thrown)

    def _sync_ended(self, live: _LiveEvent, run: EventRun, result: Any, thrown: Optional[BaseException]) -> None:
        """A sync handler returned ``result`` or raised ``thrown`` (the owner of the loop's work)."""
        if thrown is None and result is not None and inspect.isawaitable(result):
            self._spawn(self._finish_awaitable(live, run, result))
            return
        if thrown is not None and not isinstance(thrown, Exception):
            self._end(live)
            raise thrown
        self._handler_ended(live, run, thrown)

    # The sentinel's side --------------------------------------------------------------------------------

    def _about_to_block(self) -> None:
        """An SDK wait is about to block the loop's thread (the hook of ``blocking``): when a sync handler
        runs there, the sentinel takes over the loop's work now."""
        sentinel = self._sentinel
        if sentinel is not None and self._inline_running and threading.get_ident() == self._loop_thread:
            sentinel.asked = self._inline_number
            sentinel.parked = False
            sentinel.poke()

    def _take_over(self, sentinel: _Sentinel, number: int) -> None:
        """On the sentinel's thread: the sync handler of inline run ``number`` holds the loop's thread."""
        if not self._io.acquire(False):
            return  # the handler returned and the loop's thread has its work back
        try:
            handler = self._inline_handler
            if not self._inline_running or self._inline_number != number or self._closed or handler is None:
                return
            self._threaded.add(handler)
            name = getattr(handler, "__qualname__", None) or repr(handler)
            self._stderr.write(f"[info] the sync handler {name} waited or ran long on the event loop's thread; it runs on worker threads from now on\n")
            self._owner = threading.get_ident()
            sentinel.serving = True
            self._inbox.poke = sentinel.poke
            try:
                self._serve(sentinel)
            finally:
                self._inbox.poke = None
                sentinel.serving = False
                self._owner = 0
        finally:
            self._io.release()

    def _serve(self, sentinel: _Sentinel) -> None:
        """The loop's work while a sync handler holds the loop's thread: the frames left from the chunk
        being handled, new input, what handler threads post, timers and the output backlog. asyncio calls
        made here (tasks, timers) are safe: the loop's thread is in the handler, not in the loop."""
        assert self._loop is not None and self._out is not None
        out, loop = self._out, self._loop
        stdin = self._stdin.fileno()
        poller = select.poll()
        poller.register(sentinel.wake_fd, select.POLLIN)
        poller.register(stdin, select.POLLIN)
        watching_out = False
        while True:
            self._next_frames()
            self._inbox.run_items()
            self._pump()  # events queued behind the handler (a pump on the loop's thread is held with it)
            self._watch()
            watchdog = self._watchdog
            if watchdog is not None and watchdog.when() <= loop.time():
                watchdog.cancel()
                self._on_watchdog()
                watchdog = self._watchdog
            out.flush()
            if not self._inline_running or self._closed:
                return
            if out.backlogged() != watching_out:
                watching_out = not watching_out
                if watching_out:
                    poller.register(out.fd, select.POLLOUT)
                else:
                    poller.unregister(out.fd)
            timeout = 1000.0 if watchdog is None else min(1000.0, max(0.0, (watchdog.when() - loop.time()) * 1000))
            for fd, _ in poller.poll(timeout):
                if fd == stdin:
                    data = self._read_input(stdin)
                    if data is None:
                        continue
                    if data:
                        self._frames.extend(self._decoder.push(data))
                    else:
                        poller.unregister(stdin)
                        self._on_eof()
                elif fd == out.fd:
                    out.on_writable()
                else:
                    sentinel.take_pokes()

    async def _finish_awaitable(self, live: _LiveEvent, run: EventRun, awaitable: Any) -> None:
        """A sync handler that returned an awaitable: awaited here, as ``call_handler`` does."""
        try:
            thrown: Optional[Exception] = None
            try:
                await awaitable
            except Exception as raised:
                thrown = raised
            error = run.finish(thrown)
            await run.ctx._settle()
            completion = run.completion(error)
            if completion is not None:
                self._complete(live.event["eventId"], completion)
        finally:
            self._end(live)

    def _finish_run(self, live: _LiveEvent, run: EventRun, error: Optional[Any]) -> None:
        try:
            completion = run.completion(error)
            if completion is not None:
                self._complete(live.event["eventId"], completion)
        finally:
            self._end(live)

    def _on_loop(self, fn: Callable[[], None]) -> None:
        """Runs ``fn`` where the loop's work is done: here if this thread does it, else posted to it."""
        if threading.get_ident() == self._owner:
            fn()
        else:
            self._inbox.post(fn)

    def _end(self, live: _LiveEvent) -> None:
        """The event's handling ended: frees its slot and starts the next waiting event."""
        self._forget(live.event["eventId"])
        self._running -= 1
        if self._running == 0:
            assert self._idle is not None
            self._idle.set()
        self._pump()

    def _complete(self, event_id: str, completion: Completion) -> None:
        if self._closed:
            return
        error = "null" if completion.error is None else encode_json(completion.error)
        future = self._request("events.completed", f'{{"eventId":{encode_json(event_id)},"error":{error},"durationMs":{round(completion.duration_ms)}}}', True)
        future.add_done_callback(lambda f: f.exception() is not None and self._stderr.write(f"[warn] events.completed for {event_id} failed: {f.exception()}\n"))

    def _forget(self, event_id: str) -> None:
        live = self._live.pop(event_id, None)
        if live is None:
            return
        live.cancellation.detach()

    def _cancel(self, event_id: str, reason: str) -> bool:
        live = self._live.get(event_id)
        if live is None:
            return False
        if not live.started and live in self._waiting:
            self._waiting.remove(live)
            self._forget(event_id)
            self._respond_error(live.request_id, RpcErrorCode.Cancelled, f"event {event_id} was cancelled before its handler started")
            return True
        why = "its handler deadline passed" if reason == "deadline" else "the host stopped waiting for its decision (ackTimeout)"
        live.cancellation.cancel(PluginSdkError("SDK_EVENT_CANCELLED", f"Event {event_id} was cancelled: {why}."))
        return True

    def _on_cancel(self, request_id: Any, params: Any) -> None:
        checked, issues = validate_method("events.cancel", "params", params, "params")
        if checked is None:
            self._invalid(request_id, "events.cancel", issues)
            return
        self._respond(request_id, {"cancelled": self._cancel(checked["eventId"], checked["reason"])})

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


def exit_process(code: int) -> NoReturn:
    """Exits at once with ``code`` after flushing: handler threads that ignored their cancellation
    must not keep the process alive (the host waits for it to exit)."""
    try:
        sys.stderr.flush()
    finally:
        os._exit(code)
