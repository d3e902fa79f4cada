"""Uploading bytes for image and file parts (docs/protocol/v2.md 4.12): ctx.upload_media through the test
host (checked as the host checks it), the stdio runtime in a real process (media.upload, media.chunk in
order, media.finish), and the HTTP transport, which cannot upload."""

import base64
import unittest
from typing import Any, Dict, List, Optional

from host_sdk_v2 import Plugin, PluginMessageError, PluginSdkError, file_from_media, image_from_media
from host_sdk_v2.testing import TestHost

from .support import StdioHost, cmd, message_event
from .test_rich import ECHO, manifest

PNG = b"\x89PNG\r\n\x1a\n" + b"the rest of a png"
JPEG = b"\xff\xd8\xff\xe0\x00\x10"
MEDIA_ID = "media-0123456789abcdef"


def uploader(permissions: List[str]) -> Plugin:
    plugin = Plugin(manifest={**manifest(), "permissions": permissions, "commands": [{"name": "up"}]})

    @plugin.command("up")
    async def up(ctx: Any) -> None:
        what = ctx.args
        try:
            if what == "file":
                notes = await ctx.upload_media(b"a,b\n1,2\n", "text/csv", file_name="notes.csv")
                await ctx.reply(file_from_media(notes))
                return
            data = JPEG if what == "lie" else bytes(10 * 1024 * 1024 + 1) if what == "huge" else PNG
            media = await ctx.upload_media(data, "image/png")
            await ctx.reply("here: ", image_from_media(media, alt="a pixel"))
        except PluginMessageError as error:
            await ctx.reply(f"refused: {error.code}")

    return plugin


class TestHostUploadTest(unittest.TestCase):
    def test_uploads_and_replies_with_the_media_id_rendered_as_the_host_renders_it(self) -> None:
        host = TestHost(uploader(["messages.reply", "media.upload"]))
        delivery = host.send("/up pic")
        (media_id,) = host.uploads
        self.assertEqual(host.uploads[media_id], {"bytes": PNG, "contentType": "image/png"})
        self.assertEqual([m.body for m in delivery.replies], [{"msg_type": 7, "content": "here: ", "media": {"file_type": 1, "media_id": media_id}}])

    def test_takes_a_file_of_a_type_without_a_signature_with_its_name(self) -> None:
        host = TestHost(uploader(["messages.reply", "media.upload"]))
        host.send("/up file")
        self.assertEqual([u["fileName"] for u in host.uploads.values()], ["notes.csv"])

    def test_refuses_a_lying_type_too_much_and_no_permission(self) -> None:
        cases = {
            "lie": (["messages.reply", "media.upload"], "message.media.type_mismatch"),
            "huge": (["messages.reply", "media.upload"], "message.media.too_large"),
            "pic": (["messages.reply"], "message.permission.denied"),
        }
        for what, (permissions, code) in cases.items():
            with self.subTest(what):
                host = TestHost(uploader(permissions))
                delivery = host.send(f"/up {what}")
                self.assertEqual([m.body["content"] for m in delivery.replies], [f"refused: {code}"])
                self.assertEqual(host.uploads, {})

    def test_builders_take_an_upload_or_its_id(self) -> None:
        uploaded = {"mediaId": MEDIA_ID, "contentType": "image/png", "size": 3, "expiresAt": "2026-01-01T00:00:00Z"}
        self.assertEqual(image_from_media(uploaded, alt="x"), {"type": "image", "mediaId": MEDIA_ID, "alt": "x"})
        self.assertEqual(file_from_media(MEDIA_ID, file_name="a.csv"), {"type": "file", "mediaId": MEDIA_ID, "fileName": "a.csv"})
        with self.assertRaises(PluginMessageError) as raised:
            image_from_media("../etc/passwd")
        self.assertEqual(raised.exception.code, "message.part.unsupported")


class StdioUploadTest(unittest.TestCase):
    def setUp(self) -> None:
        self.host = StdioHost(ECHO)
        self.host.initialize()

    def tearDown(self) -> None:
        self.host.kill()

    def test_sends_the_bytes_in_chunks_of_the_size_the_host_names_in_order_then_replies(self) -> None:
        received: List[bytes] = []

        def answer(request: Dict[str, Any]) -> Optional[Dict[str, Any]]:
            params = request["params"]
            if request["method"] == "media.upload":
                return {"uploadId": "upload-0123456789abcdef", "maxChunkBytes": 256 * 1024}
            if request["method"] == "media.chunk":
                received.append(base64.b64decode(params["data"]))
                return {"received": sum(len(b) for b in received)}
            if request["method"] == "media.finish":
                return {"mediaId": MEDIA_ID, "contentType": "image/png", "size": 600_000, "expiresAt": "2026-01-01T01:00:00.000Z"}
            return None

        self.host.answer = answer
        self.host.request("events.message", message_event("e-up", "/upload 600000", cmd("upload", "600000")))
        self.host.wait(lambda: self.host.requests_of("events.completed"))
        calls = [(r["method"], r["params"].get("offset")) for r in self.host.requests if r["method"].startswith("media.")]
        self.assertEqual(calls, [("media.upload", None), ("media.chunk", 0), ("media.chunk", 262_144), ("media.chunk", 524_288), ("media.finish", None)])
        first = self.host.requests_of("media.upload")[0]["params"]
        self.assertEqual({k: first[k] for k in ("contentType", "size", "fileName")}, {"contentType": "image/png", "size": 600_000, "fileName": "big.png"})
        self.assertEqual(len(b"".join(received)), 600_000)
        self.assertTrue(b"".join(received).startswith(b"\x89PNG"))
        reply = self.host.requests_of("messages.reply")[0]["params"]
        self.assertEqual(reply["message"]["parts"], [{"type": "image", "mediaId": MEDIA_ID, "alt": "uploaded"}])

    def test_a_refusal_of_the_host_is_a_plugin_message_error_with_its_code(self) -> None:
        self.host.refuse = lambda request: (
            {"code": -32005, "message": "too many", "data": {"code": "message.media.rate_limited"}} if request["method"] == "media.upload" else None
        )
        self.host.request("events.message", message_event("e-rl", "/upload", cmd("upload")))
        warned = self.host.wait(lambda: [r for r in self.host.requests_of("log.write") if r["params"]["message"] == "upload refused"])
        self.assertEqual(warned[0]["params"]["fields"], {"code": "message.media.rate_limited", "from_host": True})


class HttpUploadTest(unittest.TestCase):
    def test_an_http_plugin_cannot_upload(self) -> None:
        from host_sdk_v2.context import Transport

        with self.assertRaises(PluginSdkError) as raised:
            Transport().upload_media(PNG, "image/png", None)
        self.assertEqual(raised.exception.code, "SDK_UPLOAD_UNAVAILABLE")


if __name__ == "__main__":
    unittest.main()
