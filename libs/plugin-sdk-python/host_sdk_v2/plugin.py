"""The plugin: its manifest, handlers and lifecycle hooks, served over stdio or HTTP."""

import json
import os
import sys
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence, TypeVar, Union

from ._generated.catalog import Capability
from ._generated.wire import MessageEvent
from ._version import SDK_VERSION
from .context import ChatEventContext, LifecycleContext, MessageContext
from .errors import PluginSdkError
from .validation import validate_manifest

#: A message or command handler: ``def handler(ctx)`` or ``async def handler(ctx)``.
Handler = Callable[[MessageContext], Union[None, Awaitable[None]]]
#: A handler of another event type (a button click, the bot added or removed, a conversation opened).
ChatEventHandler = Callable[[ChatEventContext], Union[None, Awaitable[None]]]
LifecycleHook = Callable[[LifecycleContext], Union[None, Awaitable[None]]]
SettingsHook = Callable[[LifecycleContext, Mapping[str, Any]], Union[None, Awaitable[None]]]
F = TypeVar("F", bound=Callable[..., Any])


def _describe_issues(issues: Sequence[Mapping[str, str]]) -> str:
    return "\n".join(f"  - {i['code']}{' at ' + i['path'] if i['path'] else ''}: {i['message']}" for i in issues)


class Plugin:
    """A protocol v2 plugin. Create it from its manifest, register handlers with decorators, and run it::

        plugin = Plugin.from_manifest("manifest.json")

        @plugin.command("echo")
        def echo(ctx):
            ctx.reply_markdown(at.user(ctx.sender), " said: ", literal(ctx.args))

        if __name__ == "__main__":
            plugin.run()          # stdio; or plugin.serve_http(...) / plugin.wsgi_app(...)
    """

    def __init__(self, manifest: Mapping[str, Any], intercepts: bool = False) -> None:
        if not isinstance(manifest, Mapping):
            raise PluginSdkError("SDK_DEFINITION_INVALID", "Plugin() takes the manifest as a dict (or use Plugin.from_manifest(path)).")
        kind = "stdio" if "transport" in manifest else "http"
        source = dict(manifest)
        if kind == "http" and "capabilities" not in source:
            sends = "messages.send" in (source.get("permissions") or [])
            source["capabilities"] = int(Capability.ReceiveMessages | Capability.HttpTransport | (Capability.SendMessages if sends else 0))
        checked, issues = validate_manifest(source, kind)
        if checked is None:
            raise PluginSdkError(
                "SDK_MANIFEST_INVALID",
                f"The {kind} manifest of \"{manifest.get('pluginId', '?')}\" is invalid:\n{_describe_issues(issues)}\n",
                issues,
            )
        if intercepts and kind == "stdio" and "messages.intercept" not in checked["permissions"]:
            raise PluginSdkError(
                "SDK_INTERCEPT_PERMISSION_MISSING",
                f'intercepts=True but manifest.json of "{checked["pluginId"]}" does not declare "messages.intercept"; add it to "permissions" (or drop intercepts).',
            )
        self.manifest: Dict[str, Any] = checked
        self.plugin_id: str = checked["pluginId"]
        self.intercepts = intercepts
        self._commands: Dict[str, Handler] = {}
        self._on_message: Optional[Handler] = None
        self._on_start: Optional[LifecycleHook] = None
        self._on_stop: Optional[LifecycleHook] = None
        self._on_settings_changed: Optional[SettingsHook] = None
        #: Handlers of the event types other than message.created, by eventType.
        self._event_handlers: Dict[str, ChatEventHandler] = {}

    @classmethod
    def from_manifest(cls, path: str = "manifest.json", intercepts: bool = False) -> "Plugin":
        """Reads and validates ``manifest.json``. A relative path is tried in the current folder (the host
        starts the plugin in its package folder), then beside the program being run."""
        candidates = [path]
        if not os.path.isabs(path) and sys.argv and sys.argv[0]:
            candidates.append(os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), path))
        for candidate in candidates:
            if os.path.isfile(candidate):
                try:
                    with open(candidate, "r", encoding="utf-8-sig") as handle:
                        data = json.load(handle)
                except ValueError as error:
                    raise PluginSdkError("SDK_MANIFEST_INVALID", f"{candidate} is not valid JSON: {error}") from error
                return cls(data, intercepts=intercepts)
        raise PluginSdkError("SDK_MANIFEST_INVALID", f"{path} was not found (looked in {', '.join(os.path.abspath(c) for c in candidates)}).")

    # Registration -----------------------------------------------------------------------------------

    def command(self, name: str) -> Callable[[F], F]:
        """Registers the handler of a manifest command (by its ``name``; aliases and prefixes are matched
        by the host)."""
        declared = self.manifest.get("commands", [])
        if not any(c["name"] == name for c in declared):
            near = next((c for c in declared if c["name"].lower() == name.lower() or name.lower() in (a.lower() for a in c["aliases"])), None)
            raise PluginSdkError(
                "SDK_DEFINITION_INVALID",
                f'@plugin.command("{name}") matches no manifest command name; use @plugin.command("{near["name"]}").'
                if near
                else f'@plugin.command("{name}") has no command in the manifest; add {{"name": "{name}", "prefixes": ["/"]}} to "commands" in manifest.json.',
            )
        if name in self._commands:
            raise PluginSdkError("SDK_DEFINITION_INVALID", f'command "{name}" already has a handler ({self._commands[name].__name__}).')

        def register(handler: F) -> F:
            if not callable(handler):
                raise PluginSdkError("SDK_DEFINITION_INVALID", f'the handler of command "{name}" must be a function (ctx) -> None.')
            self._commands[name] = handler
            return handler

        return register

    def on_message(self, handler: F) -> F:
        """Registers the handler of every message no command handler takes."""
        self._on_message = self._callable(handler, "on_message")
        return handler

    def on_interaction(self, handler: F) -> F:
        """Registers the handler of ``interaction.created``: a user clicked a callback button of a keyboard
        the plugin sent (``ctx.data`` is the button's data, ``ctx.sender`` who clicked). The manifest must
        subscribe to ``interaction.created`` in ``eventSubscriptions``."""
        return self._on_event("interaction.created", handler, "on_interaction")

    def on_bot_added(self, handler: F) -> F:
        """Registers the handler of ``bot.added``: the bot was added to a group, or a user added it as a
        friend. The manifest must subscribe to ``bot.added``."""
        return self._on_event("bot.added", handler, "on_bot_added")

    def on_bot_removed(self, handler: F) -> F:
        """Registers the handler of ``bot.removed``: the bot was removed from a group, or a user removed
        it. The event takes no reply. The manifest must subscribe to ``bot.removed``."""
        return self._on_event("bot.removed", handler, "on_bot_removed")

    def on_conversation_opened(self, handler: F) -> F:
        """Registers the handler of ``conversation.opened``: a conversation accepts the bot's messages
        again. The manifest must subscribe to ``conversation.opened``."""
        return self._on_event("conversation.opened", handler, "on_conversation_opened")

    def _on_event(self, event_type: str, handler: F, what: str) -> F:
        self._callable(handler, what)
        subscribed = [s["eventType"] for s in self.manifest.get("eventSubscriptions", [])]
        if event_type not in subscribed:
            raise PluginSdkError(
                "SDK_DEFINITION_INVALID",
                f'@plugin.{what} handles "{event_type}", which the manifest of "{self.plugin_id}" does not subscribe to, so the host would never '
                f'send it; add {{"eventType": "{event_type}"}} to "eventSubscriptions".',
            )
        if event_type in self._event_handlers:
            raise PluginSdkError("SDK_DEFINITION_INVALID", f"{what} already has a handler ({self._event_handlers[event_type].__name__}).")
        self._event_handlers[event_type] = handler
        return handler

    def on_start(self, hook: F) -> F:
        """Runs once after the host initialized the plugin (stdio) or before the first request (HTTP)."""
        self._on_start = self._callable(hook, "on_start")
        return hook

    def on_stop(self, hook: F) -> F:
        """Runs when the plugin stops, after in-flight events finished."""
        self._on_stop = self._callable(hook, "on_stop")
        return hook

    def on_settings_changed(self, hook: F) -> F:
        """Runs with ``(ctx, previous)`` when an operator changed the settings of the running plugin;
        ``ctx.settings`` holds the new values. Raising keeps the old values."""
        self._on_settings_changed = self._callable(hook, "on_settings_changed")
        return hook

    @staticmethod
    def _callable(fn: Any, what: str) -> Any:
        if not callable(fn):
            raise PluginSdkError("SDK_DEFINITION_INVALID", f"{what} takes a function.")
        return fn

    def check(self) -> None:
        """Every manifest command has a handler, or there is an on_message handler (raises SDK_DEFINITION_INVALID)."""
        if self._on_message is None:
            unhandled = [c["name"] for c in self.manifest.get("commands", []) if c["name"] not in self._commands]
            if unhandled:
                raise PluginSdkError(
                    "SDK_DEFINITION_INVALID",
                    f"manifest command(s) {', '.join(repr(n) for n in unhandled)} have no handler; add @plugin.command(\"{unhandled[0]}\") or @plugin.on_message.",
                )

    def handler_for(self, event: Mapping[str, Any]) -> Optional[Callable[[Any], Any]]:
        """The handler of an event: for a message the command's handler, else on_message; for another
        event type the handler registered for it. None when nothing takes it (the SDK declines it)."""
        event_type = event.get("eventType")
        if event_type != "message.created":
            return self._event_handlers.get(event_type)  # type: ignore[arg-type]
        command = event.get("command")
        if command and command["name"] in self._commands:
            return self._commands[command["name"]]
        return self._on_message

    # Running ----------------------------------------------------------------------------------------

    def main(self, argv: Optional[List[str]] = None) -> int:
        """Runs over stdio; returns the exit code (2 and help on stderr without ``--host-stdio``)."""
        from .stdio import run_stdio

        return run_stdio(self, argv)

    def run(self, argv: Optional[List[str]] = None) -> None:
        """Runs over stdio and exits the process with the runtime's exit code."""
        from .stdio import exit_process

        exit_process(self.main(argv))

    def http_manifest(self) -> Dict[str, Any]:
        """The manifest served at ``GET /host/plugin/manifest``: ReceiveMessages and HttpTransport always,
        InterceptMessages with intercepts, SendMessages when ``messages.send`` is permitted."""
        m = self.manifest
        flags = Capability.ReceiveMessages | Capability.HttpTransport
        if self.intercepts:
            flags |= Capability.InterceptMessages
        if "messages.send" in m.get("permissions", []):
            flags |= Capability.SendMessages
        if "capabilities" in m:
            flags |= m["capabilities"]
        served: Dict[str, Any] = {"pluginId": m["pluginId"], "name": m["name"], "version": m["version"], "author": m["author"]}
        if "description" in m:
            served["description"] = m["description"]
        served.update(
            {
                "protocolVersion": m["protocolVersion"],
                "sdkVersion": SDK_VERSION,
                "capabilities": int(flags),
                "eventSubscriptions": m["eventSubscriptions"],
                "permissions": m.get("permissions", []),
                "commands": m.get("commands", []),
            }
        )
        if "settings" in m:
            served["settings"] = m["settings"]
        checked, issues = validate_manifest(served, "http")
        if checked is None:
            raise PluginSdkError("SDK_MANIFEST_INVALID", f"The HTTP manifest built from the plugin is invalid:\n{_describe_issues(issues)}\n", issues)
        return served

    def wsgi_app(self, secret: Any, **options: Any) -> Any:
        """The plugin as a WSGI application (gunicorn, waitress, wsgiref); see :class:`host_sdk_v2.http.HttpApp`."""
        from .http import HttpApp

        return HttpApp(self, secret, **options)

    def serve_http(self, secret: Any, host: str = "127.0.0.1", port: int = 8787, **options: Any) -> None:
        """Serves the plugin over HTTP with the standard library's server until interrupted (development)."""
        from .http import serve

        serve(self, secret, host=host, port=port, **options)

    def default_settings(self) -> Dict[str, Any]:
        """Settings defaults declared in the manifest."""
        fields = self.manifest.get("settings", {}).get("configSchema", {})
        return {key: f["defaultValue"] for key, f in fields.items() if "defaultValue" in f}
