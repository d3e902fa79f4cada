"""stdio framing (docs/protocol/v2.md 3.2): ``Content-Length: N\\r\\n\\r\\n`` then N bytes of UTF-8 JSON.

The decoder is strict: a header line that is not ``Name: value`` is reported as soon as its line ends,
and after an error the stream is broken for good (frames cannot be resynchronised).
"""

import json
import json.decoder
import json.encoder
import re
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from ._generated.catalog import LIMITS

_HEADER_LINE = re.compile(rb"^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$", re.S)
_CONTENT_TYPE = re.compile(r'^application/vscode-jsonrpc\s*;\s*charset\s*=\s*"?utf-?8"?$', re.I)
_DIGITS = re.compile(rb"^[0-9]{1,10}$")

#: ("message", <JSON-RPC object>) or ("error", <framing.* code>, <text>).
FrameEvent = Tuple[Any, ...]


def check_jsonrpc_shape(value: Any) -> Optional[str]:
    """The JSON-RPC 2.0 shape of a payload; returns what is wrong, or None."""
    if type(value) is dict and value.get("jsonrpc") == "2.0" and type(value.get("id")) is int:
        # The usual request and result, answered before the general checks below.
        method = value.get("method")
        if type(method) is str:
            if method:
                return None
        elif "method" not in value and "result" in value and "error" not in value:
            return None
    if not isinstance(value, dict):
        return "payload is not a JSON object"
    if value.get("jsonrpc") != "2.0":
        return '"jsonrpc" must be "2.0"'
    has_id = "id" in value
    msg_id = value.get("id")
    id_ok = not has_id or isinstance(msg_id, str) or (isinstance(msg_id, int) and not isinstance(msg_id, bool))
    if "method" in value:
        if not isinstance(value["method"], str) or value["method"] == "":
            return '"method" must be a non-empty string'
        if not id_ok or (has_id and msg_id is None):
            return '"id" of a request must be a string or an integer'
        return None
    if not has_id or not (id_ok or msg_id is None):
        return 'a response needs "id"'
    if ("result" in value) == ("error" in value):
        return 'a response needs exactly one of "result" and "error"'
    if "error" in value:
        err = value["error"]
        if (
            not isinstance(err, dict)
            or not isinstance(err.get("code"), int)
            or isinstance(err.get("code"), bool)
            or not isinstance(err.get("message"), str)
        ):
            return '"error" must be {code: integer, message: string}'
    return None


def _integral_float(value: float) -> Any:
    # JSON numbers like 1.0 are integers in JavaScript; keep ids and counts integral the same way.
    return int(value) if value.is_integer() else value


class FrameDecoder:
    """Feeds bytes, yields messages and at most one (fatal) error."""

    def __init__(self, max_header_bytes: int = LIMITS["maxHeaderBytes"], max_payload_bytes: int = LIMITS["maxPayloadBytes"]) -> None:
        self.max_header_bytes = max_header_bytes
        self.max_payload_bytes = max_payload_bytes
        self._buf = bytearray()
        self._pending: Optional[Tuple[int, int]] = None
        self.broken = False

    def push(self, chunk: bytes) -> List[FrameEvent]:
        if self.broken:
            return []
        buf = self._buf
        buf += chunk
        out: List[FrameEvent] = []
        # Whole frames with the usual header (a lone Content-Length) are read here, by offset, and the
        # buffer is cut once at the end; any other frame, a partial one, and every error go through
        # _next, one frame at a time.
        pos = 0
        total = len(buf)
        header_limit = self.max_header_bytes
        while self._pending is None and buf.startswith(b"Content-Length: ", pos):
            end = buf.find(b"\r\n\r\n", pos + 16, pos + 30)
            if end <= pos + 16 or end + 4 - pos > header_limit:
                break
            digits = buf[pos + 16 : end]
            if not digits.isdigit() or len(digits) > 10:
                break
            size = int(digits)
            start = end + 4
            if not 0 < size <= self.max_payload_bytes or start + size > total:
                break
            pos = start + size
            try:
                text = buf[start:pos].decode("utf-8")
            except UnicodeDecodeError:
                event: FrameEvent = ("error", "framing.utf8.invalid", "payload is not valid UTF-8")
            else:
                event = _message(text)
            out.append(event)
            if event[0] == "error":
                self.broken = True
                self._buf = bytearray()
                return out
        if pos:
            del buf[:pos]
        while True:
            slow = self._next()
            if slow is None:
                break
            out.append(slow)
            if slow[0] == "error":
                self.broken = True
                self._buf = bytearray()
                break
        return out

    def end(self) -> List[FrameEvent]:
        """End of stream: clean between frames, ``framing.eof_in_frame`` inside one."""
        if self.broken or not self._buf:
            return []
        self.broken = True
        return [("error", "framing.eof_in_frame", f"stream ended with {len(self._buf)} bytes of an unfinished frame")]

    def _next(self) -> Optional[FrameEvent]:
        if self._pending is not None:
            return self._take(*self._pending)
        buf = self._buf
        if buf.startswith(b"Content-Length: "):
            # The usual header block, a lone Content-Length, read without the general parser below; any
            # other block, and every error, goes through it.
            end = buf.find(b"\r\n\r\n", 16, 16 + 14)
            if end > 16:
                digits = bytes(buf[16:end])
                if digits.isdigit() and len(digits) <= 10 and end + 4 <= self.max_header_bytes:
                    size = int(digits)
                    if 0 < size <= self.max_payload_bytes:
                        return self._take(end + 4, size)
        header_end = -1
        lines: List[bytes] = []
        line_start = 0
        i = buf.find(b"\n")
        while i >= 0:
            if i == 0 or buf[i - 1] != 13:
                return ("error", "framing.header.malformed", f"header line {bytes(buf[line_start:i][:80])!r} does not end with CRLF")
            line = bytes(buf[line_start : i - 1])
            if line == b"":
                header_end = i + 1
                break
            lines.append(line)
            line_start = i + 1
            if not _HEADER_LINE.match(line):
                return ("error", "framing.header.malformed", f"header line {line[:80]!r} is not \"Name: value\"")
            if i + 1 > self.max_header_bytes:
                break
            i = buf.find(b"\n", i + 1)
        if header_end < 0:
            if len(buf) > self.max_header_bytes:
                return ("error", "framing.header.too_long", f"header block exceeds {self.max_header_bytes} bytes")
            return None
        if header_end > self.max_header_bytes:
            return ("error", "framing.header.too_long", f"header block is {header_end} bytes, more than {self.max_header_bytes}")
        length: Optional[int] = None
        saw_type = False
        for line in lines:
            match = _HEADER_LINE.match(line)
            assert match is not None
            name = match.group(1).decode("latin-1").lower()
            value = match.group(2)
            if name == "content-length":
                if length is not None:
                    return ("error", "framing.header.duplicate", "Content-Length appears twice")
                if not _DIGITS.match(value):
                    return ("error", "framing.content_length.invalid", f"Content-Length {value!r} is not a decimal integer")
                length = int(value)
            elif name == "content-type":
                if saw_type:
                    return ("error", "framing.header.duplicate", "Content-Type appears twice")
                saw_type = True
                if not _CONTENT_TYPE.match(value.decode("latin-1")):
                    return ("error", "framing.content_type.unsupported", f"Content-Type {value!r} is not supported")
            else:
                return ("error", "framing.header.unknown", f"unknown header {match.group(1)!r}")
        if length is None:
            return ("error", "framing.content_length.missing", "frame has no Content-Length header")
        if length == 0:
            return ("error", "framing.payload.empty", "Content-Length is 0")
        if length > self.max_payload_bytes:
            return ("error", "framing.payload.too_large", f"Content-Length {length} exceeds {self.max_payload_bytes} bytes")
        return self._take(header_end, length)

    def _take(self, header_end: int, length: int) -> Optional[FrameEvent]:
        if len(self._buf) < header_end + length:
            self._pending = (header_end, length)
            return None
        self._pending = None
        try:
            text = self._buf[header_end : header_end + length].decode("utf-8")
        except UnicodeDecodeError:
            return ("error", "framing.utf8.invalid", "payload is not valid UTF-8")
        del self._buf[: header_end + length]
        return _message(text)


def _message(text: str) -> FrameEvent:
    """The payload of one frame: a JSON-RPC message, or the framing error it is."""
    try:
        value = decode_json(text)
    except ValueError as error:
        return ("error", "framing.json.invalid", f"payload is not JSON: {error}")
    if isinstance(value, dict) and isinstance(value.get("id"), float):
        value["id"] = _integral_float(value["id"])
    shape = check_jsonrpc_shape(value)
    if shape:
        return ("error", "framing.message.invalid", shape)
    return ("message", value)


#: The decoder's scanner (C when available): one value from an index, and where it ended.
_SCAN: Callable[[str, int], Tuple[Any, int]] = getattr(json.decoder.JSONDecoder(), "scan_once")


def decode_json(text: str) -> Any:
    """``json.loads(text)``, without its layers of Python for the usual payload (an object with nothing
    around it); anything else, and every error, goes through ``json.loads`` itself."""
    if text[:1] == "{" and text[-1:] == "}":
        try:
            value, end = _SCAN(text, 0)
        except (StopIteration, ValueError):
            pass
        else:
            if end == len(text):
                return value
    return json.loads(text)


def _make_encode() -> Callable[[Any], str]:
    # The C encoder made once, not per message as JSONEncoder.encode does (same output: compact
    # separators, UTF-8 text as is). It keeps no table of the containers it is inside, so it holds no
    # state between calls and any thread may use it at once, without a lock; a value that contains itself
    # ends in RecursionError there, and is encoded again by json's own encoder to fail as json.dumps does.
    fallback = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return fallback
    default = json.JSONEncoder().default
    encode_string: Callable[[str], str] = getattr(json.encoder, "encode_basestring")
    iterencode = make(None, default, encode_string, None, ":", ",", False, False, True)

    def encode(value: Any) -> str:
        if type(value) is str:
            return encode_string(value)
        try:
            return "".join(iterencode(value, 0))
        except RecursionError:
            return fallback(value)

    return encode


#: JSON text of a value, compact and with non-ASCII text as is.
encode_json = _make_encode()


def encode_frame(message: Any) -> bytes:
    """One message as a frame."""
    body = encode_json(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
