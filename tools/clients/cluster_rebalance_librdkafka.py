"""librdkafka (confluent-kafka) against kafka-codec's cluster: a partition's leader is fenced
while it runs (POST /brokers/0/fence?running=true on the HTTP control surface: its
heartbeats lost, its listener up), as Kafka's controller fences a broker whose heartbeats
stop arriving, and later unfenced (POST /brokers/0/unfence); the cluster runs Kafka 4.4's
automatic leader rebalance with a short check interval (the test sets
leader.imbalance.check.interval.seconds=1), so once broker 0 is back in the ISR the
partition's leadership returns to it, its preferred replica.

Checked from both sides: what the producer did (an idempotent producer: after the fence
its Produce requests go to broker 1, the fenced broker answering NOT_LEADER_OR_FOLLOWER for
what it no longer leads; after the rebalance to broker 0 again; every record delivered
once, offsets 0..n-1 in order) and what the cluster shows (GET /topics/T/partitions: the
leader and its epochs at each step, broker 0 out of the ISR while fenced and back after
catching up; a consumer reads every record back once). Prints one summary line; exits
non-zero on any difference.

    python cluster_rebalance_librdkafka.py BOOTSTRAP CONTROL_HOST:PORT [RECORDS]
"""

import sys
import time

from confluent_kafka.admin import AdminClient, NewTopic

from cluster_control import Control
from rdkafka_partition import PartitionProducer, read_back

bootstrap, control = sys.argv[1], Control(sys.argv[2])
count = int(sys.argv[3]) if len(sys.argv) > 3 else 900
topic = "rebalance-proof"
deadline = time.monotonic() + 30  # a hang guard


def partition():
    return control.call("GET", f"/topics/{topic}/partitions")["partitions"][0]


admin = AdminClient({"bootstrap.servers": bootstrap})
# One partition on brokers 0 (leader, preferred) and 1.
for name, future in admin.create_topics([NewTopic(topic, 1, 2)]).items():
    future.result(timeout=20)
shown = partition()
if (shown["leader"], shown["replicas"], shown["isr"]) != (0, [0, 1], [0, 1]):
    sys.exit(f"placed as {shown}, not leader 0 on [0, 1]")

producer = PartitionProducer(bootstrap, topic, deadline, **{"enable.idempotence": True})
produce, wait_delivered, delivered = producer.produce, producer.wait_delivered, producer.delivered


def produce_requests(after):
    return control.log_of("Produce", after)


third = count // 3
produce(0, third)
wait_delivered(third, "before the fence")

# Fenced while running: the leadership goes to broker 1 at leader epoch 1.
fenced_at = control.last_sequence()
fenced = control.call("POST", "/brokers/0/fence?running=true")
if fenced["movedLeaders"] != [{"topic": topic, "partition": 0, "leader": 1}]:
    sys.exit(f"the fence moved {fenced['movedLeaders']}")
shown = partition()
if (shown["leader"], shown["leaderEpoch"], shown["isr"]) != (1, 1, [1]):
    sys.exit(f"after the fence: {shown}")
produce(third, 2 * third)
wait_delivered(2 * third, "after the fence")
while_fenced = produce_requests(fenced_at)
if not while_fenced or while_fenced[-1]["broker"] != 1:
    sys.exit(f"after the fence the producer should produce to broker 1: "
             f"{[e['broker'] for e in while_fenced]}")
to_fenced = sum(1 for e in while_fenced if e["broker"] == 0)
if to_fenced == 0:
    sys.exit("the producer never met the fenced broker's refusal (nothing to follow)")

# Heartbeats back: unfenced, in the ISR once caught up, leader again at the next check.
unfenced_at = control.last_sequence()
unfence_time = time.monotonic()
control.call("POST", "/brokers/0/unfence")
while partition()["leader"] != 0:
    if time.monotonic() > deadline:
        sys.exit(f"the leadership never came back to broker 0: {partition()}")
    time.sleep(0.05)
returned = time.monotonic() - unfence_time
shown = partition()
if (shown["leaderEpoch"], shown["isr"]) != (2, [0, 1]):
    sys.exit(f"after the rebalance: {shown}")
produce(2 * third, count)
wait_delivered(count, "after the rebalance")
producer.flush(20)
after_rebalance = produce_requests(unfenced_at)
if not after_rebalance or after_rebalance[-1]["broker"] != 0:
    sys.exit(f"after the rebalance the producer should produce to broker 0: "
             f"{[e['broker'] for e in after_rebalance]}")
if after_rebalance[0]["broker"] != 1:
    sys.exit("the first Produce after the rebalance should go to the old leader, broker 1")
if sorted(delivered) != list(range(count)) or delivered != sorted(delivered):
    sys.exit(f"delivered offsets are not 0..{count - 1} in order: {delivered[:5]}...")

seen = read_back(bootstrap, topic, count, deadline)
if seen != [(i, f"key-{i}") for i in range(count)]:
    sys.exit("records lost, doubled or out of order")
print(f"librdkafka {__import__('confluent_kafka').libversion()[0]}: leader 0 fenced while "
      f"running; {to_fenced} Produce request(s) to it refused, then broker 1 led; unfenced, "
      f"the preferred leader was back {returned:.1f} s later and the producer followed it "
      f"({len(after_rebalance)} Produce request(s) after); "
      f"{count} records each landed once")
