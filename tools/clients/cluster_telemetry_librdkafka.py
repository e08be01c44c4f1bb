"""librdkafka (confluent-kafka) pushes its metrics (KIP-714, `enable.metrics.push`, on by
default) to a cluster with client telemetry on, whose subscription (set by the caller:
every metric, every 100 ms) it asks for with GetTelemetrySubscriptions: a producer sends a
record, runs for a second, and closes, which pushes one last time with `terminating` (when
no push is in flight). The caller checks what the cluster kept. Prints one summary line;
exits non-zero if delivery failed.

    python cluster_telemetry_librdkafka.py BOOTSTRAP TOPIC
"""

import sys
import time

from confluent_kafka import Producer, libversion

bootstrap, topic = sys.argv[1], sys.argv[2]
deadline = time.monotonic() + 20  # a hang guard
failed = []

producer = Producer({"bootstrap.servers": bootstrap, "enable.metrics.push": True})
producer.produce(topic, b"telemetry", on_delivery=lambda e, m: e and failed.append(e))
if producer.flush(10) != 0 or failed:
    sys.exit(f"not delivered: {failed}")
# Pushes come an interval (with jitter) after the subscription: a second holds several.
until = time.monotonic() + 1.0
while time.monotonic() < until:
    producer.poll(0.1)
# Dropping the last reference closes the producer (rd_kafka_destroy): its terminating push.
del producer
if time.monotonic() > deadline:
    sys.exit("took longer than the guard")
print(f"librdkafka {libversion()[0]}: produced, pushed and closed")
