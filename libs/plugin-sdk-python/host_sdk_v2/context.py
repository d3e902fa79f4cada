"""What handlers receive: the message context and the lifecycle context."""

import asyncio
import base64
import functools
import json
import re
import sys
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Generator, List, Mapping, Optional, Sequence

from ._generated.catalog import LIMITS
from ._generated.wire import ChatEvent, CommandMatch, Interaction, Keyboard, MessageEvent, SendResult, UserRef
from .answer import Answer
from .cancellation import Cancellation
from .errors import PluginMessageError, PluginSdkError
from .messages import prepare_message, provider_for
from .parts import PartInput, at, literal, text


@dataclass(frozen=True)
class Directories:
    """Folders the host gives a stdio plugin: the package folder (read-only by convention) and the
    plugin's data, config and cache folders, which survive updates."""

    plugin_directory: str
    data_directory: str
    config_directory: str
    cache_directory: str


def bridge(future: "Answer[Any]") -> "asyncio.Future[Any]":
    """An asyncio future of the running loop that follows ``future``. Unlike ``asyncio.wrap_future`` it
    settles directly when ``future`` is settled on the loop's own thread (a host answer read by the
    runtime), instead of waking the loop through its self-pipe for every request."""
    loop = asyncio.get_running_loop()
    waiter: "asyncio.Future[Any]" = loop.create_future()
    future.add_done_callback(functools.partial(_follow, loop, threading.get_ident(), waiter))
    return waiter


def _follow(loop: asyncio.AbstractEventLoop, loop_thread: int, waiter: "asyncio.Future[Any]", done: "Answer[Any]") -> None:
    if threading.get_ident() == loop_thread:
        _settle_waiter(waiter, done)
    else:
        loop.call_soon_threadsafe(_settle_waiter, waiter, done)


def _settle_waiter(waiter: "asyncio.Future[Any]", done: "Answer[Any]") -> None:
    if waiter.done():
        return
    error = done.exception()
    if error is not None:
        waiter.set_exception(error)
    else:
        waiter.set_result(done.result())


class Sent:
    """A message on its way to the host. Await it in async handlers (``await ctx.reply("hi")``) or call
    :meth:`result` in sync ones to wait for the host's answer; a handler may also leave it: the event's
    completion waits for every message the handler started, and a failure nobody waited for is logged."""

    def __init__(self, future: "Answer[SendResult]") -> None:
        self._future = future
        self.observed = False

    def result(self, timeout: Optional[float] = None) -> SendResult:
        """Waits for the host's answer; raises PluginMessageError when it refused the message."""
        self.observed = True
        return self._future.result(timeout)

    def done(self) -> bool:
        return self._future.done()

    def __await__(self) -> Generator[Any, None, SendResult]:
        self.observed = True
        return bridge(self._future).__await__()


class Uploaded:
    """Bytes on their way to the host (``ctx.upload_media``). Await it in async handlers or call
    :meth:`result` in sync ones: the answer is ``{"mediaId", "contentType", "size", "expiresAt"}``, for
    ``image_from_media`` and ``file_from_media``. A refusal raises PluginMessageError with its
    ``message.media.*`` code."""

    def __init__(self, future: "Answer[Dict[str, Any]]") -> None:
        self._future = future

    def result(self, timeout: Optional[float] = None) -> Dict[str, Any]:
        return self._future.result(timeout)

    def done(self) -> bool:
        return self._future.done()

    def __await__(self) -> Generator[Any, None, Dict[str, Any]]:
        return bridge(self._future).__await__()


def upload_in_chunks(
    call: Callable[[str, Dict[str, Any]], "Answer[Any]"], data: bytes, content_type: str, file_name: Optional[str]
) -> "Answer[Dict[str, Any]]":
    """media.upload, then the bytes in chunks of at most the size the host names, each after the answer to
    the one before, then media.finish (docs/protocol/v2.md 4.12). ``call(method, params)`` sends one request."""
    out: "Answer[Dict[str, Any]]" = Answer()
    state: Dict[str, Any] = {"uploadId": None, "step": 1, "offset": 0}

    def failed(answer: "Answer[Any]") -> bool:
        error = answer.exception()
        if error is not None:
            out.set_exception(error)
        return error is not None

    def finished(answer: "Answer[Any]") -> None:
        if not failed(answer):
            out.set_result(answer.result())

    def next_step(answer: "Answer[Any]") -> None:
        if failed(answer):
            return
        if state["uploadId"] is None:
            begun = answer.result()
            state["uploadId"] = begun["uploadId"]
            state["step"] = max(1, min(int(begun["maxChunkBytes"]), LIMITS["maxMediaChunkBytes"]))
        offset = state["offset"]
        try:
            if offset >= len(data):
                call("media.finish", {"uploadId": state["uploadId"]}).add_done_callback(finished)
                return
            chunk = data[offset : offset + state["step"]]
            state["offset"] = offset + len(chunk)
            params = {"uploadId": state["uploadId"], "offset": offset, "data": base64.b64encode(chunk).decode("ascii")}
            call("media.chunk", params).add_done_callback(next_step)
        except BaseException as error:  # a call that could not be sent (the host went away)
            out.set_exception(error)

    params: Dict[str, Any] = {"contentType": content_type, "size": len(data)}
    if file_name is not None:
        params["fileName"] = file_name
    try:
        call("media.upload", params).add_done_callback(next_step)
    except BaseException as error:
        out.set_exception(error)
    return out


class Transport:
    """How prepared messages and log lines leave the process (stdio, HTTP, the test host)."""

    kind = "test"

    def reply(self, event: Mapping[str, Any], message: Dict[str, Any], target: Dict[str, str], body: Dict[str, Any]) -> "Answer[SendResult]":
        raise NotImplementedError

    def send(self, message: Dict[str, Any], target: Dict[str, str], body: Dict[str, Any], event: Optional[Mapping[str, Any]]) -> "Answer[SendResult]":
        raise NotImplementedError

    def log(self, level: str, message: str, fields: Optional[Mapping[str, Any]], event_id: Optional[str] = None) -> None:
        """``event_id``: the event whose handler writes the line (``log.write`` eventId); None outside a handler."""
        raise NotImplementedError

    def upload_media(self, data: bytes, content_type: str, file_name: Optional[str]) -> "Answer[Dict[str, Any]]":
        """media.upload, media.chunk and media.finish; a transport that cannot call the host (HTTP) refuses."""
        raise PluginSdkError("SDK_UPLOAD_UNAVAILABLE", "Send the image or file by URL (image_from_url, file_from_url).")


class Session:
    """What a runtime knows about the running plugin, shared by its contexts."""

    def __init__(
        self,
        plugin_id: str,
        settings: Mapping[str, Any],
        directories: Optional[Directories],
        permissions: Optional[Sequence[str]],
        intercepts: bool,
    ) -> None:
        self.plugin_id = plugin_id
        self.settings: Mapping[str, Any] = dict(settings)
        self.directories = directories
        self.permissions = list(permissions) if permissions is not None else None
        self.intercepts = intercepts
        self.cancellation = Cancellation()


class PluginLogger:
    """Writes to the plugin's log in the host (stdio: ``log.write``; HTTP: stderr). Never blocks, never raises.
    Keyword arguments become structured fields: ``ctx.log.info("greeting", sender=ctx.sender["mentionId"])``.
    A handler's logger names the handler's event in every line (``log.write`` eventId), so the host shows the
    line with that event; the plugin's own logger (on_start, on_stop, a timer) names none."""

    def __init__(self, transport: Transport, event_id: Optional[str] = None) -> None:
        self._transport = transport
        self._event_id = event_id

    def _write(self, level: str, message: str, fields: Dict[str, Any]) -> None:
        try:
            if self._event_id is None:
                self._transport.log(level, str(message), fields or None)
            else:
                self._transport.log(level, str(message), fields or None, self._event_id)
        except Exception as error:  # logging must never break a handler
            sys.stderr.write(f"[{level}] {message} (log failed: {error})\n")

    def debug(self, message: str, **fields: Any) -> None:
        self._write("debug", message, fields)

    def info(self, message: str, **fields: Any) -> None:
        self._write("info", message, fields)

    def warning(self, message: str, **fields: Any) -> None:
        """A line at the host's ``warn`` level (the word of Python's ``logging``)."""
        self._write("warn", message, fields)

    #: Deprecated: use :meth:`warning`. Kept so plugins written with it keep working.
    warn = warning

    def error(self, message: str, **fields: Any) -> None:
        self._write("error", message, fields)


class Target:
    """Sends to one target: ``ctx.messages.group("g1").send("hi")``. Needs the ``messages.send`` permission."""

    def __init__(self, sender: "MessageSender", target: Dict[str, str]) -> None:
        self._sender = sender
        self.target = target

    def send(self, *parts: PartInput) -> Sent:
        """Sends a text message."""
        return self._sender._send(self.target, "text", parts)

    def send_markdown(self, *parts: PartInput) -> Sent:
        """Sends a Markdown message (groups only: ``message.format.unsupported_target`` otherwise)."""
        return self._sender._send(self.target, "markdown", parts)


class MessageSender:
    """Messages the plugin starts itself (not replies). Over HTTP only while handling an event.

    Inside a message handler they are sent by the bot that received the event; name another with
    ``to({"type", "id", "botAccountId"})``. Outside a handler a host with several bots needs ``botAccountId``."""

    def __init__(self, transport: Transport, session: Session, track: Callable[[Sent], Sent], event: Optional[Mapping[str, Any]]) -> None:
        self._transport = transport
        self._session = session
        self._track = track
        self._event = event

    def _send(self, target: Mapping[str, str], fmt: str, parts: Sequence[PartInput]) -> Sent:
        routed = dict(target) if isinstance(target, Mapping) else target
        # Inside a handler a send speaks as the bot that received the event unless the target names one (v2.md 4.7).
        if self._event is not None and isinstance(routed, dict) and "botAccountId" not in routed:
            routed["botAccountId"] = self._event["bot"]["botAccountId"]
        message, checked, body = prepare_message(
            fmt, parts, routed, provider_for(self._event.get("source") if self._event else None), self._session.permissions, "messages.send"
        )
        return self._track(Sent(self._transport.send(message, checked, body, self._event)))

    def group(self, group_id: str) -> Target:
        return Target(self, {"type": "group", "id": group_id})

    def channel(self, channel_id: str) -> Target:
        return Target(self, {"type": "channel", "id": channel_id})

    def user(self, user_id: str) -> Target:
        """A one-to-one chat with a user (QQ c2c)."""
        return Target(self, {"type": "user", "id": user_id})

    def direct(self, direct_id: str) -> Target:
        return Target(self, {"type": "direct", "id": direct_id})

    def to(self, target: Mapping[str, str]) -> Target:
        """Any target ``{"type", "id", "botAccountId"?}``."""
        return Target(self, dict(target))


def _untracked(sent: Sent) -> Sent:
    return sent


def _ignore_decision(intercepted: bool) -> None:
    pass


class LifecycleContext:
    """What on_start, on_stop and on_settings_changed receive."""

    def __init__(self, transport: Transport, session: Session, track: Optional[Callable[[Sent], Sent]] = None, event: Optional[Mapping[str, Any]] = None) -> None:
        self._session = session
        self._transport_obj = transport
        self._event_of_sender = event
        self._track_sent = track
        self._log: Optional[PluginLogger] = None
        self._messages: Optional[MessageSender] = None
        self.plugin_id: str = session.plugin_id
        self.transport: str = transport.kind
        self.directories: Optional[Directories] = session.directories
        self.cancellation: Cancellation = session.cancellation

    # Made on first use: most handlers never log or send to other targets.

    @property
    def log(self) -> PluginLogger:
        """The plugin's log in the host: ``ctx.log.info("greeting", sender=ctx.sender["mentionId"])``."""
        if self._log is None:
            # Only an event's context has its event: it names it in every line.
            event = self._event_of_sender
            self._log = PluginLogger(self._transport_obj, event["eventId"] if event is not None else None)
        return self._log

    @property
    def messages(self) -> MessageSender:
        """Messages to other targets: ``ctx.messages.group("g1").send("hi")``."""
        if self._messages is None:
            track = self._track_sent if self._track_sent is not None else self._tracker()
            self._messages = MessageSender(self._transport_obj, self._session, track, self._event_of_sender)
        return self._messages

    def _tracker(self) -> Callable[[Sent], Sent]:
        return _untracked

    def upload_media(self, data: bytes, content_type: str, file_name: Optional[str] = None) -> Uploaded:
        """Uploads bytes to the host for an image or file part (stdio only; needs the ``media.upload``
        permission): ``media = await ctx.upload_media(png, "image/png")``, then
        ``ctx.reply(image_from_media(media))``. The host takes at most 10 MiB an upload and 20 uploads a
        minute, images as PNG, JPEG, GIF or WebP whose first bytes match ``content_type``, and keeps the id
        for an hour. Raises PluginMessageError (``message.permission.denied``, ``message.media.too_large``)
        before anything is sent, PluginSdkError ``SDK_UPLOAD_UNAVAILABLE`` over HTTP; the host's refusals
        come from the result."""
        permissions = self._session.permissions
        if permissions is not None and "media.upload" not in permissions:
            raise PluginMessageError("message.permission.denied", 'upload_media needs the permission "media.upload"; declare it in the manifest and reinstall.')
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError("upload_media takes the bytes as bytes, bytearray or memoryview.")
        data = bytes(data)
        if len(data) > LIMITS["maxMediaUploadBytes"]:
            raise PluginMessageError(
                "message.media.too_large",
                f"The upload has {len(data)} bytes; the host takes at most {LIMITS['maxMediaUploadBytes']}. Send a smaller file, or serve it from a URL.",
            )
        return Uploaded(self._transport_obj.upload_media(data, content_type, file_name))

    @property
    def settings(self) -> Mapping[str, Any]:
        """Current settings values. On stdio they change while the plugin runs when an operator saves new
        ones: read them when needed rather than copying them in on_start."""
        return self._session.settings


class EventContext(LifecycleContext):
    """What every event handler receives: the event, replies in its conversation, the decision
    (intercept or pass on), the log and the cancellation. :class:`MessageContext` (messages and commands)
    and :class:`ChatEventContext` (button clicks, the bot added or removed, a conversation opened) add
    what their events carry."""

    at = at

    def __init__(self, event: Mapping[str, Any], transport: Transport, session: Session, cancellation: Cancellation, on_decision: Callable[[bool], None]) -> None:
        #: Appended to by the handler's threads, read by the runtime: list appends and reads by index
        #: are atomic, so no lock.
        self._pending: List[Sent] = []
        super().__init__(transport, session, None, event)
        self._settle_index = 0
        self._settle_done: Optional[Callable[[], None]] = None
        self._settle_resume: Optional[Callable[[Callable[[], None]], None]] = None
        self.event: Any = event
        self.event_type: str = event["eventType"]
        self.cancellation = cancellation
        self._on_decision = on_decision
        self._decision: Optional[bool] = None

    def _track(self, sent: Sent) -> Sent:
        self._pending.append(sent)
        return sent

    def _tracker(self) -> Callable[[Sent], Sent]:
        # Bound only when ctx.messages is first used: kept on the context it would be a reference cycle.
        return self._track

    @staticmethod
    def literal(value: str) -> Any:
        """Text shown as written (Markdown syntax escaped): for text that came from users."""
        return literal(value)

    @staticmethod
    def text_part(value: str) -> Any:
        """A text part."""
        return text(value)

    def _reply(self, fmt: str, parts: Sequence[PartInput], keyboard: Optional[Keyboard] = None) -> Sent:
        ref = self.event.get("messageReference")
        if ref is None:
            raise PluginMessageError(
                "message.reference.unavailable",
                f'The {self.event_type} event {self.event["eventId"]} takes no reply (it has no messageReference). Do not reply to it.',
            )
        target = {"type": ref["targetType"], "id": ref["targetId"]}
        until = ref.get("replyUntil")
        if until is not None and _parse_time(until) < datetime.now(timezone.utc):
            raise PluginMessageError(
                "message.reference.expired",
                f'The reply window closed at {until}. Reply sooner, or send with ctx.messages.{target["type"]}("{target["id"]}").send(...) (needs messages.send).',
                target=target,
            )
        message, checked, body = prepare_message(
            fmt, parts, target, provider_for(self.event.get("source")), self._session.permissions, "messages.reply", keyboard
        )
        return self._track(Sent(self._transport_obj.reply(self.event, message, checked, body)))

    def reply(self, *parts: PartInput) -> Sent:
        """Replies in the event's conversation in text format. Strings are text parts; raises
        PluginMessageError at once when the message breaks a rule."""
        return self._reply("text", parts)

    def reply_markdown(self, *parts: PartInput, keyboard: Optional[Keyboard] = None) -> Sent:
        """Replies in Markdown (groups only). Mentions become provider tags: ``ctx.reply_markdown(at.user(ctx.sender), " said ", ctx.args)``.
        ``keyboard`` (see :func:`host_sdk_v2.keyboard`) puts buttons under the message; a click on a callback
        button comes back to ``@plugin.on_interaction``."""
        return self._reply("markdown", parts, keyboard)

    def intercept(self) -> None:
        """Stops the plugins after this one from seeing the message. Needs ``Plugin(..., intercepts=True)``
        (and, on stdio, the ``messages.intercept`` permission)."""
        if not self._session.intercepts:
            raise PluginSdkError("SDK_INTERCEPT_UNDECLARED", "Create the plugin with Plugin.from_manifest(..., intercepts=True).")
        self._decide(True)

    def pass_on(self) -> None:
        """Lets the event go on to the plugins after this one, as early as the handler knows it."""
        if self._session.intercepts:
            self._decide(False)

    def _decide(self, intercepted: bool) -> None:
        if self._decision == intercepted:
            return
        if self._decision is not None:
            raise PluginSdkError(
                "SDK_DECISION_CONFLICT",
                f"ctx.{'intercept' if intercepted else 'pass_on'}() was called after ctx.{'intercept' if self._decision else 'pass_on'}() for event {self.event['eventId']}; decide once.",
            )
        self._decision = intercepted
        self._on_decision(intercepted)

    def _sent_at(self, index: int) -> Optional[Sent]:
        """The ``index``-th message the handler started, or None past the last one."""
        pending = self._pending
        return pending[index] if index < len(pending) else None

    def _observe(self, sent: Sent) -> None:
        """Reads the answer of a message that has one; logs a failure nobody waited for."""
        try:
            sent._future.result()
        except Exception as error:
            if not sent.observed:
                self.log.warning(f"a message the handler did not wait for failed: {error}")

    async def _settle(self) -> None:
        """Waits for every message the handler started; logs failures nobody waited for."""
        index = 0
        while True:
            sent = self._sent_at(index)
            if sent is None:
                return
            index += 1
            if not sent._future.done():
                try:
                    await bridge(sent._future)
                except Exception:
                    pass  # reported by _observe
            self._observe(sent)

    def _when_settled(self, done: Callable[[], None], resume: Callable[[Callable[[], None]], None]) -> None:
        """:meth:`_settle` without a coroutine: calls ``done()`` once every message the handler started
        has its answer. ``resume(step)`` runs ``step`` on the caller's thread (answers may settle on
        another). Once ``done`` ran the context no longer refers to the handling around it (no reference
        cycle is left for the cyclic collector)."""
        self._settle_done = done
        self._settle_resume = resume
        self._settle_step()

    def _settle_step(self) -> None:
        while True:
            sent = self._sent_at(self._settle_index)
            if sent is None:
                done = self._settle_done
                self._settle_done = self._settle_resume = None
                self._on_decision = _ignore_decision  # a decision after the end changes nothing
                self._messages = None  # its tracker refers back to this context
                if done is not None:
                    done()
                return
            if not sent._future.done():
                sent._future.add_done_callback(self._settle_answered)
                return
            self._settle_index += 1
            self._observe(sent)

    def _settle_answered(self, answer: "Answer[Any]") -> None:
        resume = self._settle_resume
        if resume is not None:
            resume(self._settle_step)


class MessageContext(EventContext):
    """What a message or command handler receives.

    ``ctx.event`` is the message event as the host sent it; ``ctx.sender`` its sender; ``ctx.command``
    the matched command (``ctx.command["args"]`` is the text after the command word) or None;
    ``ctx.args`` the same text ("" without a command); ``ctx.text`` the message content.
    """

    def __init__(self, event: MessageEvent, transport: Transport, session: Session, cancellation: Cancellation, on_decision: Callable[[bool], None]) -> None:
        super().__init__(event, transport, session, cancellation, on_decision)
        self.event: MessageEvent = event
        self.sender: UserRef = event["sender"]
        self.command: Optional[CommandMatch] = event.get("command")
        self.args: str = self.command["args"] if self.command else ""
        self.text: str = event["message"]["content"]


class ChatEventContext(EventContext):
    """What the handlers of ``interaction.created``, ``bot.added``, ``bot.removed`` and
    ``conversation.opened`` receive (docs/protocol/v2.md 5.4).

    ``ctx.event`` is the event as the host sent it; ``ctx.sender`` who clicked, added, removed or opened
    (always set for a click, else None when the provider does not say); ``ctx.interaction`` the click
    ``{id, data, buttonId?, messageId?}`` (None for other types); ``ctx.data`` the callback data of the
    clicked button ("" for other types). ``ctx.reply`` answers in the event's conversation while its reply
    window lasts; ``bot.removed`` takes no reply (``message.reference.unavailable``).
    """

    def __init__(self, event: ChatEvent, transport: Transport, session: Session, cancellation: Cancellation, on_decision: Callable[[bool], None]) -> None:
        super().__init__(event, transport, session, cancellation, on_decision)
        self.event: ChatEvent = event
        self.sender: Optional[UserRef] = event.get("sender")
        self.interaction: Optional[Interaction] = event.get("interaction")
        self.data: str = self.interaction["data"] if self.interaction else ""

    @property
    def can_reply(self) -> bool:
        """Whether the event says where a reply goes (``messageReference``)."""
        return "messageReference" in self.event


def _parse_time(value: str) -> datetime:
    """An ISO 8601 date-time with a zone (the schema checked its shape); 3.9's fromisoformat takes
    neither "Z" nor more than 6 fraction digits."""
    match = re.match(r"^(.*?T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|z|[+-]\d\d:\d\d)$", value)
    if match is None:
        raise ValueError(f"not a date-time with a zone: {value!r}")
    head, fraction, zone = match.groups()
    zone = "+00:00" if zone in ("Z", "z") else zone
    return datetime.fromisoformat(f"{head}{'.' + (fraction + '000000')[:6] if fraction else ''}{zone}")


def describe(value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return "[unserialisable]"
