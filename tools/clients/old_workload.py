"""One real client, pinned to old protocol versions, through the tap: the proof with old
versions (tools/clients/tap-proof-old.sh, against a Kafka 3.9 broker).

    python old_workload.py SETTING BOOTSTRAP TOPIC [--direct BROKER [--create-only]]

SETTING names a client and what pins it (SETTINGS below); BOOTSTRAP is the tap. A setting
whose versions have no CreateTopics has TOPIC (one partition) created first at BROKER, past
the tap, by the venv's kafka-python at its own versions; the others create it through the tap
themselves. Then the client produces five known records per codec of the old message formats
(produce_known.py's, without headers, which these formats do not carry), consumes all of them
(in a consumer group where the versions have one, else by assignment), commits, reads the
committed offset back, lists offsets, and makes the admin calls its versions allow. Any answer
that does not match what was sent raises, so the run ends non-zero. Prints one JSON line, whose
`observed` (the records consumed with their offsets and timestamps, the committed, end and
beginning offsets, the group's state) compare_old_clients.py compares between servers.

`SETTINGS` and `expected_records` import no client library: check_tap_log.py reads them with
the system's python3.
"""

import argparse
import dataclasses
import json
import time

from produce_known import known_records

TIMEOUT = 60
# zstd needs the v2 record batch (Produce v3+), which none of these versions write.
CODECS = ["none", "gzip", "snappy", "lz4"]


@dataclasses.dataclass(frozen=True)
class Setting:
    client: str  # kafka-python, confluent-kafka or java
    pin: str  # what pins the versions, as the client is told
    what: str  # what the client does at those versions, for the note
    creates_topic: bool = False  # its versions have CreateTopics
    groups: bool = True  # its versions have the group membership APIs (JoinGroup, SyncGroup)


SETTINGS = {
    "kafka-python-0.8.2": Setting(
        "kafka-python", "api_version=(0, 8, 2)",
        "assigned partition, offsets committed to Kafka (no group membership before 0.9)",
        groups=False),
    "kafka-python-0.9": Setting(
        "kafka-python", "api_version=(0, 9)", "consumer group, admin reads"),
    "kafka-python-0.10": Setting(
        "kafka-python", "api_version=(0, 10)", "consumer group, admin reads"),
    "kafka-python-0.10.1": Setting(
        "kafka-python", "api_version=(0, 10, 1)",
        "creates and deletes its topic, consumer group, admin reads", creates_topic=True),
    "confluent-kafka-0.9.0": Setting(
        "confluent-kafka", "api.version.request=false, broker.version.fallback=0.9.0",
        "consumer group, admin reads"),
    "java-0.9.0.1": Setting("java", "kafka-clients 0.9.0.1", "consumer group, topic listing"),
    "java-0.10.0.1": Setting("java", "kafka-clients 0.10.0.1", "consumer group, topic listing"),
    "java-0.10.2.2": Setting(
        "java", "kafka-clients 0.10.2.2 (asks ApiVersions v0, uses its own maximum)",
        "consumer group, topic listing"),
    "java-0.11.0.3": Setting(
        "java", "kafka-clients 0.11.0.3 (asks ApiVersions v0, uses its own maximum)",
        "consumer group, topic listing"),
}

JAVA_PER_CODEC = 5


def records(name, codec):
    """What SETTING `name` produces with `codec`: produce_known.py's records, keyed by the
    setting's name, without headers."""
    return [{**r, "headers": []} for r in known_records(name, codec)]


def expected_records(name):
    """(codec, key, value) of every record setting `name` produces with a codec (the Java
    workload's acks=0 records have no codec of their own and are not listed)."""
    for codec in CODECS:
        if SETTINGS[name].client == "java":
            # OldWorkload.java's keys and values.
            for i in range(JAVA_PER_CODEC):
                value = f"{name} {codec} record {i} " + "x" * (40 * i)
                yield codec, f"{name}-{codec}-{i}".encode(), value.encode()
        else:
            for r in records(name, codec):
                yield codec, r["key"] or b"", r["value"] or b""


def observed_record(offset, key, value, timestamp):
    """A consumed record as compare_old_clients.py compares it: offset, key and value in hex
    (some known values are not text), and the timestamp the client reports (set by these
    producers; none before magic 1)."""
    return [offset, None if key is None else key.hex(), None if value is None else value.hex(),
            timestamp]


def check(what, got, want):
    if got != want:
        raise RuntimeError(f"{what}: got {got!r}, want {want!r}")


def sent_pairs(name):
    return sorted((key, value) for _, key, value in expected_records(name))


def create_topic_directly(broker, topic):
    """The topic, made past the tap at the venv's kafka-python's own versions, for settings
    whose versions cannot make it."""
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=broker)
    try:
        admin.create_topics([NewTopic(topic, 1, 1)])
    finally:
        admin.close()


# kafka-python: api_version pins every request's version (no ApiVersions before 0.10).


def run_kafka_python(name, bootstrap, topic, group):
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import NewTopic

    api_version = tuple(int(n) for n in name.rsplit("-", 1)[1].split("."))
    setting = SETTINGS[name]
    pinned = {"bootstrap_servers": bootstrap, "api_version": api_version}
    admin = KafkaAdminClient(**pinned) if api_version >= (0, 9) else None
    if setting.creates_topic:
        admin.create_topics([NewTopic(topic, 1, 1)])

    for codec in CODECS:
        producer = KafkaProducer(**pinned, compression_type=None if codec == "none" else codec,
                                 linger_ms=50, enable_idempotence=False)
        futures = [
            producer.send(topic, key=r["key"], value=r["value"], partition=0,
                          # Magic 0 (before 0.10) has no timestamps.
                          timestamp_ms=r["timestamp"] if api_version >= (0, 10) else None)
            for r in records(name, codec)
        ]
        producer.flush(30)
        for f in futures:
            f.get(timeout=30)
        producer.close(timeout=10)

    want = sent_pairs(name)
    partition = TopicPartition(topic, 0)
    consumer = KafkaConsumer(**pinned, group_id=group, auto_offset_reset="earliest",
                             enable_auto_commit=False)
    if setting.groups:
        consumer.subscribe([topic])
    else:
        consumer.assign([partition])
    got, consumed, deadline = [], [], time.monotonic() + TIMEOUT
    while len(got) < len(want) and time.monotonic() < deadline:
        for messages in consumer.poll(timeout_ms=500).values():
            got.extend((m.key or b"", m.value or b"") for m in messages)
            consumed.extend(observed_record(m.offset, m.key, m.value, m.timestamp)
                            for m in messages)
    check("records read", sorted(got), want)
    consumer.commit()
    observed = {"consumed": sorted(consumed), "committed": consumer.committed(partition),
                "end": consumer.end_offsets([partition])[partition],
                "beginning": consumer.beginning_offsets([partition])[partition]}
    check("committed offset", observed["committed"], len(want))
    check("end offset", observed["end"], len(want))
    check("beginning offset", observed["beginning"], 0)
    check("topic listed", topic in consumer.topics(), True)
    consumer.close()
    state = "assigned"
    if admin is not None:
        check("topic listed by the admin client", topic in admin.list_topics(), True)
        check("partitions described", len(admin.describe_topics([topic])[0]["partitions"]), 1)
        check("group listed", group in {g["group_id"] for g in admin.list_groups()}, True)
        state = admin.describe_groups([group])[group]["group_state"]
        # Before OffsetFetch v2 (0.10.2) a group's offsets are asked for by partition.
        offsets = admin.list_group_offsets({group: [partition]})[group]
        check("group offset", offsets[partition].offset, len(want))
        if setting.creates_topic:
            admin.delete_topics([topic])
        admin.close()
    return len(want), state, {**observed, "group": state}


# librdkafka: api.version.request=false and a fallback before 0.10 pin its versions. (A
# fallback of 0.10.0 or later turns ApiVersions back on, whatever api.version.request says,
# and librdkafka then uses the broker's newest versions.)


def run_confluent(name, bootstrap, topic, group):
    from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient

    pinned = {"bootstrap.servers": bootstrap, "api.version.request": False,
              "broker.version.fallback": name.rsplit("-", 1)[1],
              # Its warnings that both settings are deprecated, once per client.
              "log_level": 3}
    for codec in CODECS:
        producer = Producer({**pinned, "compression.type": codec, "linger.ms": 10000,
                             "enable.idempotence": False})
        errors = []
        for r in records(name, codec):
            producer.produce(topic, key=r["key"], value=r["value"], partition=0,
                             on_delivery=lambda err, msg: err and errors.append(err))
        remaining = producer.flush(30)
        if remaining or errors:
            raise RuntimeError(f"{codec}: {remaining} undelivered, errors {errors}")

    want = sent_pairs(name)
    partition = TopicPartition(topic, 0)
    consumer = Consumer({**pinned, "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    consumer.subscribe([topic])
    got, consumed, deadline = [], [], time.monotonic() + TIMEOUT
    while len(got) < len(want) and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is None:
            continue
        if message.error():
            raise RuntimeError(f"consumer: {message.error()}")
        got.append((message.key() or b"", message.value() or b""))
        consumed.append(observed_record(message.offset(), message.key(), message.value(),
                                        message.timestamp()[1]))
    check("records read in the group", sorted(got), want)
    consumer.commit(asynchronous=False)
    low, high = consumer.get_watermark_offsets(partition, TIMEOUT)
    observed = {"consumed": sorted(consumed),
                "committed": consumer.committed([partition], TIMEOUT)[0].offset,
                "end": high, "beginning": low}
    check("committed offset", observed["committed"], len(want))
    check("watermarks", (low, high), (0, len(want)))
    check("topic listed", topic in consumer.list_topics(topic, timeout=TIMEOUT).topics, True)
    consumer.close()

    admin = AdminClient(pinned)
    description = admin.describe_consumer_groups([group])[group].result(TIMEOUT)
    offsets = admin.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group, [partition])])[group].result(TIMEOUT)
    check("group offset", offsets.topic_partitions[0].offset, len(want))
    state = str(description.state)
    return len(want), state, {**observed, "group": state}


RUNS = {"kafka-python": run_kafka_python, "confluent-kafka": run_confluent}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("setting", choices=list(SETTINGS))
    parser.add_argument("bootstrap")
    parser.add_argument("topic")
    parser.add_argument("--direct",
                        help="the broker itself, where a topic the client cannot make is made "
                        "(without it, such a topic must exist)")
    parser.add_argument("--create-only", action="store_true",
                        help="only make the topic at --direct (for the Java settings, whose "
                        "workload is OldWorkload.java)")
    args = parser.parse_args()
    setting = SETTINGS[args.setting]
    if args.create_only and not args.direct:
        parser.error("--create-only needs --direct")
    if not setting.creates_topic and args.direct:
        create_topic_directly(args.direct, args.topic)
    if args.create_only:
        return
    if setting.client not in RUNS:
        parser.error(f"{args.setting} runs as java/OldWorkload.java; here only --create-only")
    group = f"{args.topic}-group"
    count, state, observed = RUNS[setting.client](args.setting, args.bootstrap, args.topic, group)
    print(json.dumps({"client": args.setting, "pin": setting.pin, "topic": args.topic,
                      "records": count, "groups": {group: state}, "observed": observed}))


if __name__ == "__main__":
    main()
