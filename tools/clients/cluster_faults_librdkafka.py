"""librdkafka (confluent-kafka) against kafka-codec's in-memory cluster, with faults driven
through the cluster's HTTP control surface (kafka-codec cluster --control):

1. a leader moved mid-produce: the partition's leadership goes from broker 0 to broker 1
   (leader epoch bumped) while records are in flight; the producer is answered
   NOT_LEADER_OR_FOLLOWER by the old leader, refreshes its metadata, sends the rest to the
   new leader, and every record lands exactly once, in order;
2. a broker stopped and restarted: the leader is stopped (its listener closed, its
   connections dropped) with records waiting, and restarted a second later; the producer
   reconnects and delivers them all, once.

Checked from both sides: the records a consumer reads back (each key once, offsets 0..n-1)
and the cluster's request log (the produce requests went to the old leader, then to the
new one; a new connection to the restarted broker). Prints one summary line; exits non-zero
on any difference.

    python cluster_faults_librdkafka.py BOOTSTRAP CONTROL_HOST:PORT [RECORDS]
"""

import json
import sys
import time
import urllib.request

from confluent_kafka import Consumer, Producer, TopicPartition, OFFSET_BEGINNING
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap, control = sys.argv[1], sys.argv[2]
count = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
topic = "faults-proof"
deadline = time.monotonic() + 50  # a hang guard, under CI's one minute


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://{control}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def log_of(api, after=None):
    query = f"?api={api}" + ("" if after is None else f"&after={after}")
    return call("GET", "/log" + query)


def last_sequence():
    entries = call("GET", "/log")
    return entries[-1]["sequence"] if entries else -1


admin = AdminClient({"bootstrap.servers": bootstrap})
for name, future in admin.create_topics([NewTopic(topic, 1, 1)]).items():
    future.result(timeout=20)

delivered = []


def on_delivery(error, message):
    if error is not None:
        sys.exit(f"delivery failed: {error}")
    delivered.append(message.offset())


producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 2, "acks": "all",
                     "batch.num.messages": 50, "topic.metadata.refresh.interval.ms": 60000})


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


# 1. The leader moves mid-produce.
half = count // 2
produce(0, half)
wait_delivered(half // 2, "before the move")
before_move = last_sequence()
moved = call("POST", "/leaders", {"topic": topic, "partition": 0, "leader": 1})
if moved["leaderEpoch"] != 1:
    sys.exit(f"the move answered {moved}")
produce(half, count)
wait_delivered(count, "after the move")
after = log_of("Produce", before_move)
to_old = [e for e in after if e["broker"] == 0]
to_new = [e for e in after if e["broker"] == 1]
if not to_old:
    sys.exit("no produce request met the old leader after the move: the fault never fired")
if not to_new:
    sys.exit("no produce request reached the new leader after the move")
if not log_of("Metadata", before_move):
    sys.exit("the producer did not refresh its metadata after the move")
if any(e["broker"] == 0 for e in after if e["sequence"] > to_new[0]["sequence"]):
    sys.exit("the producer went back to the old leader")

# 2. The leader (now broker 1) stops with records waiting, and comes back.
connections_before = {e["connection"] for e in log_of("Produce") if e["broker"] == 1}
call("POST", "/brokers/1/stop")
stopped_at = last_sequence()
produce(count, count + 100)
producer.poll(1.0)
call("POST", "/brokers/1/restart")
wait_delivered(count + 100, "after the restart")
if producer.flush(20) != 0:
    sys.exit("producer did not flush")
reconnected = {e["connection"] for e in log_of("Produce", stopped_at) if e["broker"] == 1}
if not reconnected or reconnected & connections_before:
    sys.exit(f"no new connection to the restarted broker: {reconnected} vs {connections_before}")
total = count + 100

if sorted(delivered) != list(range(total)):
    sys.exit(f"delivered offsets are not 0..{total - 1}: {sorted(delivered)[:5]}...")

consumer = Consumer({"bootstrap.servers": bootstrap, "enable.auto.commit": False,
                     "group.id": "unused-assign-only"})
consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
seen = []
while len(seen) < total:
    if time.monotonic() > deadline:
        sys.exit(f"consumed {len(seen)} of {total} before the guard")
    message = consumer.poll(1.0)
    if message is None:
        continue
    if message.error():
        sys.exit(f"consume failed: {message.error()}")
    seen.append((message.offset(), message.key().decode()))
consumer.close()
keys = [key for _, key in seen]
if len(set(keys)) != total or sorted(keys) != sorted(f"key-{i}" for i in range(total)):
    sys.exit(f"records lost or doubled: {len(set(keys))} distinct of {total}")
if [offset for offset, _ in seen] != list(range(total)):
    sys.exit("consumed offsets are not 0..n-1")
print(f"librdkafka {__import__('confluent_kafka').libversion()[0]}: followed a leader moved "
      f"mid-produce ({len(to_old)} produce requests to the old leader after the move, "
      f"{len(to_new)} to the new one) and reconnected to a restarted broker "
      f"({len(reconnected)} new connection(s)); {total} records each landed once")
