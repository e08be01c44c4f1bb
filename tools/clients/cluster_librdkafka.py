"""librdkafka (confluent-kafka) against kafka-codec's in-memory cluster: create a topic with
the admin client, produce RECORDS records, consume them back with an assigned (group-less)
consumer from the beginning, and check every key and value arrived once, in order per
partition. Prints one summary line; exits non-zero on any difference.

With `--idempotent` the producer has `enable.idempotence=true`: it asks InitProducerId for
its producer id, then sends small batches with up to five in flight per connection, each
numbered by the producer, and the cluster checks every batch's epoch and sequence; no
fatal error may occur (OUT_OF_ORDER_SEQUENCE_NUMBER would be one).

    python cluster_librdkafka.py BOOTSTRAP [RECORDS] [--idempotent]
"""

import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition, OFFSET_BEGINNING
from confluent_kafka.admin import AdminClient, NewTopic

args = [a for a in sys.argv[1:] if a != "--idempotent"]
idempotent = "--idempotent" in sys.argv[1:]
bootstrap = args[0]
count = int(args[1]) if len(args) > 1 else 1000
topic = "librdkafka-idempotent" if idempotent else "librdkafka-proof"
partitions = 3
deadline = time.monotonic() + 50  # a hang guard, under CI's one minute

admin = AdminClient({"bootstrap.servers": bootstrap})
for name, future in admin.create_topics([NewTopic(topic, partitions, 1)]).items():
    future.result(timeout=20)

delivered = []
fatal = []


def on_error(error):
    if error.fatal():
        fatal.append(error)


def on_delivery(error, message):
    if error is not None:
        sys.exit(f"delivery failed: {error}")
    delivered.append((message.partition(), message.offset()))


settings = {"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all", "error_cb": on_error}
if idempotent:
    # Small batches, many in flight: sequences have to line up across batches.
    settings.update({"enable.idempotence": True, "linger.ms": 1, "batch.num.messages": 50,
                     "max.in.flight.requests.per.connection": 5})
producer = Producer(settings)
for i in range(count):
    producer.produce(topic, key=f"key-{i}", value=f"value-{i}", partition=i % partitions,
                     on_delivery=on_delivery)
    producer.poll(0)
if producer.flush(30) != 0:
    sys.exit("producer did not flush in 30 s")
if fatal:
    sys.exit(f"fatal producer error: {fatal[0]}")
if len(delivered) != count:
    sys.exit(f"{len(delivered)} of {count} delivered")
# Offsets per partition are 0..n-1, each once.
for p in range(partitions):
    offsets = sorted(o for q, o in delivered if q == p)
    if offsets != list(range(len(offsets))):
        sys.exit(f"partition {p}: offsets {offsets[:5]}... are not 0..{len(offsets) - 1}")

consumer = Consumer({"bootstrap.servers": bootstrap, "enable.auto.commit": False,
                     "group.id": "unused-assign-only"})
consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
seen = {p: [] for p in range(partitions)}
received = 0
while received < count:
    if time.monotonic() > deadline:
        sys.exit(f"consumed {received} of {count} before the guard")
    message = consumer.poll(1.0)
    if message is None:
        continue
    if message.error():
        sys.exit(f"consume failed: {message.error()}")
    seen[message.partition()].append((message.offset(), message.key().decode(),
                                      message.value().decode()))
    received += 1
consumer.close()
for p, messages in seen.items():
    expected = [(n, f"key-{i}", f"value-{i}")
                for n, i in enumerate(range(p, count, partitions))]
    if messages != expected:
        sys.exit(f"partition {p}: consumed {messages[:3]}..., expected {expected[:3]}...")
how = "idempotent producer delivered" if idempotent else "produced and consumed"
print(f"librdkafka {__import__('confluent_kafka').libversion()[0]}: {how} {count} records "
      f"once each over {partitions} partitions of {bootstrap}")
