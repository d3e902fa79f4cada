"""A test host for unit tests: delivers message events and the other event types (button clicks, the bot
added or removed, a conversation opened) to a plugin in memory, matching commands exactly as the host
does, and records the decision, the completion and every message the plugin made::

    from host_sdk_v2.testing import TestHost

    host = TestHost(plugin)
    delivery = host.send("/echo hi")
    assert delivery.replies[0].body == {"msg_type": 2, "markdown": {"content": '<qqbot-at-user id="u1" /> said: hi'}}
    clicked = host.click("vote:yes")          # interaction.created, as a callback button's click
    assert clicked.replies[0].parts == [{"type": "text", "text": "You voted yes"}]
"""

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence

from .answer import Answer, settled
from .cancellation import Cancellation
from .context import Directories, LifecycleContext, Session, Transport
from .dispatch import call_handler, dispatch_event
from ._generated.catalog import LIMITS
from .errors import PluginMessageError, PluginSdkError
from .validation import validate_document, validate_method

if TYPE_CHECKING:
    from .plugin import Plugin

_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def match_command(text: str, commands: Sequence[Mapping[str, Any]], conversation_type: str) -> Optional[Dict[str, Any]]:
    """The host's command matching (docs/protocol/v2.md 6.2): ``{name, word, prefix, args, index}`` or None."""
    stripped = text.lstrip(_WHITESPACE)
    lowered = stripped.lower()
    best: Optional[Dict[str, Any]] = None
    best_length = -1
    for index, command in enumerate(commands):
        scopes = command.get("conversationScopes")
        if scopes is not None and conversation_type not in scopes:
            continue
        for prefix in command.get("prefixes", ["/"]):
            for word in [command["name"], *command.get("aliases", [])]:
                head = prefix + word
                if not lowered.startswith(head.lower()):
                    continue
                rest = stripped[len(head) :]
                if rest and rest[0] not in _WHITESPACE:
                    continue
                if len(head) > best_length:
                    best_length = len(head)
                    best = {"name": command["name"], "word": word, "prefix": prefix, "args": rest.lstrip(_WHITESPACE), "index": index}
    return best


@dataclass
class SentMessage:
    """A message the plugin made: ``kind`` is ``reply`` or ``send``; ``body`` the provider body the host would send."""

    kind: str
    target: Dict[str, str]
    format: str
    parts: List[Dict[str, Any]]
    body: Dict[str, Any]


@dataclass
class Delivery:
    """What happened to one event."""

    event: Dict[str, Any]
    ack: Dict[str, Any]
    #: None when the event was declined; else ``{"error": ..., "durationMs": ...}``.
    completion: Optional[Dict[str, Any]]
    messages: List[SentMessage] = field(default_factory=list)

    @property
    def replies(self) -> List[SentMessage]:
        return [m for m in self.messages if m.kind == "reply"]

    @property
    def sends(self) -> List[SentMessage]:
        return [m for m in self.messages if m.kind == "send"]


_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_SIGNATURES = {
    "image/png": lambda h: h[:8] == b"\x89PNG\r\n\x1a\n",
    "image/jpeg": lambda h: h[:3] == b"\xff\xd8\xff",
    "image/gif": lambda h: h[:6] in (b"GIF87a", b"GIF89a"),
    "image/webp": lambda h: h[:4] == b"RIFF" and h[8:12] == b"WEBP",
    "application/pdf": lambda h: h[:5] == b"%PDF-",
}


def _media_type_problem(content_type: str, head: bytes) -> Optional[str]:
    """Why the host refuses ``content_type`` for bytes starting with ``head``, or None (the rules of
    libs/protocol/src/media-types.ts)."""
    if content_type.startswith("image/") and content_type not in _IMAGE_TYPES:
        return f"the host takes images as {', '.join(_IMAGE_TYPES)}, not {content_type}"
    check = _SIGNATURES.get(content_type)
    if check is not None and not check(head):
        return f"the upload declares {content_type}, but its bytes do not start with its signature"
    return None


class _Recorder(Transport):
    kind = "test"

    def __init__(self, host: "TestHost") -> None:
        self._host = host
        self.messages: List[SentMessage] = []

    def _record(self, kind: str, message: Dict[str, Any], target: Dict[str, str], body: Dict[str, Any]) -> "Answer[Any]":
        sent = SentMessage(kind, target, message["format"], message["parts"], body)
        self.messages.append(sent)
        self._host.sent.append(sent)
        return settled({"accepted": True, "messageId": f"test-msg-{len(self._host.sent)}", "target": target})

    def reply(self, event: Mapping[str, Any], message: Dict[str, Any], target: Dict[str, str], body: Dict[str, Any]) -> "Answer[Any]":
        return self._record("reply", message, target, body)

    def send(self, message: Dict[str, Any], target: Dict[str, str], body: Dict[str, Any], event: Optional[Mapping[str, Any]]) -> "Answer[Any]":
        return self._record("send", message, target, body)

    def upload_media(self, data: bytes, content_type: str, file_name: Optional[str]) -> "Answer[Any]":
        # The host's checks of an upload (docs/protocol/v2.md 4.12, libs/protocol/src/media-types.ts), on the whole bytes.
        problem = _media_type_problem(content_type, data[:16])
        answer: "Answer[Any]" = Answer()
        if len(data) == 0:
            answer.set_exception(PluginMessageError("message.media.upload_invalid", "The upload has no bytes.", from_host=True))
        elif problem is not None:
            answer.set_exception(PluginMessageError("message.media.type_mismatch", problem, from_host=True))
        else:
            media_id = f"test-media-{len(self._host.uploads) + 1:06d}"
            self._host.uploads[media_id] = {"bytes": data, "contentType": content_type, **({"fileName": file_name} if file_name is not None else {})}
            expires = datetime.now(timezone.utc) + timedelta(milliseconds=LIMITS["mediaTtlMilliseconds"])
            answer.set_result({"mediaId": media_id, "contentType": content_type, "size": len(data), "expiresAt": expires.isoformat().replace("+00:00", "Z")})
        return answer

    def log(self, level: str, message: str, fields: Optional[Mapping[str, Any]], event_id: Optional[str] = None) -> None:
        entry: Dict[str, Any] = {"level": level, "message": message, "fields": dict(fields or {})}
        if event_id is not None:
            entry["eventId"] = event_id  # as log.write names the handler's event
        self._host.logs.append(entry)


class TestHost:
    """Delivers events to ``plugin`` in memory. ``logs`` collects every log line, ``sent`` every message."""

    __test__ = False  # not a test case for test collectors

    def __init__(self, plugin: "Plugin", settings: Optional[Mapping[str, Any]] = None, directories: Optional[Directories] = None) -> None:
        plugin.check()
        self.plugin = plugin
        self.logs: List[Dict[str, Any]] = []
        self.sent: List[SentMessage] = []
        #: The media uploaded with ``ctx.upload_media`` by media id (``bytes``, ``contentType``, ``fileName``),
        #: each checked as the host checks it.
        self.uploads: Dict[str, Dict[str, Any]] = {}
        self._ids = itertools.count(1)
        self.session = Session(plugin.plugin_id, {**plugin.default_settings(), **(settings or {})}, directories, plugin.manifest.get("permissions", []), plugin.intercepts)
        self._started = False

    def start(self) -> None:
        """Runs on_start (done by the first delivery when not called)."""
        if not self._started:
            self._started = True
            if self.plugin._on_start is not None:
                asyncio.run(call_handler(self.plugin._on_start, LifecycleContext(_Recorder(self), self.session), inline=True))

    def stop(self) -> None:
        """Cancels the session and runs on_stop."""
        self.session.cancellation.cancel(PluginSdkError("SDK_EVENT_CANCELLED", "the test host stopped the plugin"))
        if self._started and self.plugin._on_stop is not None:
            asyncio.run(call_handler(self.plugin._on_stop, LifecycleContext(_Recorder(self), self.session), inline=True))

    def event(
        self,
        text: str,
        conversation: str = "group",
        conversation_id: str = "group-1",
        sender_id: str = "user-1",
        sender_name: Optional[str] = "Alice",
        source: str = "qqbot",
        reply_window_seconds: Optional[float] = 300,
    ) -> Dict[str, Any]:
        """A message event as the host would deliver it, with the command matched like the host."""
        n = next(self._ids)
        now = datetime.now(timezone.utc)
        target_type = {"group": "group", "c2c": "user", "channel": "channel", "direct": "direct"}[conversation]
        sender: Dict[str, Any] = {"provider": source, "mentionId": sender_id}
        if sender_name is not None:
            sender["displayName"] = sender_name
        reference: Dict[str, Any] = {"messageId": f"msg-{n}", "targetType": target_type, "targetId": conversation_id, "restrictions": []}
        if reply_window_seconds is not None:
            reference["replyUntil"] = (now + timedelta(seconds=reply_window_seconds)).isoformat().replace("+00:00", "Z")
        event: Dict[str, Any] = {
            "eventId": f"evt-test-{n}",
            "eventType": "message.created",
            "timestamp": now.isoformat().replace("+00:00", "Z"),
            "source": source,
            "bot": {"botAccountId": "bot-1", "platform": source},
            "conversation": {"type": conversation, "conversationId": conversation_id},
            "sender": sender,
            "message": {"id": f"msg-{n}", "content": text, "attachments": [], "mentions": []},
            "messageReference": reference,
        }
        match = match_command(text, self.plugin.manifest.get("commands", []), conversation)
        if match is not None:
            event["command"] = {k: match[k] for k in ("name", "word", "prefix", "args")}
        return event

    def chat_event(
        self,
        event_type: str,
        conversation: str = "group",
        conversation_id: str = "group-1",
        sender_id: Optional[str] = "user-1",
        sender_name: Optional[str] = "Alice",
        source: str = "qqbot",
        reply_window_seconds: Optional[float] = 300,
        interaction: Optional[Mapping[str, Any]] = None,
        can_reply: bool = True,
    ) -> Dict[str, Any]:
        """An event of ``event_type`` (``interaction.created``, ``bot.added``, ``bot.removed`` or
        ``conversation.opened``) as the host delivers it through ``events.deliver``: ``bot.removed`` never
        has a ``messageReference``; the others have one unless ``can_reply`` is False (an ``interaction.created``
        always has one, and a sender). ``sender_id=None`` leaves the sender out where the type allows."""
        n = next(self._ids)
        now = datetime.now(timezone.utc)
        target_type = {"group": "group", "c2c": "user", "channel": "channel", "direct": "direct"}[conversation]
        event: Dict[str, Any] = {
            "eventId": f"evt-test-{n}",
            "eventType": event_type,
            "timestamp": now.isoformat().replace("+00:00", "Z"),
            "source": source,
            "bot": {"botAccountId": "bot-1", "platform": source},
            "conversation": {"type": conversation, "conversationId": conversation_id},
        }
        clicked = event_type == "interaction.created"
        if sender_id is not None or clicked:
            sender: Dict[str, Any] = {"provider": source, "mentionId": sender_id or "user-1"}
            if sender_name is not None:
                sender["displayName"] = sender_name
            event["sender"] = sender
        if clicked:
            event["interaction"] = dict(interaction) if interaction is not None else {"id": f"interaction-{n}", "data": ""}
        if clicked or (can_reply and event_type != "bot.removed"):
            # QQ Bot answers these by the platform's event id, which the host marks with "event:".
            answered = event["interaction"]["id"] if clicked else f"{event_type}:{n}"
            reference: Dict[str, Any] = {"messageId": f"event:{answered}", "targetType": target_type, "targetId": conversation_id, "restrictions": []}
            if reply_window_seconds is not None:
                reference["replyUntil"] = (now + timedelta(seconds=reply_window_seconds)).isoformat().replace("+00:00", "Z")
            event["messageReference"] = reference
        return event

    def click(self, data: str, button_id: Optional[str] = None, message_id: Optional[str] = None, **options: Any) -> Delivery:
        """A user clicks a callback button whose data is ``data``: delivers ``interaction.created``
        (options as for :meth:`chat_event`)."""
        n = next(self._ids)
        interaction: Dict[str, Any] = {"id": f"interaction-{n}", "data": data}
        if button_id is not None:
            interaction["buttonId"] = button_id
        if message_id is not None:
            interaction["messageId"] = message_id
        return self.deliver(self.chat_event("interaction.created", interaction=interaction, **options))

    def bot_added(self, **options: Any) -> Delivery:
        """The bot is added to the conversation: delivers ``bot.added`` (options as for :meth:`chat_event`)."""
        return self.deliver(self.chat_event("bot.added", **options))

    def bot_removed(self, **options: Any) -> Delivery:
        """The bot is removed from the conversation: delivers ``bot.removed``, which takes no reply."""
        return self.deliver(self.chat_event("bot.removed", **options))

    def conversation_opened(self, **options: Any) -> Delivery:
        """The conversation accepts the bot's messages again: delivers ``conversation.opened``."""
        return self.deliver(self.chat_event("conversation.opened", **options))

    def send(self, text: str, **options: Any) -> Delivery:
        """Builds an event for ``text`` (see :meth:`event`) and delivers it."""
        return self.deliver(self.event(text, **options))

    def deliver(self, event: Mapping[str, Any], cancellation: Optional[Cancellation] = None) -> Delivery:
        """Delivers an event (validated like the host's envelope: a message event, or another type as
        ``events.deliver`` params) and waits until its handler ended. As the host, it delivers another
        event type only when the manifest subscribes to it (else ValueError)."""
        event_type = event.get("eventType")
        if event_type == "message.created":
            checked, issues = validate_document("message-event.schema.json", event, "event")
        else:
            checked, issues = validate_method("events.deliver", "params", event, "event")
            if checked is not None and event_type not in [s["eventType"] for s in self.plugin.manifest.get("eventSubscriptions", [])]:
                raise ValueError(f'the manifest does not subscribe to "{event_type}", so the host would never deliver it; add {{"eventType": "{event_type}"}} to "eventSubscriptions".')
        if checked is None:
            raise ValueError(f"not a valid {event_type} event: {issues}")
        self.start()
        recorder = _Recorder(self)
        acks: List[Dict[str, Any]] = []
        token = cancellation or Cancellation(self.session.cancellation)
        started = time.monotonic()
        try:
            completion = asyncio.run(dispatch_event(self.plugin, checked, recorder, self.session, acks.append, token, inline=True))  # type: ignore[arg-type]
        finally:
            token.detach()
        done = None if completion is None else {"error": completion.error, "durationMs": completion.duration_ms or (time.monotonic() - started) * 1000}
        return Delivery(dict(checked), acks[0], done, recorder.messages)

    def change_settings(self, settings: Mapping[str, Any]) -> None:
        """Applies new settings as ``settings.changed`` would (on_settings_changed sees them first)."""
        previous = self.session.settings
        hook = self.plugin._on_settings_changed
        if hook is not None:
            settings_hook = hook
            staged = Session(self.session.plugin_id, settings, self.session.directories, self.session.permissions, self.session.intercepts)
            asyncio.run(call_handler(lambda c: settings_hook(c, previous), LifecycleContext(_Recorder(self), staged), inline=True))
        self.session.settings = dict(settings)
