"""One real Python client's part of the tap proof (tools/clients/tap-proof.sh).

Everything goes to BOOTSTRAP (the tap). With the client's own admin API it creates
PREFIX-CLIENT (one partition); produces the known records of produce_known.py with every
codec the client supports (its producer functions, so the records are the same ones the
live records test reads); consumes all of them in a consumer group, commits, and reads the
committed offset back; then lists and describes the topic and the group. Any answer that
does not match what was sent raises, so the run ends non-zero. Prints one JSON line.

    python tap_workload.py CLIENT BOOTSTRAP PREFIX     # CLIENT: confluent-kafka, kafka-python, aiokafka

With --sasl MECHANISM (PLAIN or SCRAM-SHA-512) every connection logs in as that mechanism's
user of tools/kafka-broker/sasl-users (--users overrides the file), over TLS trusting the CA
of --ca (SASL_SSL), or without TLS if --protocol SASL_PLAINTEXT says so:

    python tap_workload.py CLIENT BOOTSTRAP PREFIX --sasl PLAIN --ca ca.pem

With --protocol SSL and no --sasl, TLS alone, trusting --ca; with --keystore FILE
--keystore-password PW (confluent-kafka only) presenting the PKCS12 keystore's certificate:

    python tap_workload.py confluent-kafka BOOTSTRAP PREFIX --protocol SSL --ca ca.pem \\
        --keystore client.p12 --keystore-password PW
"""

import argparse
import asyncio
import json
import time

from produce_known import CLIENTS, CODECS, known_records
from security import MECHANISMS, PROTOCOLS, USERS, Security, client_config

TIMEOUT = 60


def sent_records(client):
    """What the producers send, as the consumers see it: (key, value) per record."""
    return sorted(
        (r["key"] or b"", r["value"] or b"")
        for codec in CODECS
        for r in known_records(client, codec)
    )


def produce_all(client, bootstrap, topic, security):
    for codec in CODECS:
        CLIENTS[client](bootstrap, topic, codec, known_records(client, codec), security)


def check(what, got, want):
    if got != want:
        raise RuntimeError(f"{what}: got {got!r}, want {want!r}")


def run_confluent(bootstrap, topic, group, security):
    from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, TopicCollection, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    login = client_config("confluent-kafka", security)
    admin = AdminClient({**login, "bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        future.result(TIMEOUT)
    produce_all("confluent-kafka", bootstrap, topic, security)

    want = sent_records("confluent-kafka")
    consumer = Consumer({
        **login,
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })
    consumer.subscribe([topic])
    got, deadline = [], time.monotonic() + TIMEOUT
    while len(got) < len(want) and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is None:
            continue
        if message.error():
            raise RuntimeError(f"confluent-kafka consumer: {message.error()}")
        got.append((message.key() or b"", message.value() or b""))
    check("records read in the group", sorted(got), want)
    consumer.commit(asynchronous=False)
    committed = consumer.committed([TopicPartition(topic, 0)], TIMEOUT)
    check("committed offset", committed[0].offset, len(want))
    consumer.close()

    metadata = admin.list_topics(timeout=TIMEOUT)
    check("topic listed", topic in metadata.topics, True)
    described = admin.describe_topics(TopicCollection([topic]))[topic].result(TIMEOUT)
    check("partitions described", len(described.partitions), 1)
    listed = admin.list_consumer_groups().result(TIMEOUT)
    check("group listed", group in {g.group_id for g in listed.valid}, True)
    description = admin.describe_consumer_groups([group])[group].result(TIMEOUT)
    offsets = admin.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0)])])[group].result(TIMEOUT)
    check("group offset", offsets.topic_partitions[0].offset, len(want))
    return len(want), str(description.state)


def run_kafka_python(bootstrap, topic, group, security):
    from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
    from kafka.admin import NewTopic

    login = client_config("kafka-python", security)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, **login)
    admin.create_topics([NewTopic(topic, 1, 1)])
    produce_all("kafka-python", bootstrap, topic, security)

    want = sent_records("kafka-python")
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                             auto_offset_reset="earliest", enable_auto_commit=False, **login)
    got, deadline = [], time.monotonic() + TIMEOUT
    while len(got) < len(want) and time.monotonic() < deadline:
        for messages in consumer.poll(timeout_ms=500).values():
            got.extend((m.key or b"", m.value or b"") for m in messages)
    check("records read in the group", sorted(got), want)
    consumer.commit()
    check("committed offset", consumer.committed(TopicPartition(topic, 0)), len(want))
    consumer.close()

    check("topic listed", topic in admin.list_topics(), True)
    described = admin.describe_topics([topic])
    check("partitions described", len(described[0]["partitions"]), 1)
    check("group listed", group in {g["group_id"] for g in admin.list_groups()}, True)
    description = admin.describe_groups([group])[group]
    offsets = admin.list_group_offsets(group)[group]
    check("group offset", offsets[TopicPartition(topic, 0)].offset, len(want))
    admin.close()
    return len(want), description["group_state"]


async def run_aiokafka_async(bootstrap, topic, group, security):
    from aiokafka import AIOKafkaConsumer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap,
                                **client_config("aiokafka", security))
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 1, 1)])
        # produce_known's aiokafka producer runs its own event loop: run it beside this one.
        await asyncio.to_thread(produce_all, "aiokafka", bootstrap, topic, security)

        want = sent_records("aiokafka")
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                    auto_offset_reset="earliest", enable_auto_commit=False,
                                    **client_config("aiokafka", security))
        await consumer.start()
        try:
            got, deadline = [], time.monotonic() + TIMEOUT
            while len(got) < len(want) and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=500)
                for messages in batches.values():
                    got.extend((m.key or b"", m.value or b"") for m in messages)
            check("records read in the group", sorted(got), want)
            await consumer.commit()
            check("committed offset", await consumer.committed(TopicPartition(topic, 0)), len(want))
        finally:
            await consumer.stop()

        check("topic listed", topic in await admin.list_topics(), True)
        described = await admin.describe_topics([topic])
        check("partitions described", len(described[0]["partitions"]), 1)
        listed = await admin.list_consumer_groups()
        check("group listed", group in {g[0] for g in listed}, True)
        description = await admin.describe_consumer_groups([group])
        offsets = await admin.list_consumer_group_offsets(group)
        check("group offset", offsets[TopicPartition(topic, 0)].offset, len(want))
        return len(want), description[0].groups[0][2]
    finally:
        await admin.close()


def run_aiokafka(bootstrap, topic, group, security):
    return asyncio.run(run_aiokafka_async(bootstrap, topic, group, security))


RUNS = {
    "confluent-kafka": run_confluent,
    "kafka-python": run_kafka_python,
    "aiokafka": run_aiokafka,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("client", choices=RUNS)
    parser.add_argument("bootstrap")
    parser.add_argument("prefix")
    parser.add_argument("--sasl", choices=MECHANISMS, help="log in with this mechanism")
    parser.add_argument("--protocol", choices=PROTOCOLS, default="SASL_SSL")
    parser.add_argument("--ca", help="PEM of the CA to trust (SASL_SSL)")
    parser.add_argument("--users", default=USERS, help="MECHANISM USER PASSWORD lines")
    parser.add_argument("--keystore", help="PKCS12 keystore with a client certificate (SSL)")
    parser.add_argument("--keystore-password")
    args = parser.parse_args()
    security = None
    try:
        if args.sasl:
            security = Security.for_mechanism(args.protocol, args.sasl, args.ca, args.users)
        elif args.protocol == "SSL":
            security = Security.tls_only(args.ca, args.keystore, args.keystore_password)
        if args.keystore and (security is None or security.protocol != "SSL"):
            raise ValueError("--keystore goes with --protocol SSL")
    except ValueError as e:
        parser.error(str(e))
    topic, group = f"{args.prefix}-{args.client}", f"{args.prefix}-{args.client}-group"
    records, state = RUNS[args.client](args.bootstrap, topic, group, security)
    line = {"client": args.client, "topic": topic, "records": records, "groups": {group: state}}
    if security and security.mechanism:
        line["login"] = f"{security.protocol} {security.mechanism} as {security.user}"
    elif security:
        line["tls"] = "client certificate" if security.keystore else "server certificate only"
    print(json.dumps(line))


if __name__ == "__main__":
    main()
