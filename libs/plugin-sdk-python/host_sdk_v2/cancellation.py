"""Cancellation of one event's handler (``ctx.cancellation``), usable from sync and async code."""

import asyncio
import threading
from typing import Callable, List, Optional

from .blocking import about_to_block
from .errors import PluginSdkError


_LOCK = threading.Lock()


class Cancellation:
    """Set when the host cancels the event (``events.cancel``), when the handler deadline passes, or when
    the plugin stops or loses its host. Handlers check it and return soon after it is set: the host has
    stopped waiting for them.

    Sync code: ``if ctx.cancellation.cancelled: return`` or ``ctx.cancellation.wait(5)`` instead of
    ``time.sleep(5)``. Async code: ``await ctx.cancellation.wait_async()``.
    """

    def __init__(self, parent: Optional["Cancellation"] = None) -> None:
        self._cancelled = False
        # Made only when a thread waits: most handlers never do, and an Event is costly to create.
        self._waiter: Optional[threading.Event] = None
        # One lock for every token: cancelling and waiting are rare, and a token is made per event.
        self._lock = _LOCK
        self._callbacks: List[Callable[[], None]] = []
        self.reason: Optional[Exception] = None
        self._parent = parent
        self._follow: Optional[Callable[[], None]] = None
        if parent is not None:
            source = parent

            def follow() -> None:
                self.cancel(source.reason)

            self._follow = follow
            parent.add_callback(follow)

    @property
    def cancelled(self) -> bool:
        """True once cancelled."""
        return self._cancelled

    def cancel(self, reason: Optional[Exception] = None) -> None:
        """Cancels (once); ``reason`` says why (a PluginSdkError SDK_EVENT_CANCELLED for cancel or deadline)."""
        with self._lock:
            if self._cancelled:
                return
            self.reason = reason
            self._cancelled = True
            waiter = self._waiter
            callbacks, self._callbacks = self._callbacks, []
        if waiter is not None:
            waiter.set()
        for callback in callbacks:
            try:
                callback()
            except Exception:  # a failing callback must not stop the others
                pass

    def add_callback(self, callback: Callable[[], None]) -> None:
        """Runs ``callback`` when cancelled (at once if already), on the thread that cancels."""
        with self._lock:
            if not self._cancelled:
                self._callbacks.append(callback)
                return
        callback()

    def remove_callback(self, callback: Callable[[], None]) -> None:
        """Forgets a callback that has not run."""
        with self._lock:
            try:
                self._callbacks.remove(callback)
            except ValueError:
                pass

    def detach(self) -> None:
        """Stops following the parent (the event ended), so a long-running plugin does not keep one
        callback per event it ever handled."""
        if self._parent is not None and self._follow is not None:
            self._parent.remove_callback(self._follow)
            self._follow = None

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Blocks until cancelled or ``timeout`` seconds passed; returns whether it was cancelled."""
        with self._lock:
            if self._cancelled:
                return True
            if self._waiter is None:
                self._waiter = threading.Event()
            waiter = self._waiter
        about_to_block(timeout)
        return waiter.wait(timeout)

    async def wait_async(self) -> None:
        """Completes when cancelled."""
        loop = asyncio.get_running_loop()
        done: "asyncio.Future[None]" = loop.create_future()

        def settle() -> None:
            if not done.done():
                done.set_result(None)

        def wake() -> None:
            loop.call_soon_threadsafe(settle)

        self.add_callback(wake)
        await done

    def raise_if_cancelled(self) -> None:
        """Raises the reason (PluginSdkError SDK_EVENT_CANCELLED) when cancelled."""
        if self._cancelled:
            if isinstance(self.reason, PluginSdkError):
                raise self.reason
            raise PluginSdkError("SDK_EVENT_CANCELLED", str(self.reason) if self.reason else None)
