"""The stdio runtime's event runner: admits events (``Overloaded`` beyond ``maxConcurrentEvents``), runs
their handlers (async ones as tasks, sync ones on the loop's thread or the worker threads), sends the
ACK and ``events.completed``, and cancels handlers (``events.cancel``, the deadline).
"""

import asyncio
import collections
import inspect
import threading
import time
from typing import Any, Callable, Dict, List, Optional

from .._generated.catalog import RpcErrorCode
from ..cancellation import Cancellation
from ..dispatch import Completion, EventRun
from ..errors import PluginSdkError
from ..framing import encode_json
from ..validation import owned_document_check, validate_method
from .session import HostSession
from .transport import _Inbox


_check_event = owned_document_check("message-event.schema.json", "event")


#: Threads that run sync handlers at most (events beyond them wait for a free thread).
_HANDLER_THREADS = 64


def _now(step: Callable[[], None]) -> None:
    step()


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


class EventRunner(HostSession):
    """Admission, the handlers' runs and their ends, cancellation."""

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
    def _sync_ended(self, live: _LiveEvent, run: EventRun, result: Any, thrown: Optional[BaseException]) -> None:
        """A sync handler returned ``result`` or raised ``thrown`` (the owner of the loop's work)."""
        if thrown is None and result is not None and inspect.isawaitable(result):
            self._spawn(self._finish_awaitable(live, run, result))
            return
        if thrown is not None and not isinstance(thrown, Exception):
            self._end(live)
            raise thrown
        self._handler_ended(live, run, thrown)
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
