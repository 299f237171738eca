#!/usr/bin/env python3
"""Deterministic (reader, writer) Avro schema pairs for the compatibility oracle (run-oracle).

Each pair is a writer schema and a reader made from it by a few random edits, each aimed at one rule of Avro's
schema resolution: type promotions, unions on either side, enum symbols and defaults, record and field aliases,
nested and recursive named types, fixed sizes, arrays and maps, fields with and without defaults. Some edits make
schemas Java refuses (duplicate union branches, clashing names), which checks the parsers agree too.

Usage: generate_pairs.py [--seed N] [--count N]  (writes JSON lines ["reader", "writer"] to stdout: the fixed
pairs, then N random ones)
"""

import argparse
import copy
import json
import random

PRIMITIVES = ["null", "boolean", "int", "long", "float", "double", "bytes", "string"]
# Writer type -> reader types that read it (the specification's promotions).
PROMOTIONS = {"int": ["long", "float", "double"], "long": ["float", "double"], "float": ["double"],
              "string": ["bytes"], "bytes": ["string"]}
NAMESPACES = [None, "a", "b.c"]


class Generator:
    def __init__(self, rng):
        self.rng = rng
        self.counter = 0
        self.defined = {}  # full name -> definition, in the schema being generated

    def fresh_name(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def named(self, kind, body, depth):
        """A record, enum or fixed with a full name, registered so later types may refer to it by name."""
        space = self.rng.choice(NAMESPACES)
        short = self.fresh_name({"record": "Rec", "enum": "En", "fixed": "Fx"}[kind])
        full = f"{space}.{short}" if space else short
        schema = {"type": kind, "name": full}
        self.defined[full] = schema
        schema.update(body(full, depth))
        return schema

    def record_body(self, full, depth):
        fields = []
        for i in range(self.rng.randint(0, 4)):
            ftype = self.type(depth + 1, recursive_name=full)
            field = {"name": f"f{i}", "type": ftype}
            if self.rng.random() < 0.4:
                value = default_for(ftype, self.defined, 0)
                if value is not NO_DEFAULT:
                    field["default"] = value
            fields.append(field)
        return {"fields": fields}

    def enum_body(self, full, depth):
        symbols = [f"S{i}" for i in range(self.rng.randint(1, 4))]
        body = {"symbols": symbols}
        if self.rng.random() < 0.3:
            body["default"] = self.rng.choice(symbols)
        return body

    def fixed_body(self, full, depth):
        return {"size": self.rng.choice([0, 1, 4, 16])}

    def type(self, depth, recursive_name=None):
        r = self.rng.random()
        if depth >= 3 or r < 0.35:
            p = self.rng.choice(PRIMITIVES)
            return p if self.rng.random() < 0.8 else {"type": p}
        if r < 0.45 and self.defined:
            return self.rng.choice(list(self.defined))  # a reference to an earlier named type
        if r < 0.5 and recursive_name:
            return ["null", recursive_name] if self.rng.random() < 0.7 else {"type": "array", "items": recursive_name}
        if r < 0.62:
            return self.named("record", self.record_body, depth)
        if r < 0.72:
            return self.named("enum", self.enum_body, depth)
        if r < 0.78:
            return self.named("fixed", self.fixed_body, depth)
        if r < 0.85:
            return {"type": "array", "items": self.type(depth + 1, recursive_name)}
        if r < 0.9:
            return {"type": "map", "values": self.type(depth + 1, recursive_name)}
        branches = []
        for p in self.rng.sample(PRIMITIVES, self.rng.randint(1, 3)):
            branches.append(p)
        if self.rng.random() < 0.5:
            branches.append(self.named("record", self.record_body, depth + 1))
        return branches


NO_DEFAULT = object()


def default_for(t, defined, depth):
    """A default Java accepts for type `t` (a union's first branch), or NO_DEFAULT."""
    if depth > 4:
        return NO_DEFAULT
    if isinstance(t, list):
        return default_for(t[0], defined, depth + 1) if t else NO_DEFAULT
    if isinstance(t, str):
        if t in PRIMITIVES:
            return {"null": None, "boolean": True, "int": 1, "long": 2, "float": 1.5, "double": 2.5,
                    "bytes": "b", "string": "s"}[t]
        t = defined.get(t)
        if t is None:
            return NO_DEFAULT
    kind = t["type"]
    if kind in PRIMITIVES:
        return default_for(kind, defined, depth)
    if kind == "array":
        return []
    if kind == "map":
        return {}
    if kind == "enum":
        return t["symbols"][0]
    if kind == "fixed":
        return "\u0000" * t["size"]
    if kind == "record":
        value = {}
        for f in t.get("fields", []):
            if "default" in f:
                continue
            v = default_for(f["type"], defined, depth + 1)
            if v is NO_DEFAULT:
                return NO_DEFAULT
            value[f["name"]] = v
        return value
    return NO_DEFAULT


def definitions(schema, out):
    """Full name -> definition for every named type defined in `schema`."""
    if isinstance(schema, list):
        for b in schema:
            definitions(b, out)
    elif isinstance(schema, dict):
        if schema.get("type") in ("record", "enum", "fixed") and "name" in schema:
            out[schema["name"]] = schema
        for f in schema.get("fields", []):
            definitions(f["type"], out)
        for key in ("items", "values"):
            if key in schema:
                definitions(schema[key], out)
    return out


def type_slots(schema, slots):
    """(container, key) of every place holding a type, so an edit can replace it."""
    if isinstance(schema, list):
        for i, b in enumerate(schema):
            slots.append((schema, i))
            type_slots(b, slots)
    elif isinstance(schema, dict):
        for f in schema.get("fields", []):
            slots.append((f, "type"))
            type_slots(f["type"], slots)
        for key in ("items", "values"):
            if key in schema:
                slots.append((schema, key))
                type_slots(schema[key], slots)
    return slots


def rename_references(schema, old, new):
    for container, key in type_slots(schema, []):
        if container[key] == old:
            container[key] = new


class Mutator:
    def __init__(self, rng):
        self.rng = rng

    def mutate(self, root):
        holder = {"root": root}
        slots = [(holder, "root")] + type_slots(root, [])
        container, key = self.rng.choice(slots)
        container[key] = self.edit(container[key], holder)
        return holder["root"]

    def edit(self, t, holder):
        rng = self.rng
        if isinstance(t, list):
            choice = rng.random()
            if choice < 0.35 and len(t) > 1:
                t.pop(rng.randrange(len(t)))  # a writer branch the reader may miss
            elif choice < 0.7:
                t.insert(rng.randrange(len(t) + 1), rng.choice(PRIMITIVES))
            elif choice < 0.85 and t:
                return t[0] if not isinstance(t[0], list) else t  # the union's first branch alone
            else:
                rng.shuffle(t)
            return t
        if isinstance(t, str) and t in PRIMITIVES:
            return self.edit_primitive(t)
        if isinstance(t, str):
            return t if rng.random() < 0.5 else ["null", t]
        kind = t["type"]
        if kind in PRIMITIVES:
            return self.edit_primitive(kind)
        if kind in ("array", "map"):
            choice = rng.random()
            key = "items" if kind == "array" else "values"
            if choice < 0.2:
                return {"type": "map" if kind == "array" else "array",
                        "values" if kind == "array" else "items": t[key]}
            if choice < 0.6:
                t[key] = self.edit(t[key], holder)
            else:
                return [t, "null"] if rng.random() < 0.5 else ["null", t]
            return t
        if kind == "enum":
            return self.edit_enum(t)
        if kind == "fixed":
            if rng.random() < 0.6:
                t["size"] = rng.choice([0, 1, 2, 4, 16])
            else:
                self.rename(t, holder)
            return t
        return self.edit_record(t, holder)

    def edit_primitive(self, p):
        rng = self.rng
        r = rng.random()
        if r < 0.5 and p in PROMOTIONS:
            return rng.choice(PROMOTIONS[p])
        if r < 0.7:
            return ["null", p] if rng.random() < 0.5 else [p, "string" if p != "string" else "int"]
        return rng.choice(PRIMITIVES)

    def edit_enum(self, t):
        rng = self.rng
        r = rng.random()
        symbols = t["symbols"]
        if r < 0.3:
            symbols.append(f"S{len(symbols) + rng.randint(0, 3)}")
        elif r < 0.6 and len(symbols) > 1:
            removed = symbols.pop(rng.randrange(len(symbols)))
            if t.get("default") == removed:
                del t["default"]
        elif r < 0.8:
            t["default"] = rng.choice(symbols)
        else:
            t.pop("default", None)
            t["name"] = t["name"] + "X" if rng.random() < 0.5 else t["name"]
        return t

    def rename(self, t, holder):
        """A new name for a named type; with an alias of the old full name half the time."""
        rng = self.rng
        old = t["name"]
        short = old.rsplit(".", 1)[-1]
        r = rng.random()
        if r < 0.4:
            space = rng.choice([s for s in NAMESPACES if s != (old.rsplit(".", 1)[0] if "." in old else None)])
            new = f"{space}.{short}" if space else short  # the same unqualified name in another namespace
        else:
            new = old + "N"
            if r < 0.75:
                t["aliases"] = [rng.choice([old, short])]
        t["name"] = new
        rename_references(holder["root"], old, new)

    def edit_record(self, t, holder):
        rng = self.rng
        fields = t["fields"]
        r = rng.random()
        if r < 0.2:
            ftype = rng.choice(PRIMITIVES + ["null"])
            field = {"name": f"g{rng.randint(0, 9)}", "type": ftype}
            if rng.random() < 0.5:
                field["default"] = default_for(ftype, {}, 0)
            fields.insert(rng.randrange(len(fields) + 1), field)
        elif r < 0.35 and fields:
            fields.pop(rng.randrange(len(fields)))
        elif r < 0.5 and fields:
            field = rng.choice(fields)
            old = field["name"]
            field["name"] = old + "r"
            if rng.random() < 0.6:
                field["aliases"] = [old]
        elif r < 0.6 and fields:
            field = rng.choice(fields)
            if "default" in field:
                del field["default"]
            else:
                value = default_for(field["type"], definitions(holder["root"], {}), 0)
                if value is not NO_DEFAULT:
                    field["default"] = value
        elif r < 0.75:
            self.rename(t, holder)
        elif r < 0.85 and fields:
            # A reader field typed as an enum with a default, missing from the writer.
            fields.append({"name": "h", "type": {"type": "enum", "name": f"HEn{rng.randint(0, 999)}",
                                                 "symbols": ["A"], "default": "A"}})
        elif fields:
            field = rng.choice(fields)
            field["type"] = self.edit(field["type"], holder)
        return t


# Schema texts whose canonical form exercises Java's layout: docs, properties, escapes, doubles, namespaces,
# aliases, names that read as type names, duplicate keys, comments, and texts Java refuses.
TEXT_CORNERS = [
    '{"type":"record","name":"R","namespace":"a","doc":"d\\u0002\\u007f\\u2028 \u00e9 \\\\ /","fields":[{"name":"x",'
    '"type":{"type":"record","name":"S","namespace":"","fields":[{"name":"y","type":{"type":"enum","name":"E",'
    '"symbols":["A"]}}]}},{"name":"z","type":"E"},{"name":"w","type":{"type":"fixed","name":"a.F","size":1,'
    '"aliases":["G","b.H",".I"]}}],"aliases":["a.Q","Z"]}',
    '{"type":"record","name":"R","fields":[{"name":"d","type":"double","default":0.1},{"name":"e","type":"double",'
    '"default":1e-7},{"name":"f","type":"float","default":123456789.0},{"name":"g","type":"double","default":-0.0},'
    '{"name":"h","type":"double","default":"Infinity"},{"name":"i","type":"double","default":" 2.5d "},'
    '{"name":"j","type":"long","default":-9223372036854775808},{"name":"k","type":"double","default":1e300}]}',
    '{"type":"record","name":"R","x":{"b":[1,2.0,"s",null,true],"a":{}},"fields":[{"name":"a","type":{"type":"array",'
    '"items":"int","p":1},"q":[],"default":[]}],"y":2}',
    '{"type":"record","name":"R","fields":[{"name":"a","type":"int","order":"Descending"},{"name":"b","type":"int",'
    '"order":"ignore","aliases":["c","c","d"]}]}',
    '{"type":"enum","name":"x.E","symbols":["A","B"],"default":"B","doc":"d","p":"q","aliases":["x.F"]}',
    '["null",{"type":"map","values":{"type":"record","name":"M","namespace":"n","fields":[{"name":"r",'
    '"type":["null","n.M"]}]}},{"type":"array","items":"n.M"}]',
    '{"type":"record","name":"n.R","fields":[{"name":"a","type":{"type":"fixed","name":"int2","size":1}},'
    '{"name":"b","type":"int2"},{"name":"c","type":{"type":"enum","name":"fixed","symbols":["A"]}},'
    '{"name":"d","type":"fixed"}]}',
    '{"type":"string","logicalType":"uuid","doc":"x"}',
    '{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":1.0}]}',
    '{"type":"record","name":"R","fields":[{"name":"a","type":"double","default":1E2}]}',
    '{"type":"record","name":"Gr\u00f6\u00dfe","fields":[{"name":"\u00e41","type":"int"},{"name":"\u65e5\u672c",'
    '"type":"int"}]}',
    '{"type":"record","name":"R","fields":[{"name":"a","type":"int","p":{"k":1,"k":2}}]}',
    '{"type":"record","name":"R","fields":[],"fields":[{"name":"a","type":"int"}]}',
    '{"type":"record","name":"R","fields":[{"name":"a","type":"bytes","default":"\\u00ff\\u0100"}]}',
    '{"type":"fixed","name":"F","size":2147483639}',
    '{"type":"fixed","name":"F","size":2147483640}',
    '{"type":"record","name":".R","fields":[]}',
    '{"type":"record","name":"a..R","fields":[]}',
    '{"type":"record","name":"R","namespace":"a.","fields":[]}',
    '{"type":"enum","name":"E","symbols":[]}',
    '{"type":"record","name":"R","fields":[{"name":"a","type":"int","order":1}]}',
    '{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"enum","name":"E","symbols":["A"]},'
    '"default":"B"}]}',
    '{"type":"record","name":"R","doc":5,"namespace":5,"fields":[{"name":"a","type":"int","doc":null}]}',
    '{"type":"record","name":"R","fields":{}}',
    '/* leading */ {"type": // inside\n "int"}',
    '{"type": "int"} // trailing',
    '["int","long","float","double","bytes","string","boolean","null"]',
]


def fixed_pairs():
    """Pairs every run includes: the primitive matrix, unions of primitives, and the parsing corners of 1.12."""
    for reader in PRIMITIVES:
        for writer in PRIMITIVES:
            yield json.dumps(reader), json.dumps(writer)
            yield json.dumps(["null", reader]), json.dumps(writer)
            yield json.dumps(reader), json.dumps([writer, "null"]) if writer != "null" else json.dumps([writer])
    recursive = {"type": "record", "name": "L", "fields": [{"name": "v", "type": "int"},
                                                           {"name": "next", "type": ["null", "L"], "default": None}]}
    forward = [{"type": "record", "name": "A", "fields": [{"name": "b", "type": "B"}]},
               {"type": "record", "name": "B", "fields": [{"name": "x", "type": "int", "default": 1}]}]
    corners = [
        recursive,
        # A record default reaching a record whose copy has no fields yet: refused by 1.12.
        {"type": "record", "name": "L", "fields": [{"name": "v", "type": "int"},
                                                   {"name": "next", "type": ["L", "null"], "default": {"v": 1}}]},
        {"type": "record", "name": "R", "fields": [{"name": "s", "type": {"type": "record", "name": "S", "fields": [
            {"name": "r", "type": ["null", "R"], "default": None}]}, "default": {"r": None}}]},
        {"type": "record", "name": "R", "fields": [{"name": "s", "type": {"type": "record", "name": "S", "fields": [
            {"name": "r", "type": ["R", "null"], "default": {}}]}}]},
        forward,
        [{"type": "record", "name": "A", "fields": [{"name": "b", "type": "B", "default": {}}]},
         {"type": "record", "name": "B", "fields": [{"name": "x", "type": "int", "default": 1}]}],
        [{"type": "record", "name": "A", "fields": [{"name": "b", "type": "B", "default": {"x": 2}}]},
         {"type": "record", "name": "B", "fields": [{"name": "x", "type": "int", "default": 1}]}],
        [{"type": "record", "name": "A", "fields": [{"name": "b", "type": "B", "default": "x"}]},
         {"type": "enum", "name": "B", "symbols": ["x"]}],
        ["B", {"type": "enum", "name": "B", "symbols": ["x"]}],
        [{"type": "record", "name": "A", "fields": [{"name": "b", "type": ["B", "B"]}]},
         {"type": "enum", "name": "B", "symbols": ["x"]}],
        {"type": "enum", "name": "E", "symbols": ["A", "B"], "default": "A"},
        {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]},
        {"type": "enum", "name": "n.E", "aliases": ["m.F", ".G"], "symbols": ["A"]},
        {"type": "enum", "name": "F", "namespace": "m", "symbols": ["A"]},
        {"type": "enum", "name": "G", "symbols": ["A"]},
        {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int", "aliases": ["b"]},
                                                   {"name": "b", "type": "int"}]},
        {"type": "record", "name": "R", "fields": [{"name": "b", "type": "long"}]},
        {"type": "record", "name": "R", "fields": [{"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A"],
                                                                          "default": "A"}}]},
        {"type": "record", "name": "R", "fields": []},
        {"type": "fixed", "name": "F", "size": 4, "logicalType": "decimal", "precision": 8, "scale": 2},
        {"type": "fixed", "name": "F", "size": 4, "logicalType": "decimal", "precision": 9},
        {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2},
        {"type": "string", "logicalType": "uuid"},
        {"type": "int", "logicalType": "date"},
        {"type": "long", "logicalType": "timestamp-millis"},
    ]
    for reader in corners:
        for writer in corners:
            yield json.dumps(reader), json.dumps(writer)
    for text in TEXT_CORNERS:
        yield text, text


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=20261207)
    parser.add_argument("--count", type=int, default=3000)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    for reader, writer in fixed_pairs():
        print(json.dumps([reader, writer]))
    for _ in range(args.count):
        generator = Generator(rng)
        writer = generator.type(0) if rng.random() < 0.2 else generator.named("record", generator.record_body, 0)
        reader = copy.deepcopy(writer)
        mutator = Mutator(rng)
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            reader = mutator.mutate(reader)
        pair = [json.dumps(reader), json.dumps(writer)]
        if rng.random() < 0.5:
            pair.reverse()  # the same edits read in the other direction (FORWARD)
        print(json.dumps(pair))


if __name__ == "__main__":
    main()
