"""Validation of protocol documents against the generated JSON Schema (``_generated/schemas.py``).

A small validator for the subset of JSON Schema the protocol's schemas use (the generator refuses any
other keyword), plus the rules JSON Schema cannot express that the host also applies: names are not blank
and have no control characters, command words are unique ignoring case, settings fields fit their type.
Issues are ``{"code", "path", "message"}`` with the host's codes and paths (``commands[0].aliases[1]``).
"""

import copy
import math
import re
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ._generated.schemas import DOCUMENTS, METHODS

Issue = Dict[str, str]
#: A path while validating: ``()`` or a linked pair ``(parent path, key)``.
_Path = Any
#: A fault found while validating: (kind, path, keyword, message).
_Fault = Tuple[str, _Path, str, str]
_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_CONTROL = re.compile("[\u0000-\u001f\u007f]")
_JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
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


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _is_type(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if kind == "number":
        return math.isfinite(value)
    if kind == "integer":
        return math.isfinite(value) and float(value).is_integer()
    return False


def _pattern(source: str) -> "re.Pattern[str]":
    compiled = _PATTERNS.get(source)
    if compiled is None:
        # The schemas' patterns use the common subset of ECMAScript and Python syntax; \d means [0-9] there.
        compiled = re.compile(source.replace(r"\d", "[0-9]"))
        _PATTERNS[source] = compiled
    return compiled


class _Validator:
    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs

    def resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        while "$ref" in schema:
            schema = self.defs[schema["$ref"][len("#/$defs/") :]]
        return schema

    def check(self, schema: Mapping[str, Any], value: Any, path: _Path, out: List[_Fault]) -> None:
        """Appends (kind, path, keyword, message) for every fault; kind is required, unknown or invalid."""
        schema = self.resolve(schema)
        if "anyOf" in schema:
            candidates: List[List[_Fault]] = []
            for branch in schema["anyOf"]:
                found: List[_Fault] = []
                self.check(branch, value, path, found)
                if not found:
                    return
                # A branch whose type or discriminating constant does not match is not the one the sender meant.
                mismatch = any(
                    (kw == "type" and p is path) or (kw == "const" and p[0] is path) for _, p, kw, _ in found
                )
                if not mismatch:
                    candidates.append(found)
            if candidates:
                out.extend(candidates[0])
            else:
                out.append(("invalid", path, "anyOf", "matches none of the allowed shapes"))
            return
        kind = schema.get("type")
        if isinstance(kind, list):
            if not any(_is_type(value, k) for k in kind):
                out.append(("invalid", path, "type", f"must be {' or '.join(kind)}, not {_type_name(value)}"))
            return
        if kind is not None and not _is_type(value, kind):
            out.append(("invalid", path, "type", f"must be {'an integer' if kind == 'integer' else kind}, not {_type_name(value)}"))
            return
        if "const" in schema and not (value == schema["const"] and _type_name(value) == _type_name(schema["const"])):
            out.append(("invalid", path, "const", f"must be {_json_string(schema['const']) if isinstance(schema['const'], str) else schema['const']}"))
            return
        if "enum" in schema and not any(value == v and _type_name(value) == _type_name(v) for v in schema["enum"]):
            options = " or ".join(_json_string(v) if isinstance(v, str) else str(v) for v in schema["enum"])
            out.append(("invalid", path, "enum", f"must be {options}"))
            return
        if isinstance(value, str):
            self.check_string(schema, value, path, out)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if "minimum" in schema and value < schema["minimum"]:
                out.append(("invalid", path, "minimum", f"must be at least {schema['minimum']}"))
            elif "maximum" in schema and value > schema["maximum"]:
                out.append(("invalid", path, "maximum", f"must be at most {schema['maximum']}"))
        elif isinstance(value, list):
            if "minItems" in schema and len(value) < schema["minItems"]:
                out.append(("invalid", path, "minItems", f"must have at least {schema['minItems']} item(s)"))
            elif "maxItems" in schema and len(value) > schema["maxItems"]:
                out.append(("invalid", path, "maxItems", f"must have at most {schema['maxItems']} items"))
            items = schema.get("items")
            if items is not None:
                for i, item in enumerate(value):
                    self.check(items, item, (path, i), out)
            if schema.get("uniqueItems"):
                for i, item in enumerate(value):
                    if any(item == earlier for earlier in value[:i]):
                        out.append(("invalid", (path, i), "uniqueItems", f"{_json_string(item) if isinstance(item, str) else item} is listed twice; list each once"))
        elif isinstance(value, dict):
            self.check_object(schema, value, path, out)

    def check_string(self, schema: Mapping[str, Any], value: str, path: _Path, out: List[_Fault]) -> None:
        # JavaScript counts UTF-16 units; only characters beyond U+FFFF count twice.
        length = len(value) if value.isascii() else len(value.encode("utf-16-le", "surrogatepass")) // 2
        minimum = schema.get("minLength")
        if minimum is not None and length < minimum:
            out.append(("invalid", path, "minLength", "must not be empty" if minimum == 1 else f"must be at least {minimum} characters"))
        elif "maxLength" in schema and length > schema["maxLength"]:
            out.append(("invalid", path, "maxLength", f"must be at most {schema['maxLength']} characters"))
        elif "pattern" in schema and not _pattern(schema["pattern"]).search(value):
            out.append(("invalid", path, "pattern", f"must match {schema['pattern']}"))
        elif minimum == 1 and _non_blank_rule(schema, path):
            if value.strip(_JS_WHITESPACE) == "":
                out.append(("invalid", path, "blank", "must not be blank"))
            elif _CONTROL.search(value):
                out.append(("invalid", path, "blank", "must not contain control characters"))

    def check_object(self, schema: Mapping[str, Any], value: Mapping[str, Any], path: List[Any], out: List[_Fault]) -> None:
        properties: Mapping[str, Any] = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                out.append(("required", (path, key), "required", "is required"))
        names = schema.get("propertyNames")
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if key in properties:
                self.check(properties[key], item, (path, key), out)
                continue
            if names is not None:
                found: List[_Fault] = []
                self.check(names, key, (path, key), found)
                if found:
                    out.append(("invalid", (path, key), "propertyNames", f"the key {_json_string(key)} {found[0][3]}"))
                    continue
            if extra is False:
                out.append(("unknown", (path, key), "additionalProperties", "is not a known field; remove it or check its spelling"))
            elif isinstance(extra, dict):
                self.check(extra, item, (path, key), out)

    def defaults(self, schema: Mapping[str, Any], value: Any) -> Any:
        """A copy of a valid value with the schema's defaults filled in (containers are copied,
        strings and numbers are immutable and shared)."""
        schema = self.resolve(schema)
        if "anyOf" in schema:
            for branch in schema["anyOf"]:
                found: List[_Fault] = []
                self.check(branch, value, (), found)
                if not found:
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


def _non_blank_rule(schema: Mapping[str, Any], path: _Path) -> bool:
    """Which non-empty strings must also not be blank nor hold control characters (a rule left out of
    the JSON Schema because regex dialects differ): those without a pattern or a length limit, and the
    manifest's name and author (at most 100 characters)."""
    if "pattern" in schema:
        return False
    if "maxLength" not in schema:
        return True
    return schema["maxLength"] == 100 and bool(path) and path[1] in ("name", "author")


def _check_value(schema: Mapping[str, Any], defs: Mapping[str, Any], value: Any) -> Tuple[List[_Fault], _Validator]:
    validator = _Validator(defs)
    found: List[_Fault] = []
    validator.check(schema, value, (), found)
    return found, validator


def _field_issues(domain: str, found: List[_Fault]) -> List[Issue]:
    return [
        {"code": f"{domain}.field.{kind}", "path": format_path(_materialize(path)), "message": f"{format_path(_materialize(path)) or 'the document'} {message}"}
        for kind, path, _, message in found
    ]


def validate_document(file: str, value: Any, domain: str) -> Tuple[Optional[Any], List[Issue]]:
    """Validates ``value`` against a document schema (``message-event.schema.json``, ...); returns
    ``(value with defaults, [])`` or ``(None, issues)`` with ``<domain>.field.*`` codes."""
    schema = DOCUMENTS[file]
    found, validator = _check_value(schema, schema.get("$defs", {}), value)
    if found:
        return None, _field_issues(domain, found)
    return validator.defaults(schema, value), []


def validate_method(method: str, part: str, value: Any, domain: str = "params") -> Tuple[Optional[Any], List[Issue]]:
    """Validates the params or result of a JSON-RPC method (methods.json)."""
    schema = METHODS["methods"][method][part]
    found, validator = _check_value(schema, METHODS["$defs"], value)
    if found:
        return None, _field_issues(domain, found)
    return validator.defaults(schema, value), []


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
    found, validator = _check_value(schema, schema.get("$defs", {}), value)
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
