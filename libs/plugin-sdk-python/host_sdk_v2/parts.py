"""Builders of message parts: text, literal text, typed mentions and composites.

Strings passed to ``reply`` and ``send`` are text parts. Text is always escaped when rendered, so ``<``
and ``>`` in it never become provider markup; only typed mentions do. In Markdown, a string is Markdown:
wrap text that came from users in :func:`literal`.
"""

from typing import Any, Dict, List, Mapping, Optional, Union

from ._generated.catalog import LIMITS
from ._generated.wire import MessagePart, MessagePartComposite, MessagePartMentionEveryone, MessagePartMentionUser, MessagePartText
from .errors import PluginMessageError

#: A mention id, or a user reference from an event (``ctx.sender``, an entry of ``message.mentions``).
MentionableUser = Union[str, Mapping[str, Any]]

#: What reply and send take: typed parts or plain strings (a string is a text part).
PartInput = Union[MessagePart, str]


def text(value: str) -> MessagePartText:
    """A text part; ``text("1 < 2")`` shows as typed (a channel gets ``1 &lt; 2``, which it shows as ``1 < 2``)."""
    return {"type": "text", "text": value}


def literal(value: str) -> MessagePartText:
    """Text shown exactly as written: in a Markdown message its Markdown syntax is escaped, so
    ``[click](http://...)`` from a user stays text instead of becoming a link. In text format it
    is the same as :func:`text`."""
    return {"type": "text", "text": value, "literal": True}


def _user(user: MentionableUser, display_name: Optional[str]) -> MessagePartMentionUser:
    if isinstance(user, str):
        mention_id, name = user, display_name
    else:
        mention_id = str(user.get("mentionId", ""))
        name = display_name if display_name is not None else user.get("displayName")
    part: Dict[str, Any] = {"type": "mention", "target": "user", "id": mention_id}
    if name is not None:
        part["displayName"] = name
    return part  # type: ignore[return-value]


class _At:
    """Builders of typed mentions: ``at.user(ctx.sender)``, ``at.users(a, b)``, ``at.everyone()``."""

    @staticmethod
    def user(user: MentionableUser, display_name: Optional[str] = None) -> MessagePartMentionUser:
        """Mentions one user. Markdown renders ``<qqbot-at-user id="..." />``; text renders ``@displayName``.
        The id is checked when the message is sent (``message.mention.invalid_id``)."""
        return _user(user, display_name)

    @staticmethod
    def users(*users: MentionableUser) -> MessagePartComposite:
        """Mentions 1 to 20 users separated by spaces; other counts raise ``message.mention.too_many``."""
        if len(users) < 1 or len(users) > LIMITS["maxMentionUsers"]:
            raise PluginMessageError("message.mention.too_many", f"It was given {len(users)} users.")
        parts: List[MessagePart] = []
        for u in users:
            if parts:
                parts.append(text(" "))
            parts.append(_user(u, None))
        return {"type": "composite", "parts": parts}

    @staticmethod
    def everyone() -> MessagePartMentionEveryone:
        """Mentions everyone in a guild channel (QQ shows it nowhere else); needs the ``messages.mentionEveryone`` permission."""
        return {"type": "mention", "target": "everyone"}


#: Mention builders.
at = _At()


def composite(*parts: PartInput) -> MessagePartComposite:
    """Groups parts into one; composites are flattened before sending (at most 8 levels deep)."""
    return {"type": "composite", "parts": to_parts(parts)}


def to_parts(parts: Any) -> List[MessagePart]:
    """Strings become text parts; parts pass through."""
    return [text(p) if isinstance(p, str) else p for p in parts]
