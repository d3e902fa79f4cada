"""The HTTP transport: the WSGI app behind the standard library's server, signed like the host signs."""

import http.client
import json
import os
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request
from typing import Any, Dict, List, Optional, Tuple

from host_sdk_v2 import Plugin, at, literal
from host_sdk_v2.http import make_http_server, secret_from_file
from host_sdk_v2.signing import sign_request

from .support import FIXTURES, message_event, cmd

SECRET = "kR3d9Zq0bV7xN2mW5tY8uA1sD4fG6hJ9kL0pO3iU7yE"


def make_plugin() -> Plugin:
    with open(os.path.join(FIXTURES, "echo", "manifest.json"), encoding="utf-8") as handle:
        plugin = Plugin(json.load(handle))

    @plugin.command("echo")
    def echo(ctx: Any) -> None:
        ctx.reply_markdown(at.user(ctx.sender), " said: ", literal(ctx.args))
        ctx.messages.group("other-group").send("copied")

    @plugin.on_message
    def other(ctx: Any) -> None:
        if ctx.args == "fail":
            raise RuntimeError("boom")

    return plugin


class HttpTest(unittest.TestCase):
    secret: Any = SECRET

    def setUp(self) -> None:
        self.logs: List[Tuple[str, str]] = []
        self.server, self.app = make_http_server(make_plugin(), self.secret, port=0, log=lambda level, message, fields: self.logs.append((level, message)))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def tearDown(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def http(self, method: str, path: str, body: Optional[bytes] = None, headers: Optional[Dict[str, str]] = None) -> Tuple[int, Any, Dict[str, str]]:
        request = urllib.request.Request(self.base + path, data=body, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read()), dict(response.headers)
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read()), dict(error.headers)

    def post_event(self, event: Dict[str, Any], secret: str = SECRET, **sign: Any) -> Tuple[int, Any, Dict[str, str]]:
        body = json.dumps(event).encode()
        headers = sign_request(secret, body, plugin_id=sign.pop("plugin_id", "com.example.pyecho"), **sign)
        headers["content-type"] = "application/json"
        return self.http("POST", "/host/plugin/events/message", body, headers)

    def test_the_manifest_is_served_without_a_signature_with_computed_capabilities(self) -> None:
        status, manifest, _ = self.http("GET", "/host/plugin/manifest")
        self.assertEqual(status, 200)
        self.assertEqual(manifest["pluginId"], "com.example.pyecho")
        self.assertEqual(manifest["capabilities"], 11)  # ReceiveMessages | SendMessages | HttpTransport
        self.assertNotIn("transport", manifest)

    def test_a_signed_event_is_answered_with_its_replies_and_sends(self) -> None:
        status, body, _ = self.post_event(message_event("h1", "/echo <b>", cmd("echo", "<b>")))
        self.assertEqual(status, 200)
        self.assertEqual(body["accepted"], True)
        self.assertEqual(body["error"], None)
        reply, send = body["outboundMessages"]
        self.assertEqual(reply["format"], "markdown")
        self.assertNotIn("target", reply)
        self.assertEqual(reply["parts"][2], {"type": "text", "text": "<b>", "literal": True})
        self.assertEqual(send["target"], {"type": "group", "id": "other-group", "botAccountId": "bot-1"})

    def test_a_failing_handler_is_reported_in_error(self) -> None:
        status, body, _ = self.post_event(message_event("h1", "hi", {"name": "x", "word": "x", "prefix": "", "args": "fail"}))
        self.assertEqual(status, 200)
        self.assertEqual((body["accepted"], body["error"]["code"]), (False, "plugin.handler_failed"))
        self.assertIn("boom", self.logs[-1][1])

    def test_signature_failures_are_401_with_their_code(self) -> None:
        event = message_event("h1", "/echo x", cmd("echo", "x"))
        self.assertEqual(self.post_event(event, secret="wrong")[1]["error"]["code"], "signature.invalid")
        self.assertEqual(self.post_event(event, timestamp=int(time.time()) - 1000)[1]["error"]["code"], "signature.expired")
        status, body, _ = self.http("POST", "/host/plugin/events/message", json.dumps(event).encode(), {"content-type": "application/json"})
        self.assertEqual((status, body["error"]["code"]), (401, "signature.missing"))

    def test_a_replayed_delivery_is_refused(self) -> None:
        event = message_event("h1", "/echo x", cmd("echo", "x"))
        self.assertEqual(self.post_event(event, delivery_id="d-1")[0], 200)
        status, body, _ = self.post_event(event, delivery_id="d-1")
        self.assertEqual((status, body["error"]["code"]), (401, "signature.replayed"))

    def test_other_paths_methods_plugins_and_bodies_get_their_errors(self) -> None:
        self.assertEqual(self.http("GET", "/nope")[1]["error"]["code"], "http.not_found")
        status, body, headers = self.http("POST", "/host/plugin/manifest", b"{}")
        self.assertEqual((status, body["error"]["code"]), (405, "http.method_not_allowed"))
        self.assertEqual(self.post_event(message_event("h1", "x"), plugin_id="com.example.other")[1]["error"]["code"], "plugin.id_mismatch")
        signed = sign_request(SECRET, b"not json")
        self.assertEqual(self.http("POST", "/host/plugin/events/message", b"not json", signed)[1]["error"]["code"], "event.invalid")
        invalid = json.dumps({"eventId": "x"}).encode()
        status, body, _ = self.http("POST", "/host/plugin/events/message", invalid, sign_request(SECRET, invalid))
        self.assertEqual((status, body["error"]["code"]), (400, "event.invalid"))
        self.assertTrue(body["error"]["details"]["issues"])

    def test_a_body_larger_than_the_limit_is_413(self) -> None:
        # The answer comes from the Content-Length header, before any of the body is read.
        connection = http.client.HTTPConnection("127.0.0.1", self.server.server_address[1], timeout=10)
        connection.putrequest("POST", "/host/plugin/events/message")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(4 * 1024 * 1024 + 1))
        connection.endheaders()
        response = connection.getresponse()
        body = json.loads(response.read())
        connection.close()
        self.assertEqual((response.status, body["error"]["code"]), (413, "http.body_too_large"))


class SecretFromFileTest(unittest.TestCase):
    def test_events_are_refused_until_the_secret_file_has_a_secret(self) -> None:
        folder = tempfile.mkdtemp()
        path = os.path.join(folder, "secret")
        server, _ = make_http_server(make_plugin(), secret_from_file(path), port=0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            base = f"http://127.0.0.1:{server.server_address[1]}"
            body = json.dumps(message_event("h1", "/echo x", cmd("echo", "x"))).encode()

            def post() -> int:
                request = urllib.request.Request(base + "/host/plugin/events/message", data=body, headers=sign_request(SECRET, body), method="POST")
                try:
                    with urllib.request.urlopen(request, timeout=10) as response:
                        return response.status
                except urllib.error.HTTPError as error:
                    payload = json.loads(error.read())
                    self.assertEqual(payload["error"]["code"], "signature.secret_unset")
                    return error.code

            self.assertEqual(post(), 401)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(SECRET + "\n")
            self.assertEqual(post(), 200)
        finally:
            server.shutdown()
            server.server_close()


if __name__ == "__main__":
    unittest.main()
