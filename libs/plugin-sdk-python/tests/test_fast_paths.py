"""The stdio runtime's short paths give what the general code they skip gives, and its memory stays
clean: no reference cycles per event, the collector tuned once the plugin started.

Frames read by offset and the general header parser, JSON read with the scanner alone and with
``json.loads``, JSON written by the encoder made once and by ``json.dumps``, the usual JSON-RPC shapes
accepted early and by the full check, messages of plain strings normalised directly and through
``normalize_message``.
"""

import asyncio
import gc
import io
import itertools
import json
import os
import random
import threading
import unittest
from typing import Any, Callable, Dict, List

from host_sdk_v2.errors import PluginMessageError
from host_sdk_v2.framing import FrameDecoder, check_jsonrpc_shape, decode_json, encode_frame, encode_json
from host_sdk_v2.messages import escape_text, normalize_message, normalize_strings
from host_sdk_v2 import Plugin, at, literal
from host_sdk_v2.stdio import GC_YOUNG_THRESHOLD, StdioRuntime, _tune_gc

from .support import FIXTURES, cmd, init_params, message_event, wait_until


def _frame(body: bytes, header: bytes = b"") -> bytes:
    return header + b"Content-Length: %d\r\n\r\n" % len(body) + body


class FrameDecoderTest(unittest.TestCase):
    def _stream(self) -> bytes:
        frames = [
            encode_frame({"jsonrpc": "2.0", "id": 1, "method": "plugin.ping", "params": {"nonce": "é\u2028"}}),
            encode_frame({"jsonrpc": "2.0", "id": 2, "result": {"accepted": True}}),
            _frame(b'{"jsonrpc":"2.0","id":3.0,"result":null}'),
            _frame(b' {"jsonrpc":"2.0","id":"x","method":"a"} '),
            _frame(b'{"jsonrpc":"2.0","id":4,"method":"b"}', b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"),
            encode_frame({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "m"}}),
        ]
        return b"".join(frames)

    def test_any_split_of_a_stream_gives_the_same_messages(self) -> None:
        stream = self._stream()
        whole = FrameDecoder().push(stream)
        self.assertEqual(len(whole), 6)
        self.assertTrue(all(event[0] == "message" for event in whole))
        self.assertEqual(whole[2][1]["id"], 3)
        rng = random.Random(7)
        for _ in range(200):
            decoder = FrameDecoder()
            cuts = sorted(rng.sample(range(1, len(stream)), rng.randint(1, 12)))
            events: List[Any] = []
            for start, stop in zip([0] + cuts, cuts + [len(stream)]):
                events += decoder.push(stream[start:stop])
            self.assertEqual(events, whole)
        byte_at_a_time = FrameDecoder()
        events = []
        for i in range(len(stream)):
            events += byte_at_a_time.push(stream[i : i + 1])
        self.assertEqual(events, whole)

    def test_errors_after_good_frames_in_one_chunk_end_the_stream(self) -> None:
        good = encode_frame({"jsonrpc": "2.0", "id": 1, "method": "plugin.ping"})
        cases = {
            b"\xff\xfe": "framing.utf8.invalid",
            b"{nope}": "framing.json.invalid",
            b'{"jsonrpc":"2.0","id":true,"method":"a"}': "framing.message.invalid",
            b'{"jsonrpc":"1.0","id":1,"method":"a"}': "framing.message.invalid",
            b'{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}': "framing.message.invalid",
        }
        for body, code in cases.items():
            decoder = FrameDecoder()
            events = decoder.push(good + _frame(body) + good)
            self.assertEqual([e[0] for e in events], ["message", "error"], body)
            self.assertEqual(events[1][1], code)
            self.assertEqual(decoder.push(good), [])
        too_large = FrameDecoder(max_payload_bytes=10).push(good + _frame(b'{"jsonrpc":"2.0","id":1,"method":"abc"}'))
        self.assertEqual(too_large[0][0], "error")
        self.assertEqual(too_large[0][1], "framing.payload.too_large")


class JsonTest(unittest.TestCase):
    def test_decode_json_reads_what_json_loads_reads_and_refuses_what_it_refuses(self) -> None:
        for text in ['{"a":[1,2.5,null,true,"\\u00e9"]}', " {} ", "{}", '{"a":1}\n', "[1]", "1", '{"a":NaN}', '{"a":"\\ud800"}']:
            self.assertEqual(repr(decode_json(text)), repr(json.loads(text)), text)
        for text in ['{"a":1} x', "{", '{"a":1}}', '{"a":"\x01"}', "", "{]"]:
            with self.assertRaises(ValueError, msg=text):
                decode_json(text)

    def test_encode_json_writes_what_json_dumps_writes(self) -> None:
        values: List[Any] = [{"a": [1, 2.5, None, True, "é\u2028\n\"\\"], "b": {}}, "x", 1, [], {"n": float("inf")}]
        for value in values:
            self.assertEqual(encode_json(value), json.dumps(value, ensure_ascii=False, separators=(",", ":")))
        cycle: List[Any] = []
        cycle.append(cycle)
        with self.assertRaises(ValueError):
            encode_json({"a": cycle})
        self.assertEqual(encode_json({"after": "a cycle"}), '{"after":"a cycle"}')
        with self.assertRaises(TypeError):
            encode_json({"a": object()})

    def test_the_early_shape_check_agrees_with_the_full_one(self) -> None:
        parts = {
            "jsonrpc": ["2.0", "1.0", None],
            "id": [1, "1", None, 1.5, True],
            "method": ["a", "", 1, None],
            "result": [None, {}],
            "error": [{"code": 1, "message": "m"}, {"code": "1"}],
        }
        keys = list(parts)
        checked = 0
        for present in itertools.product([False, True], repeat=len(keys)):
            names = [k for k, p in zip(keys, present) if p]
            for values in itertools.product(*(parts[k] for k in names)):
                message = dict(zip(names, values))
                # The full check alone: a dict subclass skips the early answers.
                full = check_jsonrpc_shape(_Plain(message))
                self.assertEqual(check_jsonrpc_shape(message), full, message)
                checked += 1
        self.assertGreater(checked, 1000)


class _Plain(dict):  # type: ignore[type-arg]
    pass


class NormalizeStringsTest(unittest.TestCase):
    def test_plain_strings_normalise_as_text_parts_do(self) -> None:
        alphabet = ["", "a", " ", "\u200b", "\u202a", "\u00a0", "<", "&", "\ufeff", "x y", "\n", "\u2066"]
        for count in range(4):
            for combo in itertools.product(alphabet, repeat=count):
                for fmt in ("text", "markdown"):
                    self.assertEqual(
                        _outcome(lambda: normalize_strings(fmt, list(combo))),
                        _outcome(lambda: normalize_message({"format": fmt, "parts": [{"type": "text", "text": t} for t in combo]})),
                        (fmt, combo),
                    )

    def test_escape_text(self) -> None:
        self.assertEqual(escape_text("a<b>&c&amp;"), "a&lt;b&gt;&amp;c&amp;amp;")
        self.assertEqual(escape_text("plain"), "plain")


def _outcome(fn: Any) -> Any:
    try:
        return ("ok", fn())
    except PluginMessageError as error:
        return ("error", error.code, str(error))


class RuntimeMemoryTest(unittest.TestCase):
    """The runtime in this process, on real pipes, with this test playing the host."""

    def setUp(self) -> None:
        self.threshold = gc.get_threshold()

    def tearDown(self) -> None:
        gc.unfreeze()
        gc.set_threshold(*self.threshold)
        gc.enable()

    def test_the_young_generation_threshold_is_raised_unless_the_plugin_set_its_own(self) -> None:
        gc.set_threshold(700, 10, 10)
        _tune_gc()
        self.assertEqual(gc.get_threshold(), (GC_YOUNG_THRESHOLD, 10, 10))
        self.assertGreater(gc.get_freeze_count(), 0)
        gc.set_threshold(1234, 10, 10)
        _tune_gc()
        self.assertEqual(gc.get_threshold(), (1234, 10, 10))

    def test_handled_events_leave_no_reference_cycles_to_collect(self) -> None:
        plugin = Plugin.from_manifest(os.path.join(FIXTURES, "echo", "manifest.json"))

        @plugin.command("echo")
        def echo(ctx: Any) -> None:
            ctx.reply_markdown(at.user(ctx.sender), " said: ", literal(ctx.args))

        @plugin.command("aecho")
        async def aecho(ctx: Any) -> None:
            await ctx.reply("a ", ctx.args)

        @plugin.on_message
        def other(ctx: Any) -> None:
            pass

        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        runtime = StdioRuntime(plugin, os.fdopen(in_r, "rb", buffering=0), os.fdopen(out_w, "wb", buffering=0), io.StringIO())
        loop = asyncio.new_event_loop()
        codes: List[int] = []
        thread = threading.Thread(target=lambda: codes.append(loop.run_until_complete(runtime.run())), daemon=True)
        thread.start()
        decoder = FrameDecoder()
        inbox: List[Dict[str, Any]] = []

        def read_until(done: Callable[[Dict[str, Any]], bool]) -> Dict[str, Any]:
            while True:
                while inbox:
                    message = inbox.pop(0)
                    method = message.get("method")
                    if method is not None:
                        result = {"recorded": True} if method == "events.completed" else {"accepted": True, "messageId": "m", "target": {"type": "group", "id": "g1"}}
                        os.write(in_w, encode_frame({"jsonrpc": "2.0", "id": message["id"], "result": result}))
                    if done(message):
                        return message
                chunk = os.read(out_r, 65536)
                self.assertTrue(chunk, "the runtime closed its output")
                inbox.extend(event[1] for event in decoder.push(chunk))

        gc.disable()
        os.write(in_w, encode_frame({"jsonrpc": "2.0", "id": 0, "method": "host.initialize", "params": init_params(maxConcurrentEvents=4)}))
        read_until(lambda m: m.get("id") == 0 and "method" not in m)
        try:
            for round in range(2):  # the first round warms up (imports, caches); the second is checked
                gc.collect()
                gc.set_debug(gc.DEBUG_SAVEALL)
                for i in range(20):
                    for name in ("echo", "aecho"):
                        event_id = f"{name}-{round}-{i}"
                        os.write(in_w, encode_frame({"jsonrpc": "2.0", "id": f"r-{event_id}", "method": "events.message", "params": message_event(event_id, f"/{name} x", cmd(name, "x"))}))
                        completed = read_until(lambda m: m.get("method") == "events.completed")
                        self.assertEqual(completed["params"]["eventId"], event_id)
                        self.assertIsNone(completed["params"]["error"])
                wait_until(lambda: not runtime._pending)  # the last completion's answer reached the runtime
                gc.collect()
                garbage = [type(o).__name__ for o in gc.garbage]
                gc.set_debug(0)
                gc.garbage.clear()
            sdk = {"MessageContext", "EventRun", "Cancellation", "Answer", "Sent", "_LiveEvent", "_Call", "PluginLogger", "MessageSender"}
            self.assertEqual([name for name in garbage if name in sdk], [])
        finally:
            gc.set_debug(0)
            os.close(in_w)
            thread.join(10)
            os.close(out_r)
            loop.close()
        self.assertEqual(codes, [0])


if __name__ == "__main__":
    unittest.main()
