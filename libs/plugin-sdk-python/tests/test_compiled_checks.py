"""The compiled checks (``host_sdk_v2._compiled``) are the one answer to "is this valid?", and the
validator of ``host_sdk_v2.validation`` names a reason for every value they refuse.

Every vector input and thousands of mutations of them (a field removed, replaced by a value of another
type, a blank or control-character string, an unknown key, a duplicated item) go through both: a refused
value must get at least one issue, each naming the rule it breaks (never the fallback for a refusal
without a known reason), an accepted one none; filling defaults in place must give what the copying
path gives.
"""

import copy
import json
import os
import random
import unittest
from typing import Any, Dict, Iterator, List, Mapping, Tuple

from host_sdk_v2._generated.schemas import DOCUMENTS, METHODS
from host_sdk_v2.validation import _UNNAMED, _validator

VECTORS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "protocol", "vectors")

DOCUMENT_OF_KIND = {
    "stdio-manifest": "manifest.schema.json",
    "http-manifest": "http-manifest.schema.json",
    "message-event": "message-event.schema.json",
    "event-ack": "event-ack.schema.json",
    "message-response": "message-response.schema.json",
}

#: Values put in place of a field: each JSON type, empty and blank strings, control characters,
#: integral and fractional numbers, numbers past the limits, long text, text beyond U+FFFF.
REPLACEMENTS: List[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1.5,
    2.0,
    9007199254740992,
    "",
    " ",
    "\u3000",
    "a\u0001b",
    "x",
    "message.created",
    "group",
    "2026-02-29T00:00:00Z",
    "2024-02-29T10:00:00.5+01:00",
    "a" * 101,
    "\U0001f600" * 51,
    [],
    ["x", "x"],
    {},
    {"type": "text", "text": "hi"},
]


def samples() -> Iterator[Tuple[str, Mapping[str, Any], Mapping[str, Any], Any]]:
    """(label, schema, $defs, input) of every vector that is a schema check."""
    for folder, _, files in sorted(os.walk(VECTORS)):
        for name in sorted(files):
            if not name.endswith(".json"):
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                data = json.load(handle)
            for case in data["cases"]:
                if data["kind"] in DOCUMENT_OF_KIND:
                    schema = DOCUMENTS[DOCUMENT_OF_KIND[data["kind"]]]
                    yield f"{data['kind']}: {case['name']}", schema, schema.get("$defs", {}), case["input"]
                elif data["kind"] == "rpc-method":
                    yield f"rpc-method: {case['name']}", METHODS["methods"][case["method"]][case["part"]], METHODS["$defs"], case["input"]


def paths(value: Any, prefix: Tuple[Any, ...] = ()) -> Iterator[Tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, prefix + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from paths(item, prefix + (i,))


def at(value: Any, path: Tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def mutations(value: Any, rng: random.Random) -> Iterator[Any]:
    for path in list(paths(value)):
        target = at(value, path)
        for replacement in rng.sample(REPLACEMENTS, 6):
            if path:
                out = copy.deepcopy(value)
                at(out, path[:-1])[path[-1]] = copy.deepcopy(replacement)
                yield out
        if isinstance(target, dict):
            for key in list(target):
                out = copy.deepcopy(value)
                del at(out, path)[key]
                yield out
            out = copy.deepcopy(value)
            at(out, path)["unknownField"] = 1
            yield out
        if isinstance(target, list) and target:
            out = copy.deepcopy(value)
            at(out, path).append(copy.deepcopy(target[0]))
            yield out
            out = copy.deepcopy(value)
            at(out, path).clear()
            yield out


class CompiledChecksTest(unittest.TestCase):
    def test_every_refused_value_gets_a_named_reason_on_vectors_and_mutations(self) -> None:
        rng = random.Random(14)
        outcomes: Dict[bool, int] = {True: 0, False: 0}
        seen = 0
        for label, schema, defs, value in samples():
            validator = _validator(defs)
            for candidate in [value, *mutations(value, rng)]:
                found: List[Any] = []
                validator.check(schema, candidate, (), found)
                valid = validator.is_valid(schema, candidate)
                seen += 1
                outcomes[valid] += 1
                if valid == bool(found):
                    self.fail(f"{label}: the compiled check says {valid}, the description has {found[:1]} for {json.dumps(candidate)[:600]}")
                unnamed = [fault for fault in found if fault[3] == _UNNAMED]
                if unnamed:
                    self.fail(f"{label}: refused without a named reason at {unnamed[0][1]} for {json.dumps(candidate)[:600]}")
                if valid:
                    owned = copy.deepcopy(candidate)
                    self.assertEqual(validator.fill_defaults(schema, owned), validator.defaults(schema, candidate), label)
        self.assertGreater(seen, 5000)
        self.assertGreater(outcomes[True], 500)
        self.assertGreater(outcomes[False], 2000)

    def test_owned_values_get_their_defaults_in_place(self) -> None:
        from host_sdk_v2.validation import validate_document

        event = {
            "eventId": "e1",
            "eventType": "message.created",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "source": "console",
            "bot": {"botAccountId": "b", "platform": "console"},
            "conversation": {"type": "group", "conversationId": "g1"},
            "sender": {"provider": "console", "mentionId": "u1"},
            "message": {"id": "m1", "content": "hi"},
            "messageReference": {"messageId": "m1", "targetType": "group", "targetId": "g1"},
        }
        copied, _ = validate_document("message-event.schema.json", event, "event")
        self.assertNotIn("attachments", event["message"])
        owned, _ = validate_document("message-event.schema.json", event, "event", owned=True)
        self.assertIs(owned, event)
        self.assertEqual(owned, copied)
        self.assertEqual(event["message"]["attachments"], [])
        self.assertEqual(event["messageReference"]["restrictions"], [])


if __name__ == "__main__":
    unittest.main()
