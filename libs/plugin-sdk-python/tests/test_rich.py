"""Image and file parts, keyboards and the event types other than messages (docs/protocol/v2.md 5.4,
5.5, 7.1): the builders and their refusals, the handlers through the test host, the stdio runtime
(``events.deliver``) and the HTTP transport (``/host/plugin/events/deliver``)."""

import json
import os
import threading
import unittest
import urllib.error
import urllib.request
from typing import Any, Dict, List, Optional, Tuple

from host_sdk_v2 import (
    LIMITS,
    Plugin,
    PluginMessageError,
    PluginSdkError,
    RpcErrorCode,
    callback_button,
    command_button,
    file_from_url,
    image_from_url,
    keyboard,
    link_button,
)
from host_sdk_v2.http import make_http_server
from host_sdk_v2.signing import sign_request
from host_sdk_v2.testing import TestHost

from .support import FIXTURES, StdioHost

ECHO = os.path.join(FIXTURES, "echo")
SECRET = "kR3d9Zq0bV7xN2mW5tY8uA1sD4fG6hJ9kL0pO3iU7yE"


def manifest(*event_types: str) -> Dict[str, Any]:
    return {
        "pluginId": "com.example.rich",
        "name": "Rich",
        "version": "1.0.0",
        "author": "Example",
        "protocolVersion": 2,
        "sdkVersion": "2.0.0",
        "transport": {"type": "stdio-jsonrpc", "stdio": {"command": "python3", "args": ["plugin.py", "--host-stdio"]}},
        "eventSubscriptions": [{"eventType": "message.created"}] + [{"eventType": t} for t in event_types],
        "permissions": ["messages.reply"],
        "commands": [{"name": "vote"}, {"name": "cat"}, {"name": "dm"}],
    }


def buttons(count: int, prefix: str = "b") -> List[Any]:
    return [callback_button(f"{prefix}{i}", f"{prefix}:{i}") for i in range(count)]


class BuilderTest(unittest.TestCase):
    def test_image_and_file_parts_from_http_and_https_urls(self) -> None:
        self.assertEqual(image_from_url("https://cdn.example.com/cat.png", alt="a cat"), {"type": "image", "url": "https://cdn.example.com/cat.png", "alt": "a cat"})
        self.assertEqual(file_from_url("http://files.example.com/r.pdf", file_name="report.pdf"), {"type": "file", "url": "http://files.example.com/r.pdf", "fileName": "report.pdf"})
        self.assertEqual(image_from_url("https://cdn.example.com/cat.png"), {"type": "image", "url": "https://cdn.example.com/cat.png"})

    def test_an_image_or_file_url_that_is_not_http_or_https_is_refused_at_once(self) -> None:
        for url in ("cat.png", "ftp://example.com/cat.png", "file:///etc/passwd", "javascript:alert(1)", "https://", "https://cdn.example.com/a cat.png"):
            with self.subTest(url):
                with self.assertRaises(PluginMessageError) as raised:
                    image_from_url(url)
                self.assertEqual(raised.exception.code, "message.part.unsupported")
                with self.assertRaises(PluginMessageError):
                    file_from_url(url)

    def test_a_url_longer_than_the_limit_is_refused(self) -> None:
        long_url = "https://cdn.example.com/" + "a" * LIMITS["maxMediaUrlChars"]
        with self.assertRaises(PluginMessageError) as raised:
            image_from_url(long_url)
        self.assertIn(str(LIMITS["maxMediaUrlChars"]), str(raised.exception))

    def test_buttons_of_each_action(self) -> None:
        self.assertEqual(callback_button("Yes", "vote:yes", id="yes", primary=True), {"id": "yes", "label": "Yes", "style": "primary", "action": "callback", "data": "vote:yes"})
        self.assertEqual(link_button("Docs", "https://example.com/docs"), {"label": "Docs", "style": "secondary", "action": "link", "data": "https://example.com/docs"})
        self.assertEqual(command_button("Help", "/help", send=True), {"label": "Help", "style": "secondary", "action": "command", "data": "/help", "send": True})

    def test_buttons_beyond_the_protocol_rules_are_refused(self) -> None:
        refusals = {
            "label too long": lambda: callback_button("x" * (LIMITS["maxButtonLabelChars"] + 1), "d"),
            "blank label": lambda: callback_button("  ", "d"),
            "empty data": lambda: callback_button("Yes", ""),
            "data too long": lambda: callback_button("Yes", "d" * (LIMITS["maxButtonDataChars"] + 1)),
            "bad id": lambda: callback_button("Yes", "d", id="has space"),
            "link to a relative url": lambda: link_button("Docs", "/docs"),
            "link to another scheme": lambda: link_button("Docs", "mailto:a@example.com"),
        }
        for name, build in refusals.items():
            with self.subTest(name):
                with self.assertRaises(PluginMessageError) as raised:
                    build()
                self.assertEqual(raised.exception.code, "message.keyboard.invalid")

    def test_a_keyboard_of_the_largest_size_fits(self) -> None:
        rows = [buttons(LIMITS["maxKeyboardButtonsPerRow"], f"r{r}") for r in range(LIMITS["maxKeyboardRows"])]
        built = keyboard(*rows)
        self.assertEqual(len(built["rows"]), LIMITS["maxKeyboardRows"])

    def test_a_keyboard_beyond_the_limits_is_refused(self) -> None:
        refusals = {
            "too many rows": lambda: keyboard(*[buttons(1, f"r{r}") for r in range(LIMITS["maxKeyboardRows"] + 1)]),
            "too many buttons in a row": lambda: keyboard(buttons(LIMITS["maxKeyboardButtonsPerRow"] + 1)),
            "no rows": lambda: keyboard(),
            "an empty row": lambda: keyboard([]),
        }
        for name, build in refusals.items():
            with self.subTest(name):
                with self.assertRaises(PluginMessageError) as raised:
                    build()
                self.assertEqual(raised.exception.code, "message.keyboard.too_large")

    def test_duplicate_ids_and_a_button_passed_as_a_row_are_invalid(self) -> None:
        with self.assertRaises(PluginMessageError) as raised:
            keyboard([callback_button("A", "a", id="same"), callback_button("B", "b", id="same")])
        self.assertEqual(raised.exception.code, "message.keyboard.invalid")
        with self.assertRaises(PluginMessageError) as raised:
            keyboard([callback_button("A", "a"), callback_button("B", "b", id="r0c0")])  # its default id is r0c0 too
        self.assertEqual(raised.exception.code, "message.keyboard.invalid")
        with self.assertRaises(PluginMessageError) as raised:
            keyboard(callback_button("A", "a"))  # type: ignore[arg-type]
        self.assertEqual(raised.exception.code, "message.keyboard.invalid")


def rich_plugin() -> Plugin:
    plugin = Plugin(manifest("interaction.created", "bot.added", "bot.removed", "conversation.opened"))

    @plugin.command("vote")
    def vote(ctx: Any) -> None:
        ctx.reply_markdown("**Vote**", keyboard=keyboard([callback_button("Yes", "vote:yes", id="yes", primary=True), callback_button("No", "vote:no")]))

    @plugin.command("cat")
    def cat(ctx: Any) -> None:
        ctx.reply("a cat: ", image_from_url("https://cdn.example.com/cat.png"))

    @plugin.command("dm")
    def dm(ctx: Any) -> None:
        ctx.reply_markdown("menu", keyboard=keyboard([command_button("Help", "/help")]))

    @plugin.on_interaction
    def clicked(ctx: Any) -> None:
        if ctx.data == "fail":
            raise RuntimeError("cannot count votes")
        ctx.reply(f"{ctx.sender['displayName']} chose {ctx.data} with {ctx.interaction.get('buttonId')}")

    @plugin.on_bot_added
    def added(ctx: Any) -> None:
        if ctx.can_reply:
            ctx.reply("hello")

    @plugin.on_bot_removed
    def removed(ctx: Any) -> None:
        ctx.log.info("removed", by=ctx.sender["mentionId"] if ctx.sender else None)
        ctx.reply("bye")  # refused: the event takes no reply

    @plugin.on_conversation_opened
    def opened(ctx: Any) -> None:
        ctx.reply("welcome back")

    return plugin


class HandlerTest(unittest.TestCase):
    def test_a_markdown_reply_carries_its_keyboard_as_the_host_renders_it(self) -> None:
        delivery = TestHost(rich_plugin()).send("/vote")
        body = delivery.replies[0].body
        self.assertEqual(body["msg_type"], 2)
        first, second = body["keyboard"]["content"]["rows"][0]["buttons"]
        self.assertEqual((first["id"], first["render_data"]["style"], first["action"]["type"], first["action"]["data"]), ("yes", 1, 1, "vote:yes"))
        self.assertEqual((second["id"], second["render_data"]["style"]), ("r0c1", 0))

    def test_an_image_reply_is_a_media_message(self) -> None:
        delivery = TestHost(rich_plugin()).send("/cat")
        self.assertEqual(delivery.replies[0].body, {"msg_type": 7, "content": "a cat: ", "media": {"file_type": 1, "url": "https://cdn.example.com/cat.png"}})

    def test_a_keyboard_where_markdown_cannot_go_fails_the_handler_with_the_hosts_code(self) -> None:
        delivery = TestHost(rich_plugin()).send("/dm", conversation="c2c", conversation_id="u1")
        self.assertEqual(delivery.completion["error"]["code"], "message.format.unsupported_target")  # type: ignore[index]

    def test_a_click_reaches_on_interaction_with_its_data_sender_and_button(self) -> None:
        host = TestHost(rich_plugin())
        delivery = host.click("vote:yes", button_id="yes")
        self.assertEqual(delivery.event["eventType"], "interaction.created")
        self.assertEqual(delivery.ack, {"eventId": delivery.event["eventId"], "accepted": True, "intercepted": False, "error": None})
        self.assertEqual(delivery.completion["error"], None)  # type: ignore[index]
        self.assertEqual(delivery.replies[0].parts, [{"type": "text", "text": "Alice chose vote:yes with yes"}])
        self.assertEqual(delivery.replies[0].target, {"type": "group", "id": "group-1"})
        self.assertTrue(delivery.event["messageReference"]["messageId"].startswith("event:"))

    def test_a_failing_event_handler_reports_its_error_in_the_completion(self) -> None:
        host = TestHost(rich_plugin())
        delivery = host.click("fail")
        self.assertEqual(delivery.ack["accepted"], True)
        self.assertEqual(delivery.completion["error"]["code"], "plugin.handler_failed")  # type: ignore[index]
        self.assertIn("interaction.created event", host.logs[-1]["message"])

    def test_bot_added_and_conversation_opened_reply_when_the_event_allows(self) -> None:
        host = TestHost(rich_plugin())
        self.assertEqual(host.bot_added().replies[0].parts, [{"type": "text", "text": "hello"}])
        self.assertEqual(host.bot_added(can_reply=False, sender_id=None).replies, [])
        opened = host.conversation_opened(conversation="c2c", conversation_id="u9")
        self.assertEqual((opened.replies[0].target, opened.replies[0].body), ({"type": "user", "id": "u9"}, {"msg_type": 0, "content": "welcome back"}))

    def test_bot_removed_takes_no_reply(self) -> None:
        host = TestHost(rich_plugin())
        delivery = host.bot_removed()
        self.assertNotIn("messageReference", delivery.event)
        self.assertEqual(delivery.completion["error"]["code"], "message.reference.unavailable")  # type: ignore[index]
        self.assertEqual(host.logs[0]["fields"], {"by": "user-1"})

    def test_an_event_type_without_a_handler_is_declined(self) -> None:
        plugin = Plugin(manifest("bot.added", "interaction.created"))
        plugin.on_message(lambda ctx: None)
        delivery = TestHost(plugin).click("x")
        self.assertEqual((delivery.ack["accepted"], delivery.completion), (False, None))

    def test_a_handler_needs_the_subscription_in_the_manifest(self) -> None:
        plugin = Plugin(manifest("bot.added"))
        with self.assertRaises(PluginSdkError) as raised:
            plugin.on_interaction(lambda ctx: None)
        self.assertEqual(raised.exception.code, "SDK_DEFINITION_INVALID")
        self.assertIn('{"eventType": "interaction.created"}', str(raised.exception))
        plugin.on_bot_added(lambda ctx: None)
        with self.assertRaises(PluginSdkError):
            plugin.on_bot_added(lambda ctx: None)

    def test_the_test_host_delivers_only_subscribed_and_valid_events(self) -> None:
        plugin = Plugin(manifest("bot.added"))
        plugin.on_message(lambda ctx: None)
        host = TestHost(plugin)
        with self.assertRaises(ValueError):
            host.bot_removed()
        broken = host.chat_event("bot.added")
        broken["timestamp"] = "yesterday"
        with self.assertRaises(ValueError):
            host.deliver(broken)

    def test_an_interceptor_can_intercept_another_event_type(self) -> None:
        source = manifest("interaction.created")
        source["permissions"] = ["messages.reply", "messages.intercept"]
        plugin = Plugin(source, intercepts=True)
        plugin.on_message(lambda ctx: None)
        plugin.on_interaction(lambda ctx: ctx.intercept())
        self.assertEqual(TestHost(plugin).click("x").ack["intercepted"], True)


class StdioDeliverTest(unittest.TestCase):
    def setUp(self) -> None:
        self.host = StdioHost(ECHO)
        self.host.initialize()

    def tearDown(self) -> None:
        self.host.kill()

    def chat_event(self, event_id: str, event_type: str, **extra: Any) -> Dict[str, Any]:
        event: Dict[str, Any] = {
            "eventId": event_id,
            "eventType": event_type,
            "timestamp": "2026-01-01T00:00:00Z",
            "source": "console",
            "bot": {"botAccountId": "bot-1", "platform": "console"},
            "conversation": {"type": "group", "conversationId": "g1"},
        }
        event.update(extra)
        return event

    def test_a_click_is_acked_answered_and_completed(self) -> None:
        event = self.chat_event(
            "i1",
            "interaction.created",
            sender={"provider": "console", "mentionId": "u1", "displayName": "Alice"},
            interaction={"id": "click-1", "data": "vote:[yes]", "buttonId": "yes"},
            messageReference={"messageId": "event:click-1", "targetType": "group", "targetId": "g1"},
        )
        ack = self.host.call("events.deliver", event)["result"]
        self.assertEqual(ack, {"eventId": "i1", "accepted": True, "intercepted": False, "error": None})
        completed = self.host.wait(lambda: self.host.requests_of("events.completed"))
        self.assertEqual((completed[0]["params"]["eventId"], completed[0]["params"]["error"]), ("i1", None))
        reply = self.host.requests_of("messages.reply")[0]["params"]
        self.assertEqual(reply["eventId"], "i1")
        self.assertEqual(reply["message"]["parts"][1:], [{"type": "text", "text": " chose "}, {"type": "text", "text": "vote:[yes]", "literal": True}])

    def test_a_reply_with_a_keyboard_sends_the_normalised_keyboard(self) -> None:
        event = self.chat_event("a1", "bot.added", messageReference={"messageId": "event:GROUP_ADD_ROBOT:1", "targetType": "group", "targetId": "g1"})
        self.assertEqual(self.host.call("events.deliver", event)["result"]["accepted"], True)
        self.host.wait(lambda: self.host.requests_of("events.completed"))
        message = self.host.requests_of("messages.reply")[0]["params"]["message"]
        self.assertEqual(message["keyboard"], {"rows": [{"buttons": [{"id": "yes", "label": "Yes", "style": "secondary", "action": "callback", "data": "vote:yes", "send": False}]}]})

    def test_a_type_without_a_handler_is_declined_and_invalid_params_are_refused(self) -> None:
        declined = self.host.call("events.deliver", self.chat_event("o1", "conversation.opened"))["result"]
        self.assertEqual(declined, {"eventId": "o1", "accepted": False, "intercepted": False, "error": None})
        invalid = self.host.call("events.deliver", self.chat_event("x1", "guild.member_added"))
        self.assertEqual(invalid["error"]["code"], RpcErrorCode.InvalidParams)
        self.assertEqual(invalid["error"]["data"]["issues"][0]["path"], "eventType")
        self.assertEqual(self.host.requests_of("events.completed"), [])

    def test_bot_removed_runs_its_handler_and_completes(self) -> None:
        self.assertEqual(self.host.call("events.deliver", self.chat_event("r1", "bot.removed"))["result"]["accepted"], True)
        completed = self.host.wait(lambda: self.host.requests_of("events.completed"))
        self.assertIsNone(completed[0]["params"]["error"])
        logged = [r["params"] for r in self.host.requests_of("log.write")]
        self.assertIn({"level": "info", "message": "removed", "fields": {"conversation": "g1"}}, [{k: p[k] for k in ("level", "message", "fields")} for p in logged])


class HttpDeliverTest(unittest.TestCase):
    def setUp(self) -> None:
        with open(os.path.join(ECHO, "manifest.json"), encoding="utf-8") as handle:
            plugin = Plugin(json.load(handle))
        plugin.on_message(lambda ctx: None)

        @plugin.on_interaction
        def clicked(ctx: Any) -> None:
            ctx.reply_markdown("you chose ", ctx.data, keyboard=keyboard([callback_button("Again", ctx.data)]))

        self.server, _ = make_http_server(plugin, SECRET, port=0, log=lambda level, message, fields: None)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def tearDown(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def post(self, path: str, event: Dict[str, Any], secret: str = SECRET) -> Tuple[int, Any]:
        body = json.dumps(event).encode()
        headers = sign_request(secret, body, plugin_id="com.example.pyecho")
        headers["content-type"] = "application/json"
        request = urllib.request.Request(self.base + path, data=body, method="POST", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def click(self, event_type: str = "interaction.created") -> Dict[str, Any]:
        return {
            "eventId": "h1",
            "eventType": event_type,
            "timestamp": "2026-01-01T00:00:00Z",
            "source": "console",
            "bot": {"botAccountId": "bot-1", "platform": "console"},
            "conversation": {"type": "group", "conversationId": "g1"},
            "sender": {"provider": "console", "mentionId": "u1"},
            "interaction": {"id": "click-1", "data": "vote:yes"},
            "messageReference": {"messageId": "event:click-1", "targetType": "group", "targetId": "g1"},
        }

    def test_a_signed_click_is_answered_with_its_reply_and_keyboard(self) -> None:
        status, body = self.post("/host/plugin/events/deliver", self.click())
        self.assertEqual(status, 200)
        self.assertEqual((body["accepted"], body["error"]), (True, None))
        (reply,) = body["outboundMessages"]
        self.assertEqual(reply["format"], "markdown")
        self.assertEqual(reply["keyboard"]["rows"][0]["buttons"][0]["data"], "vote:yes")

    def test_a_type_without_a_handler_is_declined_and_a_wrong_body_refused(self) -> None:
        status, body = self.post("/host/plugin/events/deliver", self.click("bot.added"))
        self.assertEqual((status, body["accepted"], body["outboundMessages"]), (200, False, []))
        status, body = self.post("/host/plugin/events/deliver", self.click("message.created"))
        self.assertEqual((status, body["error"]["code"]), (400, "event.invalid"))
        status, body = self.post("/host/plugin/events/message", self.click())
        self.assertEqual((status, body["error"]["code"]), (400, "event.invalid"))
        status, _ = self.post("/host/plugin/events/deliver", self.click(), secret="wrong")
        self.assertEqual(status, 401)


if __name__ == "__main__":
    unittest.main()
