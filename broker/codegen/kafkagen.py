#!/usr/bin/env python3
"""Generates C++ codecs for Kafka messages from Ferry's schema files (broker/schemas/*.json).

For every schema it writes `<api>.h` and `<api>.cc` into the output directory, holding `<api>_request` and
`<api>_response` structs with versioned `decode` and `encode`, plus `api_table.h` listing every API with its
version range and first flexible version. With --test-support it also writes `test_support.h`, which fills
any message with random values valid for a version (for round-trip tests).

Usage: kafkagen.py --out DIR [--test-support] SCHEMA.json...
"""

import argparse
import json
import os
import re
import sys

PRIMITIVES = {
    "bool": ("bool", "read_bool", "write_bool"),
    "int8": ("std::int8_t", "read_int8", "write_int8"),
    "int16": ("std::int16_t", "read_int16", "write_int16"),
    "int32": ("std::int32_t", "read_int32", "write_int32"),
    "int64": ("std::int64_t", "read_int64", "write_int64"),
    "uint16": ("std::uint16_t", "read_uint16", "write_uint16"),
    "float64": ("double", "read_float64", "write_float64"),
    "uuid": ("uuid", "read_uuid", "write_uuid"),
}

# Strong types a schema may ask for with "as", and the primitive each wraps.
STRONG_TYPES = {
    "offset": ("::ferry::offset", "int64"),
    "leader_epoch": ("::ferry::leader_epoch", "int32"),
    "producer_id": ("::ferry::producer_id", "int64"),
    "producer_epoch": ("::ferry::producer_epoch", "int16"),
    "broker_id": ("::ferry::broker_id", "int32"),
    "partition_id": ("::ferry::partition_id", "int32"),
}

CPP_KEYWORDS = {"default", "new", "delete", "operator", "class", "struct", "template", "namespace", "register",
                "public", "private", "protected", "union", "this", "int", "long", "short", "char", "bool"}


class SchemaError(Exception):
    pass


class Versions:
    """An inclusive version range; hi None means open-ended."""

    def __init__(self, text, where):
        text = str(text).strip()
        if text == "none":
            self.lo, self.hi = 1, 0
        elif re.fullmatch(r"\d+\+", text):
            self.lo, self.hi = int(text[:-1]), None
        elif re.fullmatch(r"\d+-\d+", text):
            lo, hi = text.split("-")
            self.lo, self.hi = int(lo), int(hi)
        elif re.fullmatch(r"\d+", text):
            self.lo = self.hi = int(text)
        else:
            raise SchemaError(f"{where}: bad version range '{text}'")

    def empty(self):
        return self.hi is not None and self.hi < self.lo

    def contains(self, v):
        return not self.empty() and v >= self.lo and (self.hi is None or v <= self.hi)

    def condition(self, api_lo, api_hi, var="version"):
        """A C++ condition true for versions in this range, simplified against the API's own range."""
        if self.empty():
            return "false"
        parts = []
        if self.lo > api_lo:
            parts.append(f"{var} >= {self.lo}")
        if self.hi is not None and self.hi < api_hi:
            parts.append(f"{var} <= {self.hi}")
        return " && ".join(parts) if parts else "true"


class Field:
    def __init__(self, spec, api, where):
        self.where = f"{where}.{spec.get('name', '?')}"
        known = {"name", "type", "versions", "nullable", "default", "as", "tag", "tagged", "fields"}
        unknown = set(spec) - known
        if unknown:
            raise SchemaError(f"{self.where}: unknown keys {sorted(unknown)}")
        self.name = spec["name"]
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            raise SchemaError(f"{self.where}: names are snake_case")
        self.member = self.name + "_" if self.name in CPP_KEYWORDS else self.name
        self.type = spec["type"]
        self.versions = Versions(spec["versions"], self.where)
        self.nullable = Versions(spec.get("nullable", "none"), self.where)
        self.default = spec.get("default")
        self.strong = spec.get("as")
        self.tag = spec.get("tag")
        self.tagged = Versions(spec["tagged"], self.where) if "tagged" in spec else None
        if (self.tag is None) != (self.tagged is None):
            raise SchemaError(f"{self.where}: 'tag' and 'tagged' go together")
        self.is_array = self.type.startswith("[]")
        self.base = self.type[2:] if self.is_array else self.type
        self.is_struct = self.base not in PRIMITIVES and self.base not in ("string", "bytes", "records")
        self.fields = [Field(f, api, self.where) for f in spec.get("fields", [])]
        if self.is_struct and not self.fields:
            raise SchemaError(f"{self.where}: struct type '{self.base}' needs fields")
        if not self.is_struct and self.fields:
            raise SchemaError(f"{self.where}: only struct types have fields")
        if self.strong is not None:
            if self.strong not in STRONG_TYPES:
                raise SchemaError(f"{self.where}: unknown 'as' type '{self.strong}'")
            if STRONG_TYPES[self.strong][1] != self.base or self.is_array:
                raise SchemaError(f"{self.where}: 'as {self.strong}' needs a scalar {STRONG_TYPES[self.strong][1]}")
        self.optional = not self.nullable.empty()

    def elem_cpp(self):
        if self.is_struct:
            return self.base
        if self.strong:
            return STRONG_TYPES[self.strong][0]
        if self.base in PRIMITIVES:
            return PRIMITIVES[self.base][0]
        return {"string": "std::string", "bytes": "std::vector<std::byte>", "records": "record_data"}[self.base]

    def cpp_type(self):
        t = f"std::vector<{self.elem_cpp()}>" if self.is_array else self.elem_cpp()
        return f"std::optional<{t}>" if self.optional else t

    def initializer(self):
        d = self.default
        if self.optional:
            if d is None or d == "null":
                return "std::nullopt" if self.is_array or self.is_struct or self.base != "string" else "std::nullopt"
            return json.dumps(d) if isinstance(d, str) else "{}"
        if self.is_array or self.is_struct:
            return "{}"
        if self.base == "string":
            return json.dumps(d) if isinstance(d, str) and d not in ("null", "") else "{}"
        if self.base in ("bytes", "records", "uuid"):
            return "{}"
        if d is None:
            d = False if self.base == "bool" else 0
        if self.base == "bool":
            value = "true" if d in (True, "true") else "false"
        else:
            value = str(int(d)) if self.base != "float64" else str(float(d))
        return f"{self.elem_cpp()}{{{value}}}" if self.strong else value


class Message:
    def __init__(self, api, kind, fields):
        self.api = api
        self.kind = kind
        self.name = f"{api.name}_{kind}"
        self.fields = fields


class Api:
    def __init__(self, path):
        with open(path) as f:
            spec = json.load(f)
        where = os.path.basename(path)
        for key in ("api", "key", "versions", "flexible", "request", "response"):
            if key not in spec:
                raise SchemaError(f"{where}: missing '{key}'")
        self.name = spec["api"]
        self.key = int(spec["key"])
        versions = Versions(spec["versions"], where)
        if versions.hi is None:
            raise SchemaError(f"{where}: 'versions' must be a closed range")
        self.lo, self.hi = versions.lo, versions.hi
        flexible = Versions(spec["flexible"], where)
        self.flexible_from = flexible.lo if not flexible.empty() else None
        self.request = Message(self, "request", [Field(f, self, f"{where}:request") for f in spec["request"]])
        self.response = Message(self, "response", [Field(f, self, f"{where}:response") for f in spec["response"]])
        for message in (self.request, self.response):
            self._check_struct_names(message.fields, set(), where)

    def _check_struct_names(self, fields, seen, where):
        for f in fields:
            if f.is_struct:
                if f.base in seen:
                    raise SchemaError(f"{where}: struct name '{f.base}' used twice")
                seen.add(f.base)
                self._check_struct_names(f.fields, seen, where)

    def flexible_condition(self):
        if self.flexible_from is None:
            return "false"
        if self.flexible_from <= self.lo:
            return "true"
        return f"version >= {self.flexible_from}"


class Emitter:
    def __init__(self):
        self.lines = []
        self.depth = 0

    def line(self, text=""):
        self.lines.append(("  " * self.depth + text) if text else "")

    def block(self, opener):
        self.line(f"{opener} {{" if opener else "{")
        self.depth += 1

    def end(self, closer="}"):
        self.depth -= 1
        self.line(closer)

    def text(self):
        return "\n".join(self.lines) + "\n"


def regular(fields):
    return [f for f in fields if f.tag is None]


def tagged(fields):
    return sorted((f for f in fields if f.tag is not None), key=lambda f: f.tag)


# ---------------------------------------------------------------------------------------------- header


def emit_struct(e, name, fields, message, top):
    e.block(f"struct {name}")
    for f in fields:
        if f.is_struct:
            emit_struct(e, f.base, f.fields, message, False)
    if top:
        api = message.api
        flex = api.flexible_from if api.flexible_from is not None else -1
        e.line(f"static constexpr std::int16_t api_key = {api.key};")
        e.line(f"static constexpr std::int16_t min_version = {api.lo};")
        e.line(f"static constexpr std::int16_t max_version = {api.hi};")
        e.line(f"static constexpr std::int16_t first_flexible_version = {flex};  // -1: none")
        e.line()
    for f in fields:
        e.line(f"{f.cpp_type()} {f.member} = {f.initializer()};")
    if top:
        e.line()
        e.line("// Decodes a body of this version; false if the bytes are malformed, truncated or too long.")
        e.line("[[nodiscard]] bool decode(reader& r, std::int16_t version);")
        e.line("void encode(writer& w, std::int16_t version) const;")
    e.line()
    e.line(f"bool operator==(const {name}&) const = default;")
    e.end("};")
    e.line()


def emit_header(api):
    e = Emitter()
    e.line(f"// Generated by broker/codegen/kafkagen.py from broker/schemas/{api.name}.json. Do not edit.")
    e.line("#pragma once")
    e.line()
    for inc in ("<cstdint>", "<optional>", "<type_traits>", "<string>", "<vector>", '"model/ids.h"', '"protocol/wire.h"'):
        e.line(f"#include {inc}")
    e.line()
    e.line("namespace ferry::protocol {")
    e.line()
    for message in (api.request, api.response):
        emit_struct(e, message.name, message.fields, message, True)
    e.line("}  // namespace ferry::protocol")
    return e.text()


# ---------------------------------------------------------------------------------------------- decode


def elem_type(f, scope):
    """The element type of f as written in the generated .cc, where nested structs need qualification."""
    return f"{scope}::{f.base}" if f.is_struct else f.elem_cpp()


def scalar_read(f, target, rv):
    if f.base in PRIMITIVES:
        call = f"{rv}.{PRIMITIVES[f.base][1]}()"
        return f"{target} = {STRONG_TYPES[f.strong][0]}{{{call}}};" if f.strong else f"{target} = {call};"
    return f"{rv}.read_{f.base}(flexible, {target});"


def emit_decode_value(e, f, target, api, scope, rv="r"):
    """Reads field f into `target` (an lvalue of f's member type) for the current version."""
    nullable_now = f.nullable.condition(api.lo, api.hi)
    if f.is_array:
        e.block("")
        e.line(f"const std::int64_t n = {rv}.read_length(flexible, false);")
        if f.optional:
            e.line(f"if (n < 0) {target}.reset();")
            e.line(f"auto& items = n < 0 ? scratch_items_{f.member} : {target}.emplace();")
        else:
            e.line(f"if (n < 0) {rv}.fail();")
            e.line(f"auto& items = {target};")
        e.line("items.clear();")
        e.block(f"for (std::int64_t i = 0; i < n && {rv}.ok(); ++i)")
        if f.is_struct:
            e.line(f"decode_struct({rv}, items.emplace_back(), version, flexible);")
        else:
            e.line(f"{elem_type(f, scope)} item{{}};")
            e.line(scalar_read(f, "item", rv))
            e.line("items.push_back(std::move(item));")
        e.end()
        e.end()
    elif f.is_struct:
        if f.optional:
            e.line(f"if ({rv}.read_int8() < 0) {target}.reset();")
            e.line(f"else decode_struct({rv}, {target}.emplace(), version, flexible);")
        else:
            e.line(f"decode_struct({rv}, {target}, version, flexible);")
    elif f.optional and f.base in ("string", "bytes", "records"):
        if nullable_now == "true":
            e.line(f"{rv}.read_nullable_{f.base}(flexible, {target});")
        elif nullable_now == "false":
            e.line(f"{rv}.read_{f.base}(flexible, {target}.emplace());")
        else:
            e.line(f"if ({nullable_now}) {rv}.read_nullable_{f.base}(flexible, {target});")
            e.line(f"else {rv}.read_{f.base}(flexible, {target}.emplace());")
    else:
        e.line(scalar_read(f, target, rv))


def emit_decode_fields(e, fields, api, scope):
    for f in regular(fields):
        cond = f.versions.condition(api.lo, api.hi)
        if cond == "false":
            continue
        if cond != "true":
            e.block(f"if ({cond})")
        emit_decode_value(e, f, f"m.{f.member}", api, scope)
        if cond != "true":
            e.end()
    tags = tagged(fields)
    e.block("if (flexible)")
    if not tags:
        e.line("r.read_tagged_fields([](std::uint32_t, reader&) { return false; });")
    else:
        e.block("r.read_tagged_fields([&](std::uint32_t tag, reader& field_reader)")
        e.block("switch (tag)")
        for f in tags:
            e.block(f"case {f.tag}:")
            e.line(f"if (!({f.tagged.condition(api.lo, api.hi)})) return false;")
            emit_decode_value(e, f, f"m.{f.member}", api, scope, rv="field_reader")
            e.line("return true;")
            e.end()
        e.line("default:")
        e.line("  return false;")
        e.end()
        e.end("});")
    e.end()


def emit_scratch(e, fields, scope):
    """Nullable arrays decode into a scratch vector when null, keeping one code path for both cases."""
    for f in fields:
        if f.is_array and f.optional:
            e.line(f"[[maybe_unused]] std::vector<{elem_type(f, scope)}> scratch_items_{f.member};")


def emit_struct_codecs(e, scope, fields, api):
    """Writes decode_struct/encode_struct for every struct nested under `scope`, innermost first."""
    for f in fields:
        if not f.is_struct:
            continue
        qualified = f"{scope}::{f.base}"
        emit_struct_codecs(e, qualified, f.fields, api)
        e.block(f"void decode_struct(reader& r, {qualified}& m, std::int16_t version, bool flexible)")
        emit_scratch(e, f.fields, qualified)
        emit_decode_fields(e, f.fields, api, qualified)
        e.end()
        e.line()
        e.block(f"void encode_struct(writer& w, const {qualified}& m, std::int16_t version, bool flexible)")
        emit_encode_fields(e, f.fields, api)
        e.end()
        e.line()


# ---------------------------------------------------------------------------------------------- encode


def scalar_write(f, value, wv):
    if f.base in PRIMITIVES:
        v = f"{value}.value()" if f.strong else value
        return f"{wv}.{PRIMITIVES[f.base][2]}({v});"
    return f"{wv}.write_{f.base}(flexible, {value});"


def emit_encode_value(e, f, value, api, wv="w"):
    nullable_now = f.nullable.condition(api.lo, api.hi)
    if f.is_array:
        if f.optional:
            e.line(f"if (!{value}) {wv}.write_length(flexible, false, -1);")
            e.block("else")
            items = f"*{value}"
        else:
            e.block("")
            items = value
        e.line(f"{wv}.write_length(flexible, false, static_cast<std::int64_t>(({items}).size()));")
        e.block(f"for (const auto& item : {items})")
        if f.is_struct:
            e.line(f"encode_struct({wv}, item, version, flexible);")
        else:
            e.line(scalar_write(f, "item", wv))
        e.end()
        e.end()
    elif f.is_struct:
        if f.optional:
            e.line(f"{wv}.write_int8({value} ? 1 : -1);")
            e.line(f"if ({value}) encode_struct({wv}, *{value}, version, flexible);")
        else:
            e.line(f"encode_struct({wv}, {value}, version, flexible);")
    elif f.optional and f.base in ("string", "bytes", "records"):
        empty = {"string": "std::string{}", "bytes": "std::vector<std::byte>{}", "records": "record_data{}"}[f.base]
        if nullable_now == "true":
            e.line(f"{wv}.write_nullable_{f.base}(flexible, {value});")
        elif nullable_now == "false":
            e.line(f"{wv}.write_{f.base}(flexible, {value} ? *{value} : {empty});")
        else:
            e.line(f"if ({nullable_now}) {wv}.write_nullable_{f.base}(flexible, {value});")
            e.line(f"else {wv}.write_{f.base}(flexible, {value} ? *{value} : {empty});")
    else:
        e.line(scalar_write(f, value, wv))


def tagged_present(f, value):
    """A C++ condition: the tagged field differs from its default, so it goes on the wire."""
    if f.optional:
        init = f.initializer()
        return f"{value}.has_value()" if init == "std::nullopt" else f"{value} != {init}"
    if f.is_array or f.base in ("string", "bytes"):
        return f"!{value}.empty()"
    if f.base == "uuid":
        return f"{value} != uuid{{}}"
    if f.is_struct:
        return f"!({value} == std::remove_cvref_t<decltype({value})>{{}})"
    return f"{value} != {f.initializer()}"


def emit_encode_fields(e, fields, api):
    for f in regular(fields):
        cond = f.versions.condition(api.lo, api.hi)
        if cond == "false":
            continue
        if cond != "true":
            e.block(f"if ({cond})")
        emit_encode_value(e, f, f"m.{f.member}", api)
        if cond != "true":
            e.end()
    tags = tagged(fields)
    e.block("if (flexible)")
    if not tags:
        e.line("w.write_uvarint(0);")
    else:
        conds = [f"(({f.tagged.condition(api.lo, api.hi)}) && {tagged_present(f, 'm.' + f.member)})" for f in tags]
        e.line("const bool present[] = {" + ", ".join(conds) + "};")
        e.line("std::uint64_t count = 0;")
        e.line("for (bool p : present) count += p ? 1 : 0;")
        e.line("w.write_uvarint(count);")
        for i, f in enumerate(tags):
            e.block(f"if (present[{i}])")
            e.line("output_buffer field_bytes;")
            e.line("writer field_writer(field_bytes);")
            emit_encode_value(e, f, f"m.{f.member}", api, wv="field_writer")
            e.line(f"w.write_uvarint({f.tag});")
            e.line("w.write_uvarint(field_bytes.size());")
            e.line("w.append(std::move(field_bytes));")
            e.end()
    e.end()


def emit_source(api):
    e = Emitter()
    e.line(f"// Generated by broker/codegen/kafkagen.py from broker/schemas/{api.name}.json. Do not edit.")
    e.line(f'#include "protocol/messages/{api.name}.h"')
    e.line()
    e.line("namespace ferry::protocol {")
    e.line("namespace {")
    e.line()
    for message in (api.request, api.response):
        emit_struct_codecs(e, message.name, message.fields, api)
    e.line("}  // namespace")
    e.line()
    for message in (api.request, api.response):
        e.block(f"bool {message.name}::decode(reader& r, std::int16_t version)")
        e.line("auto& m = *this;")
        e.line(f"const bool flexible = {api.flexible_condition()};")
        emit_scratch(e, message.fields, message.name)
        emit_decode_fields(e, message.fields, api, message.name)
        e.line("return r.ok();")
        e.end()
        e.line()
        e.block(f"void {message.name}::encode(writer& w, std::int16_t version) const")
        e.line("const auto& m = *this;")
        e.line(f"[[maybe_unused]] const bool flexible = {api.flexible_condition()};")
        emit_encode_fields(e, message.fields, api)
        e.end()
        e.line()
    e.line("}  // namespace ferry::protocol")
    return e.text()


# ---------------------------------------------------------------------------------------------- tables


def emit_api_table(apis):
    e = Emitter()
    e.line("// Generated by broker/codegen/kafkagen.py. Do not edit.")
    e.line("#pragma once")
    e.line()
    e.line("#include <array>")
    e.line("#include <cstdint>")
    e.line("#include <string_view>")
    e.line()
    for api in apis:
        e.line(f'#include "protocol/messages/{api.name}.h"')
    e.line()
    e.line("namespace ferry::protocol {")
    e.line()
    e.line("struct api_info {")
    e.line("  std::int16_t key;")
    e.line("  std::string_view name;")
    e.line("  std::int16_t min_version;")
    e.line("  std::int16_t max_version;")
    e.line("  std::int16_t first_flexible_version;  // -1: none")
    e.line("};")
    e.line()
    e.line("// Every API with a schema, ordered by key.")
    e.block(f"inline constexpr std::array<api_info, {len(apis)}> all_apis =")
    for api in sorted(apis, key=lambda a: a.key):
        flex = api.flexible_from if api.flexible_from is not None else -1
        e.line(f'api_info{{{api.key}, "{api.name}", {api.lo}, {api.hi}, {flex}}},')
    e.end("};")
    e.line()
    e.line("// Calls f(request_type{}, response_type{}) for every API, as types.")
    e.line("template <typename F>")
    e.block("constexpr void for_each_api(F&& f)")
    for api in sorted(apis, key=lambda a: a.key):
        e.line(f"f.template operator()<{api.name}_request, {api.name}_response>();")
    e.end()
    e.line()
    e.line("}  // namespace ferry::protocol")
    return e.text()


def emit_test_support(apis):
    """Random filling of every message for a version, for round-trip tests."""
    e = Emitter()
    e.line("// Generated by broker/codegen/kafkagen.py. Do not edit.")
    e.line("#pragma once")
    e.line()
    e.line("#include <random>")
    e.line()
    e.line('#include "protocol/api_table.h"')
    e.line()
    e.line("namespace ferry::protocol::testing {")
    e.line()
    e.line("// Draws values and owns the bytes that record_data views point into.")
    e.block("struct random_source")
    e.line("std::mt19937_64 engine;")
    e.line("std::vector<std::vector<std::byte>> record_buffers;")
    e.line("template <typename T> T number() { return static_cast<T>(engine()); }")
    e.line("std::size_t count() { return engine() % 3; }")
    e.line("bool coin() { return (engine() & 1) != 0; }")
    e.block("std::string text()")
    e.line("std::string s(engine() % 6, 'x');")
    e.line("for (auto& c : s) c = static_cast<char>('a' + engine() % 26);")
    e.line("return s;")
    e.end()
    e.block("std::vector<std::byte> blob()")
    e.line("std::vector<std::byte> b(engine() % 9);")
    e.line("for (auto& x : b) x = static_cast<std::byte>(engine());")
    e.line("return b;")
    e.end()
    e.block("record_data records()")
    e.line("record_buffers.push_back(blob());")
    e.line("return record_data{record_buffers.back(), {}};")
    e.end()
    e.end("};")
    e.line()

    def value_expr(f):
        if f.is_struct:
            return None
        if f.base in PRIMITIVES:
            if f.base == "bool":
                v = "src.coin()"
            elif f.base == "float64":
                v = "static_cast<double>(src.number<std::int32_t>())"
            elif f.base == "uuid":
                v = "uuid{src.number<std::uint8_t>(), src.number<std::uint8_t>()}"
            else:
                v = f"src.number<{PRIMITIVES[f.base][0]}>()"
            return f"{STRONG_TYPES[f.strong][0]}{{{v}}}" if f.strong else v
        return {"string": "src.text()", "bytes": "src.blob()", "records": "src.records()"}[f.base]

    def emit_fill(qualified, fields):
        for f in fields:
            if f.is_struct:
                emit_fill(f"{qualified}::{f.base}", f.fields)
        e.block(f"inline void fill(random_source& src, {qualified}& m, std::int16_t version)")
        e.line("[[maybe_unused]] auto& unused = version;")
        for f in fields:
            cond = f.versions.condition(0, 32767) if f.tag is None else \
                f"({f.versions.condition(0, 32767)}) && ({f.tagged.condition(0, 32767)})"
            e.block(f"if ({cond})")
            null_ok = f.nullable.condition(0, 32767)
            if f.optional:
                e.line(f"if (({null_ok}) && src.count() == 0) {{ m.{f.member}.reset(); }} else {{")
                e.depth += 1
                target = f"m.{f.member}.emplace()"
            else:
                target = f"m.{f.member}"
            if f.is_array:
                e.line(f"auto& items = {target};")
                e.line("items.clear();")
                e.block("for (std::size_t i = 0, n = src.count(); i < n; ++i)")
                if f.is_struct:
                    e.line("fill(src, items.emplace_back(), version);")
                else:
                    e.line(f"items.push_back({value_expr(f)});")
                e.end()
            elif f.is_struct:
                e.line(f"fill(src, {target}, version);")
            else:
                e.line(f"{target} = {value_expr(f)};")
            if f.optional:
                e.depth -= 1
                e.line("}")
            e.end()
        e.end()
        e.line()

    for api in apis:
        for message in (api.request, api.response):
            emit_fill(message.name, message.fields)
    e.line("}  // namespace ferry::protocol::testing")
    return e.text()


def write_if_changed(path, text):
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path, "w") as f:
        f.write(text)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="output directory (gets protocol/messages/...)")
    parser.add_argument("--test-support", action="store_true", help="also write test_support.h")
    parser.add_argument("schemas", nargs="+")
    args = parser.parse_args(argv)

    try:
        apis = [Api(p) for p in sorted(args.schemas)]
    except (SchemaError, KeyError, ValueError, json.JSONDecodeError) as err:
        print(f"kafkagen: {err}", file=sys.stderr)
        return 1
    keys = [a.key for a in apis]
    if len(set(keys)) != len(keys):
        print("kafkagen: two schemas share an API key", file=sys.stderr)
        return 1

    out = os.path.join(args.out, "protocol", "messages")
    os.makedirs(out, exist_ok=True)
    for api in apis:
        write_if_changed(os.path.join(out, f"{api.name}.h"), emit_header(api))
        write_if_changed(os.path.join(out, f"{api.name}.cc"), emit_source(api))
    write_if_changed(os.path.join(args.out, "protocol", "api_table.h"), emit_api_table(apis))
    if args.test_support:
        write_if_changed(os.path.join(args.out, "protocol", "test_support.h"), emit_test_support(apis))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
