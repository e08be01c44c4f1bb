"""librdkafka (confluent-kafka) and the cluster's topics: a producer sends to a topic nobody
created, which the cluster's Metadata creates (`auto.create.topics.enable`, on by default as
in Kafka); it delivers every record once it finds the topic, and an assigned consumer reads
every record back, in order. Then the admin client creates a topic with
`message.timestamp.type=LogAppendTime` (and `cleanup.policy=compact`), its configs are
described back as the topic's own, and the records produced to it with old create times
are consumed with timestamp type LogAppendTime and a time of their append. Prints one
summary line; exits non-zero on any difference.

    python cluster_topics_librdkafka.py BOOTSTRAP [RECORDS]
"""

import sys
import time

from confluent_kafka import (Consumer, Producer, TopicPartition, OFFSET_BEGINNING,
                             TIMESTAMP_LOG_APPEND_TIME)
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

bootstrap = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 500
topic = f"never-created-{int(time.time() * 1000)}"
deadline = time.monotonic() + 20  # a hang guard

delivered, failed = [], []


def on_delivery(error, message):
    if error is None:
        delivered.append((message.partition(), message.offset()))
    else:
        failed.append(error)


producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
started = time.monotonic()
for i in range(count):
    producer.produce(topic, key=f"k{i}", value=f"v{i}", on_delivery=on_delivery)
    producer.poll(0)
left = producer.flush(max(1.0, deadline - time.monotonic()))
if failed or left or len(delivered) != count:
    sys.exit(f"delivered {len(delivered)} of {count}, {left} left, failures {failed[:3]}")
took = time.monotonic() - started



def consume(name, n):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(name, 0, OFFSET_BEGINNING)])
    messages = []
    while len(messages) < n and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is None:
            continue
        if message.error():
            sys.exit(f"consumer error: {message.error()}")
        messages.append(message)
    consumer.close()
    return messages


read = [(m.offset(), m.key().decode(), m.value().decode()) for m in consume(topic, count)]
want = [(i, f"k{i}", f"v{i}") for i in range(count)]
if read != want:
    sys.exit(f"read {len(read)} records, not the {count} produced in order "
             f"(first difference at {next((i for i, (a, b) in enumerate(zip(read, want)) if a != b), len(read))})")

# A topic created with configs: LogAppendTime stamps what is appended.
stamped = f"log-append-time-{int(time.time() * 1000)}"
admin = AdminClient({"bootstrap.servers": bootstrap})
configs = {"message.timestamp.type": "LogAppendTime", "cleanup.policy": "compact"}
for future in admin.create_topics([NewTopic(stamped, 1, 1, config=configs)]).values():
    future.result(timeout=10)
described = admin.describe_configs([ConfigResource("TOPIC", stamped)])
for future in described.values():
    entries = future.result(timeout=10)
    for name, value in configs.items():
        entry = entries[name]
        if entry.value != value or entry.source != 1:  # DYNAMIC_TOPIC_CONFIG
            sys.exit(f"{name}: described as {entry.value!r} from source {entry.source}")
before = int(time.time() * 1000)
producer = Producer({"bootstrap.servers": bootstrap})
for i in range(10):
    producer.produce(stamped, key=f"k{i}", value=f"v{i}", timestamp=1_600_000_000_000 + i,
                     on_delivery=on_delivery)
if producer.flush(10) or failed:
    sys.exit(f"LogAppendTime topic: not delivered ({failed[:3]})")
after = int(time.time() * 1000)
times = [m.timestamp() for m in consume(stamped, 10)]
bad = [t for t in times if t[0] != TIMESTAMP_LOG_APPEND_TIME or not before <= t[1] <= after]
if len(times) != 10 or bad:
    sys.exit(f"LogAppendTime topic: {len(times)} records, timestamps not append times: {bad[:3]}")
print(f"librdkafka: {count} records produced to a topic never created (delivered in "
      f"{took:.2f} s), all read back in order; 10 records of a LogAppendTime topic (created "
      f"with configs, described back) read with their append time")
