#!/usr/bin/env python3
"""Check Ferry's protocol schemas (broker/schemas/*.json) against Apache Kafka's message definitions.

usage: python3 broker/codegen/check_schemas.py broker/schemas <kafka-messages> [<kafka-messages> ...]

<kafka-messages> is a directory of Kafka's message definitions, or the kafka-clients jar from Maven Central,
which carries them as common/message/*.json (scripts/install-deps fetches it for the Java client tests).
For every schema file, the matching <Name>Request.json and <Name>Response.json are loaded from the first
source whose request covers the versions we serve, else each version from the first source that defines it
(Kafka 4 dropped old versions that Kafka 3.9 still defines, and defines versions 3.9 lacks: the build passes
both). Their // comments are
stripped. The script then checks:

  * the file itself: known keys, snake_case names, valid version ranges, struct names unique within the file,
    nullable/tagged ranges inside the field's versions, tags unique and only in flexible versions, "as" only on
    scalars of the matching wire type, defaults of the right kind, no field that is never on the wire in a
    served version, nested fields inside their parent's versions, closed ranges that reach our max written "N+";
  * the API: same key, served range inside Kafka's validVersions, same first flexible version;
  * for every served version, request and response: the same sequence of non-tagged fields (names, wire types,
    nullability, recursively into structs) and the same tagged fields (tag, name, type, nullability);
  * for every field: the same default value (explicit or implied), and the strong type ("as") that Kafka's
    entityType calls for (brokerId -> broker_id, producerId -> producer_id) on scalar fields.

Kafka names are mapped to ours with CamelCase -> snake_case. A field whose name differs must be listed in
RENAMES. Struct type names are ours and are not compared.

Exit status is 0 when everything matches (one summary line is printed), 1 on mismatches (one line each),
2 on usage errors or unreadable files.
"""

import json
import os
import re
import sys
import zipfile

INF = 1 << 30

PRIMITIVES = {"bool", "int8", "int16", "int32", "int64", "uint16", "float64",
              "string", "bytes", "records", "uuid"}
INT_RANGES = {"int8": (-2**7, 2**7 - 1), "int16": (-2**15, 2**15 - 1), "int32": (-2**31, 2**31 - 1),
              "int64": (-2**63, 2**63 - 1), "uint16": (0, 2**16 - 1), "uint32": (0, 2**32 - 1)}
NULLABLE_PRIMITIVES = {"string", "bytes", "records"}
KAFKA_PRIMITIVES = PRIMITIVES | {"uint32"}

# Strong types from model/ids.h and the wire type each one wraps.
STRONG_TYPES = {"offset": "int64", "leader_epoch": "int32", "producer_id": "int64",
                "producer_epoch": "int16", "broker_id": "int32", "partition_id": "int32"}
# Kafka entityType on a scalar field -> the strong type our field must carry.
ENTITY_AS = {"brokerId": "broker_id", "producerId": "producer_id"}

# Our field names that are not the snake_case of Kafka's name.
# Key: (api, "request" | "response", dotted path of OUR names). Value: Kafka's field name.
RENAMES = {
}

FILE_KEYS = {"api", "key", "versions", "flexible", "request", "response"}
FIELD_KEYS = {"name", "type", "versions", "nullable", "default", "as", "tag", "tagged", "fields"}
SNAKE_RE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


# ---------------------------------------------------------------------------------------------------------
# helpers

def snake(name):
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    return s.lower()


def camel(name):
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def parse_range(text, allow_single):
    """'N+', 'N-M', 'none' (and 'N' when allow_single) -> (lo, hi) or None. Raises ValueError."""
    if not isinstance(text, str):
        raise ValueError("version range must be a string, got %r" % (text,))
    t = text.strip()
    if t == "none":
        return None
    m = re.fullmatch(r"(\d+)\+", t)
    if m:
        return (int(m.group(1)), INF)
    m = re.fullmatch(r"(\d+)-(\d+)", t)
    if m:
        lo, hi = int(m.group(1)), int(m.group(2))
        if lo > hi:
            raise ValueError("empty version range %r" % text)
        return (lo, hi)
    if allow_single and re.fullmatch(r"\d+", t):
        return (int(t), int(t))
    raise ValueError("bad version range %r" % text)


def in_range(r, v):
    return r is not None and r[0] <= v <= r[1]


def intersect(a, b):
    if a is None or b is None:
        return None
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    return (lo, hi) if lo <= hi else None


def subset(a, b):
    return a is None or (b is not None and b[0] <= a[0] and a[1] <= b[1])


def fmt_range(r):
    if r is None:
        return "none"
    return "%d+" % r[0] if r[1] >= INF else ("%d" % r[0] if r[0] == r[1] else "%d-%d" % r)


def fmt_versions(vs):
    vs = sorted(vs)
    out, start, prev = [], None, None
    for v in vs + [None]:
        if start is None:
            start = prev = v
        elif v is not None and v == prev + 1:
            prev = v
        else:
            out.append(str(start) if start == prev else "%d-%d" % (start, prev))
            start = prev = v
    return ",".join(out)


def strip_comments(text):
    """Remove // and /* */ comments outside JSON strings."""
    out, i, n, in_str = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_str = False
            i += 1
        elif c == '"':
            in_str = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_type(t):
    return (True, t[2:]) if t.startswith("[]") else (False, t)


class Problems:
    """Collects problems; identical messages from several versions are folded into one line."""

    def __init__(self):
        self.items = {}
        self.order = []

    def add(self, where, msg, version=None):
        key = (where, msg)
        if key not in self.items:
            self.items[key] = set()
            self.order.append(key)
        if version is not None:
            self.items[key].add(version)

    def lines(self):
        for where, msg in self.order:
            vs = self.items[(where, msg)]
            suffix = " [v%s]" % fmt_versions(vs) if vs else ""
            head, nl, rest = msg.partition("\n")
            yield "%s: %s%s%s%s" % (where, head, suffix, nl, rest)

    def __len__(self):
        return len(self.order)


# ---------------------------------------------------------------------------------------------------------
# our files: shape checks

class Ctx:
    def __init__(self, api, served, flexible, problems):
        self.api = api
        self.served = served
        self.flexible = flexible
        self.problems = problems
        self.struct_names = {}


def lint_fields(ctx, side, fields, parent_versions, path):
    """Shape-check one of our field lists. parent_versions is None for the top level."""
    p = ctx.problems
    where_base = "%s %s" % (ctx.api, side)
    if not isinstance(fields, list):
        p.add("%s %s" % (where_base, path or "<top>"), "fields must be a list")
        return False
    ok = True
    names, tags = set(), {}
    for i, f in enumerate(fields):
        if not isinstance(f, dict) or not isinstance(f.get("name"), str):
            p.add("%s %s" % (where_base, path or "<top>"), "field #%d has no name" % i)
            ok = False
            continue
        name = f["name"]
        fpath = path + name
        where = "%s %s" % (where_base, fpath)
        for k in f:
            if k not in FIELD_KEYS:
                p.add(where, "unknown key %r" % k)
                ok = False
        if not SNAKE_RE.match(name):
            p.add(where, "name is not snake_case")
            ok = False
        if name in names:
            p.add(where, "duplicate field name")
            ok = False
        names.add(name)

        # type
        t = f.get("type")
        if not isinstance(t, str):
            p.add(where, "missing type")
            ok = False
            continue
        is_array, base = split_type(t)
        is_struct = base not in PRIMITIVES
        f["_array"], f["_base"], f["_struct"] = is_array, base, is_struct
        if is_struct:
            if not SNAKE_RE.match(base):
                p.add(where, "struct name %r is not snake_case" % base)
                ok = False
            if base in ctx.struct_names:
                p.add(where, "struct name %r already used by %s" % (base, ctx.struct_names[base]))
                ok = False
            ctx.struct_names[base] = "%s %s" % (side, fpath)
            if "fields" not in f:
                p.add(where, "struct type %r needs fields" % t)
                ok = False
        elif "fields" in f:
            p.add(where, "primitive type %r cannot have fields" % t)
            ok = False

        # versions
        try:
            versions = parse_range(f.get("versions"), False)
        except ValueError as e:
            p.add(where, "versions: %s" % e)
            ok = False
            continue
        f["_versions"] = versions
        if parent_versions is not None and not subset(versions, parent_versions):
            p.add(where, "versions %s are outside the parent's %s" % (fmt_range(versions), fmt_range(parent_versions)))
            ok = False
        live = intersect(intersect(versions, ctx.served), parent_versions or (0, INF))
        if live is None:
            p.add(where, "never on the wire in served versions %s; omit it" % fmt_range(ctx.served))
            ok = False
        if versions is not None and versions[1] < INF and versions[1] >= ctx.served[1]:
            p.add(where, "versions %s reach our max %d; write \"%d+\"" % (fmt_range(versions), ctx.served[1], versions[0]))
            ok = False

        # nullable
        nullable = None
        if "nullable" in f:
            try:
                nullable = parse_range(f["nullable"], False)
            except ValueError as e:
                p.add(where, "nullable: %s" % e)
                ok = False
            if nullable is not None:
                if not (is_array or is_struct or base in NULLABLE_PRIMITIVES):
                    p.add(where, "type %s cannot be nullable" % t)
                    ok = False
                if not subset(nullable, versions):
                    p.add(where, "nullable %s is outside versions %s" % (fmt_range(nullable), fmt_range(versions)))
                    ok = False
                if nullable[1] < INF and nullable[1] >= ctx.served[1]:
                    p.add(where, "nullable %s reaches our max %d; write \"%d+\"" % (fmt_range(nullable), ctx.served[1], nullable[0]))
                    ok = False
        f["_nullable"] = nullable

        # tags
        tagged = None
        if ("tag" in f) != ("tagged" in f):
            p.add(where, "tag and tagged go together")
            ok = False
        elif "tag" in f:
            tag = f["tag"]
            if not isinstance(tag, int) or isinstance(tag, bool) or tag < 0:
                p.add(where, "tag must be a non-negative integer")
                ok = False
            elif tag in tags:
                p.add(where, "tag %d already used by %s" % (tag, tags[tag]))
                ok = False
            else:
                tags[tag] = name
            try:
                tagged = parse_range(f["tagged"], False)
            except ValueError as e:
                p.add(where, "tagged: %s" % e)
                ok = False
            if tagged is not None:
                if not subset(tagged, versions):
                    p.add(where, "tagged %s is outside versions %s" % (fmt_range(tagged), fmt_range(versions)))
                    ok = False
                live_tagged = intersect(tagged, ctx.served)
                if live_tagged is not None and not subset(live_tagged, ctx.flexible):
                    p.add(where, "tagged in non-flexible versions %s" % fmt_range(live_tagged))
                    ok = False
        f["_tagged"] = tagged

        # as
        if "as" in f:
            strong = f["as"]
            if strong not in STRONG_TYPES:
                p.add(where, "unknown strong type %r (known: %s)" % (strong, ", ".join(sorted(STRONG_TYPES))))
                ok = False
            elif is_array or is_struct or base != STRONG_TYPES[strong]:
                p.add(where, "\"as\": %r needs a scalar %s, not %s" % (strong, STRONG_TYPES[strong], t))
                ok = False

        # default
        if "default" in f:
            d = f["default"]
            good = True
            if d == "null":
                good = nullable is not None
            elif is_array or is_struct:
                good = False
            elif base in INT_RANGES:
                good = isinstance(d, int) and not isinstance(d, bool) and INT_RANGES[base][0] <= d <= INT_RANGES[base][1]
            elif base == "bool":
                good = isinstance(d, bool)
            elif base == "float64":
                good = isinstance(d, (int, float)) and not isinstance(d, bool)
            elif base == "string":
                good = isinstance(d, str)
            else:
                good = False
            if not good:
                p.add(where, "default %r does not fit type %s%s" % (d, t, "" if nullable or d != "null" else " (not nullable)"))
                ok = False

        if is_struct and "fields" in f:
            sub = fpath + ("[]." if is_array else ".")
            ok = lint_fields(ctx, side, f["fields"], versions, sub) and ok
    return ok


# ---------------------------------------------------------------------------------------------------------
# Kafka files

class KafkaSource:
    """Kafka's message definitions, from a directory or from the kafka-clients jar."""
    JAR_DIR = "common/message/"

    def __init__(self, location):
        self.location = location
        self.jar = zipfile.ZipFile(location) if zipfile.is_zipfile(location) else None
        if self.jar is None and not os.path.isdir(location):
            raise OSError("%s is neither a directory nor a jar" % location)

    def path(self, name):
        return ("%s!/%s%s" % (self.location, self.JAR_DIR, name)) if self.jar else os.path.join(self.location, name)

    def read(self, name):
        if self.jar is None:
            with open(os.path.join(self.location, name), encoding="utf-8") as fh:
                return fh.read()
        try:
            return self.jar.read(self.JAR_DIR + name).decode("utf-8")
        except KeyError:
            raise OSError("no %s%s in the jar" % (self.JAR_DIR, name))


class KafkaMessage:
    def __init__(self, source, name):
        self.path = source.path(name)
        self.doc = json.loads(strip_comments(source.read(name)))
        self.common = {s["name"]: s for s in self.doc.get("commonStructs", [])}

    def children(self, field):
        if "fields" in field:
            return field["fields"]
        _, base = split_type(field["type"])
        if base in self.common:
            return self.common[base]["fields"]
        return None


def kafka_default(field):
    """Kafka's effective default, as a comparable value, or the marker SKIP for arrays and structs."""
    is_array, base = split_type(field["type"])
    if is_array or base not in KAFKA_PRIMITIVES:
        return SKIP
    raw = field.get("default")
    if raw is None:
        return implicit_default(base)
    if raw == "null":
        return NULL
    if base in INT_RANGES:
        return ("int", raw if isinstance(raw, int) else int(str(raw).strip(), 0))
    if base == "bool":
        return ("bool", raw if isinstance(raw, bool) else str(raw).strip() == "true")
    if base == "float64":
        return ("float", float(raw))
    return ("str", str(raw))


def ours_default(field):
    if field["_array"] or field["_struct"]:
        return SKIP
    if "default" not in field:
        return implicit_default(field["_base"])
    d = field["default"]
    if d == "null" and field["_nullable"] is not None:
        return NULL
    base = field["_base"]
    if base in INT_RANGES:
        return ("int", d)
    if base == "bool":
        return ("bool", d)
    if base == "float64":
        return ("float", float(d))
    return ("str", d)


SKIP = ("skip",)
NULL = ("null",)


def implicit_default(base):
    if base in INT_RANGES:
        return ("int", 0)
    if base == "bool":
        return ("bool", False)
    if base == "float64":
        return ("float", 0.0)
    if base == "string":
        return ("str", "")
    return SKIP  # bytes, records, uuid: nothing to compare


def show_default(d):
    if d is NULL or d == NULL:
        return "null"
    return repr(d[1])


# ---------------------------------------------------------------------------------------------------------
# comparison

class Side:
    def __init__(self, api, side, kafka, problems):
        self.api = api
        self.side = side
        self.kafka = kafka
        self.problems = problems
        self.rev = {}
        for (a, s, our_path), kname in RENAMES.items():
            if a == api and s == side:
                parent, _, leaf = our_path.rpartition(".")
                self.rev[(parent, kname)] = leaf
        self.used_renames = set()

    def kname(self, kfield, parent_key):
        leaf = self.rev.get((parent_key, kfield["name"]))
        if leaf is not None:
            self.used_renames.add((parent_key, kfield["name"]))
            return leaf
        return snake(kfield["name"])

    def where(self, path):
        return "%s %s %s" % (self.api, self.side, path.rstrip(".") or "<top>")


def kafka_field_range(kf, key, message):
    try:
        return parse_range(kf[key], True) if key in kf else None
    except ValueError as e:
        raise ValueError("%s: field %s: %s" % (message.path, kf.get("name"), e))


def describe_type(is_array, is_struct, base):
    if is_struct:
        return "[]struct" if is_array else "struct"
    return ("[]" if is_array else "") + base


def wire_view_ours(fields, v):
    regular, tagged = [], {}
    for f in fields:
        if not in_range(f["_versions"], v):
            continue
        if f.get("_tagged") is not None and in_range(f["_tagged"], v):
            tagged[f["tag"]] = f
        else:
            regular.append(f)
    return regular, tagged


def wire_view_kafka(fields, v, message):
    regular, tagged = [], {}
    for kf in fields:
        if not in_range(kafka_field_range(kf, "versions", message), v):
            continue
        tv = kafka_field_range(kf, "taggedVersions", message)
        if "tag" in kf and in_range(tv, v):
            tagged[kf["tag"]] = kf
        else:
            regular.append(kf)
    return regular, tagged


def kafka_shape(kf, message):
    is_array, base = split_type(kf["type"])
    return is_array, base not in KAFKA_PRIMITIVES, base


def compare_field(s, of, kf, v, path, parent_key):
    """Compare one field present in version v on both sides (names already matched)."""
    where = s.where(path + of["name"])
    k_array, k_struct, k_base = kafka_shape(kf, s.kafka)
    ours_t = describe_type(of["_array"], of["_struct"], of["_base"])
    kafka_t = describe_type(k_array, k_struct, k_base)
    if ours_t != kafka_t:
        s.problems.add(where, "type: ours %s, kafka %s (%s)" % (ours_t, kafka_t, kf["type"]), v)
        return
    o_null = in_range(of["_nullable"], v)
    k_null = in_range(kafka_field_range(kf, "nullableVersions", s.kafka), v)
    if o_null != k_null:
        s.problems.add(where, "nullable: ours %s, kafka %s" % ("yes" if o_null else "no", "yes" if k_null else "no"), v)
    if of["_struct"]:
        kids = s.kafka.children(kf)
        if kids is None:
            s.problems.add(where, "kafka struct %s has no fields" % kf["type"], v)
            return
        sub = path + of["name"] + ("[]." if of["_array"] else ".")
        compare_struct(s, of["fields"], kids, v, sub, (parent_key + "." if parent_key else "") + of["name"])


def compare_struct(s, ours, kafka, v, path, parent_key):
    o_reg, o_tag = wire_view_ours(ours, v)
    k_reg, k_tag = wire_view_kafka(kafka, v, s.kafka)
    o_names = [f["name"] for f in o_reg]
    k_names = [s.kname(kf, parent_key) for kf in k_reg]
    where = s.where(path)
    if o_names != k_names:
        i = next((i for i, (a, b) in enumerate(zip(o_names, k_names)) if a != b), min(len(o_names), len(k_names)))
        s.problems.add(where, "fields on the wire differ at #%d\n    ours:  %s\n    kafka: %s"
                       % (i, ", ".join(o_names) or "(none)", ", ".join(k_names) or "(none)"), v)
    k_by_name = dict(zip(k_names, k_reg))
    for of in o_reg:
        kf = k_by_name.get(of["name"])
        if kf is not None:
            compare_field(s, of, kf, v, path, parent_key)
    for tag in sorted(set(o_tag) | set(k_tag)):
        of, kf = o_tag.get(tag), k_tag.get(tag)
        if kf is None:
            s.problems.add(where, "tagged field %d (%s): kafka has no such tag" % (tag, of["name"]), v)
            continue
        kname = s.kname(kf, parent_key)
        if of is None:
            s.problems.add(where, "tagged field %d (%s): missing in ours" % (tag, kname), v)
            continue
        if of["name"] != kname:
            s.problems.add(where, "tagged field %d: ours %s, kafka %s" % (tag, of["name"], kname), v)
            continue
        compare_field(s, of, kf, v, path, parent_key)


def compare_statics(s, ours, kafka, path, parent_key):
    """Version-independent checks: defaults and strong types, for fields that exist on both sides."""
    k_by_name = {s.kname(kf, parent_key): kf for kf in kafka}
    for of in ours:
        kf = k_by_name.get(of["name"])
        if kf is None or "_versions" not in of:
            continue  # reported by the per-version comparison
        where = s.where(path + of["name"])
        k_array, k_struct, k_base = kafka_shape(kf, s.kafka)
        if describe_type(of["_array"], of["_struct"], of["_base"]) != describe_type(k_array, k_struct, k_base):
            continue
        kd, od = kafka_default(kf), ours_default(of)
        if kd != SKIP and od != SKIP and kd != od:
            s.problems.add(where, "default: ours %s, kafka %s" % (show_default(od), show_default(kd)))
        want = ENTITY_AS.get(kf.get("entityType"))
        if want and not of["_array"] and not of["_struct"] and STRONG_TYPES[want] == of["_base"] and of.get("as") != want:
            s.problems.add(where, "kafka entityType %s: expected \"as\": \"%s\"" % (kf["entityType"], want))
        if of["_struct"]:
            kids = s.kafka.children(kf)
            if kids is not None:
                compare_statics(s, of["fields"], kids, path + of["name"] + ("[]." if of["_array"] else "."),
                                (parent_key + "." if parent_key else "") + of["name"])


# ---------------------------------------------------------------------------------------------------------
# driver

def sources_for(kafkas, kname, served):
    """[(source, versions)]: the first source whose request definition covers every served version, else each
    served version from the first source that defines it (Produce v0-2 are only in 3.9, v12 only in 4.x)."""
    valid = []
    for kafka in kafkas:
        try:
            valid.append((kafka, parse_range(KafkaMessage(kafka, "%sRequest.json" % kname).doc.get("validVersions"),
                                             True)))
        except (OSError, ValueError):
            continue
    for kafka, kvalid in valid:
        if subset(served, kvalid):
            return [(kafka, served)]
    out = []
    for v in range(served[0], served[1] + 1):
        kafka = next((k for k, kvalid in valid if in_range(kvalid, v)), None)
        if kafka is None:
            return [(kafkas[0], served)]  # reported: outside Kafka's validVersions
        if out and out[-1][0] is kafka and out[-1][1][1] == v - 1:
            out[-1] = (kafka, (out[-1][1][0], v))
        else:
            out.append((kafka, (v, v)))
    return out


def check_side(api, doc, side, kname, kafka, served, flexible, shapes_ok, problems):
    """Compares one side of an API with one Kafka source over the versions `served` takes from it; returns the
    RENAMES entries it found no Kafka field for, as (where, parent key, leaf, kafka name)."""
    kname_file = "%s%s.json" % (kname, side.capitalize())
    kpath = kafka.path(kname_file)
    try:
        msg = KafkaMessage(kafka, kname_file)
    except (OSError, ValueError) as e:
        problems.add("%s %s" % (api, side), "cannot read Kafka definition %s: %s" % (kpath, e))
        return set()
    kdoc = msg.doc
    where = "%s %s" % (api, side)
    if kdoc.get("apiKey") != doc.get("key"):
        problems.add(where, "key: ours %r, kafka %r" % (doc.get("key"), kdoc.get("apiKey")))
    if kdoc.get("type") != side:
        problems.add(where, "kafka file %s has type %r" % (kpath, kdoc.get("type")))
    try:
        kvalid = parse_range(kdoc.get("validVersions"), True)
        kflex = parse_range(kdoc.get("flexibleVersions", "none"), True)
    except ValueError as e:
        problems.add(where, "kafka file %s: %s" % (kpath, e))
        return set()
    if not subset(served, kvalid):
        problems.add(where, "served versions %s are not inside kafka's validVersions %s"
                     % (fmt_range(served), fmt_range(kvalid)))
    if (flexible and flexible[0]) != (kflex and kflex[0]):
        problems.add(where, "flexible: ours %s, kafka %s" % (fmt_range(flexible), fmt_range(kflex)))
    if not shapes_ok:
        return set()  # the comparison would only repeat the shape problems
    s = Side(api, side, msg, problems)
    try:
        for v in range(served[0], served[1] + 1):
            compare_struct(s, doc[side], kdoc.get("fields", []), v, "", "")
        compare_statics(s, doc[side], kdoc.get("fields", []), "", "")
    except ValueError as e:
        problems.add(where, str(e))
    return {(where, parent_key, leaf, kfield_name) for (parent_key, kfield_name), leaf in s.rev.items()
            if (parent_key, kfield_name) not in s.used_renames}



def check_api(path, kafkas, problems):
    """Returns the number of versions checked, or 0 if the file could not be checked."""
    fname = os.path.basename(path)
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as e:
        problems.add(fname, "cannot read: %s" % e)
        return 0
    if not isinstance(doc, dict):
        problems.add(fname, "top level must be an object")
        return 0
    for k in doc:
        if k not in FILE_KEYS:
            problems.add(fname, "unknown key %r" % k)
    for k in FILE_KEYS:
        if k not in doc:
            problems.add(fname, "missing key %r" % k)
    api = doc.get("api")
    if not isinstance(api, str) or not SNAKE_RE.match(api):
        problems.add(fname, "api must be a snake_case string")
        return 0
    if fname != api + ".json":
        problems.add(fname, "file name must be %s.json" % api)
    try:
        served = parse_range(doc.get("versions"), False)
        if served is None or served[1] >= INF:
            raise ValueError("versions must be a closed range \"N-M\", got %r" % doc.get("versions"))
    except ValueError as e:
        problems.add(api, "versions: %s" % e)
        return 0
    try:
        flexible = parse_range(doc.get("flexible"), False)
        if flexible is not None and flexible[1] < INF:
            raise ValueError("flexible must be \"N+\" or \"none\", got %r" % doc.get("flexible"))
    except ValueError as e:
        problems.add(api, "flexible: %s" % e)
        return 0

    ctx = Ctx(api, served, flexible, problems)
    shapes_ok = True
    for side in ("request", "response"):
        shapes_ok = lint_fields(ctx, side, doc.get(side, []), None, "") and shapes_ok

    kname = camel(api)
    for side in ("request", "response"):
        unused_renames = None
        for kafka, versions in sources_for(kafkas, kname, served):
            unused = check_side(api, doc, side, kname, kafka, versions, flexible, shapes_ok, problems)
            unused_renames = unused if unused_renames is None else unused_renames & unused
        for where, parent_key, leaf, kfield_name in sorted(unused_renames or ()):
            problems.add(where, "RENAMES entry %s.%s -> %s matches no Kafka field"
                         % (parent_key or "<top>", leaf, kfield_name))
    return served[1] - served[0] + 1


def main(argv):
    if len(argv) < 3:
        sys.stderr.write("usage: %s SCHEMA_DIR KAFKA_MESSAGES_DIR_OR_JAR...\n" % argv[0])
        return 2
    schema_dir = argv[1]
    if not os.path.isdir(schema_dir):
        sys.stderr.write("check_schemas: %s is not a directory\n" % schema_dir)
        return 2
    try:
        kafkas = [KafkaSource(location) for location in argv[2:]]
    except OSError as e:
        sys.stderr.write("check_schemas: %s (scripts/install-deps fetches the kafka-clients jar)\n" % e)
        return 2
    files = sorted(f for f in os.listdir(schema_dir) if f.endswith(".json"))
    if not files:
        sys.stderr.write("check_schemas: no .json files in %s\n" % schema_dir)
        return 2
    problems = Problems()
    apis = versions = 0
    for f in files:
        n = check_api(os.path.join(schema_dir, f), kafkas, problems)
        if n:
            apis += 1
            versions += n
    if problems:
        for line in problems.lines():
            sys.stderr.write("check_schemas: %s\n" % line)
        sys.stderr.write("check_schemas: %d mismatch(es) in %s\n" % (len(problems), schema_dir))
        return 1
    print("checked %d apis, %d versions" % (apis, versions))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
