"""The validity checks: each schema becomes the source of one plain Python function, built and compiled
once on first use. They are the one place that decides whether a value is valid.

The function answers one question, "is this value valid?", with straight-line code made for that
schema: ``isinstance`` tests, key look-ups, and loops only where the schema has arrays or open maps. It
builds no paths and no messages, so the common case (a valid event) costs a few microseconds. When it
answers no, :mod:`.validation` describes what is wrong: it goes only into the parts of the value that
these checks refuse and names the rule each breaks, in the host's codes, paths and messages. A test has
it name a reason for every refused value of the shared vectors and of many mutations of them.

A second function per schema fills the schema's defaults into a value the caller owns (a payload just
decoded from the wire), in place, instead of copying the containers around them.
"""

import copy
import math
import re
from typing import Any, Callable, Dict, List, Mapping, Optional

#: JavaScript's String.prototype.trim whitespace, which the host uses for "blank".
JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
CONTROL = re.compile("[\u0000-\u001f\u007f]")

Predicate = Callable[[Any, Any], bool]
Filler = Callable[[Any], None]


def type_name(value: Any) -> str:
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


def is_type(value: Any, kind: str) -> bool:
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


def utf16_length(value: str) -> int:
    """Length as JavaScript counts it: characters beyond U+FFFF count twice."""
    return len(value) if value.isascii() else len(value.encode("utf-16-le", "surrogatepass")) // 2


def pattern(source: str) -> "re.Pattern[str]":
    # The schemas' patterns use the common subset of ECMAScript and Python syntax; \d means [0-9] there.
    return re.compile(source.replace(r"\d", "[0-9]"))


def _in_enum(value: Any, options: List[Any]) -> bool:
    return any(value == v and type_name(value) == type_name(v) for v in options)


def _has_duplicate(items: List[Any]) -> bool:
    return any(any(item == earlier for earlier in items[:i]) for i, item in enumerate(items))


def _blank(value: str) -> bool:
    return value.strip(JS_WHITESPACE) == "" or (not value.isprintable() and CONTROL.search(value) is not None)


def subschemas(schema: Mapping[str, Any]) -> List[Any]:
    """The schemas directly below a resolved ``schema``: its anyOf branches, properties, items and
    additional properties."""
    subs: List[Any] = list(schema.get("anyOf", [])) + list(schema.get("properties", {}).values())
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            subs.append(schema[key])
    return subs


#: The manifest keys whose strings of at most 100 characters must not be blank (see _string_lines).
NAME_KEYS = ("name", "author")
_MISSING = object()


class CompiledChecks:
    """The compiled checks of one set of ``$defs`` (a document, or methods.json)."""

    def __init__(self, defs: Mapping[str, Any], has_defaults: Callable[[Mapping[str, Any]], bool], slow_defaults: Callable[[Mapping[str, Any], Any], Any]) -> None:
        self._defs = defs
        self._has_defaults = has_defaults
        self._env: Dict[str, Any] = {
            "_utf16": utf16_length,
            "_is_type": is_type,
            "_type_name": type_name,
            "_in_enum": _in_enum,
            "_dup": _has_duplicate,
            "_blank": _blank,
            "_WS": JS_WHITESPACE,
            "_control": CONTROL.search,
            "_NAMES": NAME_KEYS,
            "_M": _MISSING,
            "_deepcopy": copy.deepcopy,
            "_slow_defaults": slow_defaults,
        }
        self._names: Dict[int, str] = {}
        self._fill_names: Dict[int, str] = {}
        self._keep: List[Any] = []
        self._counter = 0
        self._pending: List[str] = []

    # Public -------------------------------------------------------------------------------------------

    def predicate(self, schema: Mapping[str, Any]) -> Predicate:
        """``ok(value, key)``: whether ``value`` (under ``key`` in its parent, None at the root) is valid."""
        name = self._function(schema)
        self._flush()
        return self._env[name]  # type: ignore[no-any-return]

    def filler(self, schema: Mapping[str, Any]) -> Optional[Filler]:
        """``fill(value)``: puts the defaults into a valid value in place; None when there are none."""
        if not self._has_defaults(schema):
            return None
        name = self._fill_function(schema)
        self._flush()
        return self._env[name]  # type: ignore[no-any-return]

    # Building -----------------------------------------------------------------------------------------

    def _fresh(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}{self._counter}"

    def _constant(self, value: Any) -> str:
        name = self._fresh("_k")
        self._env[name] = value
        return name

    def _resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        while "$ref" in schema:
            schema = self._defs[schema["$ref"][len("#/$defs/") :]]
        return schema

    def _flush(self) -> None:
        if self._pending:
            source = "\n".join(self._pending)
            self._pending = []
            exec(compile(source, "<host_sdk_v2 compiled schema checks>", "exec"), self._env)

    def _function(self, schema: Mapping[str, Any]) -> str:
        schema = self._resolve(schema)
        known = self._names.get(id(schema))
        if known is not None:
            return known
        name = self._fresh("_ok")
        self._names[id(schema)] = name
        self._keep.append(schema)
        lines = [f"def {name}(v, k):"]
        self._emit(schema, "v", "k", lines, 1)
        lines.append("    return True")
        self._pending.append("\n".join(lines))
        return name

    def _emit(self, schema: Mapping[str, Any], var: str, key: str, out: List[str], depth: int) -> None:
        """Statements that ``return False`` unless ``var`` (held under ``key``) is valid for ``schema``."""
        pad = "    " * depth
        if "$ref" in schema:
            out.append(f"{pad}if not {self._function(schema)}({var}, {key}): return False")
            return
        if "anyOf" in schema:
            calls = " or ".join(f"{self._function(b)}({var}, {key})" for b in schema["anyOf"])
            out.append(f"{pad}if not ({calls}): return False")
            return
        kind = schema.get("type")
        if isinstance(kind, list):
            # A list of types is checked alone, as the full validator does.
            tests = " or ".join(f"_is_type({var}, {kind_name!r})" for kind_name in kind)
            out.append(f"{pad}if not ({tests}): return False")
            return
        if kind is not None:
            test = {
                "string": f"isinstance({var}, str)",
                "object": f"isinstance({var}, dict)",
                "array": f"isinstance({var}, list)",
                "boolean": f"isinstance({var}, bool)",
                "null": f"{var} is None",
            }.get(kind, f"_is_type({var}, {kind!r})")
            out.append(f"{pad}if not ({test}): return False")
        if "const" in schema:
            const = schema["const"]
            if isinstance(const, str):
                out.append(f"{pad}if not (isinstance({var}, str) and {var} == {const!r}): return False")
            else:
                name = self._constant(const)
                out.append(f"{pad}if not ({var} == {name} and _type_name({var}) == {type_name(const)!r}): return False")
        enum = schema.get("enum")
        if enum is not None:
            if all(isinstance(e, str) for e in enum):
                out.append(f"{pad}if not (isinstance({var}, str) and {var} in {self._constant(frozenset(enum))}): return False")
            else:
                out.append(f"{pad}if not _in_enum({var}, {self._constant(list(enum))}): return False")
        branches = []
        string = self._string_lines(schema, var, key, depth + 1)
        if string:
            branches.append(("string", f"isinstance({var}, str)", string))
        number = self._number_lines(schema, var, depth + 1)
        if number:
            branches.append(("number", f"(isinstance({var}, (int, float)) and not isinstance({var}, bool))", number))
        array = self._array_lines(schema, var, depth + 1)
        if array:
            branches.append(("array", f"isinstance({var}, list)", array))
        obj = self._object_lines(schema, var, depth + 1)
        if obj:
            branches.append(("object", f"isinstance({var}, dict)", obj))
        if kind is not None and not isinstance(kind, list):
            # The type is known here: only its own checks can apply, without a test.
            family = {"integer": "number"}.get(kind, kind)
            for name, _, lines in branches:
                if name == family:
                    out.extend(line[4:] for line in lines)
            return
        first = True
        for _, test, lines in branches:
            out.append(f"{pad}{'if' if first else 'elif'} {test}:")
            out.extend(lines)
            first = False

    def _string_lines(self, schema: Mapping[str, Any], var: str, key: str, depth: int) -> List[str]:
        pad = "    " * depth
        minimum = schema.get("minLength")
        maximum = schema.get("maxLength")
        lines: List[str] = []
        # Non-empty strings without a pattern must not be blank (validation's _describe_string words the
        # fault): all of them without a length limit, and with one only the manifest's name and author.
        blank_rule = minimum == 1 and "pattern" not in schema
        if minimum is not None or maximum is not None:
            if minimum == 1 and maximum is None:
                if blank_rule:
                    # Blank covers empty: one test for both rules. A printable string has no control
                    # character (Cc holds every one the rule names): the pattern runs only on the others.
                    lines.append(f"{pad}if not {var}.strip(_WS) or (not {var}.isprintable() and _control({var})): return False")
                else:
                    lines.append(f"{pad}if not {var}: return False")
            else:
                length = self._fresh("n")
                lines.append(f"{pad}{length} = _utf16({var})")
                if minimum is not None:
                    lines.append(f"{pad}if {length} < {minimum!r}: return False")
                if maximum is not None:
                    lines.append(f"{pad}if {length} > {maximum!r}: return False")
        if "pattern" in schema:
            lines.append(f"{pad}if {self._constant(pattern(schema['pattern']))}.search({var}) is None: return False")
        elif blank_rule:
            if maximum == 100:
                lines.append(f"{pad}if {key} in _NAMES and _blank({var}): return False")
        return lines

    def _number_lines(self, schema: Mapping[str, Any], var: str, depth: int) -> List[str]:
        pad = "    " * depth
        lines: List[str] = []
        if schema.get("minimum") is not None:
            lines.append(f"{pad}if {var} < {schema['minimum']!r}: return False")
        if schema.get("maximum") is not None:
            lines.append(f"{pad}if {var} > {schema['maximum']!r}: return False")
        return lines

    def _array_lines(self, schema: Mapping[str, Any], var: str, depth: int) -> List[str]:
        pad = "    " * depth
        lines: List[str] = []
        if schema.get("minItems") is not None:
            lines.append(f"{pad}if len({var}) < {schema['minItems']!r}: return False")
        if schema.get("maxItems") is not None:
            lines.append(f"{pad}if len({var}) > {schema['maxItems']!r}: return False")
        items = schema.get("items")
        if items is not None and not _accepts_anything(self._resolve(items)):
            item = self._fresh("i")
            lines.append(f"{pad}for {item} in {var}:")
            self._emit(items, item, "None", lines, depth + 1)
        if schema.get("uniqueItems"):
            lines.append(f"{pad}if _dup({var}): return False")
        return lines

    def _object_lines(self, schema: Mapping[str, Any], var: str, depth: int) -> List[str]:
        pad = "    " * depth
        lines: List[str] = []
        properties: Mapping[str, Any] = schema.get("properties", {})
        required = list(schema.get("required", []))
        names = schema.get("propertyNames")
        extra = schema.get("additionalProperties")
        for key in required:
            if key not in properties or _accepts_anything(self._resolve(properties[key])):
                lines.append(f"{pad}if {key!r} not in {var}: return False")
        for key, sub in properties.items():
            if _accepts_anything(self._resolve(sub)):
                continue
            item = self._fresh("p")
            resolved = self._resolve(sub)
            if key in required and "anyOf" not in resolved and resolved.get("type") not in (None, "null") and not isinstance(resolved.get("type"), list):
                # A missing key reads as None, which the type check refuses: no separate test.
                lines.append(f"{pad}{item} = {var}.get({key!r})")
                self._emit(sub, item, repr(key), lines, depth)
                continue
            lines.append(f"{pad}{item} = {var}.get({key!r}, _M)")
            if key in required:
                lines.append(f"{pad}if {item} is _M: return False")
                self._emit(sub, item, repr(key), lines, depth)
            else:
                body: List[str] = []
                self._emit(sub, item, repr(key), body, depth + 1)
                if body:
                    lines.append(f"{pad}if {item} is not _M:")
                    lines.extend(body)
        open_check = isinstance(extra, dict) and not _accepts_anything(self._resolve(extra))
        if names is not None or extra is False or open_check:
            name = self._fresh("key")
            value = self._fresh("val")
            lines.append(f"{pad}for {name}, {value} in {var}.items():")
            lines.append(f"{pad}    if {name} in {self._constant(frozenset(properties))}: continue")
            if names is not None:
                lines.append(f"{pad}    if not {self._function(names)}({name}, {name}): return False")
            if extra is False:
                lines.append(f"{pad}    return False")
            elif open_check:
                self._emit(extra, value, name, lines, depth + 1)  # type: ignore[arg-type]
        return lines

    # Defaults -----------------------------------------------------------------------------------------

    def _fill_function(self, schema: Mapping[str, Any]) -> str:
        """``fill(v)`` for a schema with defaults below it (the value is valid for the schema)."""
        schema = self._resolve(schema)
        known = self._fill_names.get(id(schema))
        if known is not None:
            return known
        name = self._fresh("_fill")
        self._fill_names[id(schema)] = name
        self._keep.append(schema)
        lines = [f"def {name}(v):"]
        if "anyOf" in schema:
            # The defaults of the first branch the value matches, as the full validator picks it.
            first = True
            for branch in schema["anyOf"]:
                test = f"{self._function(branch)}(v, None)"
                lines.append(f"    {'if' if first else 'elif'} {test}:")
                lines.append(f"        {self._fill_function(branch)}(v)" if self._has_defaults(branch) else "        pass")
                first = False
        else:
            properties: Mapping[str, Any] = schema.get("properties", {})
            extra = schema.get("additionalProperties")
            obj: List[str] = []
            for key, sub in properties.items():
                if any(self._has_defaults(below) for below in subschemas(self._resolve(sub))):
                    item = self._fresh("p")
                    obj.append(f"        {item} = v.get({key!r})")
                    obj.append(f"        if isinstance({item}, (dict, list)): {self._fill_function(sub)}({item})")
            if isinstance(extra, dict) and self._has_defaults(extra):
                obj.append("        for key, item in v.items():")
                obj.append(f"            if key not in {self._constant(frozenset(properties))} and isinstance(item, (dict, list)): {self._fill_function(extra)}(item)")
            for key, sub in properties.items():
                if "default" in sub:
                    default = sub["default"]
                    if default == [] and isinstance(default, list):
                        made = "[]"  # nothing inside to fill, and a new list each time
                    elif isinstance(default, (dict, list)):
                        made = f"_slow_defaults({self._constant(sub)}, _deepcopy({self._constant(default)}))"
                    else:
                        made = self._constant(default)
                    obj.append(f"        if {key!r} not in v: v[{key!r}] = {made}")
            if obj:
                lines.append("    if isinstance(v, dict):")
                lines.extend(obj)
            items = schema.get("items")
            if isinstance(items, dict) and self._has_defaults(items):
                lines.append("    if isinstance(v, list):")
                lines.append("        for item in v:")
                lines.append(f"            if isinstance(item, (dict, list)): {self._fill_function(items)}(item)")
        lines.append("    return None")
        self._pending.append("\n".join(lines))
        return name


_ANNOTATIONS = frozenset(("description", "title", "default", "$id", "$schema", "format", "$defs", "examples"))


def _accepts_anything(schema: Mapping[str, Any]) -> bool:
    """A schema with no keyword that checks anything (``{}``, or only annotations)."""
    return all(key in _ANNOTATIONS for key in schema)
