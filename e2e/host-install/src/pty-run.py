"""Runs a command on a new pseudo-terminal, as a shell in a terminal window runs it.

The command is the session's foreground process group, so a Ctrl-C typed into the
terminal (the byte 0x03) makes the terminal send SIGINT to every process of that
group, as a user's Ctrl-C does; a `kill` of one pid does not show that.

Usage: python3 pty-run.py COMMAND [ARG...]
The terminal's output is copied to stdout. Each line read on stdin is a request:
"ctrl-c" types a Ctrl-C; the end of stdin kills the command's process group. When the command ends, the last line is "exit <code>"
(or "signal <number>").
"""

import os
import pty
import select
import signal
import sys

pid, master = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])

stdin = sys.stdin.fileno()
watched = [master, stdin]
status = None
while status is None:
    ready, _, _ = select.select(watched, [], [], 0.2)
    if master in ready:
        try:
            data = os.read(master, 65536)
        except OSError:
            data = b""
        if data:
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
        else:
            watched.remove(master)
    if stdin in ready:
        line = sys.stdin.readline()
        if not line:
            watched.remove(stdin)
            os.killpg(pid, signal.SIGKILL)
        elif line.strip() == "ctrl-c":
            os.write(master, b"\x03")
    done, raw = os.waitpid(pid, os.WNOHANG)
    if done == pid:
        status = raw

# What the command's last writes left in the terminal.
while True:
    ready, _, _ = select.select([master], [], [], 0.2)
    if not ready:
        break
    try:
        data = os.read(master, 65536)
    except OSError:
        break
    if not data:
        break
    sys.stdout.buffer.write(data)
if os.WIFEXITED(status):
    sys.stdout.write("\nexit %d\n" % os.WEXITSTATUS(status))
else:
    sys.stdout.write("\nsignal %d\n" % os.WTERMSIG(status))
sys.stdout.flush()
