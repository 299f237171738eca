#!/usr/bin/env python3
"""Writes the seed corpus of offsets_records_fuzz: valid records of __consumer_offsets in every version Kafka
has written, and the consumer's embedded protocol in every version, each field written out from Kafka's
schemas (OffsetCommitKey/Value, GroupMetadataKey/Value, ConsumerProtocolSubscription/Assignment).

usage: broker/src/group/fuzz/make_corpus.py [OUT_DIR]   (default: offsets_records_corpus next to this script)

Each file is one selector byte (see offsets_records_fuzz.cc) followed by the input.
"""

import os
import struct
import sys


def i16(v):
    return struct.pack(">h", v)


def i32(v):
    return struct.pack(">i", v)


def i64(v):
    return struct.pack(">q", v)


def uvarint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def string(s, flexible=False):
    """A string, or None for null; classic: int16 length, flexible: compact (varint length + 1)."""
    if s is None:
        return uvarint(0) if flexible else i16(-1)
    raw = s.encode()
    return (uvarint(len(raw) + 1) if flexible else i16(len(raw))) + raw


def blob(b, flexible=False):
    if b is None:
        return uvarint(0) if flexible else i32(-1)
    return (uvarint(len(b) + 1) if flexible else i32(len(b))) + b


def array_length(n, flexible=False):
    return uvarint(n + 1) if flexible else i32(n)


NO_TAGS = uvarint(0)


# --- the consumer protocol ---

def subscription(version, topics, user_data=None, owned=(), generation=-1, rack=None, extra=b""):
    out = i16(version) + i32(len(topics)) + b"".join(string(t) for t in topics) + blob(user_data)
    if version >= 1:
        out += topic_partitions(owned)
    if version >= 2:
        out += i32(generation)
    if version >= 3:
        out += string(rack)
    return out + extra


def topic_partitions(pairs):
    out = i32(len(pairs))
    for topic, partitions in pairs:
        out += string(topic) + i32(len(partitions)) + b"".join(i32(p) for p in partitions)
    return out


def assignment(version, pairs, user_data=None, extra=b""):
    return i16(version) + topic_partitions(pairs) + blob(user_data) + extra


# --- keys ---

def offset_commit_key(version, group, topic, partition):
    return i16(version) + string(group) + string(topic) + i32(partition)


def group_metadata_key(group):
    return i16(2) + string(group)


# --- values ---

def offset_commit_value(version, offset, epoch, metadata, commit_ts, expire_ts=-1, tags=b""):
    flexible = version >= 4
    out = i16(version) + i64(offset)
    if version >= 3:
        out += i32(epoch)
    out += string(metadata, flexible) + i64(commit_ts)
    if version == 1:
        out += i64(expire_ts)
    if flexible:
        out += tags or NO_TAGS
    return out


def member(version, member_id, instance_id, client_id, host, rebalance, session, sub, assign, tags=b""):
    flexible = version >= 4
    out = string(member_id, flexible)
    if version >= 3:
        out += string(instance_id, flexible)
    out += string(client_id, flexible) + string(host, flexible)
    if version >= 1:
        out += i32(rebalance)
    out += i32(session) + blob(sub, flexible) + blob(assign, flexible)
    if flexible:
        out += tags or NO_TAGS
    return out


def group_metadata_value(version, protocol_type, generation, protocol, leader, state_ts, members, tags=b""):
    flexible = version >= 4
    out = i16(version) + string(protocol_type, flexible) + i32(generation)
    out += string(protocol, flexible) + string(leader, flexible)
    if version >= 2:
        out += i64(state_ts)
    out += array_length(len(members), flexible) + b"".join(member(version, *m) for m in members)
    if flexible:
        out += tags or NO_TAGS
    return out


def seeds():
    sub_v3 = subscription(3, ["orders", "payments"], None, [("orders", [0, 2])], 4, "eu-west-1a")
    assign_v3 = assignment(3, [("orders", [0, 2]), ("payments", [1])])
    members = [
        ("consumer-1-6f0e6d1c-0f4b-4b8e-9d2a-1b2c3d4e5f60", "instance-1", "consumer-1", "/10.0.0.1", 300000,
         45000, sub_v3, assign_v3),
        ("consumer-2-1d2c3b4a-5e6f-4a1b-8c9d-0e1f2a3b4c5d", None, "consumer-2", "/10.0.0.2", 300000, 45000,
         subscription(0, ["orders", "payments"]), assignment(0, [("orders", [1]), ("payments", [0])])),
    ]
    yield "key-offset-commit-v0", b"k" + offset_commit_key(0, "my-group", "orders", 0)
    yield "key-offset-commit-v1", b"k" + offset_commit_key(1, "my-group", "orders", 7)
    yield "key-group-metadata-v2", b"k" + group_metadata_key("my-group")
    # KIP-848 records Ferry skips: ConsumerGroupMetadataKey (3) and StreamsGroupTopologyKey (23).
    yield "key-consumer-group-v3", b"k" + i16(3) + string("my-group")
    yield "key-streams-topology-v23", b"k" + i16(23) + string("my-app")

    for version in range(5):
        yield "offset-commit-value-v%d" % version, b"o" + offset_commit_value(version, 42, 7, "m", 1700000000000)
    yield "offset-commit-value-v1-expire", b"o" + offset_commit_value(1, 42, -1, "", 1700000000000, 1700086400000)
    # Kafka 4 writes the topic id as tagged field 0.
    topic_id = bytes(range(1, 17))
    yield ("offset-commit-value-v4-topic-id",
           b"o" + offset_commit_value(4, 42, 7, "m", 1700000000000, tags=uvarint(1) + uvarint(0) + uvarint(16) + topic_id))

    for version in range(5):
        yield ("group-metadata-value-v%d" % version,
               b"g" + group_metadata_value(version, "consumer", 3, "range", members[0][0], 1700000000000, members))
    yield "group-metadata-value-v3-empty", b"g" + group_metadata_value(3, "consumer", 4, None, None, 1700000000000, [])
    tagged_member = members[0] + (uvarint(1) + uvarint(3) + uvarint(2) + b"\xaa\xbb",)
    yield ("group-metadata-value-v4-tagged",
           b"g" + group_metadata_value(4, "consumer", 3, "cooperative-sticky", members[0][0], 1700000000000,
                                       [tagged_member], tags=uvarint(1) + uvarint(9) + uvarint(1) + b"\x01"))
    yield ("group-metadata-value-v3-connect",
           b"g" + group_metadata_value(3, "connect", 12, "sessioned", "connect-1", 1700000000000,
                                       [("connect-1", None, "connect-1", "/10.0.0.3", 60000, 10000, b"\x00\x01", b"")]))

    yield "subscription-v0", b"s" + subscription(0, ["orders"], b"ud")
    yield "subscription-v1", b"s" + subscription(1, ["orders", "payments"], None, [("orders", [0, 1])])
    yield "subscription-v2", b"s" + subscription(2, ["orders"], None, [("orders", [0])], 9)
    yield "subscription-v3", b"s" + sub_v3
    yield "subscription-v3-no-rack", b"s" + subscription(3, [], None, [], -1, None)
    yield "subscription-v4-future", b"s" + subscription(4, ["orders"], None, [], 2, "r", extra=i32(5) + b"new")

    for version in range(4):
        yield "assignment-v%d" % version, b"a" + assignment(version, [("orders", [0, 2]), ("payments", [1])], b"u")
    yield "assignment-v0-empty", b"a" + assignment(0, [])
    yield "assignment-v4-future", b"a" + assignment(4, [("orders", [3])], None, extra=b"\x00\x00")

    # Whole records: a byte with the key's length, the key, the value (none: a tombstone).
    def record(key, value=b""):
        return b"r" + bytes([len(key)]) + key + value

    ok = offset_commit_key(1, "my-group", "orders", 7)
    gk = group_metadata_key("my-group")
    yield "record-offset-commit", record(ok, offset_commit_value(3, 42, 7, "", 1700000000000))
    yield "record-offset-commit-tombstone", record(ok)
    yield "record-group-metadata", record(gk, group_metadata_value(3, "consumer", 3, "range", members[0][0], 1, members[:1]))
    yield "record-group-metadata-tombstone", record(gk)
    yield "record-unknown", record(i16(4) + string("my-group"), b"\x00\x00\x00")

    # KIP-848 consumer group records (types 3, 5-8): value version 0, flexible, from Kafka 4's schemas.
    def topic_partitions(topics):
        out = array_length(len(topics), True)
        for topic_id, parts in topics:
            out += topic_id + array_length(len(parts), True) + b"".join(i32(p) for p in parts) + NO_TAGS
        return out

    other_id = bytes(range(17, 33))
    member_key = lambda t: i16(t) + string("my-group") + string("m-1")  # noqa: E731
    yield "record-consumer-group-epoch", record(i16(3) + string("my-group"), i16(0) + i32(4) + NO_TAGS)
    yield "record-consumer-group-epoch-hash", record(
        i16(3) + string("my-group"), i16(0) + i32(4) + uvarint(1) + uvarint(0) + uvarint(8) + i64(123456789))
    yield "record-consumer-member", record(member_key(5), i16(0) + string("i-1", True) + string(None, True) +
                                            string("consumer-1", True) + string("/10.0.0.1", True) +
                                            array_length(2, True) + string("orders", True) + string("payments", True) +
                                            string(None, True) + i32(300000) + string("uniform", True) + NO_TAGS)
    yield "record-consumer-member-tombstone", record(member_key(5))
    yield "record-consumer-target-epoch", record(i16(6) + string("my-group"), i16(0) + i32(4) + NO_TAGS)
    yield "record-consumer-target", record(member_key(7), i16(0) + topic_partitions([(topic_id, [0, 2]), (other_id, [1])]) + NO_TAGS)
    yield "record-consumer-current", record(member_key(8), i16(0) + i32(4) + i32(3) + b"\x01" +
                                             topic_partitions([(topic_id, [0])]) + topic_partitions([(other_id, [1])]) + NO_TAGS)
    yield "record-consumer-current-tombstone", record(member_key(8))


def main(argv):
    out = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "offsets_records_corpus")
    os.makedirs(out, exist_ok=True)
    for name, data in seeds():
        with open(os.path.join(out, name), "wb") as fh:
            fh.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
