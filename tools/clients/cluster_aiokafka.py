"""aiokafka against kafka-codec's in-memory cluster: its admin client creates a topic of 4
partitions; a plain producer and an idempotent one (enable_idempotence: InitProducerId,
sequence numbers, acks all) each send RECORDS records; two consumers of one group share
the partitions (disjoint, together all four), consume every record exactly once and in the
order produced per partition, and commit; a fresh consumer of the group reads the committed
offsets back, each equal to its partition's end offset. Prints one summary line; exits
non-zero on any difference.

    python cluster_aiokafka.py BOOTSTRAP [RECORDS]
"""

import asyncio
import sys
import time

import aiokafka
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

bootstrap = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
topic = "aiokafka-proof"
group = "aiokafka-group"
partitions = 4
deadline = time.monotonic() + 40  # a hang guard, under the test's own


def guard(what):
    if time.monotonic() > deadline:
        sys.exit(f"hang guard: {what}")


async def produce(prefix, **settings):
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, **settings)
    await producer.start()
    try:
        sent = [await producer.send(topic, key=f"{prefix}-{i}".encode(),
                                    value=f"value-{prefix}-{i}".encode(),
                                    partition=i % partitions) for i in range(count)]
        written = [await future for future in sent]
    finally:
        await producer.stop()
    # Each record at the partition asked for, offsets rising within a partition.
    last = {}
    for i, metadata in enumerate(written):
        if metadata.partition != i % partitions:
            sys.exit(f"{prefix}-{i} went to partition {metadata.partition}")
        if metadata.offset <= last.get(metadata.partition, -1):
            sys.exit(f"{prefix}-{i} at offset {metadata.offset}, not after {last}")
        last[metadata.partition] = metadata.offset


async def main():
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        answer = await admin.create_topics([NewTopic(topic, partitions, 1)])
        errors = [error[1] for error in answer.topic_errors if error[1] != 0]
        if errors:
            sys.exit(f"CreateTopics answered error codes {errors}")
    finally:
        await admin.close()

    await produce("plain", acks=1)
    await produce("idempotent", acks="all", enable_idempotence=True)

    def consumer(name):
        return AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                client_id=name, enable_auto_commit=False,
                                auto_offset_reset="earliest", heartbeat_interval_ms=300,
                                session_timeout_ms=10000)

    a, b = consumer("consumer-a"), consumer("consumer-b")
    await asyncio.gather(a.start(), b.start())
    seen = {}  # (partition, offset) -> (consumer, key, value)
    total = 2 * count
    while len(seen) < total or not (a.assignment() and b.assignment()):
        guard(f"consumed {len(seen)} of {total}; assignments {a.assignment()} "
              f"{b.assignment()}")
        for who, c in (("a", a), ("b", b)):
            batches = await c.getmany(timeout_ms=100)
            for records in batches.values():
                for record in records:
                    where = (record.partition, record.offset)
                    if where in seen:
                        sys.exit(f"{where} consumed by {who} after {seen[where][0]}")
                    seen[where] = (who, record.key.decode(), record.value.decode())
    held_a = {tp.partition for tp in a.assignment()}
    held_b = {tp.partition for tp in b.assignment()}
    if held_a & held_b or held_a | held_b != set(range(partitions)):
        sys.exit(f"assignments overlap or miss a partition: a {held_a}, b {held_b}")
    # Every record once, its value its key's, in the order produced within a partition.
    keys = sorted(key for _, key, _ in seen.values())
    expected = sorted(f"{p}-{i}" for p in ("plain", "idempotent") for i in range(count))
    if keys != expected:
        sys.exit(f"consumed {len(keys)} keys, not each of the {len(expected)} produced once")
    for (partition, _), (who, key, value) in seen.items():
        if value != f"value-{key}" or int(key.split("-")[1]) % partitions != partition:
            sys.exit(f"{key}: value {value!r} in partition {partition}")
    for partition in range(partitions):
        order = [seen[where][1] for where in sorted(seen) if where[0] == partition]
        want = [f"{p}-{i}" for p in ("plain", "idempotent")
                for i in range(partition, count, partitions)]
        if order != want:
            sys.exit(f"partition {partition} holds the records out of the order produced")
    await asyncio.gather(a.commit(), b.commit())

    fresh = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group,
                             enable_auto_commit=False)
    await fresh.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        ends = await fresh.end_offsets(tps)
        committed = {tp.partition: await fresh.committed(tp) for tp in tps}
    finally:
        await fresh.stop()
    per_partition = {p: len([1 for (q, _) in seen if q == p]) for p in range(partitions)}
    if committed != per_partition or {tp.partition: o for tp, o in ends.items()} != per_partition:
        sys.exit(f"committed {committed}, end offsets {ends}, consumed {per_partition}")
    await asyncio.gather(a.stop(), b.stop())
    print(f"aiokafka {aiokafka.__version__}: {count} records plain and {count} idempotent "
          f"over {partitions} partitions; a group of 2 held {sorted(held_a)} and "
          f"{sorted(held_b)}, consumed each once in order, committed {committed}, read back")


asyncio.run(main())
