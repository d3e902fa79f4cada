"""The baseline of the Python benchmark: a minimal stdio child on the standard library alone. It answers
host.initialize, and for each events.message writes the ACK and a messages.reply request, then the
events.completed request once the reply is answered: the SDK's 6-message exchange with no validation,
no threads and no rendering (the ceiling for Python here)."""

import json
import sys

stdin = sys.stdin.buffer
stdout = sys.stdout.buffer
next_id = 0
waiting = {}


def write(message):
    body = json.dumps(message, separators=(",", ":")).encode()
    stdout.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))


def read():
    length = None
    while True:
        line = stdin.readline()
        if not line:
            return None
        if line == b"\r\n":
            break
        name, _, value = line.decode("latin-1").partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(stdin.read(length))


while True:
    message = read()
    if message is None:
        break
    method = message.get("method")
    if method == "host.initialize":
        p = message["params"]
        write({"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": 2, "pluginId": p["pluginId"], "sdkName": "raw", "sdkVersion": "0.0.0", "encoding": "json"}})
        token = p["token"]
    elif method == "events.message":
        event = message["params"]
        write({"jsonrpc": "2.0", "id": message["id"], "result": {"eventId": event["eventId"], "accepted": True, "intercepted": False, "error": None}})
        next_id += 1
        waiting[next_id] = event["eventId"]
        parts = [{"type": "text", "text": event["command"]["args"]}]
        write({"jsonrpc": "2.0", "id": next_id, "method": "messages.reply", "params": {"token": token, "eventId": event["eventId"], "message": {"format": "text", "parts": parts}}})
    elif method is None and message.get("id") in waiting:
        event_id = waiting.pop(message["id"])
        next_id += 1
        write({"jsonrpc": "2.0", "id": next_id, "method": "events.completed", "params": {"token": token, "eventId": event_id, "error": None, "durationMs": 0}})
    stdout.flush()
