"""librdkafka (confluent-kafka) against kafka-codec's in-memory cluster: a partition's
leader is stopped for good (POST /brokers/0/stop on the HTTP control surface) while the
producer is sending, and the cluster fences it once the broker session timeout passes (the
test starts the cluster with a short one), as Kafka's controller fences a broker whose
heartbeats stopped: the partition's leadership goes to the other in-sync replica at the next
leader epoch and the stopped broker leaves Metadata's brokers.

Checked from both sides: what the producer did (its Produce requests went to broker 0, then,
after the stop, only to broker 1, after a Metadata refresh that no longer listed broker 0;
every record delivered once, offsets 0..n-1, in order) and what the cluster shows (GET
/brokers: broker 0 down and fenced; a consumer reads every record back once from the new
leader). Prints one summary line; exits non-zero on any difference.

    python cluster_fence_librdkafka.py BOOTSTRAP CONTROL_HOST:PORT [RECORDS]
"""

import json
import sys
import time
import urllib.request

from confluent_kafka import Consumer, Producer, TopicPartition, OFFSET_BEGINNING
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap, control = sys.argv[1], sys.argv[2]
count = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
topic = "fence-proof"
deadline = time.monotonic() + 30  # a hang guard


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://{control}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def last_sequence():
    entries = call("GET", "/log")
    return entries[-1]["sequence"] if entries else -1


admin = AdminClient({"bootstrap.servers": bootstrap})
# One partition on brokers 0 (leader) and 1.
for name, future in admin.create_topics([NewTopic(topic, 1, 2)]).items():
    future.result(timeout=20)
placed = admin.list_topics(topic, timeout=10).topics[topic].partitions[0]
if (placed.leader, list(placed.replicas), list(placed.isrs)) != (0, [0, 1], [0, 1]):
    sys.exit(f"placed as {placed.leader} {placed.replicas} {placed.isrs}, not 0 [0, 1] [0, 1]")

delivered = []


def on_delivery(error, message):
    if error is not None:
        sys.exit(f"delivery failed: {error}")
    delivered.append(message.offset())


producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 2, "acks": "all",
                     "enable.idempotence": True, "batch.num.messages": 50,
                     "topic.metadata.refresh.interval.ms": 60000})


def produce(first, last):
    for i in range(first, last):
        producer.produce(topic, key=f"key-{i}", value=f"value-{i}", partition=0,
                         on_delivery=on_delivery)
        producer.poll(0)


def wait_delivered(n, what):
    while len(delivered) < n:
        if time.monotonic() > deadline:
            sys.exit(f"{what}: {len(delivered)} of {n} delivered before the guard")
        producer.poll(0.05)


half = count // 2
produce(0, half)
wait_delivered(half, "before the stop")
call("POST", "/brokers/0/stop")
stopped_at = last_sequence()
stop_time = time.monotonic()
# Sent while the leader is down and not yet fenced: they wait, then go to the new leader.
produce(half, count)
wait_delivered(count, "after the stop")
took = time.monotonic() - stop_time
if producer.flush(20) != 0:
    sys.exit("producer did not flush")

brokers = {b["id"]: b for b in call("GET", "/brokers")}
if brokers[0]["up"] or not brokers[0]["fenced"] or brokers[1]["fenced"]:
    sys.exit(f"broker 0 should be down and fenced, broker 1 not: {brokers}")
after = call("GET", f"/log?after={stopped_at}")
produced = [e for e in after if e["api"] == "Produce"]
if not produced or any(e["broker"] != 1 for e in produced):
    sys.exit(f"after the stop every Produce should go to broker 1: "
             f"{[e['broker'] for e in produced]}")
metadata = [e for e in after if e["api"] == "Metadata"]
if not metadata or metadata[0]["sequence"] > produced[0]["sequence"]:
    sys.exit("the producer did not refresh its metadata before producing to the new leader")
if sorted(delivered) != list(range(count)) or delivered != sorted(delivered):
    sys.exit(f"delivered offsets are not 0..{count - 1} in order: {delivered[:5]}...")

listed = admin.list_topics(topic, timeout=10)
if sorted(listed.brokers) != [1, 2]:
    sys.exit(f"Metadata lists brokers {sorted(listed.brokers)}, not [1, 2]")
now = listed.topics[topic].partitions[0]
if (now.leader, list(now.replicas), list(now.isrs)) != (1, [0, 1], [1]):
    sys.exit(f"after the fence: leader {now.leader} {now.replicas} {now.isrs}, not 1 [0, 1] [1]")

consumer = Consumer({"bootstrap.servers": bootstrap, "enable.auto.commit": False,
                     "group.id": "unused-assign-only"})
consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
seen = []
while len(seen) < count:
    if time.monotonic() > deadline:
        sys.exit(f"consumed {len(seen)} of {count} before the guard")
    message = consumer.poll(1.0)
    if message is None:
        continue
    if message.error():
        sys.exit(f"consume failed: {message.error()}")
    seen.append((message.offset(), message.key().decode()))
consumer.close()
if seen != [(i, f"key-{i}") for i in range(count)]:
    sys.exit("records lost, doubled or out of order")
print(f"librdkafka {__import__('confluent_kafka').libversion()[0]}: the leader stopped for "
      f"good and was fenced; {len(metadata)} Metadata request(s), then {len(produced)} Produce "
      f"request(s) to the new leader only, {count - half} records sent after the stop "
      f"delivered in {took:.1f} s; {count} records each landed once")
