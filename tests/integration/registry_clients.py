"""The schema registry as confluent-kafka-python's clients use it (run with the interpreter of the environment
scripts/install-deps makes): SchemaRegistryClient, and the Avro, JSON Schema and Protobuf serializers producing
to and consuming from Ferry with the schema id in every record. Prints one JSON object with what it saw.

usage: registry_clients.py SCENARIO BOOTSTRAP REGISTRY_URL [ARG...]

  serde FORMAT TOPIC        produce records of schema version 1, evolve compatibly to version 2 and produce
                            more, try an incompatible version 3, then consume everything
  levels SUBJECT            for each compatibility level, whether it accepts evolutions that only the
                            transitive levels of one direction refuse
  consume FORMAT TOPIC N    consume N records of TOPIC (written by `serde`) with the deserializer
"""
import json
import struct
import sys

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext

USER_V1 = {"type": "record", "name": "User", "namespace": "ferry.test",
           "fields": [{"name": "name", "type": "string"}]}
USER_V2 = {**USER_V1, "fields": USER_V1["fields"] + [{"name": "age", "type": "int", "default": 0}]}
USER_V3 = {**USER_V1, "fields": USER_V1["fields"] + [{"name": "email", "type": "string"}]}  # no default

JSON_V1 = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"],
           "additionalProperties": False}
JSON_V2 = {**JSON_V1, "properties": {**JSON_V1["properties"], "age": {"type": "integer"}}}
JSON_V3 = {**JSON_V1, "properties": {"name": {"type": "integer"}}}  # the type changed


def proto_classes():
    """Three versions of a Protobuf message, made at run time from descriptors (no protoc needed)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    classes = []
    for version, fields in ((1, [("name", 1, "TYPE_STRING")]),
                            (2, [("name", 1, "TYPE_STRING"), ("age", 2, "TYPE_INT32")]),
                            (3, [("name", 1, "TYPE_INT64")])):  # a string turned into a number
        f = descriptor_pb2.FileDescriptorProto(name=f"user_v{version}.proto", package="ferry.test", syntax="proto3")
        m = f.message_type.add(name="User")
        for name, number, kind in fields:
            m.field.add(name=name, number=number, type=getattr(descriptor_pb2.FieldDescriptorProto, kind),
                        label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
        pool = descriptor_pool.DescriptorPool()
        pool.Add(f)
        classes.append(message_factory.GetMessageClass(pool.FindMessageTypeByName("ferry.test.User")))
    return classes


def serializers(fmt, client):
    """(serializer per version, deserializer, value per version as a plain dict maker)."""
    if fmt == "avro":
        from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
        sers = [AvroSerializer(client, json.dumps(s)) for s in (USER_V1, USER_V2, USER_V3)]
        values = [lambda i: {"name": f"n{i}"}, lambda i: {"name": f"n{i}", "age": i},
                  lambda i: {"name": f"n{i}", "email": "e"}]
        return sers, AvroDeserializer(client), values, lambda v: v
    if fmt == "json":
        from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
        sers = [JSONSerializer(json.dumps(s), client) for s in (JSON_V1, JSON_V2, JSON_V3)]
        values = [lambda i: {"name": f"n{i}"}, lambda i: {"name": f"n{i}", "age": i}, lambda i: {"name": i}]
        return sers, JSONDeserializer(None, schema_registry_client=client), values, lambda v: v
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
    v1, v2, v3 = proto_classes()
    conf = {"use.deprecated.format": False}
    sers = [ProtobufSerializer(c, client, conf) for c in (v1, v2, v3)]
    values = [lambda i: v1(name=f"n{i}"), lambda i: v2(name=f"n{i}", age=i), lambda i: v3(name=i)]
    return sers, ProtobufDeserializer(v2, conf), values, lambda m: {"name": m.name, "age": m.age}


def schema_id(raw):
    assert raw[0] == 0, f"magic byte {raw[0]}"
    return struct.unpack(">I", raw[1:5])[0]


def consume(bootstrap, topic, count, deserializer, plain):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"registry-{topic}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    seen = []
    try:
        while len(seen) < count:
            msg = consumer.poll(30)
            if msg is None:
                break
            if msg.error():
                continue
            value = deserializer(msg.value(), SerializationContext(topic, MessageField.VALUE))
            seen.append({"id": schema_id(msg.value()), "value": plain(value)})
    finally:
        consumer.close()
    return seen


def serde(bootstrap, url, fmt, topic):
    client = SchemaRegistryClient({"url": url})
    sers, deserializer, values, plain = serializers(fmt, client)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    ctx = SerializationContext(topic, MessageField.VALUE)
    produced = 0
    for version in (0, 1):
        for i in range(5):
            producer.produce(topic, value=sers[version](values[version](i), ctx))
            produced += 1
    if producer.flush(60) != 0:
        sys.exit("records were not acknowledged")
    incompatible = None
    try:
        sers[2](values[2](0), ctx)
    except SchemaRegistryError as e:
        incompatible = {"http_status": e.http_status_code, "error_code": e.error_code}
    subject = f"{topic}-value"
    versions = client.get_versions(subject)
    latest = client.get_latest_version(subject)
    seen = consume(bootstrap, topic, produced, deserializer, plain)
    print(json.dumps({"versions": versions, "latest_id": latest.schema_id, "incompatible": incompatible,
                      "consumed": seen}))


def record(*fields):
    return json.dumps({"type": "record", "name": "Person", "namespace": "ferry.test", "fields": list(fields)})


NAME = {"name": "name", "type": "string"}
# BACKWARD_CHAIN's candidate reads the latest version's data (age is there) but not the first one's (age has no
# default): only the transitive levels that read backward refuse it. FORWARD_CHAIN's candidate drops email, which
# the latest version can default but the first cannot: only the transitive levels that read forward refuse it.
BACKWARD_CHAIN = ([record(NAME), record(NAME, {"name": "age", "type": "int", "default": 0})],
                  record(NAME, {"name": "age", "type": "int"}))
FORWARD_CHAIN = ([record(NAME, {"name": "email", "type": "string"}),
                  record(NAME, {"name": "email", "type": "string", "default": ""})], record(NAME))


def levels(url, subject):
    client = SchemaRegistryClient({"url": url})
    verdicts = {}
    for level in ("NONE", "BACKWARD", "FORWARD", "FULL", "BACKWARD_TRANSITIVE", "FORWARD_TRANSITIVE",
                  "FULL_TRANSITIVE"):
        verdicts[level] = {}
        for chain_name, (chain, candidate) in (("backward_chain", BACKWARD_CHAIN), ("forward_chain", FORWARD_CHAIN)):
            name = f"{subject}-{level.lower()}-{chain_name}"
            client.set_compatibility(name, "NONE")
            for text in chain:
                client.register_schema(name, Schema(text, "AVRO"))
            client.set_compatibility(name, level)
            checked = client.test_compatibility(name, Schema(candidate, "AVRO"))
            try:
                client.register_schema(name, Schema(candidate, "AVRO"))
                registered = True
            except SchemaRegistryError as e:
                registered = e.http_status_code
            verdicts[level][chain_name] = {"checked": checked, "registered": registered}
    print(json.dumps(verdicts))


def main():
    scenario, bootstrap, url = sys.argv[1:4]
    if scenario == "serde":
        serde(bootstrap, url, sys.argv[4], sys.argv[5])
    elif scenario == "levels":
        levels(url, sys.argv[4])
    elif scenario == "consume":
        fmt, topic, count = sys.argv[4], sys.argv[5], int(sys.argv[6])
        client = SchemaRegistryClient({"url": url})
        _, deserializer, _, plain = serializers(fmt, client)
        print(json.dumps({"consumed": consume(bootstrap, topic, count, deserializer, plain)}))
    else:
        sys.exit(f"unknown scenario {scenario}")


if __name__ == "__main__":
    main()
