"""Notice that a thread is about to block in an SDK wait.

The stdio runtime runs quick sync handlers on its event loop's thread. A handler that waits there (for a
host answer, its cancellation, or room to send) would hold up the loop's I/O, so before an SDK wait blocks
it calls :func:`about_to_block`, and the runtime hands that I/O to another thread at once instead of
noticing the stall a few milliseconds later. A thread that installed no hook pays one attribute lookup.
"""

import threading
from typing import Callable, Optional

_local = threading.local()


def install(hook: Optional[Callable[[], None]]) -> None:
    """Sets (or clears, with None) the calling thread's hook."""
    _local.hook = hook


def about_to_block(timeout: Optional[float]) -> None:
    """Calls the calling thread's hook, if it has one, before a wait of ``timeout`` seconds (None: no
    limit). A wait of no time blocks nothing."""
    if timeout is not None and timeout <= 0:
        return
    hook = getattr(_local, "hook", None)
    if hook is not None:
        hook()
