"""The one dispatch path of every transport (stdio, HTTP, the test host): runs the handler of one event,
sends its decision (the ACK) as soon as it is known, and reports how the handler ended."""

import asyncio
import inspect
import threading
import time
import traceback
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Dict, Mapping, Optional, Union

from ._generated.wire import ChatEvent, EventAck, MessageEvent, PluginError
from .cancellation import Cancellation
from .context import ChatEventContext, EventContext, MessageContext, Session, Transport
from .errors import HANDLER_FAILED_CODE, HandlerError, PluginMessageError, PluginSdkError

if TYPE_CHECKING:
    from .plugin import Handler, Plugin


def _clip(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[: limit - 3] + "..."


def to_plugin_error(error: BaseException) -> PluginError:
    """The ``{code, message, details?}`` of a raised exception."""
    if isinstance(error, HandlerError):
        out: Dict[str, Any] = {"code": _clip(error.code or HANDLER_FAILED_CODE, 100), "message": _clip(error.message, 2000)}
        if error.details is not None:
            out["details"] = error.details
        return out  # type: ignore[return-value]
    if isinstance(error, (PluginMessageError, PluginSdkError)):
        return {"code": error.code, "message": _clip(str(error), 2000)}
    message = str(error) or type(error).__name__
    return {"code": HANDLER_FAILED_CODE, "message": _clip(message, 2000)}


class Completion:
    """How the handler of an accepted event ended: what ``events.completed`` reports."""

    def __init__(self, error: Optional[PluginError], duration_ms: float) -> None:
        self.error = error
        self.duration_ms = duration_ms


#: Runs a sync handler on a worker thread: ``runner(handler, arg)`` is awaited for its result.
Runner = Callable[[Callable[[Any], Any], Any], "Awaitable[Any]"]


async def call_handler(handler: Callable[..., Any], arg: Any, inline: bool, runner: Optional[Runner] = None) -> None:
    """Runs a sync or async handler. Sync handlers run in a worker thread (so the runtime keeps answering
    pings), by ``runner`` or else the loop's default executor, unless ``inline`` (HTTP and the test host,
    which already run on a thread of their own)."""
    if inspect.iscoroutinefunction(handler):
        await handler(arg)
        return
    if inline:
        result = handler(arg)
    elif runner is not None:
        result = await runner(handler, arg)
    else:
        result = await asyncio.get_running_loop().run_in_executor(None, handler, arg)
    if inspect.isawaitable(result):
        await result


class EventRun:
    """The handling of one event around its handler, shared by every way a handler is run (a coroutine
    awaiting it, or the stdio runtime's worker threads). Decision and work are apart (docs/protocol/v2.md
    4.2, 5.3): a plugin that cannot intercept ACKs before its handler runs (here, at creation); one that
    can ACKs on intercept()/pass_on() or when the handler ends (:meth:`finish`). Create it on the event
    loop's thread, or name the ``loop``. With ``any_thread`` ``on_ack`` may be called on any thread (the stdio runtime's), so a
    decision made on a handler thread is sent from there at once; else it is sent from the loop."""

    def __init__(
        self,
        event: Union[MessageEvent, ChatEvent],
        transport: Transport,
        session: Session,
        on_ack: Callable[[EventAck], None],
        cancellation: Cancellation,
        any_thread: bool = False,
        loop: Optional[asyncio.AbstractEventLoop] = None,
    ) -> None:
        self.event = event
        self._transport = transport
        self._on_ack = on_ack
        self._acked = False
        self._declined = False
        self._any_thread = any_thread
        self._loop = loop if loop is not None else asyncio.get_running_loop()
        if session.intercepts:
            # The decision may come from a handler's thread while the handler's end decides on another.
            self._ack_lock: Optional[threading.Lock] = threading.Lock()
        else:
            # Decided here, before anything else can see this run.
            self._ack_lock = None
            self._accept(False)
        context = MessageContext if event["eventType"] == "message.created" else ChatEventContext
        self.ctx: EventContext = context(event, transport, session, cancellation, self._decided)  # type: ignore[arg-type]
        self._started = time.monotonic()

    def _ack(self, value: EventAck) -> None:
        lock = self._ack_lock
        if lock is None:
            if self._acked:
                return
            self._acked = True
        else:
            with lock:
                if self._acked:
                    return
                self._acked = True
        self._on_ack(value)

    def _accept(self, intercepted: bool) -> None:
        self._ack({"eventId": self.event["eventId"], "accepted": True, "intercepted": intercepted, "error": None})

    def _decided(self, intercepted: bool) -> None:
        # intercept() may be called from a worker thread: the ACK goes out on the loop, unless on_ack
        # may be called from any thread.
        if self._any_thread:
            self._accept(intercepted)
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            self._accept(intercepted)
        else:
            self._loop.call_soon_threadsafe(self._accept, intercepted)

    def finish(self, thrown: Optional[Exception]) -> Optional[PluginError]:
        """The handler ended (raising ``thrown``): logs a failure, sends the ACK if it is still due (a
        decline when the handler failed before deciding); returns the error to report."""
        error: Optional[PluginError] = None
        if thrown is not None:
            error = to_plugin_error(thrown)
            envelope: Mapping[str, Any] = self.event
            command = envelope.get("command")
            event_type = self.event["eventType"]
            what = f'command "{command["name"]}"' if command else "message" if event_type == "message.created" else f"{event_type} event"
            self._transport.log(
                "error",
                f"handler for {what} {self.event['eventId']} failed: {error['message']}",
                {"code": error["code"], "stack": "".join(traceback.format_exception(type(thrown), thrown, thrown.__traceback__))},
                self.event["eventId"],
            )
        self._declined = not self._acked and error is not None
        if self._declined:
            self._ack({"eventId": self.event["eventId"], "accepted": False, "intercepted": False, "error": error})
        else:
            self._accept(False)
        return error

    def completion(self, error: Optional[PluginError]) -> Optional[Completion]:
        """What ``events.completed`` reports once the handler's messages are answered; None when the
        event was declined."""
        if self._declined:
            return None
        return Completion(error, max(0.0, (time.monotonic() - self._started) * 1000))


async def dispatch_event(
    plugin: "Plugin",
    event: Union[MessageEvent, ChatEvent],
    transport: Transport,
    session: Session,
    on_ack: Callable[[EventAck], None],
    cancellation: Cancellation,
    inline: bool = False,
    runner: Optional[Runner] = None,
) -> Optional[Completion]:
    """Runs the handler of one event (see :class:`EventRun`). Returns the completion of an accepted
    event, or None when nothing took it."""
    handler = plugin.handler_for(event)
    if handler is None:
        on_ack({"eventId": event["eventId"], "accepted": False, "intercepted": False, "error": None})
        return None
    run = EventRun(event, transport, session, on_ack, cancellation)
    thrown: Optional[Exception] = None
    try:
        await call_handler(handler, run.ctx, inline, runner)
    except Exception as raised:
        thrown = raised
    failure = run.finish(thrown)
    await run.ctx._settle()
    return run.completion(failure)
