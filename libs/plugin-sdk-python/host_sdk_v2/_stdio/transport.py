"""The stdio runtime's transport: Content-Length frames in and out of the host's pipes.

Input is read by the event loop (pipes) or a reader thread (anything else) and decoded into frames that the
session handles in order. Output leaves through :class:`_PipeOutput` (pipes and sockets: written without
blocking by whichever thread has frames) or :class:`_FrameWriter` (its own thread and queue). Work that
other threads hand to the loop goes through :class:`_Inbox`, in batches whose frames leave in one write.
"""

import asyncio
import collections
import os
import queue
import stat
import threading
from typing import IO, Any, Callable, Dict, Optional, Tuple, Union

from .._generated.catalog import LIMITS
from ..framing import encode_json
from .state import RuntimeState


_READ_SIZE = 65536
#: Bytes of unsent frames past which handler threads wait before sending more (twice the largest
#: payload and 1 MiB, the amount the host lets a plugin leave unread the other way).
_WRITE_HIGH_WATER = 2 * LIMITS["maxPayloadBytes"] + 1024 * 1024


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


class FramedIO(RuntimeState):
    """The runtime's side of the transport: reading the host's input, writing frames, answering requests."""

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
