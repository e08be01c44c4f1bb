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

import json
import sys
import time
import urllib.request

from confluent_kafka import Consumer, Producer, TopicPartition, OFFSET_BEGINNING
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap, control = sys.argv[1], sys.argv[2]
count = int(sys.argv[3]) if len(sys.argv) > 3 else 900
topic = "rebalance-proof"
deadline = time.monotonic() + 30  # a hang guard


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://{control}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def last_sequence():
    entries = call("GET", "/log")
    return entries[-1]["sequence"] if entries else -1


def partition():
    return call("GET", f"/topics/{topic}/partitions")["partitions"][0]


admin = AdminClient({"bootstrap.servers": bootstrap})
# One partition on brokers 0 (leader, preferred) and 1.
for name, future in admin.create_topics([NewTopic(topic, 1, 2)]).items():
    future.result(timeout=20)
shown = partition()
if (shown["leader"], shown["replicas"], shown["isr"]) != (0, [0, 1], [0, 1]):
    sys.exit(f"placed as {shown}, not leader 0 on [0, 1]")

delivered = []


def on_delivery(error, message):
    if error is not None:
        sys.exit(f"delivery failed: {error}")
    delivered.append(message.offset())


producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 2, "acks": "all",
                     "enable.idempotence": True, "batch.num.messages": 50,
                     "topic.metadata.refresh.interval.ms": 60000})


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


def produce_requests(after):
    return [e for e in call("GET", f"/log?after={after}") if e["api"] == "Produce"]


third = count // 3
produce(0, third)
wait_delivered(third, "before the fence")

# Fenced while running: the leadership goes to broker 1 at leader epoch 1.
fenced_at = last_sequence()
fenced = call("POST", "/brokers/0/fence?running=true")
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
unfenced_at = last_sequence()
unfence_time = time.monotonic()
call("POST", "/brokers/0/unfence")
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
if producer.flush(20) != 0:
    sys.exit("producer did not flush")
after_rebalance = produce_requests(unfenced_at)
if not after_rebalance or after_rebalance[-1]["broker"] != 0:
    sys.exit(f"after the rebalance the producer should produce to broker 0: "
             f"{[e['broker'] for e in after_rebalance]}")
if after_rebalance[0]["broker"] != 1:
    sys.exit("the first Produce after the rebalance should go to the old leader, broker 1")
if sorted(delivered) != list(range(count)) or delivered != sorted(delivered):
    sys.exit(f"delivered offsets are not 0..{count - 1} in order: {delivered[:5]}...")

consumer = Consumer({"bootstrap.servers": bootstrap, "enable.auto.commit": False,
                     "group.id": "unused-assign-only"})
consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
seen = []
while len(seen) < count:
    if time.monotonic() > deadline:
        sys.exit(f"consumed {len(seen)} of {count} before the guard")
    message = consumer.poll(1.0)
    if message is None:
        continue
    if message.error():
        sys.exit(f"consume failed: {message.error()}")
    seen.append((message.offset(), message.key().decode()))
consumer.close()
if seen != [(i, f"key-{i}") for i in range(count)]:
    sys.exit("records lost, doubled or out of order")
print(f"librdkafka {__import__('confluent_kafka').libversion()[0]}: leader 0 fenced while "
      f"running; {to_fenced} Produce request(s) to it refused, then broker 1 led; unfenced, "
      f"the preferred leader was back {returned:.1f} s later and the producer followed it "
      f"({len(after_rebalance)} Produce request(s) after); "
      f"{count} records each landed once")
