"""Builders of message parts (text, literal text, typed mentions, images and files from a URL,
composites) and of keyboards of buttons under a Markdown message.

Strings passed to ``reply`` and ``send`` are text parts. Text is always escaped when rendered, so ``<``
and ``>`` in it never become provider markup; only typed mentions do. In Markdown, a string is Markdown:
wrap text that came from users in :func:`literal`.
"""

import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ._generated.catalog import LIMITS
from ._generated.wire import (
    Button,
    Keyboard,
    MessagePart,
    MessagePartComposite,
    MessagePartFile,
    MessagePartImage,
    MessagePartMentionEveryone,
    MessagePartMentionUser,
    MessagePartText,
)
from .errors import PluginMessageError

#: An absolute http or https URL without spaces: the rule of image and file parts and of link buttons.
MEDIA_URL = re.compile(r"https?://[^\s/?#]+[^\s]*")
#: The rule of a button id (unique within its keyboard; comes back as ``interaction.buttonId``).
BUTTON_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_CONTROL = re.compile("[\u0000-\u001f\u007f]")

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


def media_url_problem(url: Any) -> Optional[str]:
    """Why ``url`` cannot be the URL of an image, a file or a link button, or None when it can."""
    if not isinstance(url, str):
        return "must be a string"
    if len(url) > LIMITS["maxMediaUrlChars"]:
        return f"has {len(url)} characters; at most {LIMITS['maxMediaUrlChars']} are allowed"
    if not MEDIA_URL.fullmatch(url):
        return "must be an absolute http or https URL without spaces"
    return None


def image_from_url(url: str, alt: Optional[str] = None) -> MessagePartImage:
    """An image the host has the provider fetch from ``url`` (QQ Bot: PNG or JPEG, to groups and
    one-to-one chats). ``alt`` is shown where the image cannot be. A URL that is not an absolute http or
    https URL raises ``message.part.unsupported`` at once; the host checks its address when it is sent
    (``message.media.address_refused``)."""
    problem = media_url_problem(url)
    if problem is not None:
        raise PluginMessageError("message.part.unsupported", f"image_from_url({url!r}): the URL {problem}.")
    part: Dict[str, Any] = {"type": "image", "url": url}
    if alt is not None:
        if not isinstance(alt, str) or len(alt) > 200:
            raise PluginMessageError("message.part.unsupported", "image_from_url: alt must be a string of at most 200 characters.")
        part["alt"] = alt
    return part  # type: ignore[return-value]


def _media_id_of(media: Union[str, Mapping[str, Any]], builder: str) -> str:
    media_id = media if isinstance(media, str) else media.get("mediaId") if isinstance(media, Mapping) else None
    if not isinstance(media_id, str) or not re.fullmatch("[A-Za-z0-9_-]{16,64}", media_id):
        raise PluginMessageError("message.part.unsupported", f"{builder}: give the result of ctx.upload_media or its mediaId.")
    return media_id


def image_from_media(media: Union[str, Mapping[str, Any]], alt: Optional[str] = None) -> MessagePartImage:
    """An image of bytes this plugin uploaded: the result of ``ctx.upload_media`` or its ``mediaId``."""
    part: Dict[str, Any] = {"type": "image", "mediaId": _media_id_of(media, "image_from_media")}
    if alt is not None:
        if not isinstance(alt, str) or len(alt) > 200:
            raise PluginMessageError("message.part.unsupported", "image_from_media: alt must be a string of at most 200 characters.")
        part["alt"] = alt
    return part  # type: ignore[return-value]


def file_from_media(media: Union[str, Mapping[str, Any]], file_name: Optional[str] = None) -> MessagePartFile:
    """A file of bytes this plugin uploaded: the result of ``ctx.upload_media`` or its ``mediaId``."""
    part: Dict[str, Any] = {"type": "file", "mediaId": _media_id_of(media, "file_from_media")}
    if file_name is not None:
        if not isinstance(file_name, str) or not 1 <= len(file_name) <= 255 or file_name.strip() == "" or _CONTROL.search(file_name):
            raise PluginMessageError("message.part.unsupported", "file_from_media: file_name must be 1 to 255 characters, not blank, without control characters.")
        part["fileName"] = file_name
    return part  # type: ignore[return-value]


def file_from_url(url: str, file_name: Optional[str] = None) -> MessagePartFile:
    """A file the host has the provider fetch from ``url``; ``file_name`` is the name the recipient sees
    (default: the last segment of the URL path). QQ Bot takes no files yet
    (``message.part.unsupported_target`` when sent there)."""
    problem = media_url_problem(url)
    if problem is not None:
        raise PluginMessageError("message.part.unsupported", f"file_from_url({url!r}): the URL {problem}.")
    part: Dict[str, Any] = {"type": "file", "url": url}
    if file_name is not None:
        if not isinstance(file_name, str) or not 1 <= len(file_name) <= 255 or file_name.strip() == "" or _CONTROL.search(file_name):
            raise PluginMessageError("message.part.unsupported", "file_from_url: file_name must be 1 to 255 characters, not blank, without control characters.")
        part["fileName"] = file_name
    return part  # type: ignore[return-value]


def _button(action: str, label: str, data: str, button_id: Optional[str], primary: bool) -> Dict[str, Any]:
    where = f"{action}_button({label!r})"
    if not isinstance(label, str) or not 1 <= len(label) <= LIMITS["maxButtonLabelChars"] or label.strip() == "" or _CONTROL.search(label):
        raise PluginMessageError(
            "message.keyboard.invalid", f"{where}: the label must be 1 to {LIMITS['maxButtonLabelChars']} characters, not blank, without control characters."
        )
    if not isinstance(data, str) or not 1 <= len(data) <= LIMITS["maxButtonDataChars"]:
        raise PluginMessageError("message.keyboard.invalid", f"{where}: the data must be 1 to {LIMITS['maxButtonDataChars']} characters.")
    button: Dict[str, Any] = {}
    if button_id is not None:
        if not isinstance(button_id, str) or not BUTTON_ID.fullmatch(button_id):
            raise PluginMessageError("message.keyboard.invalid", f"{where}: the id {button_id!r} is not 1 to 64 letters, digits or _ . : -.")
        button["id"] = button_id
    button.update({"label": label, "style": "primary" if primary else "secondary", "action": action, "data": data})
    return button


def callback_button(label: str, data: str, id: Optional[str] = None, primary: bool = False) -> Button:
    """A button whose click the plugin gets as ``interaction.created`` with ``interaction.data`` = ``data``
    (handle it with ``@plugin.on_interaction``). ``id`` comes back as ``interaction.buttonId`` (default
    ``r<row>c<column>``)."""
    return _button("callback", label, data, id, primary)  # type: ignore[return-value]


def link_button(label: str, url: str, id: Optional[str] = None, primary: bool = False) -> Button:
    """A button that opens ``url`` (an absolute http or https URL) in the user's client; no event follows."""
    button = _button("link", label, url, id, primary)
    problem = media_url_problem(url)
    if problem is not None:
        raise PluginMessageError("message.keyboard.invalid", f"link_button({label!r}): the URL {url!r} {problem}.")
    return button  # type: ignore[return-value]


def command_button(label: str, text: str, send: bool = False, id: Optional[str] = None, primary: bool = False) -> Button:
    """A button that puts ``text`` in the user's input box (and sends it at once with ``send=True``); what
    the user sends comes back as a message event, so ``text`` is usually one of the plugin's commands."""
    button = _button("command", label, text, id, primary)
    if send:
        button["send"] = True
    return button  # type: ignore[return-value]


def keyboard(*rows: Sequence[Button]) -> Keyboard:
    """Rows of buttons under a Markdown message: ``keyboard([callback_button("Yes", "vote:yes"),
    callback_button("No", "vote:no")], [link_button("Docs", "https://example.com")])``. Checked at once
    against the protocol's limits: 1 to ``LIMITS["maxKeyboardRows"]`` rows of 1 to
    ``LIMITS["maxKeyboardButtonsPerRow"]`` buttons (``message.keyboard.too_large``), ids unique
    (``message.keyboard.invalid``). Send it with ``ctx.reply_markdown(..., keyboard=k)``."""
    for i, row in enumerate(rows):
        if isinstance(row, Mapping) or isinstance(row, str):
            raise PluginMessageError("message.keyboard.invalid", f"keyboard(): row {i} is not a list of buttons; pass each row as a list: keyboard([button, button], [button]).")
    built = {"rows": [{"buttons": list(row)} for row in rows]}
    from .messages import normalize_keyboard

    normalize_keyboard(built, "markdown")  # raises what the host would refuse
    return built  # type: ignore[return-value]


def to_parts(parts: Any) -> List[MessagePart]:
    """Strings become text parts; parts pass through."""
    return [text(p) if isinstance(p, str) else p for p in parts]
