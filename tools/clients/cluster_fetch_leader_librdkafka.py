"""librdkafka's consumer (confluent-kafka) against kafka-codec's in-memory cluster, following
a partition leader moved while it consumes, the move driven through the cluster's HTTP
control surface (kafka-codec cluster --control):

the consumer reads the first half of partition 0 from its leader (broker 0); the leader is
moved to broker 1 (leader epoch 0 -> 1); the consumer's next Fetch to broker 0 names the old
epoch and is refused FENCED_LEADER_EPOCH (from Fetch v16 with the new leader and its
endpoint, KIP-951); it finds broker 1 (from the refusal itself, or a metadata refresh) and
reads the second half there.

Checked from both sides: every record consumed once, in order (offsets 0..n-1), and the
cluster's request log (a Fetch to broker 0 after the move naming epoch 0: the fault met;
then Fetches to broker 1 naming epoch 1, and none to broker 0 after them). Prints one
summary line; exits non-zero on any difference.

    python cluster_fetch_leader_librdkafka.py BOOTSTRAP CONTROL_HOST:PORT [RECORDS]
"""

import sys
import time

from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING, libversion
from confluent_kafka.admin import AdminClient, NewTopic

from cluster_control import Control
from rdkafka_partition import PartitionProducer

bootstrap, control = sys.argv[1], Control(sys.argv[2])
count = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
topic = "fetch-leader-proof"
client_id = "fetch-leader-consumer"
deadline = time.monotonic() + 50  # a hang guard, under CI's one minute

admin = AdminClient({"bootstrap.servers": bootstrap})
for name, future in admin.create_topics([NewTopic(topic, 1, 2)]).items():
    future.result(timeout=20)

sender = PartitionProducer(bootstrap, topic, deadline)
consumer = Consumer({"bootstrap.servers": bootstrap, "client.id": client_id,
                     "group.id": "fetch-leader-assign-only", "enable.auto.commit": False,
                     "topic.metadata.refresh.interval.ms": 60000})
consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
seen = []


def consume_until(n, what):
    while len(seen) < n:
        if time.monotonic() > deadline:
            sys.exit(f"{what}: consumed {len(seen)} of {n} before the guard")
        message = consumer.poll(0.2)
        if message is None:
            continue
        if message.error():
            sys.exit(f"consume failed: {message.error()}")
        seen.append((message.offset(), message.key().decode()))


def partition_epochs(entry):
    """The current leader epochs a logged Fetch names for the topic's partition 0."""
    epochs = []
    for named in entry["request"].get("topics", []):
        if named.get("topic", topic) != topic and "topicId" not in named:
            continue
        for partition in named.get("partitions", []):
            if partition.get("partition") == 0:
                epochs.append(partition.get("currentLeaderEpoch", -1))
    return epochs


half = count // 2
sender.produce(0, half)
sender.flush(20)
consume_until(half, "before the move")
before_move = control.last_sequence()
moved = control.call("POST", "/leaders", {"topic": topic, "partition": 0, "leader": 1})
if moved["leaderEpoch"] != 1:
    sys.exit(f"the move answered {moved}")
sender.produce(half, count)
sender.flush(20)
consume_until(count, "after the move")

fetches = [e for e in control.log_of("Fetch", before_move)
           if e["clientId"] == client_id and partition_epochs(e)]
fenced = [e for e in fetches if e["broker"] == 0 and 0 in partition_epochs(e)]
to_new = [e for e in fetches if e["broker"] == 1 and 1 in partition_epochs(e)]
if not fenced:
    sys.exit("no Fetch met the old leader at the old epoch after the move: the fault never fired")
if not to_new:
    sys.exit("no Fetch reached the new leader at the new epoch")
if any(e["broker"] == 0 for e in fetches if e["sequence"] > to_new[0]["sequence"]):
    sys.exit("the consumer went back to the old leader")
refreshed = [e for e in control.log_of("Metadata", fenced[0]["sequence"])
             if e["clientId"] == client_id and e["sequence"] < to_new[0]["sequence"]]
versions = sorted({e["version"] for e in fenced})
if not refreshed and min(versions) < 16:
    sys.exit(f"the consumer found the new leader without a refresh at Fetch v{versions}")
followed_by = (f"{len(refreshed)} Metadata refresh(es)" if refreshed
               else "the leader named in the refusal (KIP-951)")
consumer.close()

keys = [key for _, key in seen]
if [offset for offset, _ in seen] != list(range(count)):
    sys.exit("consumed offsets are not 0..n-1")
if keys != [f"key-{i}" for i in range(count)]:
    sys.exit(f"records lost, doubled or out of order: {len(set(keys))} distinct of {count}")
print(f"librdkafka {libversion()[0]}: the consumer followed a leader moved mid-consumption "
      f"({len(fenced)} Fetch v{versions} to the old leader at the old epoch, found broker 1 "
      f"by {followed_by}, {len(to_new)} Fetches there); {count} records each consumed once, "
      f"in order")
