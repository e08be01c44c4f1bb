"""Produces known records with real Kafka clients, for tests/live/live_broker.rs.

Each client (librdkafka through confluent-kafka, kafka-python, aiokafka) sends the same
records with each compression codec it supports to its own topic, PREFIX-CLIENT-CODEC
(the test creates the topics first). Prints, as one JSON document on stdout, what was sent:

    [{"client": ..., "codec": ..., "topic": ..., "records": [
        {"key": base64|null, "value": base64|null, "timestamp": ms,
         "headers": [{"key": str, "value": base64|null}]}]}]

The test fetches each topic with kafka-codec's own framing and compares. Usage:
    python produce_known.py BOOTSTRAP PREFIX
"""

import asyncio
import base64
import json
import sys

from security import client_config

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
T0 = 1_700_000_000_000


def known_records(client, codec):
    """Five records: keys, a null key, a tombstone, headers with a null value, bytes that
    compress and bytes that do not."""
    records = []
    for i in range(5):
        key = None if i == 1 else f"{client}-{codec}-k{i}".encode()
        if i == 3:
            value = None
        elif i == 4:
            value = bytes((j * 73 + 11) % 256 for j in range(600))
        else:
            value = (f"value {i} from {client} with {codec} " * (i + 1)).encode()
        # kafka-python refuses a null header value: it sends an empty one instead.
        null = b"" if client == "kafka-python" else None
        headers = [("h", f"v{i}".encode()), ("null-value", null)] if i % 2 == 0 else []
        records.append({"key": key, "value": value, "timestamp": T0 + i, "headers": headers})
    return records


def b64(data):
    return None if data is None else base64.b64encode(data).decode()


# Each producer takes `security` (security.Security, or None for PLAINTEXT): how it logs in.


def produce_confluent(bootstrap, topic, codec, records, security=None):
    from confluent_kafka import Producer

    producer = Producer({
        **client_config("confluent-kafka", security),
        "bootstrap.servers": bootstrap,
        "compression.type": codec,
        # One batch for all five records: flush() sends at once whatever linger.ms says, so a
        # long linger keeps a loaded machine from sending the first record alone (librdkafka
        # then sends a batch uncompressed when compressing it would not make it smaller).
        "linger.ms": 10000,
        "enable.idempotence": False,
    })
    # Learn the partition's leader before the first record: a record produced while the
    # topic is unknown waits in librdkafka's unassigned queue and, on a loaded machine, was
    # once sent in a batch of its own (uncompressed: the incompressible record alone).
    producer.list_topics(topic, timeout=30)
    errors = []
    for r in records:
        producer.produce(topic, key=r["key"], value=r["value"], headers=r["headers"] or None,
                         timestamp=r["timestamp"], partition=0,
                         on_delivery=lambda err, msg: err and errors.append(err))
    remaining = producer.flush(30)
    if remaining or errors:
        raise RuntimeError(f"confluent-kafka {codec}: {remaining} undelivered, errors {errors}")


def produce_kafka_python(bootstrap, topic, codec, records, security=None):
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap,
                             compression_type=None if codec == "none" else codec,
                             linger_ms=50, enable_idempotence=False,
                             **client_config("kafka-python", security))
    futures = [producer.send(topic, key=r["key"], value=r["value"], headers=r["headers"],
                             timestamp_ms=r["timestamp"], partition=0) for r in records]
    producer.flush(30)
    for f in futures:
        f.get(timeout=30)
    producer.close(timeout=10)


async def produce_aiokafka_async(bootstrap, topic, codec, records, security):
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap,
                                compression_type=None if codec == "none" else codec,
                                linger_ms=50, enable_idempotence=False,
                                **client_config("aiokafka", security))
    await producer.start()
    try:
        futures = [await producer.send(topic, key=r["key"], value=r["value"],
                                       headers=r["headers"], timestamp_ms=r["timestamp"],
                                       partition=0) for r in records]
        for f in futures:
            await f
    finally:
        await producer.stop()


def produce_aiokafka(bootstrap, topic, codec, records, security=None):
    asyncio.run(produce_aiokafka_async(bootstrap, topic, codec, records, security))


CLIENTS = {
    "confluent-kafka": produce_confluent,
    "kafka-python": produce_kafka_python,
    "aiokafka": produce_aiokafka,
}


def main():
    bootstrap, prefix = sys.argv[1], sys.argv[2]
    sent = []
    for client, produce in CLIENTS.items():
        for codec in CODECS:
            topic = f"{prefix}-{client}-{codec}"
            records = known_records(client, codec)
            produce(bootstrap, topic, codec, records)
            sent.append({
                "client": client,
                "codec": codec,
                "topic": topic,
                "records": [{
                    "key": b64(r["key"]),
                    "value": b64(r["value"]),
                    "timestamp": r["timestamp"],
                    "headers": [{"key": k, "value": b64(v)} for k, v in r["headers"]],
                } for r in records],
            })
    json.dump(sent, sys.stdout)


if __name__ == "__main__":
    main()
