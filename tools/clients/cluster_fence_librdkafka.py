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

import sys
import time

from confluent_kafka import libversion
from confluent_kafka.admin import AdminClient, NewTopic

from cluster_control import Control
from rdkafka_partition import PartitionProducer, read_back

bootstrap, control = sys.argv[1], Control(sys.argv[2])
count = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
topic = "fence-proof"
deadline = time.monotonic() + 30  # a hang guard

admin = AdminClient({"bootstrap.servers": bootstrap})
# One partition on brokers 0 (leader) and 1.
for name, future in admin.create_topics([NewTopic(topic, 1, 2)]).items():
    future.result(timeout=20)
placed = admin.list_topics(topic, timeout=10).topics[topic].partitions[0]
if (placed.leader, list(placed.replicas), list(placed.isrs)) != (0, [0, 1], [0, 1]):
    sys.exit(f"placed as {placed.leader} {placed.replicas} {placed.isrs}, not 0 [0, 1] [0, 1]")

sender = PartitionProducer(bootstrap, topic, deadline, **{"enable.idempotence": True})

half = count // 2
sender.produce(0, half)
sender.wait_delivered(half, "before the stop")
control.call("POST", "/brokers/0/stop")
stopped_at = control.last_sequence()
stop_time = time.monotonic()
# Sent while the leader is down and not yet fenced: they wait, then go to the new leader.
sender.produce(half, count)
sender.wait_delivered(count, "after the stop")
took = time.monotonic() - stop_time
sender.flush(20)

brokers = {b["id"]: b for b in control.call("GET", "/brokers")}
if brokers[0]["up"] or not brokers[0]["fenced"] or brokers[1]["fenced"]:
    sys.exit(f"broker 0 should be down and fenced, broker 1 not: {brokers}")
after = control.call("GET", f"/log?after={stopped_at}")
produced = [e for e in after if e["api"] == "Produce"]
if not produced or any(e["broker"] != 1 for e in produced):
    sys.exit(f"after the stop every Produce should go to broker 1: "
             f"{[e['broker'] for e in produced]}")
metadata = [e for e in after if e["api"] == "Metadata"]
if not metadata or metadata[0]["sequence"] > produced[0]["sequence"]:
    sys.exit("the producer did not refresh its metadata before producing to the new leader")
if sorted(sender.delivered) != list(range(count)) or sender.delivered != sorted(sender.delivered):
    sys.exit(f"delivered offsets are not 0..{count - 1} in order: {sender.delivered[:5]}...")

listed = admin.list_topics(topic, timeout=10)
if sorted(listed.brokers) != [1, 2]:
    sys.exit(f"Metadata lists brokers {sorted(listed.brokers)}, not [1, 2]")
now = listed.topics[topic].partitions[0]
if (now.leader, list(now.replicas), list(now.isrs)) != (1, [0, 1], [1]):
    sys.exit(f"after the fence: leader {now.leader} {now.replicas} {now.isrs}, not 1 [0, 1] [1]")

seen = read_back(bootstrap, topic, count, deadline)
if seen != [(i, f"key-{i}") for i in range(count)]:
    sys.exit("records lost, doubled or out of order")
print(f"librdkafka {libversion()[0]}: the leader stopped for "
      f"good and was fenced; {len(metadata)} Metadata request(s), then {len(produced)} Produce "
      f"request(s) to the new leader only, {count - half} records sent after the stop "
      f"delivered in {took:.1f} s; {count} records each landed once")
