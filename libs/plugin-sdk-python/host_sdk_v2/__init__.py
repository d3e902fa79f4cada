"""host_sdk_v2: the Python SDK of protocol v2 chat-bot plugins (standard library only, CPython 3.9+).

One plugin definition runs over stdio (the host starts it) or HTTP (a WSGI app)::

    from host_sdk_v2 import Plugin, at, literal

    plugin = Plugin.from_manifest("manifest.json")

    @plugin.command("echo")
    def echo(ctx):
        ctx.reply_markdown(at.user(ctx.sender), " said: ", literal(ctx.args))

    @plugin.on_interaction          # needs {"eventType": "interaction.created"} in eventSubscriptions
    def clicked(ctx):
        ctx.reply("you chose ", ctx.data)

    if __name__ == "__main__":
        plugin.run()
"""

from ._generated.catalog import (
    ERROR_CODES,
    HOST_STDIO_FLAG,
    HTTP_DEFAULTS,
    LIMITS,
    PERMISSIONS,
    PROTOCOL_VERSION,
    RUNTIME_DEFAULTS,
    Capability,
    RpcErrorCode,
)
from ._version import SDK_NAME, SDK_VERSION
from .cancellation import Cancellation
from .context import ChatEventContext, Directories, EventContext, LifecycleContext, MessageContext, MessageSender, PluginLogger, Sent, Uploaded
from .errors import HANDLER_FAILED_CODE, SDK_ERRORS, HandlerError, HostCallError, PluginMessageError, PluginSdkError
from .parts import at, callback_button, command_button, composite, file_from_media, file_from_url, image_from_media, image_from_url, keyboard, link_button, literal, text
from .plugin import Plugin
from .stdio import USAGE_EXIT_CODE

__all__ = [
    "Cancellation",
    "Capability",
    "ChatEventContext",
    "Directories",
    "ERROR_CODES",
    "EventContext",
    "HANDLER_FAILED_CODE",
    "HOST_STDIO_FLAG",
    "HTTP_DEFAULTS",
    "HandlerError",
    "HostCallError",
    "LIMITS",
    "LifecycleContext",
    "MessageContext",
    "MessageSender",
    "PERMISSIONS",
    "PROTOCOL_VERSION",
    "Plugin",
    "PluginLogger",
    "PluginMessageError",
    "PluginSdkError",
    "RUNTIME_DEFAULTS",
    "RpcErrorCode",
    "SDK_ERRORS",
    "SDK_NAME",
    "SDK_VERSION",
    "Sent",
    "Uploaded",
    "USAGE_EXIT_CODE",
    "at",
    "callback_button",
    "command_button",
    "composite",
    "file_from_media",
    "file_from_url",
    "image_from_media",
    "image_from_url",
    "keyboard",
    "link_button",
    "literal",
    "text",
]
