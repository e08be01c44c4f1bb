"""librdkafka (confluent-kafka) transactions against kafka-codec's in-memory cluster:

1. commit and abort: a transactional producer commits 100 records, aborts 50, commits 100
   more, over 3 partitions; a read_committed consumer reads exactly the 200 committed
   (each once, none of the aborted), a read_uncommitted one all 250;
2. consume-transform-produce: 100 records in an input topic are read by a consumer of a
   group (read_committed, no auto-commit) and written, upper-cased, to an output topic by a
   transactional producer that commits the consumer's positions with
   send_offsets_to_transaction, one transaction per poll; the group's committed offsets are
   the input's end offsets, and the output holds each record once;
3. a fenced producer (issue 30): a transactional producer's records are written, then its
   transactional id is fenced: over HTTP (POST /transactions/fence) when a control address
   is given, else by a new instance of the same transactional id (init_transactions), as
   against a real broker; its commit fails with a fatal fencing error, a read_committed
   consumer sees none of its records (a read_uncommitted one sees them all), and a new
   instance commits 10 records that read_committed sees.

Prints one summary line; exits non-zero on any difference.

    python cluster_txn_librdkafka.py BOOTSTRAP [CONTROL_HOST:PORT]

Without a control address it runs against any broker (tools/ci-live.sh's Kafka 4.4 prints
the same summary line but for the fencing's name).
"""

import json
import sys
import time
import urllib.request

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition, OFFSET_BEGINNING
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap = sys.argv[1]
control = sys.argv[2] if len(sys.argv) > 2 else None
deadline = time.monotonic() + 60  # a hang guard, under the test's 90 s


def guard(what):
    if time.monotonic() > deadline:
        sys.exit(f"{what}: not done before the guard")


# Names of this run, so that a broker that keeps its topics, groups and transactional ids
# between runs starts afresh.
run = str(int(time.time() * 1000))
admin = AdminClient({"bootstrap.servers": bootstrap})
topics = {f"{name}-{run}": partitions
          for name, partitions in [("txn-proof", 3), ("ctp-in", 2), ("ctp-out", 2), ("txn-fence", 2)]}
for name, future in admin.create_topics(
        [NewTopic(name, partitions, 1) for name, partitions in topics.items()]).items():
    future.result(timeout=20)


def producer(transactional_id):
    made = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                     "linger.ms": 5})
    made.init_transactions(20)
    return made


def read_all(topic, isolation):
    """Every record's value in `topic`, read from the beginning to each partition's end."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{time.monotonic()}",
                         "isolation.level": isolation, "enable.partition.eof": True,
                         "enable.auto.commit": False})
    partitions = topics[topic]
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    values, at_end = [], set()
    while len(at_end) < partitions:
        guard(f"reading {topic} ({isolation})")
        message = consumer.poll(0.2)
        if message is None:
            continue
        if message.error():
            if message.error().code() == -191:  # _PARTITION_EOF
                at_end.add(message.partition())
                continue
            sys.exit(f"consume {topic}: {message.error()}")
        at_end.discard(message.partition())
        values.append(message.value().decode())
    consumer.close()
    return values


# 1. Commit, abort, commit.
tx = producer(f"txn-proof-{run}")
for label, count, commit in [("c1", 100, True), ("ab", 50, False), ("c2", 100, True)]:
    tx.begin_transaction()
    for i in range(count):
        tx.produce(f"txn-proof-{run}", key=f"{label}-{i}", value=f"{label}-{i}", partition=i % 3)
    if commit:
        tx.commit_transaction(20)
    else:
        tx.flush(20)  # written to the log, then aborted
        tx.abort_transaction(20)
committed = read_all(f"txn-proof-{run}", "read_committed")
expected = sorted([f"c1-{i}" for i in range(100)] + [f"c2-{i}" for i in range(100)])
if sorted(committed) != expected:
    aborted_seen = [v for v in committed if v.startswith("ab-")]
    sys.exit(f"read_committed read {len(committed)} records ({len(aborted_seen)} aborted), "
             f"not the 200 committed")
uncommitted = read_all(f"txn-proof-{run}", "read_uncommitted")
if len(uncommitted) != 250:
    sys.exit(f"read_uncommitted read {len(uncommitted)} records, not 250")

# 2. Consume, transform, produce, with the consumer's offsets in the transaction.
plain = Producer({"bootstrap.servers": bootstrap})
for i in range(100):
    plain.produce(f"ctp-in-{run}", key=f"in-{i}", value=f"in-{i}", partition=i % 2)
plain.flush(20)
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"ctp-{run}",
                     "isolation.level": "read_committed", "enable.auto.commit": False,
                     "auto.offset.reset": "earliest"})
consumer.subscribe([f"ctp-in-{run}"])
ctp = producer(f"ctp-tx-{run}")
transformed = 0
while transformed < 100:
    guard("consume-transform-produce")
    messages = consumer.consume(20, 0.2)
    records = [m for m in messages if not m.error()]
    if not records:
        continue
    ctp.begin_transaction()
    for message in records:
        ctp.produce(f"ctp-out-{run}", key=message.key(), value=message.value().decode().upper(),
                    partition=message.partition())
    ctp.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                    consumer.consumer_group_metadata(), 20)
    ctp.commit_transaction(20)
    transformed += len(records)
consumer.close()
checker = Consumer({"bootstrap.servers": bootstrap, "group.id": f"ctp-{run}",
                    "enable.auto.commit": False})
offsets = checker.committed([TopicPartition(f"ctp-in-{run}", p) for p in range(2)], timeout=20)
checker.close()
if sorted(o.offset for o in offsets) != [50, 50]:
    sys.exit(f"the group committed {[(o.partition, o.offset) for o in offsets]}, not 50 each")
out = read_all(f"ctp-out-{run}", "read_committed")
if sorted(out) != sorted(f"IN-{i}" for i in range(100)):
    sys.exit(f"the output holds {len(out)} records, not the 100 transformed once each")

summary = ("librdkafka transactions: 200 committed of 250 read_committed, 250 read_uncommitted; "
           "consume-transform-produce 100 records, offsets committed 50+50")

# 3. A fenced producer's transaction is aborted.
fenced = producer(f"fence-tx-{run}")
fenced.begin_transaction()
for i in range(30):
    fenced.produce(f"txn-fence-{run}", value=f"fenced-{i}", partition=i % 2)
fenced.flush(20)
if control is not None:
    request = urllib.request.Request(f"http://{control}/transactions/fence",
                                     data=json.dumps({"transactionalId": f"fence-tx-{run}"}).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        how = f"over HTTP at epoch {json.loads(answer.read())['producerEpoch']}"
    again = None
else:
    again = producer(f"fence-tx-{run}")  # a new instance: the open transaction is aborted
    how = "by a new instance"
try:
    fenced.commit_transaction(20)
    sys.exit("the fenced producer's commit succeeded")
except KafkaException as e:
    error = e.args[0]
    if not error.fatal():
        sys.exit(f"the fenced producer's commit failed, not fatally: {error}")
    fencing = error.name()
if read_all(f"txn-fence-{run}", "read_committed"):
    sys.exit("read_committed sees records of the fenced producer's transaction")
if len(read_all(f"txn-fence-{run}", "read_uncommitted")) != 30:
    sys.exit("the fenced producer's records are not in the log")
again = again or producer(f"fence-tx-{run}")
again.begin_transaction()
for i in range(10):
    again.produce(f"txn-fence-{run}", value=f"again-{i}", partition=i % 2)
again.commit_transaction(20)
seen = read_all(f"txn-fence-{run}", "read_committed")
if sorted(seen) != sorted(f"again-{i}" for i in range(10)):
    sys.exit(f"read_committed after the new instance's commit: {len(seen)} records")
summary += (f"; fenced {how}: commit failed fatally ({fencing}), "
            f"read_committed saw 0 of its 30 records, the new instance's 10")

print(summary)
