"""Plugin definition, the test host, messages and errors as a plugin author meets them."""

import ast
import copy
import json
import os
import subprocess
import sys
import unittest
from typing import Any, Dict

from host_sdk_v2 import HandlerError, Plugin, PluginMessageError, PluginSdkError, at, composite, literal
from host_sdk_v2.testing import TestHost

from .support import FIXTURES, SDK_ROOT

with open(os.path.join(FIXTURES, "echo", "manifest.json"), encoding="utf-8") as _handle:
    MANIFEST: Dict[str, Any] = json.load(_handle)


def manifest(**changes: Any) -> Dict[str, Any]:
    value = copy.deepcopy(MANIFEST)
    value.update(changes)
    return value


class DefinitionTest(unittest.TestCase):
    def test_an_invalid_manifest_names_every_problem(self) -> None:
        with self.assertRaises(PluginSdkError) as raised:
            Plugin(manifest(pluginId="Not Valid", permission=["x"]))
        self.assertEqual(raised.exception.code, "SDK_MANIFEST_INVALID")
        self.assertEqual({i["code"] for i in raised.exception.issues}, {"manifest.pluginId.invalid", "manifest.field.unknown"})

    def test_from_manifest_reports_a_missing_or_broken_file(self) -> None:
        with self.assertRaises(PluginSdkError) as raised:
            Plugin.from_manifest("/nonexistent/manifest.json")
        self.assertEqual(raised.exception.code, "SDK_MANIFEST_INVALID")
        plugin = Plugin.from_manifest(os.path.join(FIXTURES, "echo", "manifest.json"))
        self.assertEqual(plugin.plugin_id, "com.example.pyecho")
        self.assertEqual(plugin.manifest["commands"][1]["prefixes"], ["/"])  # defaults applied

    def test_a_command_handler_must_name_a_manifest_command(self) -> None:
        plugin = Plugin(manifest())
        with self.assertRaises(PluginSdkError) as raised:
            plugin.command("e")
        self.assertEqual(raised.exception.code, "SDK_DEFINITION_INVALID")
        self.assertIn('@plugin.command("echo")', str(raised.exception))

    def test_commands_without_handlers_are_found_before_running(self) -> None:
        plugin = Plugin(manifest())
        plugin.command("echo")(lambda ctx: None)
        with self.assertRaises(PluginSdkError) as raised:
            TestHost(plugin)
        self.assertIn("slow", str(raised.exception))

    def test_intercepting_over_stdio_needs_the_permission(self) -> None:
        with self.assertRaises(PluginSdkError) as raised:
            Plugin(manifest(), intercepts=True)
        self.assertEqual(raised.exception.code, "SDK_INTERCEPT_PERMISSION_MISSING")


def plugin_with(handler: Any, **changes: Any) -> Plugin:
    plugin = Plugin(manifest(**changes), intercepts="messages.intercept" in changes.get("permissions", []))
    plugin.on_message(handler)
    return plugin


class TestHostTest(unittest.TestCase):
    def test_markdown_reply_with_a_real_mention_and_escaped_user_text(self) -> None:
        host = TestHost(plugin_with(lambda ctx: ctx.reply_markdown(at.user(ctx.sender), " said: ", literal(ctx.args))))
        delivery = host.send("/echo [click](http://x.example) <b>")
        self.assertEqual(delivery.ack["accepted"], True)
        self.assertEqual(
            delivery.replies[0].body["markdown"]["content"],
            '<qqbot-at-user id="user-1" /> said: \\[click\\]\\(http\\:\\/\\/x\\.example\\) \\<b\\>',
        )

    def test_text_replies_mention_with_the_at_user_tag(self) -> None:
        host = TestHost(plugin_with(lambda ctx: ctx.reply(at.user(ctx.sender), " hi")))
        self.assertEqual(host.send("x").replies[0].body, {"msg_type": 0, "content": '<qqbot-at-user id="user-1" /> hi'})

    def test_sends_need_the_permission(self) -> None:
        host = TestHost(plugin_with(lambda ctx: ctx.messages.group("g2").send("x"), permissions=["messages.reply"]))
        completion = host.send("x").completion
        self.assertEqual(completion["error"]["code"], "message.permission.denied")  # type: ignore[index]

    def test_sends_in_a_handler_speak_as_the_events_bot_unless_the_target_names_one(self) -> None:
        def handler(ctx: Any) -> None:
            ctx.messages.group("g2").send("x")
            ctx.messages.to({"type": "group", "id": "g3", "botAccountId": "other-bot"}).send("y")

        host = TestHost(plugin_with(handler, permissions=["messages.reply", "messages.send"]))
        delivery = host.send("x")
        bot = delivery.event["bot"]["botAccountId"]
        self.assertEqual(
            [m.target for m in delivery.messages],
            [{"type": "group", "id": "g2", "botAccountId": bot}, {"type": "group", "id": "g3", "botAccountId": "other-bot"}],
        )
        bad = TestHost(plugin_with(lambda ctx: ctx.messages.to({"type": "group", "id": "g", "botAccountId": ""}).send("x"), permissions=["messages.send"]))
        self.assertEqual(bad.send("x").completion["error"]["code"], "message.target.invalid")  # type: ignore[index]

    def test_mention_everyone_needs_its_permission_and_mentions_are_limited(self) -> None:
        host = TestHost(plugin_with(lambda ctx: ctx.reply(at.everyone())))
        self.assertEqual(host.send("x").completion["error"]["code"], "message.permission.denied")  # type: ignore[index]
        with self.assertRaises(PluginMessageError) as raised:
            at.users(*[f"u{i}" for i in range(21)])
        self.assertEqual(raised.exception.code, "message.mention.too_many")
        self.assertEqual(len(at.users("a", "b")["parts"]), 3)

    def test_markdown_to_a_one_to_one_chat_is_refused_before_sending(self) -> None:
        host = TestHost(plugin_with(lambda ctx: ctx.reply_markdown("**hi**")))
        delivery = host.send("x", conversation="c2c")
        self.assertEqual(delivery.completion["error"]["code"], "message.format.unsupported_target")  # type: ignore[index]
        self.assertEqual(delivery.messages, [])

    def test_an_expired_reply_window_is_refused(self) -> None:
        host = TestHost(plugin_with(lambda ctx: ctx.reply("late")))
        delivery = host.send("x", reply_window_seconds=-1)
        self.assertEqual(delivery.completion["error"]["code"], "message.reference.expired")  # type: ignore[index]

    def test_handler_errors_keep_their_code_and_details(self) -> None:
        def fail(ctx: Any) -> None:
            raise HandlerError("weather.city_missing", "Usage: /weather <city>", {"hint": "city"})

        completion = TestHost(plugin_with(fail)).send("x").completion
        self.assertEqual(completion["error"], {"code": "weather.city_missing", "message": "Usage: /weather <city>", "details": {"hint": "city"}})  # type: ignore[index]

    def test_an_intercepting_plugin_acks_with_its_decision(self) -> None:
        host = TestHost(plugin_with(lambda ctx: ctx.intercept(), permissions=["messages.reply", "messages.intercept"]))
        self.assertEqual(host.send("x").ack["intercepted"], True)

    def test_a_plugin_that_did_not_declare_intercepts_cannot_intercept(self) -> None:
        completion = TestHost(plugin_with(lambda ctx: ctx.intercept())).send("x").completion
        self.assertEqual(completion["error"]["code"], "SDK_INTERCEPT_UNDECLARED")  # type: ignore[index]

    def test_deciding_twice_differently_is_a_conflict(self) -> None:
        def both(ctx: Any) -> None:
            ctx.intercept()
            ctx.pass_on()

        host = TestHost(plugin_with(both, permissions=["messages.reply", "messages.intercept"]))
        delivery = host.send("x")
        self.assertEqual(delivery.ack["intercepted"], True)
        self.assertEqual(delivery.completion["error"]["code"], "SDK_DECISION_CONFLICT")  # type: ignore[index]

    def test_async_handlers_and_composites(self) -> None:
        async def handler(ctx: Any) -> None:
            sent = await ctx.reply(composite("a", composite("b", at.user("u2", "Bob"))))
            ctx.log.info("sent", target=sent["target"]["id"])

        host = TestHost(plugin_with(handler))
        delivery = host.send("x")
        self.assertEqual(delivery.replies[0].body, {"msg_type": 0, "content": 'ab<qqbot-at-user id="u2" />'})
        self.assertEqual(host.logs[-1], {"level": "info", "message": "sent", "fields": {"target": "group-1"}, "eventId": delivery.ack["eventId"]})

    def test_a_handlers_logger_names_its_event_and_the_plugins_own_logger_none(self) -> None:
        plugin = plugin_with(lambda ctx: ctx.log.info("answered", sender=ctx.sender["mentionId"]))

        @plugin.on_start
        def started(ctx: Any) -> None:
            ctx.log.info("ready")

        host = TestHost(plugin)
        first = host.send("a")
        second = host.send("b")
        self.assertEqual([line.get("eventId") for line in host.logs], [None, first.ack["eventId"], second.ack["eventId"]])
        self.assertNotEqual(first.ack["eventId"], second.ack["eventId"])
        self.assertEqual(host.logs[0], {"level": "info", "message": "ready", "fields": {}})

    def test_log_warning_writes_the_hosts_warn_level_and_warn_stays_its_alias(self) -> None:
        def handler(ctx: Any) -> None:
            ctx.log.warning("slow answer", ms=900)
            ctx.log.warn("old word")

        host = TestHost(plugin_with(handler))
        delivery = host.send("x")
        event_id = delivery.ack["eventId"]
        self.assertEqual(
            host.logs,
            [
                {"level": "warn", "message": "slow answer", "fields": {"ms": 900}, "eventId": event_id},
                {"level": "warn", "message": "old word", "fields": {}, "eventId": event_id},
            ],
        )

    def test_settings_defaults_changes_and_lifecycle_hooks(self) -> None:
        plugin = plugin_with(lambda ctx: ctx.reply(ctx.settings["greeting"]))
        seen = []
        plugin.on_start(lambda ctx: seen.append(("start", dict(ctx.settings))))
        plugin.on_settings_changed(lambda ctx, previous: seen.append(("changed", previous["greeting"], ctx.settings["greeting"])))
        plugin.on_stop(lambda ctx: seen.append(("stop",)))
        host = TestHost(plugin)
        self.assertEqual(host.send("x").replies[0].body["content"], "hi")
        host.change_settings({"greeting": "hey"})
        self.assertEqual(host.send("x").replies[0].body["content"], "hey")
        host.stop()
        self.assertEqual(seen, [("start", {"greeting": "hi"}), ("changed", "hi", "hey"), ("stop",)])

    def test_a_message_the_handler_left_unobserved_still_completes_first(self) -> None:
        host = TestHost(plugin_with(lambda ctx: [ctx.reply("one"), ctx.reply("two")] and None))
        self.assertEqual([m.body["content"] for m in host.send("x").replies], ["one", "two"])


class MemoryTest(unittest.TestCase):
    def test_handled_events_leave_nothing_behind_on_the_session(self) -> None:
        host = TestHost(plugin_with(lambda ctx: None))
        for _ in range(50):
            host.send("x")
        self.assertEqual(host.session.cancellation._callbacks, [])


class SourceTest(unittest.TestCase):
    def test_the_package_parses_as_python_3_9(self) -> None:
        """The SDK claims CPython 3.9+: no syntax newer than 3.9 anywhere in it."""
        package = os.path.join(SDK_ROOT, "host_sdk_v2")
        count = 0
        for folder, _, files in os.walk(package):
            for name in files:
                if name.endswith(".py"):
                    with open(os.path.join(folder, name), encoding="utf-8") as handle:
                        ast.parse(handle.read(), filename=name, feature_version=(3, 9))
                    count += 1
        self.assertGreater(count, 10)

    def test_mypy_accepts_the_package_for_python_3_9(self) -> None:
        """The SDK's type hints check with mypy (Debian's python3-mypy, which .ci/run installs)."""
        for python in (sys.executable, "/usr/bin/python3"):
            probe = subprocess.run([python, "-m", "mypy", "--version"], capture_output=True, text=True)
            if probe.returncode == 0:
                break
        else:
            self.skipTest("mypy is not installed (apt-get install python3-mypy)")
        run = subprocess.run(
            [python, "-m", "mypy", "--python-version", "3.9", "--no-incremental", "--cache-dir", os.devnull, "host_sdk_v2"],
            cwd=SDK_ROOT,
            capture_output=True,
            text=True,
        )
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)

    def test_the_package_ships_py_typed(self) -> None:
        self.assertTrue(os.path.isfile(os.path.join(SDK_ROOT, "host_sdk_v2", "py.typed")))

    def test_it_imports_only_the_standard_library(self) -> None:
        stdlib = getattr(sys, "stdlib_module_names", None)
        if stdlib is None:
            self.skipTest("sys.stdlib_module_names needs Python 3.10")
        package = os.path.join(SDK_ROOT, "host_sdk_v2")
        for folder, _, files in os.walk(package):
            for name in files:
                if not name.endswith(".py"):
                    continue
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    tree = ast.parse(handle.read())
                for node in ast.walk(tree):
                    if isinstance(node, ast.Import):
                        roots = [a.name.split(".")[0] for a in node.names]
                    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                        roots = [node.module.split(".")[0]]
                    else:
                        continue
                    for root in roots:
                        self.assertIn(root, stdlib, f"{name} imports {root}")


if __name__ == "__main__":
    unittest.main()
