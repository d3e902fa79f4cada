"""The state every part of the stdio runtime shares (``host_sdk_v2.stdio.StdioRuntime`` is one object
made of the parts in this package: transport, session, event runner, sentinel, lifecycle)."""

import asyncio
import collections
import itertools
import threading
from typing import IO, TYPE_CHECKING, Any, Callable, Dict, List, Optional

from .._generated.catalog import RUNTIME_DEFAULTS
from ..context import Session, Transport
from ..framing import FrameDecoder

if TYPE_CHECKING:
    from ..dispatch import EventRun
    from ..plugin import Plugin
    from .events import _LiveEvent, _Workers
    from .session import _Call
    from .sentinel import _Sentinel
    from .transport import _FrameWriter, _Inbox, _PipeOutput


class RuntimeState:
    """The runtime's fields. Each part is a class of its own module, stacked on this one in the order
    transport, session, event runner, sentinel, lifecycle; the few calls a part makes to a later one are
    declared below for the type checker."""

    #: The host's requests by method (``events.message``, ...), set by the runtime.
    _handlers: Dict[str, Callable[[Any, Any], None]]
    #: How the contexts reach the host (its requests, the log).
    _transport: Transport
    #: Set by ``run()``, on the loop: work other threads hand to the loop, and the worker threads.
    _inbox: "_Inbox"
    _workers: "_Workers"

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

    if TYPE_CHECKING:

        def _on_message(self, message: Dict[str, Any]) -> None: ...

        def _initialize(self, request_id: Any, params: Any) -> None: ...

        def _cancel(self, event_id: str, reason: str) -> bool: ...

        def _run_inline(self, live: "_LiveEvent", run: "EventRun", handler: Callable[[Any], Any]) -> None: ...

        def _spawn(self, coroutine: Any) -> None: ...

        def _close(self, code: int, run_stop: bool = True) -> None: ...
