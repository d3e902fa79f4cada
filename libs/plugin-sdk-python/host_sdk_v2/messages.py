"""Outgoing messages: shape check, normalisation and QQ Bot rendering (docs/protocol/v2.md section 7).

The same rules as the host, pinned by the shared ``rendering/`` vectors, so a mistake surfaces as a
:class:`PluginMessageError` in the handler that made it instead of a refusal later.
"""

import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from ._generated.catalog import LIMITS
from .errors import PluginMessageError
from .parts import BUTTON_ID, media_url_problem, to_parts

#: Deepest allowed composite nesting: a composite directly in ``parts`` is at depth 1.
MAX_COMPOSITE_DEPTH = 8

_MENTION_ID = re.compile(r"[A-Za-z0-9_.:@-]{1,128}")
_QQ_TARGET_ID = re.compile(r"(?!\.\.?$)[A-Za-z0-9_.:@-]{1,128}")
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
_INVISIBLE = re.compile("[\u200b-\u200d\u2060\ufeff]")
_SPECIAL = re.compile("[&<>]")
_ASCII_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")
_TAG_START = re.compile(r"<(?=[A-Za-z@#!/])")
_TARGET_TYPES = ("group", "channel", "user", "direct")
# JavaScript's String.prototype.trim whitespace, which the host uses for "blank".
_JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

_PART_KEYS: Dict[str, Tuple[Set[str], Set[str]]] = {
    "text": ({"type", "text"}, {"literal"}),
    "mention-user": ({"type", "target", "id"}, {"displayName"}),
    "mention-everyone": ({"type", "target"}, set()),
    "composite": ({"type", "parts"}, set()),
    "image": ({"type"}, {"url", "mediaId", "alt"}),
    "file": ({"type"}, {"url", "mediaId", "fileName"}),
}
_BUTTON_KEYS = ({"label", "action", "data"}, {"id", "style", "send"})
_CONTROL = re.compile("[\u0000-\u001f\u007f]")
_MEDIA_ID = re.compile("[A-Za-z0-9_-]{16,64}")


def _fail(code: str, detail: str, target: Optional[Mapping[str, str]] = None) -> PluginMessageError:
    return PluginMessageError(code, detail, target=target)


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict):
        return "an object"
    return f"{type(value).__name__} {value}"


def _check_part(part: Any, path: str, depth: int) -> None:
    if not isinstance(part, dict):
        raise _fail("message.part.unsupported", f"{path} is {_describe(part)}, not a part object.")
    kind = part.get("type")
    if kind == "composite":
        inner = part.get("parts")
        if depth >= MAX_COMPOSITE_DEPTH:
            raise _fail("message.part.unsupported", f"{path} nests composites {depth + 1} levels deep; at most {MAX_COMPOSITE_DEPTH} are allowed.")
        if not isinstance(inner, list):
            raise _fail("message.part.unsupported", f'{path}.parts must be an array of parts.')
        for i, child in enumerate(inner):
            _check_part(child, f"{path}.parts[{i}]", depth + 1)
        shape = "composite"
    elif kind in ("text", "image", "file"):
        shape = kind
    elif kind == "mention":
        target = part.get("target")
        if target not in ("user", "everyone"):
            raise _fail("message.part.unsupported", f'{path} is a mention with target {_describe(target)}; use "user" or "everyone".')
        shape = f"mention-{target}"
    else:
        raise _fail("message.part.unsupported", f"{path} has type {_describe(kind)}.")
    required, optional = _PART_KEYS[shape]
    for key in part:
        if key not in required and key not in optional:
            raise _fail("message.part.unsupported", f'{path} has the unknown field "{key}".')
    for key in sorted(required - set(part)):
        if shape == "mention-user" and key == "id":
            raise _fail("message.mention.invalid_id", f"{path}.id is missing.")
        raise _fail("message.part.unsupported", f'{path} needs "{key}".')
    if shape == "text":
        if not isinstance(part["text"], str):
            raise _fail("message.part.unsupported", f"{path}.text must be a string.")
        if "literal" in part and not isinstance(part["literal"], bool):
            raise _fail("message.part.unsupported", f"{path}.literal must be true or false.")
    if shape in ("image", "file"):
        if ("url" in part) == ("mediaId" in part):
            raise _fail("message.part.unsupported", f"{path} needs exactly one of \"url\" and \"mediaId\".")
        if "mediaId" in part:
            if not isinstance(part["mediaId"], str) or not _MEDIA_ID.fullmatch(part["mediaId"]):
                raise _fail("message.part.unsupported", f"{path}.mediaId must be a media id from media.finish (16 to 64 letters, digits, _ or -).")
        else:
            problem = media_url_problem(part["url"])
            if problem is not None:
                raise _fail("message.part.unsupported", f"{path}.url {problem}.")
        if "alt" in part and (not isinstance(part["alt"], str) or len(part["alt"]) > 200):
            raise _fail("message.part.unsupported", f"{path}.alt must be a string of at most 200 characters.")
        if "fileName" in part and not _non_blank(part["fileName"], 255):
            raise _fail("message.part.unsupported", f"{path}.fileName must be 1 to 255 characters, not blank, without control characters.")
    if shape == "mention-user":
        if not isinstance(part["id"], str):
            raise _fail("message.mention.invalid_id", f"{path}.id must be a string.")
        if "displayName" in part and not isinstance(part["displayName"], str):
            raise _fail("message.part.unsupported", f"{path}.displayName must be a string.")


def _non_blank(value: Any, limit: int) -> bool:
    return isinstance(value, str) and 1 <= len(value) <= limit and value.strip(_JS_WHITESPACE) != "" and not _CONTROL.search(value)


def _check_button(button: Any, path: str) -> None:
    if not isinstance(button, dict):
        raise _fail("message.keyboard.invalid", f"{path} is {_describe(button)}, not a button object.")
    required, optional = _BUTTON_KEYS
    for key in button:
        if key not in required and key not in optional:
            raise _fail("message.keyboard.invalid", f'{path} has the unknown field "{key}".')
    for key in sorted(required - set(button)):
        raise _fail("message.keyboard.invalid", f'{path} needs "{key}".')
    if "id" in button and not (isinstance(button["id"], str) and BUTTON_ID.fullmatch(button["id"])):
        raise _fail("message.keyboard.invalid", f"{path}.id must be 1 to 64 letters, digits or _ . : -.")
    if not _non_blank(button["label"], LIMITS["maxButtonLabelChars"]):
        raise _fail("message.keyboard.invalid", f"{path}.label must be 1 to {LIMITS['maxButtonLabelChars']} characters, not blank, without control characters.")
    if button.get("style", "secondary") not in ("primary", "secondary"):
        raise _fail("message.keyboard.invalid", f'{path}.style must be "primary" or "secondary".')
    if button["action"] not in ("callback", "link", "command"):
        raise _fail("message.keyboard.invalid", f'{path}.action must be "callback", "link" or "command", not {_describe(button["action"])}.')
    data = button["data"]
    if not isinstance(data, str) or not 1 <= len(data) <= LIMITS["maxButtonDataChars"]:
        raise _fail("message.keyboard.invalid", f"{path}.data must be 1 to {LIMITS['maxButtonDataChars']} characters.")
    if "send" in button and not isinstance(button["send"], bool):
        raise _fail("message.keyboard.invalid", f"{path}.send must be true or false.")


def _check_keyboard(keyboard: Any) -> None:
    """The shape of a keyboard (message.keyboard.invalid); its size is checked by :func:`normalize_keyboard`."""
    if not isinstance(keyboard, dict) or set(keyboard) != {"rows"} or not isinstance(keyboard["rows"], list):
        raise _fail("message.keyboard.invalid", 'keyboard must be an object {"rows": [{"buttons": [...]}, ...]}.')
    for r, row in enumerate(keyboard["rows"]):
        if not isinstance(row, dict) or set(row) != {"buttons"} or not isinstance(row["buttons"], list):
            raise _fail("message.keyboard.invalid", f'keyboard.rows[{r}] must be an object {{"buttons": [...]}}.')
        for c, button in enumerate(row["buttons"]):
            _check_button(button, f"keyboard.rows[{r}].buttons[{c}]")


def normalize_keyboard(keyboard: Any, fmt: str) -> Dict[str, Any]:
    """Checks a keyboard against the protocol's limits (v2.md 7.2 step 8) and gives every button its id
    (``r<row>c<column>`` when none), style and send. Order: format, shape, size row by row, ids, links."""
    if fmt != "markdown":
        raise _fail("message.keyboard.unsupported_format", 'The message has a keyboard and format "text"; send it with format "markdown".')
    _check_keyboard(keyboard)
    rows = keyboard["rows"]
    if not 1 <= len(rows) <= LIMITS["maxKeyboardRows"]:
        raise _fail("message.keyboard.too_large", f"The keyboard has {len(rows)} rows; it takes 1 to {LIMITS['maxKeyboardRows']}.")
    seen: Dict[str, str] = {}
    out: List[Dict[str, Any]] = []
    for r, row in enumerate(rows):
        buttons = row["buttons"]
        if not 1 <= len(buttons) <= LIMITS["maxKeyboardButtonsPerRow"]:
            raise _fail("message.keyboard.too_large", f"keyboard.rows[{r}] has {len(buttons)} buttons; a row takes 1 to {LIMITS['maxKeyboardButtonsPerRow']}.")
        normalized: List[Dict[str, Any]] = []
        for c, b in enumerate(buttons):
            button_id = b.get("id", f"r{r}c{c}")
            where = f"keyboard.rows[{r}].buttons[{c}]"
            if button_id in seen:
                default = "" if "id" in b else " (its default id)"
                raise _fail("message.keyboard.invalid", f"{where} has the id {button_id!r} of {seen[button_id]}{default}.")
            seen[button_id] = where
            if b["action"] == "link" and media_url_problem(b["data"]) is not None:
                raise _fail("message.keyboard.invalid", f"{where} is a link button whose data {b['data']!r} is not an absolute http or https URL.")
            normalized.append(
                {
                    "id": button_id,
                    "label": b["label"],
                    "style": b.get("style", "secondary"),
                    "action": b["action"],
                    "data": b["data"],
                    "send": b["action"] == "command" and b.get("send") is True,
                }
            )
        out.append({"buttons": normalized})
    return {"rows": out}


def parse_outgoing_message(message: Any) -> Dict[str, Any]:
    """Checks the shape of an outgoing message ``{format?, parts, keyboard?}``; fills ``format: "text"``."""
    if not isinstance(message, dict):
        raise _fail("message.empty", f'The message must be an object {{"format"?, "parts": [...]}}, not {_describe(message)}.')
    parts = message.get("parts")
    if not isinstance(parts, list):
        raise _fail("message.empty", '"parts" must be an array of parts.')
    for i, part in enumerate(parts):
        _check_part(part, f"parts[{i}]", 0)
    for key in message:
        if key not in ("format", "parts", "keyboard"):
            raise _fail("message.part.unsupported", f'The message has the unknown field "{key}".')
    fmt = message.get("format", "text")
    if fmt not in ("text", "markdown"):
        raise _fail("message.part.unsupported", f'"format" must be "text" or "markdown", not {_describe(fmt)}.')
    parsed = {"format": fmt, "parts": parts}
    if "keyboard" in message:
        _check_keyboard(message["keyboard"])
        parsed["keyboard"] = message["keyboard"]
    return parsed


class _Flattener:
    def __init__(self, markdown: bool) -> None:
        self.markdown = markdown
        self.parts: List[Dict[str, Any]] = []
        self.pending_text = ""
        self.pending_literal = False
        self.has_mention = False
        self.media = 0

    def add(self, parts: Sequence[Mapping[str, Any]], path: str, depth: int) -> None:
        for i, part in enumerate(parts):
            kind = part["type"]
            if kind == "text":
                if part["text"] == "":
                    continue
                is_literal = self.markdown and part.get("literal") is True
                if is_literal != self.pending_literal:
                    self.flush()
                self.pending_literal = is_literal
                self.pending_text += _BIDI_CONTROLS.sub("", part["text"])
            elif kind == "mention":
                if part["target"] == "user" and not _MENTION_ID.fullmatch(part["id"]):
                    raise _fail("message.mention.invalid_id", f"The mention id {part['id']!r} at {path}[{i}] is not 1 to 128 letters, digits or _ . : @ -.")
                self.flush()
                self.parts.append(dict(part))
                self.has_mention = True
            elif kind in ("image", "file"):
                # A file separates the text around it: a provider may send the two apart.
                self.flush()
                self.parts.append(dict(part))
                self.media += 1
            elif kind == "composite":
                if depth >= MAX_COMPOSITE_DEPTH:
                    raise _fail("message.part.unsupported", f"{path}[{i}] nests composites {depth + 1} levels deep.")
                self.add(part["parts"], f"{path}[{i}].parts", depth + 1)
            else:
                raise _fail("message.part.unsupported", f"{path}[{i}] has type {_describe(kind)}.")

    def flush(self) -> None:
        if self.pending_text != "":
            part: Dict[str, Any] = {"type": "text", "text": self.pending_text}
            if self.pending_literal:
                part["literal"] = True
            self.parts.append(part)
            self.pending_text = ""


def normalize_message(message: Any) -> Dict[str, Any]:
    """Validates and normalises a message (v2.md 7.2): flattens composites, drops empty text, merges
    adjacent text, removes bidirectional controls, checks mention ids, emptiness and the part count."""
    parsed = parse_outgoing_message(message)
    flat = _Flattener(parsed["format"] == "markdown")
    flat.add(parsed["parts"], "parts", 0)
    flat.flush()
    parts = flat.parts
    if not flat.has_mention and flat.media == 0 and all(_INVISIBLE.sub("", p["text"]).strip(_JS_WHITESPACE) == "" for p in parts):
        raise _fail("message.empty", "It has no parts left." if not parts else "It has only whitespace or invisible text.")
    if flat.media > LIMITS["maxMediaParts"]:
        raise _fail(
            "message.media.too_many",
            f"It has {flat.media} image or file parts; a message takes at most {LIMITS['maxMediaParts']}. Send one message per file.",
        )
    if len(parts) > LIMITS["maxMessageParts"]:
        raise _fail("message.parts.too_many", f"It has {len(parts)} parts after merging adjacent text.")
    normalized = {"format": parsed["format"], "parts": parts}
    if "keyboard" in parsed:
        normalized["keyboard"] = normalize_keyboard(parsed["keyboard"], parsed["format"])
    return normalized


def normalize_strings(fmt: str, parts: Sequence[str]) -> Dict[str, Any]:
    """:func:`normalize_message` of a message whose parts are all plain strings (``ctx.reply("hi")``),
    with the same result and errors: its text parts merge into one."""
    joined = _BIDI_CONTROLS.sub("", "".join(parts))
    if _INVISIBLE.sub("", joined).strip(_JS_WHITESPACE) == "":
        raise _fail("message.empty", "It has only whitespace or invisible text." if joined else "It has no parts left.")
    return {"format": fmt, "parts": [{"type": "text", "text": joined}]}


def parse_target(target: Any) -> Dict[str, str]:
    """Checks a target ``{type, id, botAccountId?}``; any fault is ``message.target.invalid``."""
    if not isinstance(target, dict):
        raise _fail("message.target.invalid", f'The target must be an object {{"type", "id"}}, not {_describe(target)}.')
    if target.get("type") not in _TARGET_TYPES:
        raise _fail("message.target.invalid", f'"target.type" must be one of {", ".join(_TARGET_TYPES)}.')
    if not isinstance(target.get("id"), str) or target["id"] == "":
        raise _fail("message.target.invalid", '"target.id" is empty: use the conversation id from the event.')
    for key in target:
        if key not in ("type", "id", "botAccountId"):
            raise _fail("message.target.invalid", f'The target has the unknown field "{key}".')
    checked = {"type": target["type"], "id": target["id"]}
    if "botAccountId" in target:
        bot = target["botAccountId"]
        if not isinstance(bot, str) or not 1 <= len(bot) <= 256:
            raise _fail("message.target.invalid", '"target.botAccountId" must be a string of 1 to 256 characters: use bot.botAccountId of an event.')
        checked["botAccountId"] = bot
    return checked


def escape_text(value: str) -> str:
    """``&``, ``<``, ``>`` become entities; nothing else changes (guild channels and direct chats)."""
    if "&" in value:
        value = value.replace("&", "&amp;")
    if "<" in value:
        value = value.replace("<", "&lt;")
    if ">" in value:
        value = value.replace(">", "&gt;")
    return value


def escape_guild_text(value: str) -> str:
    """escape_text, and a word joiner after ``@`` in the words ``@everyone``."""
    return escape_text(value).replace("@everyone", "@\u2060everyone")


def break_tags(value: str) -> str:
    """A word joiner after each ``<`` that could open a tag (groups and one-to-one chats)."""
    return _TAG_START.sub("<\u2060", value)


def escape_markdown_literal(value: str) -> str:
    """A backslash before every ASCII punctuation character."""
    return _ASCII_PUNCTUATION.sub(lambda m: "\\" + m.group(0), value)


def _code_points(value: str) -> int:
    # Python strings are code points already, except lone surrogates from JSON, which count once too.
    return len(value)


def render_qqbot(message: Mapping[str, Any], target: Mapping[str, str]) -> Dict[str, Any]:
    """Renders a normalised message for QQ Bot (v2.md 7.3)."""
    if not _QQ_TARGET_ID.fullmatch(target["id"]):
        raise _fail("message.target.invalid", f"The target id {target['id']!r} is not a QQ id.", target)
    markdown = message["format"] == "markdown"
    if markdown and target["type"] != "group":
        raise _fail("message.format.unsupported_target", f'The target is of type "{target["type"]}".', target)
    one_to_one = target["type"] in ("user", "direct")
    guild = target["type"] in ("channel", "direct")
    content: List[str] = []
    image: Optional[Dict[str, Any]] = None
    for i, part in enumerate(message["parts"]):
        if part["type"] == "text":
            if part.get("literal"):
                content.append(escape_markdown_literal(part["text"]))
            else:
                content.append(escape_guild_text(part["text"]) if guild else break_tags(part["text"]))
            continue
        if part["type"] == "file":
            raise _fail(
                "message.part.unsupported_target",
                f"parts[{i}] is a file; QQ Bot's upload endpoint takes no files yet (file_type 4). Send a link to it in a text part.",
                target,
            )
        if part["type"] == "image":
            if target["type"] not in ("group", "user"):
                raise _fail(
                    "message.part.unsupported_target",
                    f'parts[{i}] is an image and the target is of type "{target["type"]}"; the host sends images to QQ groups and one-to-one chats only.',
                    target,
                )
            image = {"file_type": 1, "media_id": part["mediaId"]} if "mediaId" in part else {"file_type": 1, "url": part["url"]}
            continue
        if one_to_one:
            raise _fail("message.mention.unsupported_target", f'The target is a one-to-one chat (type "{target["type"]}"). Remove the mention.', target)
        if part["target"] == "everyone":
            if target["type"] != "channel":
                raise _fail(
                    "message.mention.unsupported_target",
                    f'The target is of type "{target["type"]}"; QQ shows an everyone mention only in a guild channel.',
                    target,
                )
            content.append("<qqbot-at-everyone />")
        else:
            content.append(f'<qqbot-at-user id="{part["id"]}" />')
    text = "".join(content)
    chars = _code_points(text)
    if chars > LIMITS["maxMessageChars"]:
        raise _fail("message.too_long", f"The rendered content has {chars} characters, over the limit of {LIMITS['maxMessageChars']}.", target)
    keyboard = message.get("keyboard")
    if image is not None:
        if keyboard is not None:
            raise _fail(
                "message.keyboard.unsupported_format",
                "The message has an image and a keyboard; QQ Bot shows buttons only under Markdown. Send the buttons in a Markdown message of their own.",
                target,
            )
        # The platform wants a non-empty content with msg_type 7.
        return {"msg_type": 7, "content": text if text != "" else " ", "media": image}
    if not markdown:
        return {"msg_type": 0, "content": text}
    if keyboard is None:
        return {"msg_type": 2, "markdown": {"content": text}}
    return {"msg_type": 2, "markdown": {"content": text}, "keyboard": {"content": {"rows": _qq_keyboard_rows(keyboard)}}}


def _qq_keyboard_rows(keyboard: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """A normalised keyboard as QQ Bot's rows of buttons (action type 0 link, 1 callback, 2 command);
    everyone may click every button."""
    rows: List[Dict[str, Any]] = []
    for row in keyboard["rows"]:
        buttons: List[Dict[str, Any]] = []
        for b in row["buttons"]:
            action: Dict[str, Any] = {
                "type": {"link": 0, "callback": 1, "command": 2}[b["action"]],
                "data": b["data"],
                "permission": {"type": 2},
                "unsupport_tips": b["label"],
            }
            if b["action"] == "command":
                action["enter"] = b["send"]
            buttons.append(
                {
                    "id": b["id"],
                    "render_data": {"label": b["label"], "visited_label": b["label"], "style": 1 if b["style"] == "primary" else 0},
                    "action": action,
                }
            )
        rows.append({"buttons": buttons})
    return rows


RENDERERS = {"qqbot": render_qqbot}


def provider_for(source: Optional[str]) -> str:
    """The renderer whose rules apply: the event's provider when built in, else QQ Bot (the strictest)."""
    return source if source in RENDERERS else "qqbot"


def prepare_message(
    fmt: str,
    parts: Sequence[Any],
    target: Any,
    provider: str,
    permissions: Optional[Sequence[str]],
    need: str,
    keyboard: Optional[Mapping[str, Any]] = None,
) -> Tuple[Dict[str, Any], Dict[str, str], Dict[str, Any]]:
    """Checks and normalises a message (with its ``keyboard``, if any) for ``target`` exactly as the host
    will; returns ``(normalised message, target, provider body)`` or raises PluginMessageError."""
    checked = parse_target(target)
    if permissions is not None and need not in permissions:
        raise _fail(
            "message.permission.denied",
            f'This needs the "{need}" permission, which manifest.json does not declare. Add "{need}" to "permissions" and reinstall the plugin.',
            checked,
        )
    for part in parts:
        if type(part) is not str:
            break
    else:
        if fmt in ("text", "markdown") and keyboard is None:
            # Plain strings (ctx.reply("hi")): one text part, no mention to check.
            normalized = normalize_strings(fmt, parts)
            return normalized, checked, RENDERERS[provider](normalized, checked)
    message: Dict[str, Any] = {"format": fmt, "parts": to_parts(parts)}
    if keyboard is not None:
        message["keyboard"] = keyboard
    normalized = normalize_message(message)
    if permissions is not None and "messages.mentionEveryone" not in permissions:
        if any(p["type"] == "mention" and p["target"] == "everyone" for p in normalized["parts"]):
            raise _fail(
                "message.permission.denied",
                'at.everyone() needs the "messages.mentionEveryone" permission, which manifest.json does not declare.',
                checked,
            )
    body = RENDERERS[provider](normalized, checked)
    return normalized, checked, body
