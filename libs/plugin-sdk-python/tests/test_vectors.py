"""The shared protocol vectors (libs/protocol/vectors, format in its README), run through the SDK's own
code: the same files the host and every other SDK run."""

import json
import os
import re
import unittest
from typing import Any, Dict, List, Tuple

from host_sdk_v2.errors import PluginMessageError
from host_sdk_v2.framing import FrameDecoder
from host_sdk_v2.messages import normalize_message, parse_target, render_qqbot
from host_sdk_v2.signing import compute_signature
from host_sdk_v2.testing import match_command
from host_sdk_v2.validation import validate_document, validate_manifest, validate_method

from .support import SDK_ROOT, VECTORS

# Every kind and how it runs here; a kind not listed fails the suite, so a new kind is run on purpose.
RUN = {
    "stdio-manifest": "validate_manifest, the check behind Plugin.from_manifest and the packer",
    "http-manifest": "validate_manifest(kind='http'), the check of Plugin.http_manifest",
    "framing": "FrameDecoder, the stdio reader",
    "message-event": "validate_document, the check of stdio and HTTP events",
    "event-ack": "validate_document (the SDK writes ACKs; checked against the bundled schema)",
    "message-response": "validate_document (the SDK writes HTTP responses)",
    "rpc-method": "validate_method, the check of every JSON-RPC params and result",
    "command-match": "match_command of the test host, which must route exactly like the host",
    "normalization": "normalize_message, the send path",
    "rendering": "parse_target, normalize_message and render_qqbot, the send path",
    "event-routing": "skipped on purpose: the host routes events to plugins, an SDK does not",
    "rich-normalization": "normalize_message with image, file and keyboard, the send path",
    "rich-rendering": "parse_target, normalize_message and render_qqbot with image, file and keyboard, the send path",
}


def load() -> List[Tuple[str, Dict[str, Any]]]:
    out = []
    for folder, _, files in sorted(os.walk(VECTORS)):
        for name in sorted(files):
            if name.endswith(".json"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as handle:
                    out.append((os.path.relpath(path, VECTORS), json.load(handle)))
    return out


FILES = load()


def cases(kind: str) -> List[Dict[str, Any]]:
    return [case for _, data in FILES if data["kind"] == kind for case in data["cases"]]


def contains(actual: Any, expected: Any) -> bool:
    """The README's rule for ``output``: expected objects are contained, arrays match element-wise."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return False
        if not expected:
            return actual == {}
        return all(k in actual and contains(actual[k], v) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(actual) == len(expected) and all(contains(a, e) for a, e in zip(actual, expected))
    if isinstance(expected, bool) or isinstance(actual, bool):
        return actual is expected
    return actual == expected


class VectorFilesTest(unittest.TestCase):
    def test_every_kind_is_known_and_there_are_enough_cases(self) -> None:
        kinds = {data["kind"] for _, data in FILES}
        self.assertEqual(kinds - set(RUN), set(), "a new vector kind must be run (or skipped on purpose) here")
        self.assertGreaterEqual(sum(len(d["cases"]) for _, d in FILES), 80)


class ManifestVectorsTest(unittest.TestCase):
    def run_kind(self, kind: str, manifest_kind: str) -> None:
        for case in cases(kind):
            with self.subTest(case["name"]):
                value, issues = validate_manifest(case["input"], manifest_kind)
                expect = case["expect"]
                if "errors" in expect:
                    self.assertEqual(sorted((i["code"], i["path"]) for i in issues), sorted((e["code"], e["path"]) for e in expect["errors"]))
                    for issue in issues:
                        self.assertTrue(issue["message"])
                else:
                    self.assertEqual(issues, [])
                    if "output" in expect:
                        self.assertTrue(contains(value, expect["output"]), json.dumps(value))

    def test_stdio_manifest(self) -> None:
        self.run_kind("stdio-manifest", "stdio")

    def test_http_manifest(self) -> None:
        self.run_kind("http-manifest", "http")


class EnvelopeVectorsTest(unittest.TestCase):
    def check(self, case: Dict[str, Any], value: Any, issues: List[Dict[str, str]]) -> None:
        expect = case["expect"]
        if expect["valid"]:
            self.assertEqual(issues, [])
            if "output" in expect:
                self.assertTrue(contains(value, expect["output"]), json.dumps(value))
        else:
            self.assertTrue(issues)
            if "paths" in expect:
                self.assertEqual({i["path"] for i in issues}, set(expect["paths"]))

    def test_envelopes(self) -> None:
        files = {"message-event": "message-event.schema.json", "event-ack": "event-ack.schema.json", "message-response": "message-response.schema.json"}
        for kind, file in files.items():
            for case in cases(kind):
                with self.subTest(f"{kind}: {case['name']}"):
                    value, issues = validate_document(file, case["input"], "event")
                    self.check(case, value, issues)

    def test_rpc_methods(self) -> None:
        for case in cases("rpc-method"):
            with self.subTest(case["name"]):
                value, issues = validate_method(case["method"], case["part"], case["input"])
                self.check(case, value, issues)


class FramingVectorsTest(unittest.TestCase):
    def test_framing(self) -> None:
        for case in cases("framing"):
            with self.subTest(case["name"]):
                decoder = FrameDecoder()
                out = []
                for chunk in case["chunks"]:
                    if isinstance(chunk, str):
                        data = chunk.encode("utf-8")
                    elif "hex" in chunk:
                        data = bytes.fromhex(chunk["hex"])
                    else:
                        data = (chunk["repeat"] * chunk["times"]).encode("utf-8")
                    out += decoder.push(data)
                out += decoder.end()
                got = [{"message": e[1]} if e[0] == "message" else {"error": e[1]} for e in out]
                self.assertEqual(got, case["expect"])


class MessageVectorsTest(unittest.TestCase):
    def test_normalization(self) -> None:
        for case in cases("normalization") + cases("rich-normalization"):
            with self.subTest(case["name"]):
                try:
                    got: Dict[str, Any] = {"normalized": normalize_message(case["message"])}
                except PluginMessageError as error:
                    got = {"error": error.code}
                self.assertEqual(got, case["expect"])

    def test_rendering(self) -> None:
        for case in cases("rendering") + cases("rich-rendering"):
            with self.subTest(case["name"]):
                self.assertEqual(case["provider"], "qqbot")
                try:
                    target = parse_target(case["target"])
                    got: Dict[str, Any] = {"body": render_qqbot(normalize_message(case["message"]), target)}
                except PluginMessageError as error:
                    got = {"error": error.code}
                self.assertEqual(got, case["expect"])


class CommandMatchVectorsTest(unittest.TestCase):
    def test_command_match(self) -> None:
        for case in cases("command-match"):
            with self.subTest(case["name"]):
                self.assertEqual(match_command(case["text"], case["commands"], case["conversation"]), case["expect"])


class SigningExampleTest(unittest.TestCase):
    def test_the_worked_example_of_the_signing_page(self) -> None:
        with open(os.path.join(SDK_ROOT, "..", "..", "docs", "protocol", "http-signing.md"), encoding="utf-8") as handle:
            page = handle.read()
        secret = re.search(r"Secret \(as shown at registration\): `([^`]+)`", page).group(1)  # type: ignore[union-attr]
        body = re.search(r"\| raw body \| `([^`]+)` \|", page).group(1)  # type: ignore[union-attr]
        signature = re.search(r"\| `x-host-signature` \| `(v1=[0-9a-f]{64})` \|", page).group(1)  # type: ignore[union-attr]
        empty = re.search(r"empty body \(a manifest GET\) give\s+`(v1=[0-9a-f]{64})`", page).group(1)  # type: ignore[union-attr]
        delivery = "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b"
        self.assertEqual(compute_signature(secret, "1767225600", delivery, body.encode("utf-8")), signature)
        self.assertEqual(compute_signature(secret, "1767225600", delivery, b""), empty)


if __name__ == "__main__":
    unittest.main()
