"""librdkafka (confluent-kafka) consumer groups against kafka-codec's in-memory cluster: two
consumers of one group subscribe to a topic of 4 partitions; both get partitions, disjoint
and together all four; every record produced is consumed exactly once; the offsets they
commit are read back by a fresh consumer of the group; then one consumer closes and the
other takes over its partitions and consumes what is produced next, from the committed
offsets. Prints one summary line; exits non-zero on any difference.

    python cluster_librdkafka_group.py BOOTSTRAP [RECORDS]
"""

import sys
import time

from confluent_kafka import KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from rdkafka_group import SpreadProducer, group_consumer

bootstrap = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
topic = "librdkafka-group-proof"
group = "librdkafka-group"
partitions = 4
deadline = time.monotonic() + 50  # a hang guard, under CI's one minute

admin = AdminClient({"bootstrap.servers": bootstrap})
for name, future in admin.create_topics([NewTopic(topic, partitions, 1)]).items():
    future.result(timeout=20)

producer = SpreadProducer(bootstrap, topic, partitions)


def consumer(name):
    return group_consumer(bootstrap, group, name, **{
        # Rebalances are noticed by heartbeats: faster than the 3 s default.
        "heartbeat.interval.ms": 300,
        "session.timeout.ms": 10000,
    })


def commit_on_revoke(c, _partitions):
    # What was consumed is committed before the partitions move, so the next owner starts
    # after it: records are consumed once across rebalances, as with a real broker.
    try:
        c.commit(asynchronous=False)
    except KafkaException as e:
        if e.args[0].code() != KafkaError._NO_OFFSET:
            raise


def guard(what):
    if time.monotonic() > deadline:
        sys.exit(f"hang guard: {what}")


producer.produce(0, count)
a, b = consumer("consumer-a"), consumer("consumer-b")
a.subscribe([topic], on_revoke=commit_on_revoke)
b.subscribe([topic], on_revoke=commit_on_revoke)
seen = {}  # (partition, offset) -> (consumer, value)


def poll(who, c):
    message = c.poll(0.1)
    if message is None:
        return
    if message.error():
        sys.exit(f"{who}: consume failed: {message.error()}")
    where = (message.partition(), message.offset())
    if where in seen:
        sys.exit(f"{who}: {where} consumed twice (first by {seen[where][0]})")
    seen[where] = (who, message.value().decode())


# Both consume until every record is in and both hold partitions.
while len(seen) < count or not a.assignment() or not b.assignment():
    guard(f"consumed {len(seen)} of {count}; assignments {a.assignment()} {b.assignment()}")
    poll("a", a)
    poll("b", b)
held_a = {tp.partition for tp in a.assignment()}
held_b = {tp.partition for tp in b.assignment()}
if held_a & held_b or held_a | held_b != set(range(partitions)):
    sys.exit(f"assignments overlap or miss a partition: a {held_a}, b {held_b}")
values = sorted(int(v.split("-")[1]) for _, v in seen.values())
if values != list(range(count)):
    sys.exit(f"consumed values are not each of 0..{count - 1} once")
for who, c, held in (("a", a, held_a), ("b", b, held_b)):
    mine = [TopicPartition(topic, p) for p in held]
    c.commit(offsets=[TopicPartition(topic, p, len([1 for (q, _) in seen if q == p]))
                      for p in held], asynchronous=False)

# A fresh consumer of the group reads the committed offsets back.
fresh = consumer("consumer-fresh")
committed = fresh.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=20)
fresh.close()
per_partition = {p: len([1 for (q, _) in seen if q == p]) for p in range(partitions)}
got = {tp.partition: tp.offset for tp in committed}
if got != per_partition:
    sys.exit(f"committed offsets read back {got}, expected {per_partition}")

# A leaves; B takes over its partitions and consumes what comes next, from the commits.
a.close()
while {tp.partition for tp in b.assignment()} != set(range(partitions)):
    guard(f"b holds {b.assignment()} after a left")
    poll("b", b)
more = count // 2
producer.produce(count, count + more)
while len(seen) < count + more:
    guard(f"b consumed {len(seen) - count} of {more} after taking over")
    poll("b", b)
late = [(where, who) for where, (who, v) in seen.items() if int(v.split("-")[1]) >= count]
if any(who != "b" for _, who in late) or len(late) != more:
    sys.exit(f"after the takeover: {len(late)} new records, consumers {set(w for _, w in late)}")
b.close()
print(f"librdkafka {__import__('confluent_kafka').libversion()[0]}: group of 2 over "
      f"{partitions} partitions of {bootstrap}: a held {sorted(held_a)}, b {sorted(held_b)}; "
      f"{count} records consumed once, offsets {got} committed and read back; "
      f"b took over all {partitions} and consumed {more} more")
