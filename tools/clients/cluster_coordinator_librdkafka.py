"""librdkafka (confluent-kafka) consumer group against kafka-codec's in-memory cluster whose
internal topics have one replica (offsets.topic.replication.factor=1): the group's
coordinator broker is stopped (POST /brokers/1/stop on the HTTP control surface) and fenced
once the broker session timeout passes, so the group's __consumer_offsets partition has no
leader and FindCoordinator answers COORDINATOR_NOT_AVAILABLE; then it is restarted.

A first consumer reads the first half of the records and commits them. While the
coordinator is away a second consumer of the group waits: it asks for the coordinator again
and again (FindCoordinator, answered by broker 0), joins nowhere and is handed nothing.
Once broker 1 is back it finds it, joins and resumes from the committed offset: every
record of the second half once, none of the first. Prints one summary line; exits non-zero
on any difference.

    python cluster_coordinator_librdkafka.py BOOTSTRAP CONTROL_HOST:PORT [RECORDS]
"""

import sys
import time

from confluent_kafka import libversion
from confluent_kafka.admin import AdminClient, NewTopic

from cluster_control import Control
from rdkafka_group import SpreadProducer, group_consumer

bootstrap, control = sys.argv[1], Control(sys.argv[2])
count = int(sys.argv[3]) if len(sys.argv) > 3 else 200
topic = "coordinator-proof"
deadline = time.monotonic() + 40  # a hang guard


def coordinator_of(key, brokers):
    """Kafka's rule: Java's String.hashCode of the key, Utils.abs, mod the 50 partitions of
    __consumer_offsets, whose partition p the cluster places on broker p mod its brokers."""
    utf16 = key.encode("utf-16-be")
    h = 0
    for at in range(0, len(utf16), 2):
        h = (h * 31 + int.from_bytes(utf16[at:at + 2], "big")) & 0xFFFFFFFF
    h = h - (1 << 32) if h >= 1 << 31 else h
    h = 0 if h == -(1 << 31) else abs(h)
    return (h % 50) % brokers


group = next(g for g in (f"coordinator-proof-{i}" for i in range(100))
             if coordinator_of(g, 2) == 1)


def guard(what):
    if time.monotonic() > deadline:
        sys.exit(f"hang guard: {what}")


def consumer(name):
    return group_consumer(bootstrap, group, name, **{
        # Back soon after the restart: not librdkafka's 10 s longest reconnect backoff.
        "reconnect.backoff.max.ms": 200,
        "session.timeout.ms": 10000,
        "heartbeat.interval.ms": 200,
    })


def take(c, wanted, what):
    """Polls `c` until `wanted` records came; their indexes in order, each committed."""
    got = []
    while len(got) < wanted:
        guard(f"{what}: {len(got)} of {wanted}")
        message = c.poll(0.05)
        if message is None:
            continue
        if message.error():
            sys.exit(f"{what}: consume failed: {message.error()}")
        got.append(int(message.key().decode()[4:]))
        c.commit(message=message, asynchronous=False)
    return got


admin = AdminClient({"bootstrap.servers": bootstrap})
# One partition, on broker 0: only the coordinator goes away.
for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
    future.result(timeout=20)
if admin.list_topics(topic, timeout=10).topics[topic].partitions[0].leader != 0:
    sys.exit("the topic's partition is not on broker 0")
SpreadProducer(bootstrap, topic, 1).produce(0, count)
half = count // 2

first = consumer("coordinator-a")
first.subscribe([topic])
before = take(first, half, "before the stop")
first.close()

control.call("POST", "/brokers/1/stop")
while not next(b for b in control.call("GET", "/brokers") if b["id"] == 1)["fenced"]:
    guard("broker 1 fenced")
    time.sleep(0.05)
stopped_at = control.last_sequence()

second = consumer("coordinator-b")
second.subscribe([topic])
waited_from = time.monotonic()
while time.monotonic() - waited_from < 2:
    message = second.poll(0.05)
    if message is not None and not message.error():
        sys.exit("a record was handed out with no coordinator")
while_away = [e for e in control.call("GET", f"/log?after={stopped_at}")
              if e["clientId"] == "coordinator-b"]
finds = [e for e in while_away if e["api"] == "FindCoordinator"]
if len(finds) < 2 or any(e["broker"] != 0 for e in finds):
    sys.exit(f"the consumer did not keep asking broker 0 for the coordinator: {while_away}")
if any(e["api"] in ("JoinGroup", "SyncGroup", "OffsetFetch") for e in while_away):
    sys.exit(f"a group request was answered with no coordinator: {while_away}")

control.call("POST", "/brokers/1/restart")
restarted_at = control.last_sequence()
after = take(second, count - half, "after the restart")
second.close()
joined = [e for e in control.call("GET", f"/log?after={restarted_at}")
          if e["clientId"] == "coordinator-b" and e["api"] == "JoinGroup"]
if not joined or any(e["broker"] != 1 for e in joined):
    sys.exit(f"the consumer did not join at broker 1 after the restart: {joined}")
if before != list(range(half)) or after != list(range(half, count)):
    sys.exit(f"records lost or read twice: {before[:3]}... then {after[:3]}...")
print(f"librdkafka {libversion()[0]}: group {group}'s coordinator (broker 1) stopped and "
      f"fenced with no other replica; the consumer asked {len(finds)} times in 2 s and got "
      f"nothing, then joined broker 1 after the restart and read records {half}..{count - 1} "
      f"once, from the committed offset")
