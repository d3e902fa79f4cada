"""The stdio runtime's short paths give what the general code they skip gives.

Frames read by offset and the general header parser, JSON read with the scanner alone and with
``json.loads``, JSON written by the encoder made once and by ``json.dumps``, the usual JSON-RPC shapes
accepted early and by the full check, messages of plain strings normalised directly and through
``normalize_message``.
"""

import itertools
import json
import random
import unittest
from typing import Any, List

from host_sdk_v2.errors import PluginMessageError
from host_sdk_v2.framing import FrameDecoder, check_jsonrpc_shape, decode_json, encode_frame, encode_json
from host_sdk_v2.messages import escape_text, normalize_message, normalize_strings


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


if __name__ == "__main__":
    unittest.main()
