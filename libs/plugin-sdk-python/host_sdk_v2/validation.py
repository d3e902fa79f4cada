"""Validation of protocol documents against the generated JSON Schema (``_generated/schemas.py``).

The subset of JSON Schema the protocol's schemas use (the generator refuses any other keyword), plus the
rules JSON Schema cannot express that the host also applies: names are not blank and have no control
characters, command words are unique ignoring case, settings fields fit their type. Whether a value is
valid for a schema is decided by its compiled check (``_compiled``) alone; this module turns a refusal
into issues, ``{"code", "path", "message"}`` with the host's codes and paths (``commands[0].aliases[1]``).
"""

import copy
import re
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ._compiled import CONTROL, JS_WHITESPACE, NAME_KEYS, CompiledChecks, Filler, Predicate, is_type, pattern, subschemas, type_name, utf16_length
from ._generated.schemas import DOCUMENTS, METHODS

Issue = Dict[str, str]
#: A path while validating: ``()`` or a linked pair ``(parent path, key)``.
_Path = Any
#: A fault found while validating: (kind, path, keyword, message).
_Fault = Tuple[str, _Path, str, str]
_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_CONTROL = CONTROL
_JS_WHITESPACE = JS_WHITESPACE
_PATTERNS: Dict[str, "re.Pattern[str]"] = {}


def _materialize(path: Any) -> List[Any]:
    """Paths are built as linked pairs ``(parent, key)`` while validating (no list per property);
    this turns one into the list of keys."""
    keys: List[Any] = []
    while path:
        path, key = path
        keys.append(key)
    keys.reverse()
    return keys


def format_path(path: Sequence[Any]) -> str:
    """``["commands", 0, "aliases", 1]`` -> ``commands[0].aliases[1]``; odd keys are quoted: ``environment["1PORT"]``."""
    out = ""
    for key in path:
        if isinstance(key, int):
            out += f"[{key}]"
        elif _IDENTIFIER.match(key):
            out += ("." if out else "") + key
        else:
            out += "[" + _json_string(key) + "]"
    return out


def _json_string(value: str) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


_type_name = type_name


def _pattern(source: str) -> "re.Pattern[str]":
    compiled = _PATTERNS.get(source)
    if compiled is None:
        # The schemas' patterns use the common subset of ECMAScript and Python syntax; \d means [0-9] there.
        compiled = _PATTERNS[source] = pattern(source)
    return compiled


#: The fault of a value the compiled check refuses for a reason this module cannot name. None is known:
#: the tests describe every refused vector and thousands of mutations and expect a named reason for each.
_UNNAMED = "does not match its schema"


class _Validator:
    """Validates values against one document's schemas.

    Whether a value is valid is answered by one implementation only: the compiled check of each schema
    (see ``_compiled``). This class describes what is wrong with a value that check refused, in the
    host's words: it walks the schema where the value is refused, asks the compiled check of each part
    (a property, an item, an anyOf branch) whether that part is valid, goes into the refused parts only,
    and names the first rule of a refused part that the value breaks. It runs only for invalid values."""

    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs
        self._defaults_below: Dict[int, bool] = {}
        # Schemas stay referenced so their ids are not reused while compiled checks exist.
        self._schemas: List[Mapping[str, Any]] = []
        self._specialised = CompiledChecks(defs, self._has_defaults, self.defaults)
        self._predicates: Dict[int, Predicate] = {}
        self._fillers: Dict[int, Optional[Filler]] = {}

    def predicate(self, schema: Mapping[str, Any]) -> Predicate:
        """The compiled check of ``schema``: ``ok(value, key)`` (key: the value's key in its parent, None
        at the root and for array items)."""
        predicate = self._predicates.get(id(schema))
        if predicate is None:
            self._schemas.append(schema)
            predicate = self._predicates[id(schema)] = self._specialised.predicate(schema)
        return predicate

    def is_valid(self, schema: Mapping[str, Any], value: Any) -> bool:
        """Whether ``value`` is valid for ``schema`` (the compiled check)."""
        predicate = self._predicates.get(id(schema))
        if predicate is None:
            predicate = self.predicate(schema)
        return predicate(value, None)

    def fill_defaults(self, schema: Mapping[str, Any], value: Any) -> Any:
        """Puts the defaults into a valid value that the caller owns, in place; returns it."""
        key = id(schema)
        if key not in self._fillers:
            self._schemas.append(schema)
            self._fillers[key] = self._specialised.filler(schema)
        fill = self._fillers[key]
        if fill is not None:
            fill(value)
        return value

    def resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        while "$ref" in schema:
            schema = self.defs[schema["$ref"][len("#/$defs/") :]]
        return schema

    def check(self, schema: Mapping[str, Any], value: Any, path: _Path, out: List[_Fault], key: Any = None) -> None:
        """Appends (kind, path, keyword, message) for every fault of ``value`` (kind is required, unknown
        or invalid); appends nothing when the compiled check accepts it."""
        if self.predicate(schema)(value, key):
            return
        before = len(out)
        self._describe(self.resolve(schema), value, path, out, key)
        if len(out) == before:
            out.append(("invalid", path, "schema", _UNNAMED))

    def _describe(self, schema: Mapping[str, Any], value: Any, path: _Path, out: List[_Fault], key: Any) -> None:
        """The faults of a value the compiled check of (resolved) ``schema`` refused."""
        if "anyOf" in schema:
            candidates: List[List[_Fault]] = []
            for branch in schema["anyOf"]:
                found: List[_Fault] = []
                self.check(branch, value, path, found, key)
                if not found:
                    return
                # A branch whose type or discriminating constant does not match is not the one the sender meant.
                if not any((kw == "type" and p is path) or (kw == "const" and p[0] is path) for _, p, kw, _ in found):
                    candidates.append(found)
            if candidates:
                out.extend(candidates[0])
            else:
                out.append(("invalid", path, "anyOf", "matches none of the allowed shapes"))
            return
        kind = schema.get("type")
        if isinstance(kind, list):
            if not any(is_type(value, k) for k in kind):
                out.append(("invalid", path, "type", f"must be {' or '.join(kind)}, not {_type_name(value)}"))
            return  # a list of types is all such a schema checks
        if kind is not None and not is_type(value, kind):
            out.append(("invalid", path, "type", f"must be {'an integer' if kind == 'integer' else kind}, not {_type_name(value)}"))
            return
        if "const" in schema:
            const = schema["const"]
            if not (value == const and _type_name(value) == _type_name(const)):
                out.append(("invalid", path, "const", f"must be {_json_string(const) if isinstance(const, str) else const}"))
                return
        enum = schema.get("enum")
        if enum is not None and not any(value == v and _type_name(value) == _type_name(v) for v in enum):
            options = " or ".join(_json_string(v) if isinstance(v, str) else str(v) for v in enum)
            out.append(("invalid", path, "enum", f"must be {options}"))
            return
        if isinstance(value, str):
            self._describe_string(schema, value, path, out, key)
        elif isinstance(value, bool):
            return
        elif isinstance(value, (int, float)):
            if schema.get("minimum") is not None and value < schema["minimum"]:
                out.append(("invalid", path, "minimum", f"must be at least {schema['minimum']}"))
            elif schema.get("maximum") is not None and value > schema["maximum"]:
                out.append(("invalid", path, "maximum", f"must be at most {schema['maximum']}"))
        elif isinstance(value, list):
            self._describe_array(schema, value, path, out)
        elif isinstance(value, dict):
            self._describe_object(schema, value, path, out)

    @staticmethod
    def _describe_string(schema: Mapping[str, Any], value: str, path: _Path, out: List[_Fault], key: Any) -> None:
        minimum = schema.get("minLength")
        maximum = schema.get("maxLength")
        # JavaScript counts UTF-16 units; only characters beyond U+FFFF count twice.
        length = utf16_length(value)
        if minimum is not None and length < minimum:
            out.append(("invalid", path, "minLength", "must not be empty" if minimum == 1 else f"must be at least {minimum} characters"))
        elif maximum is not None and length > maximum:
            out.append(("invalid", path, "maxLength", f"must be at most {maximum} characters"))
        elif "pattern" in schema and not _pattern(schema["pattern"]).search(value):
            out.append(("invalid", path, "pattern", f"must match {schema['pattern']}"))
        elif minimum == 1 and "pattern" not in schema and (maximum is None or key in NAME_KEYS and maximum == 100):
            # Which non-empty strings must also not be blank nor hold control characters (a rule left out
            # of the JSON Schema because regex dialects differ): those without a pattern or a length limit,
            # and the manifest's name and author (at most 100 characters).
            if value.strip(_JS_WHITESPACE) == "":
                out.append(("invalid", path, "blank", "must not be blank"))
            elif _CONTROL.search(value):
                out.append(("invalid", path, "blank", "must not contain control characters"))

    def _describe_array(self, schema: Mapping[str, Any], value: List[Any], path: _Path, out: List[_Fault]) -> None:
        min_items = schema.get("minItems")
        max_items = schema.get("maxItems")
        if min_items is not None and len(value) < min_items:
            out.append(("invalid", path, "minItems", f"must have at least {min_items} item(s)"))
        elif max_items is not None and len(value) > max_items:
            out.append(("invalid", path, "maxItems", f"must have at most {max_items} items"))
        items = schema.get("items")
        if items is not None:
            for i, item in enumerate(value):
                self.check(items, item, (path, i), out)
        if schema.get("uniqueItems"):
            for i, item in enumerate(value):
                if any(item == earlier for earlier in value[:i]):
                    out.append(("invalid", (path, i), "uniqueItems", f"{_json_string(item) if isinstance(item, str) else item} is listed twice; list each once"))

    def _describe_object(self, schema: Mapping[str, Any], value: Dict[str, Any], path: _Path, out: List[_Fault]) -> None:
        properties: Mapping[str, Any] = schema.get("properties", {})
        names = schema.get("propertyNames")
        extra = schema.get("additionalProperties")
        for key in schema.get("required", ()):
            if key not in value:
                out.append(("required", (path, key), "required", "is required"))
        for key, item in value.items():
            sub = properties.get(key)
            if sub is not None:
                self.check(sub, item, (path, key), out, key)
                continue
            if names is not None:
                found: List[_Fault] = []
                self.check(names, key, (path, key), found, key)
                if found:
                    out.append(("invalid", (path, key), "propertyNames", f"the key {_json_string(key)} {found[0][3]}"))
                    continue
            if extra is False:
                out.append(("unknown", (path, key), "additionalProperties", "is not a known field; remove it or check its spelling"))
            elif isinstance(extra, dict):
                self.check(extra, item, (path, key), out, key)

    def _has_defaults(self, schema: Mapping[str, Any], seen: Optional[set] = None) -> bool:
        """Whether a default applies anywhere under ``schema`` (cached; recursion through $refs ends)."""
        key = id(schema)
        cached = self._defaults_below.get(key)
        if cached is not None:
            return cached
        seen = seen if seen is not None else set()
        if key in seen:
            return False
        seen.add(key)
        resolved = self.resolve(schema)
        result = "default" in resolved or any("default" in self.resolve(sub) or self._has_defaults(sub, seen) for sub in subschemas(resolved))
        self._defaults_below[key] = result
        return result

    def defaults(self, schema: Mapping[str, Any], value: Any) -> Any:
        """A copy of a valid value with the schema's defaults filled in (containers are copied,
        strings and numbers are immutable and shared). Subtrees without defaults are shared too:
        the validated value is never changed afterwards."""
        if not self._has_defaults(schema):
            return value
        schema = self.resolve(schema)
        if "anyOf" in schema:
            for branch in schema["anyOf"]:
                found: List[_Fault] = []
                if self.is_valid(branch, value):
                    return self.defaults(branch, value)
            return value
        if isinstance(value, dict):
            out = dict(value)
            properties: Mapping[str, Any] = schema.get("properties", {})
            extra = schema.get("additionalProperties")
            for key, item in value.items():
                if isinstance(item, (dict, list)):
                    sub = properties.get(key, extra if isinstance(extra, dict) else None)
                    out[key] = self.defaults(sub, item) if sub is not None else copy.deepcopy(item)
            for key, sub in properties.items():
                if key not in out and "default" in sub:
                    default = sub["default"]
                    out[key] = self.defaults(sub, copy.deepcopy(default)) if isinstance(default, (dict, list)) else default
            return out
        if isinstance(value, list):
            items = schema.get("items")
            if isinstance(items, dict):
                return [self.defaults(items, item) if isinstance(item, (dict, list)) else item for item in value]
            return copy.deepcopy(value)
        return value


_VALIDATORS: Dict[int, _Validator] = {}
_NO_DEFS: Mapping[str, Any] = {}


def _validator(defs: Mapping[str, Any]) -> _Validator:
    # One validator per set of $defs (a document, or methods.json), compiled on first use and kept.
    validator = _VALIDATORS.get(id(defs))
    if validator is None:
        validator = _VALIDATORS[id(defs)] = _Validator(defs)
    return validator


def _check_value(schema: Mapping[str, Any], defs: Mapping[str, Any], value: Any) -> Tuple[List[_Fault], _Validator]:
    validator = _validator(defs)
    found: List[_Fault] = []
    if not validator.is_valid(schema, value):
        validator.check(schema, value, (), found)
    return found, validator


def _field_issues(domain: str, found: List[_Fault]) -> List[Issue]:
    return [
        {"code": f"{domain}.field.{kind}", "path": format_path(_materialize(path)), "message": f"{format_path(_materialize(path)) or 'the document'} {message}"}
        for kind, path, _, message in found
    ]


def _validated(schema: Mapping[str, Any], defs: Mapping[str, Any], value: Any, domain: str, owned: bool) -> Tuple[Optional[Any], List[Issue]]:
    found, validator = _check_value(schema, defs, value)
    if found:
        return None, _field_issues(domain, found)
    return (validator.fill_defaults(schema, value) if owned else validator.defaults(schema, value)), []


def validate_document(file: str, value: Any, domain: str, owned: bool = False) -> Tuple[Optional[Any], List[Issue]]:
    """Validates ``value`` against a document schema (``message-event.schema.json``, ...); returns
    ``(value with defaults, [])`` or ``(None, issues)`` with ``<domain>.field.*`` codes. The defaults go
    into a copy, or into ``value`` itself when the caller ``owned`` it (a payload it just decoded)."""
    schema = DOCUMENTS[file]
    return _validated(schema, schema.get("$defs", _NO_DEFS), value, domain, owned)


def owned_document_check(file: str, domain: str) -> Callable[[Any], Tuple[Optional[Any], List[Issue]]]:
    """:func:`validate_document` with ``owned=True`` for one document, its compiled check and default
    filler looked up once: for a runtime that validates every payload of a kind."""
    schema = DOCUMENTS[file]
    defs = schema.get("$defs", _NO_DEFS)
    validator = _validator(defs)
    predicate = validator.predicate(schema)
    if id(schema) not in validator._fillers:
        validator._schemas.append(schema)
        validator._fillers[id(schema)] = validator._specialised.filler(schema)
    fill = validator._fillers[id(schema)]

    def check(value: Any) -> Tuple[Optional[Any], List[Issue]]:
        if predicate(value, None):
            if fill is not None:
                fill(value)
            return value, []
        return _validated(schema, defs, value, domain, True)

    return check



def validate_method(method: str, part: str, value: Any, domain: str = "params", owned: bool = False) -> Tuple[Optional[Any], List[Issue]]:
    """Validates the params or result of a JSON-RPC method (methods.json), as :func:`validate_document`."""
    return _validated(METHODS["methods"][method][part], METHODS["$defs"], value, domain, owned)


def _manifest_code(kind: str, path: List[Any], keyword: str) -> str:
    where = format_path(path)
    if kind == "required":
        return "manifest.field.required"
    if kind == "unknown":
        return "manifest.field.unknown"
    if where == "protocolVersion":
        return "manifest.protocolVersion.unsupported"
    if where == "pluginId" and keyword in ("pattern", "maxLength", "minLength"):
        return "manifest.pluginId.invalid"
    if where == "transport.type":
        return "manifest.transport.unsupported"
    if len(path) == 2 and path[0] == "permissions":
        return "manifest.permissions.duplicate" if keyword == "uniqueItems" else "manifest.permissions.unknown"
    return "manifest.field.invalid"


def _routing_issues(manifest: Mapping[str, Any]) -> List[Issue]:
    issues: List[Issue] = []
    words: Dict[str, str] = {}
    for i, command in enumerate(manifest.get("commands", [])):
        for j, word in enumerate([command["name"]] + list(command.get("aliases", []))):
            owner = words.get(word.lower())
            path = ["commands", i, "name"] if j == 0 else ["commands", i, "aliases", j - 1]
            if owner is not None:
                issues.append({
                    "code": "manifest.commands.duplicate",
                    "path": format_path(path),
                    "message": f'command word "{word}" is already used by command "{owner}"; names and aliases must be unique (case-insensitive)',
                })
            else:
                words[word.lower()] = command["name"]
    for key, field in manifest.get("settings", {}).get("configSchema", {}).items():
        base = ["settings", "configSchema", key]

        def issue(message: str, sub: str) -> None:
            issues.append({"code": "manifest.settings.invalid", "path": format_path(base + [sub]), "message": message})

        kind = field["type"]
        if kind == "select" and not field.get("options"):
            issue('a "select" field needs at least one entry in "options"', "options")
        if kind != "select" and "options" in field:
            issue('"options" is only for "select" fields', "options")
        if kind == "secret" and "defaultValue" in field:
            issue('a "secret" field cannot have a defaultValue; the operator enters it', "defaultValue")
        if "defaultValue" in field:
            d = field["defaultValue"]
            want = "number" if kind == "number" else "boolean" if kind == "boolean" else "string"
            if _type_name(d) != want:
                issue(f'defaultValue of a "{kind}" field must be a {want}', "defaultValue")
            if kind == "select" and field.get("options") and not any(o["value"] == d for o in field["options"]):
                issue("defaultValue must be the value of one of the options", "defaultValue")
        if ("min" in field or "max" in field) and kind not in ("number", "string"):
            issue('"min" and "max" apply to "number" (value) and "string" (length) fields only', "min")
    return issues


def _capability_issues(flags: int) -> List[Issue]:
    issues: List[Issue] = []
    if flags & 9 != 9:
        issues.append({"code": "manifest.capabilities.missing", "path": "capabilities", "message": "capabilities must include ReceiveMessages (1) and HttpTransport (8)"})
    if flags & ~15:
        issues.append({"code": "manifest.capabilities.unknown", "path": "capabilities", "message": f"capabilities has unknown bits {flags & ~15}"})
    return issues


def validate_manifest(value: Any, kind: str = "stdio") -> Tuple[Optional[Dict[str, Any]], List[Issue]]:
    """Validates a stdio ``manifest.json`` (``kind="stdio"``) or an HTTP manifest (``kind="http"``) as
    the host does; returns ``(manifest with defaults, [])`` or ``(None, issues)`` with ``manifest.*`` codes."""
    file = "manifest.schema.json" if kind == "stdio" else "http-manifest.schema.json"
    schema = DOCUMENTS[file]
    found, validator = _check_value(schema, schema.get("$defs", _NO_DEFS), value)
    issues: List[Issue] = []
    for k, linked, kw, m in found:
        p = _materialize(linked)
        where = format_path(p)
        if where == "transport.stdio" and any(format_path(_materialize(q)) == "transport.type" for _, q, _, _ in found):
            continue  # a wrong transport type is the one fault; its stdio block is moot
        if where == "capabilities" and kw == "enum":
            issues.extend(_capability_issues(value["capabilities"]))
            continue
        issues.append({"code": _manifest_code(k, p, kw), "path": where, "message": f"{where or 'the manifest'} {m}"})
    if issues:
        return None, issues
    manifest = validator.defaults(schema, value)
    issues = _routing_issues(manifest)
    if kind == "http":
        perms = manifest.get("permissions", [])
        if "messages.send" in perms and not manifest["capabilities"] & 2:
            issues.append({"code": "manifest.capabilities.missing", "path": "capabilities", "message": "messages.send needs the SendMessages capability (2)"})
    return (None, issues) if issues else (manifest, [])


DocumentCheck = Callable[[Any], Tuple[Optional[Any], List[Issue]]]
