"""librdkafka (confluent-kafka) against kafka-codec's in-memory cluster, with faults driven
through the cluster's HTTP control surface (kafka-codec cluster --control):

1. a leader moved mid-produce: the partition's leadership goes from broker 0 to broker 1
   (leader epoch bumped) while records are in flight; the producer is answered
   NOT_LEADER_OR_FOLLOWER by the old leader, learns the new leader (from the refusal itself,
   Produce v10+, or a metadata refresh), sends the rest to the new leader, and every record
   lands exactly once, in order;
2. a broker stopped and restarted: the leader is stopped (its listener closed, its
   connections dropped) with records waiting, and restarted a second later; the producer
   reconnects and delivers them all, once.

Checked from both sides: the records a consumer reads back (each key once, offsets 0..n-1)
and the cluster's request log (the produce requests went to the old leader, then to the
new one; a new connection to the restarted broker). Prints one summary line; exits non-zero
on any difference.

    python cluster_faults_librdkafka.py BOOTSTRAP CONTROL_HOST:PORT [RECORDS]
"""

import sys
import time

from confluent_kafka import libversion
from confluent_kafka.admin import AdminClient, NewTopic

from cluster_control import Control
from rdkafka_partition import PartitionProducer, read_back

bootstrap, control = sys.argv[1], Control(sys.argv[2])
count = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
topic = "faults-proof"
deadline = time.monotonic() + 50  # a hang guard, under CI's one minute

admin = AdminClient({"bootstrap.servers": bootstrap})
for name, future in admin.create_topics([NewTopic(topic, 1, 1)]).items():
    future.result(timeout=20)

sender = PartitionProducer(bootstrap, topic, deadline)

# 1. The leader moves mid-produce.
half = count // 2
sender.produce(0, half)
sender.wait_delivered(half // 2, "before the move")
before_move = control.last_sequence()
moved = control.call("POST", "/leaders", {"topic": topic, "partition": 0, "leader": 1})
if moved["leaderEpoch"] != 1:
    sys.exit(f"the move answered {moved}")
sender.produce(half, count)
sender.wait_delivered(count, "after the move")
after = control.log_of("Produce", before_move)
to_old = [e for e in after if e["broker"] == 0]
to_new = [e for e in after if e["broker"] == 1]
if not to_old:
    sys.exit("no produce request met the old leader after the move: the fault never fired")
if not to_new:
    sys.exit("no produce request reached the new leader after the move")
# Produce v10+ (KIP-951) names the new leader in the old leader's refusal, and librdkafka
# may follow that without asking for Metadata, or ask anyway: which one wins is a race in
# the client. Before v10 the refusal names no one and only a refresh can find the leader.
refreshed = control.log_of("Metadata", before_move)
if not refreshed and min(e["version"] for e in to_old) < 10:
    sys.exit("the producer did not refresh its metadata after the move")
followed_by = (f"{len(refreshed)} Metadata refresh(es)" if refreshed
               else "the leader named in the refusal (KIP-951)")
if any(e["broker"] == 0 for e in after if e["sequence"] > to_new[0]["sequence"]):
    sys.exit("the producer went back to the old leader")

# 2. The leader (now broker 1) stops with records waiting, and comes back.
connections_before = {e["connection"] for e in control.log_of("Produce") if e["broker"] == 1}
control.call("POST", "/brokers/1/stop")
stopped_at = control.last_sequence()
sender.produce(count, count + 100)
sender.producer.poll(1.0)
control.call("POST", "/brokers/1/restart")
sender.wait_delivered(count + 100, "after the restart")
sender.flush(20)
reconnected = {e["connection"] for e in control.log_of("Produce", stopped_at)
               if e["broker"] == 1}
if not reconnected or reconnected & connections_before:
    sys.exit(f"no new connection to the restarted broker: {reconnected} vs {connections_before}")
total = count + 100

if sorted(sender.delivered) != list(range(total)):
    sys.exit(f"delivered offsets are not 0..{total - 1}: {sorted(sender.delivered)[:5]}...")

seen = read_back(bootstrap, topic, total, deadline)
keys = [key for _, key in seen]
if len(set(keys)) != total or sorted(keys) != sorted(f"key-{i}" for i in range(total)):
    sys.exit(f"records lost or doubled: {len(set(keys))} distinct of {total}")
if [offset for offset, _ in seen] != list(range(total)):
    sys.exit("consumed offsets are not 0..n-1")
print(f"librdkafka {libversion()[0]}: followed a leader moved "
      f"mid-produce ({len(to_old)} produce requests to the old leader after the move, "
      f"{len(to_new)} to the new one, found by {followed_by}) and reconnected to a restarted broker "
      f"({len(reconnected)} new connection(s)); {total} records each landed once")
