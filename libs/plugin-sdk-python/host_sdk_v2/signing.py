"""Request signing of the HTTP transport (docs/protocol/http-signing.md): sign as the host does, and
verify in the documented order: headers, clock, signature (constant time), replay."""

import hashlib
import hmac
import re
import threading
import time
import uuid
from collections import OrderedDict
from typing import Dict, Mapping, Optional, Sequence, Union

from ._generated.catalog import HTTP_DEFAULTS, HTTP_HEADERS, SIGNATURE_VERSION

_DIGITS = re.compile(r"^[0-9]{1,12}$")
_HEX_SIGNATURE = re.compile(r"^v1=[0-9a-f]{64}$")
_DELIVERY_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


def compute_signature(secret: str, timestamp: str, delivery_id: str, raw_body: bytes) -> str:
    """``v1=`` + lowercase hex HMAC-SHA256(UTF-8(secret), timestamp + "." + delivery id + "." + raw body)."""
    mac = hmac.new(secret.encode("utf-8"), f"{timestamp}.{delivery_id}.".encode("utf-8") + raw_body, hashlib.sha256)
    return f"{SIGNATURE_VERSION}={mac.hexdigest()}"


def sign_request(secret: str, raw_body: Union[bytes, str] = b"", timestamp: Optional[int] = None, delivery_id: Optional[str] = None, plugin_id: Optional[str] = None) -> Dict[str, str]:
    """Headers that sign a request exactly as the host does, for a plugin's own tests and tools."""
    body = raw_body.encode("utf-8") if isinstance(raw_body, str) else raw_body
    ts = str(int(time.time()) if timestamp is None else timestamp)
    did = delivery_id or str(uuid.uuid4())
    headers = {
        HTTP_HEADERS["timestamp"]: ts,
        HTTP_HEADERS["deliveryId"]: did,
        HTTP_HEADERS["signature"]: compute_signature(secret, ts, did, body),
        HTTP_HEADERS["protocolVersion"]: "2",
    }
    if plugin_id:
        headers[HTTP_HEADERS["pluginId"]] = plugin_id
    return headers


class SignatureCheck:
    """The outcome of a verification: ``ok``, or ``code`` (``signature.*``) and ``message``."""

    def __init__(self, ok: bool, code: str = "", message: str = "", delivery_id: str = "", timestamp: int = 0) -> None:
        self.ok = ok
        self.code = code
        self.message = message
        self.delivery_id = delivery_id
        self.timestamp = timestamp


def verify_signature(
    headers: Mapping[str, str],
    raw_body: bytes,
    secrets: Sequence[str],
    tolerance_seconds: int = HTTP_DEFAULTS["signatureToleranceSeconds"],
    now: Optional[float] = None,
) -> SignatureCheck:
    """Checks headers (lower-case names), clock and signature; the replay check is :class:`ReplayGuard`'s."""
    ts = headers.get(HTTP_HEADERS["timestamp"])
    did = headers.get(HTTP_HEADERS["deliveryId"])
    sig = headers.get(HTTP_HEADERS["signature"])
    if not ts or not did or not sig:
        missing = [n for n, v in ((HTTP_HEADERS["timestamp"], ts), (HTTP_HEADERS["deliveryId"], did), (HTTP_HEADERS["signature"], sig)) if not v]
        return SignatureCheck(False, "signature.missing", f"the request lacks {', '.join(missing)}")
    if not _DIGITS.match(ts) or not _DELIVERY_ID.match(did):
        return SignatureCheck(False, "signature.malformed", "the signature headers are malformed (expected unix seconds, a delivery id and v1=<64 lowercase hex>)")
    candidates = [s.strip() for s in sig.split(",")]
    if not any(_HEX_SIGNATURE.match(c) for c in candidates):
        return SignatureCheck(False, "signature.malformed", f'{HTTP_HEADERS["signature"]} must be "v1=" and 64 hex digits')
    current = time.time() if now is None else now
    if abs(current - int(ts)) > tolerance_seconds:
        return SignatureCheck(False, "signature.expired", f"the timestamp is more than {tolerance_seconds} s from this machine's clock; sync the clock (NTP)")
    matched = False
    for secret in secrets:
        expected = compute_signature(secret, ts, did, raw_body)
        for candidate in candidates:
            # Every comparison runs, so timing does not tell which one matched.
            matched = hmac.compare_digest(expected.encode("ascii"), candidate.encode("ascii", "replace")) or matched
    if not matched:
        return SignatureCheck(False, "signature.invalid", "the signature does not match; check the signing secret given at registration")
    return SignatureCheck(True, delivery_id=did, timestamp=int(ts))


class ReplayGuard:
    """Remembers delivery ids whose signature was valid until their timestamp leaves the window.
    Bounded: past ``max_entries`` the oldest are forgotten first."""

    def __init__(self, max_entries: int = 100_000) -> None:
        self._seen: "OrderedDict[str, float]" = OrderedDict()
        self._max = max_entries
        self._lock = threading.Lock()

    def remember(self, delivery_id: str, expires_at: float, now: float) -> bool:
        """Records the id; False when it was already seen and has not expired."""
        with self._lock:
            known = self._seen.get(delivery_id)
            if known is not None and known > now:
                return False
            self._seen.pop(delivery_id, None)
            self._seen[delivery_id] = expires_at
            while self._seen:
                oldest, expires = next(iter(self._seen.items()))
                if len(self._seen) <= self._max and expires > now:
                    break
                self._seen.pop(oldest)
            return True

    def __len__(self) -> int:
        return len(self._seen)


def lower_headers(pairs: Mapping[str, str]) -> Dict[str, str]:
    return {k.lower(): v for k, v in pairs.items()}


__all__ = ["compute_signature", "sign_request", "verify_signature", "ReplayGuard", "SignatureCheck", "lower_headers"]
