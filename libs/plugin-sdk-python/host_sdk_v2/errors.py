"""Errors a plugin author can act on, with the same stable codes as every SDK of protocol v2.

- :class:`PluginSdkError`: a mistake in how the plugin uses the SDK (``SDK_*`` codes, shared by all SDKs).
- :class:`PluginMessageError`: a message was refused (``message.*`` codes of the protocol's catalogue),
  by the SDK's own checks before sending or by the host.
- :class:`HostCallError`: a call to the host failed with a JSON-RPC error or timed out.
- :class:`HandlerError`: raise it from a handler to report a failure with your own stable code.
"""

from typing import Any, List, Mapping, Optional, Sequence

from ._generated.catalog import ERROR_CODES, RPC_ERROR_HELP, SDK_ERROR_CODES, RpcErrorCode

#: The SDK's local error codes and their messages (the same codes in every SDK's of protocol v2).
SDK_ERRORS: Mapping[str, str] = SDK_ERROR_CODES

#: Code reported when a handler raises something other than a HandlerError.
HANDLER_FAILED_CODE = "plugin.handler_failed"


class PluginSdkError(Exception):
    """A local SDK error with a stable ``SDK_*`` code; see :data:`SDK_ERRORS`.

    ``issues`` lists every problem of an invalid manifest as ``{"code", "path", "message"}``.
    """

    def __init__(self, code: str, detail: Optional[str] = None, issues: Optional[Sequence[Mapping[str, str]]] = None) -> None:
        if code not in SDK_ERROR_CODES:
            raise ValueError(f"unknown SDK error code {code!r}")
        text = f"{detail} ({code}: {SDK_ERROR_CODES[code]})" if detail else f"{code}: {SDK_ERROR_CODES[code]}"
        super().__init__(text)
        self.code = code
        self.issues: List[Mapping[str, str]] = list(issues or [])


class PluginMessageError(Exception):
    """A message was refused. ``code`` is a ``message.*`` code of the protocol's error catalogue.

    ``from_host`` is True when the host refused it, False when the SDK's own checks did (the same rules
    the host applies, so the mistake shows in the handler that made it).
    """

    def __init__(
        self,
        code: str,
        message: Optional[str] = None,
        target: Optional[Mapping[str, str]] = None,
        from_host: bool = False,
    ) -> None:
        entry = ERROR_CODES.get(code)
        if entry is None or not code.startswith("message."):
            raise ValueError(f"{code!r} is not a message.* code of the protocol's error catalogue")
        super().__init__(f"{code}: {message} {entry[1]}" if message else f"{code}: {entry[1]}")
        self.code = code
        self.target = dict(target) if target is not None else None
        self.from_host = from_host


class HostCallError(Exception):
    """A request to the host (log.write, messages.reply, messages.send) failed with a JSON-RPC error,
    or timed out (``code == RpcErrorCode.RequestTimeout``)."""

    def __init__(self, method: str, code: int, message: str, data: Any = None) -> None:
        try:
            name: Optional[str] = RpcErrorCode(code).name
        except ValueError:
            name = None
        suffix = f" ({code} {name}: {RPC_ERROR_HELP[name]})" if name else f" ({code})"
        super().__init__(f"{method} failed: {message}{suffix}")
        self.method = method
        self.code = code
        self.data = data


class HandlerError(Exception):
    """Raise it from a handler to report a failure with your own stable code, e.g.
    ``raise HandlerError("weather.city_missing", "Usage: /weather <city>")``. The host records
    ``{code, message, details}`` as the event's error. Any other exception is reported with
    the code ``plugin.handler_failed``."""

    def __init__(self, code: str, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details
