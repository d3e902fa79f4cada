"""Sync handlers on the event loop's thread, and the sentinel that watches them.

A quick sync handler runs on the loop's thread with no thread hand-off. A sentinel thread notices one that
waits or runs long there and carries on the loop's work on its own thread until the handler returns; that
handler runs on worker threads from then on.
"""

import asyncio
import os
import select
import threading
import traceback
from typing import Any, Callable, Optional

from ..dispatch import EventRun
from .events import EventRunner, _LiveEvent


#: How long a sync handler may hold the event loop's thread before the sentinel takes over the loop's
#: work: it notices a handler still running after one to two of these, or at once when the handler
#: blocks in an SDK wait (a host answer, its cancellation, room to send).
INLINE_STALL_SECONDS = 0.005


class _Sentinel:
    """Watches the sync handlers that run on the event loop's thread (``InlineRunner._run_inline``).

    It wakes every ``INLINE_STALL_SECONDS`` while such handlers run. When the same handler is still running
    (or at once, when the handler is about to block in an SDK wait) it takes over the loop's work on its own
    thread until the handler returns: frames left from the chunk being handled, new input, what handler
    threads post, timers and the output backlog; that handler runs on worker threads from then on. It sleeps
    while no handler runs on the loop's thread, and costs the events nothing but a counter and a flag."""

    def __init__(self, runtime: "InlineRunner") -> None:
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


class InlineRunner(EventRunner):
    """The runtime's side of inline runs: starting one, and the sentinel's taking over the loop's work."""

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
