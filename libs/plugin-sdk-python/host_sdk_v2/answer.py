"""The host's answer to one request: a result set once, readable from any thread.

It does what the SDK needs of ``concurrent.futures.Future`` (``result(timeout)``, ``exception()``,
``done()``, ``add_done_callback``) at a fraction of its cost: a lock, and a ``threading.Event`` made
only when a thread has to wait. The runtime creates two of them per event.
"""

import concurrent.futures
import sys
import threading
from typing import Any, Callable, Generic, List, Optional, TypeVar

from .blocking import about_to_block

T = TypeVar("T")


class Answer(Generic[T]):
    """A result or an error, set once (later settings are ignored)."""

    __slots__ = ("_lock", "_done", "_result", "_error", "_callbacks", "_waiter")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done = False
        self._result: Optional[T] = None
        self._error: Optional[BaseException] = None
        self._callbacks: Optional[List[Callable[["Answer[T]"], Any]]] = None
        self._waiter: Optional[threading.Event] = None

    def done(self) -> bool:
        return self._done

    def set_result(self, value: T) -> None:
        self._settle(value, None)

    def set_exception(self, error: BaseException) -> None:
        self._settle(None, error)

    def _settle(self, value: Optional[T], error: Optional[BaseException]) -> None:
        with self._lock:
            if self._done:
                return
            self._result = value
            self._error = error
            self._done = True
            callbacks, self._callbacks = self._callbacks, None
            waiter = self._waiter
        if waiter is not None:
            waiter.set()
        if callbacks:
            for callback in callbacks:
                self._run(callback)

    def _run(self, callback: Callable[["Answer[T]"], Any]) -> None:
        try:
            callback(self)
        except Exception as error:  # one failing callback must not keep the others from running
            sys.stderr.write(f"[error] a callback of a host answer failed: {error!r}\n")

    def add_done_callback(self, callback: Callable[["Answer[T]"], Any]) -> None:
        """Runs ``callback(answer)`` when it is settled: at once (on this thread) if it already is,
        else on the thread that settles it."""
        with self._lock:
            if not self._done:
                if self._callbacks is None:
                    self._callbacks = [callback]
                else:
                    self._callbacks.append(callback)
                return
        self._run(callback)

    def _wait(self, timeout: Optional[float]) -> None:
        if self._done:
            return
        with self._lock:
            if self._done:
                return
            if self._waiter is None:
                self._waiter = threading.Event()
            waiter = self._waiter
        about_to_block(timeout)
        if not waiter.wait(timeout):
            raise concurrent.futures.TimeoutError()

    def result(self, timeout: Optional[float] = None) -> T:
        """The result; raises the error. Waits up to ``timeout`` seconds (forever when None) and raises
        ``TimeoutError`` when it is not settled by then."""
        self._wait(timeout)
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[return-value]

    def exception(self, timeout: Optional[float] = None) -> Optional[BaseException]:
        """The error, or None; waits like :meth:`result`."""
        self._wait(timeout)
        return self._error


def settled(value: T) -> "Answer[T]":
    """An answer that already has its result."""
    answer: Answer[T] = Answer()
    answer.set_result(value)
    return answer
