"""kafka-python consumer groups against kafka-codec's in-memory cluster, the same scenario as
cluster_librdkafka_group.py: two consumers of one group subscribe to a topic of 4
partitions; both get partitions, disjoint and together all four; every record produced is
consumed exactly once (each commits what it consumed before it rejoins); the
offsets are read back by a fresh consumer of the group; then one consumer closes and the
other takes over its partitions and consumes what is produced next. Prints one summary line;
exits non-zero on any difference.

    python cluster_kafka_python_group.py BOOTSTRAP [RECORDS]
"""

import logging
import sys
import threading
import time

import kafka
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
bootstrap = sys.argv[1].split(",")
count = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
topic = "kafka-python-group-proof"
group = "kafka-python-group"
partitions = 4
deadline = time.monotonic() + 20  # a hang guard, under CI's one minute

admin = KafkaAdminClient(bootstrap_servers=bootstrap)
admin.create_topics([NewTopic(topic, partitions, 1)])
admin.close()

# Not idempotent: the cluster does not serve InitProducerId yet (another part of issue 29).
producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, acks="all",
                         enable_idempotence=False)


def produce(first, last):
    sent = [producer.send(topic, key=f"key-{i}".encode(), value=f"value-{i}".encode(),
                          partition=i % partitions) for i in range(first, last)]
    producer.flush(30)
    for future in sent:
        future.get(timeout=30)


def consumer(name):
    # Auto commit, with an interval longer than the run: kafka-python then commits what
    # was consumed before each rejoin and on close, and otherwise only when told, so the
    # next owner of a partition starts after it: each record once, as with a real broker.
    return KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, client_id=name,
                         enable_auto_commit=True, auto_commit_interval_ms=600000,
                         auto_offset_reset="earliest", heartbeat_interval_ms=300,
                         session_timeout_ms=10000)


def guard(what):
    if time.monotonic() > deadline:
        sys.exit(f"hang guard: {what}")


produce(0, count)
a, b = consumer("consumer-a"), consumer("consumer-b")
seen = {}  # (partition, offset) -> (consumer, value)
duplicates = []
lock = threading.Lock()
# Each consumer polls on its own thread, as applications run them (kafka-python's poll
# drives its group membership: alternating short polls on one thread was seen to leave a
# leader rejoining after every SyncGroup).
polling = {"a": threading.Event(), "b": threading.Event()}


def run(who, c):
    c.subscribe([topic])
    while polling[who].is_set():
        for records in c.poll(timeout_ms=200).values():
            with lock:
                for record in records:
                    where = (record.partition, record.offset)
                    if where in seen:
                        duplicates.append((who, where, seen[where][0]))
                    seen[where] = (who, record.value.decode())


def wait_until(what, condition):
    while True:
        with lock:
            if duplicates:
                sys.exit(f"consumed twice (consumer, where, first consumer): {duplicates[:3]}")
            if condition():
                return
            guard(what())
        time.sleep(0.05)


threads = {}
for who, c in (("a", a), ("b", b)):
    polling[who].set()
    threads[who] = threading.Thread(target=run, args=(who, c), daemon=True)
    threads[who].start()
wait_until(lambda: f"consumed {len(seen)} of {count}; assignments {a.assignment()} "
                   f"{b.assignment()}",
           lambda: len(seen) >= count and a.assignment() and b.assignment())
# Both stop polling (their assignments stay) so that what they consumed is committed.
for who in ("a", "b"):
    polling[who].clear()
    threads[who].join()
held_a = {tp.partition for tp in a.assignment()}
held_b = {tp.partition for tp in b.assignment()}
if held_a & held_b or held_a | held_b != set(range(partitions)):
    sys.exit(f"assignments overlap or miss a partition: a {held_a}, b {held_b}")
values = sorted(int(v.split("-")[1]) for _, v in seen.values())
if values != list(range(count)):
    sys.exit(f"consumed values are not each of 0..{count - 1} once")
a.commit()
b.commit()

fresh = consumer("consumer-fresh")
per_partition = {p: len([1 for (q, _) in seen if q == p]) for p in range(partitions)}
got = {p: fresh.committed(TopicPartition(topic, p)) for p in range(partitions)}
fresh.close()
if got != per_partition:
    sys.exit(f"committed offsets read back {got}, expected {per_partition}")

a.close()
polling["b"].set()
threads["b"] = threading.Thread(target=run, args=("b", b), daemon=True)
threads["b"].start()
wait_until(lambda: f"b holds {b.assignment()} after a left",
           lambda: {tp.partition for tp in b.assignment()} == set(range(partitions)))
more = count // 2
produce(count, count + more)
wait_until(lambda: f"b consumed {len(seen) - count} of {more} after taking over",
           lambda: len(seen) >= count + more)
polling["b"].clear()
threads["b"].join()
late = [who for who, v in seen.values() if int(v.split("-")[1]) >= count]
if any(who != "b" for who in late) or len(late) != more:
    sys.exit(f"after the takeover: {len(late)} new records, consumers {set(late)}")
b.close()
producer.close()
print(f"kafka-python {kafka.__version__}: group of 2 over {partitions} partitions: "
      f"a held {sorted(held_a)}, b {sorted(held_b)}; {count} records consumed once, offsets "
      f"{got} committed and read back; b took over all {partitions} and consumed {more} more")
