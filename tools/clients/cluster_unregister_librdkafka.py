"""librdkafka (confluent-kafka) against kafka-codec's in-memory cluster: the leader of a
partition is unregistered while it runs (an UnregisterBroker v0 request, sent by this script
to broker 1, as `kafka-cluster unregister` sends one) between two halves of the producer's
records. As a Kafka 4.4 cluster does (cluster/tests/remove_broker_kafka.rs, recorded live),
broker 0 is fenced and leaves the brokers listed while it keeps running: the partition's
leadership goes to the other in-sync replica at the next leader epoch, and broker 0 answers
a Produce NOT_LEADER_OR_FOLLOWER.

Checked from both sides: what the producer did (its Produce requests after the
unregistration went to broker 0, refused naming the new leader, then to broker 1 only; every record delivered once,
offsets 0..n-1, in order) and what the cluster shows (GET /brokers and Metadata no longer
list broker 0; the partition led by 1 at leader epoch 1, its replicas [0, 1], its ISR [1]; a consumer reads
every record back once). Prints one summary line; exits non-zero on any difference.

    python cluster_unregister_librdkafka.py BOOTSTRAP CONTROL_HOST:PORT [RECORDS]
"""

import socket
import struct
import sys
import time

from confluent_kafka import libversion
from confluent_kafka.admin import AdminClient, NewTopic

from cluster_control import Control
from rdkafka_partition import PartitionProducer, read_back


def unregister_broker(address, broker_id):
    """UnregisterBroker v0 (key 64, flexible: request header v2) of `broker_id`, sent to
    `address` (HOST:PORT); the answer's error code."""
    client_id = b"unregister-proof"
    header = struct.pack(">hhih", 64, 0, 7, len(client_id)) + client_id + b"\x00"
    body = struct.pack(">i", broker_id) + b"\x00"
    request = header + body
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(struct.pack(">i", len(request)) + request)
        size = struct.unpack(">i", read_exactly(connection, 4))[0]
        answer = read_exactly(connection, size)
    # Correlation id, the response header's tagged fields (one byte: none), throttle time,
    # then the error code.
    correlation, = struct.unpack(">i", answer[:4])
    if correlation != 7:
        sys.exit(f"UnregisterBroker answered with correlation id {correlation}")
    return struct.unpack(">h", answer[9:11])[0]


def read_exactly(connection, size):
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            sys.exit("the connection closed mid-answer")
        data += chunk
    return data


bootstrap, control = sys.argv[1], Control(sys.argv[2])
count = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
topic = "unregister-proof"
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
sender.wait_delivered(half, "before the unregistration")
brokers = {b["id"]: b for b in control.call("GET", "/brokers")}
unregistered_at = control.last_sequence()
error = unregister_broker(brokers[1]["address"], 0)
if error != 0:
    sys.exit(f"UnregisterBroker of broker 0 answered error {error}")
unregister_time = time.monotonic()
sender.produce(half, count)
sender.wait_delivered(count, "after the unregistration")
took = time.monotonic() - unregister_time
sender.flush(20)

brokers = {b["id"]: b for b in control.call("GET", "/brokers")}
if sorted(brokers) != [1, 2]:
    sys.exit(f"GET /brokers lists {sorted(brokers)}, not [1, 2]")
after = control.call("GET", f"/log?after={unregistered_at}")
produced = [e for e in after if e["api"] == "Produce"]
to_unregistered = 0
while to_unregistered < len(produced) and produced[to_unregistered]["broker"] == 0:
    to_unregistered += 1
to_leader = produced[to_unregistered:]
if to_unregistered == 0 or not to_leader or any(e["broker"] != 1 for e in to_leader):
    sys.exit(f"after the unregistration the producer should meet broker 0's refusal, then "
             f"produce to broker 1 only: {[e['broker'] for e in produced]}")
# The refusal names the new leader and its endpoint (KIP-951), which librdkafka may follow
# without a Metadata refresh.
metadata = [e for e in after if e["api"] == "Metadata"]
shown = control.call("GET", f"/topics/{topic}/partitions")["partitions"][0]
if (shown["leader"], shown["leaderEpoch"], shown["isr"]) != (1, 1, [1]):
    sys.exit(f"after the unregistration: {shown}")
if sorted(sender.delivered) != list(range(count)) or sender.delivered != sorted(sender.delivered):
    sys.exit(f"delivered offsets are not 0..{count - 1} in order: {sender.delivered[:5]}...")

listed = admin.list_topics(topic, timeout=10)
if sorted(listed.brokers) != [1, 2]:
    sys.exit(f"Metadata lists brokers {sorted(listed.brokers)}, not [1, 2]")
now = listed.topics[topic].partitions[0]
if (now.leader, list(now.replicas), list(now.isrs)) != (1, [0, 1], [1]):
    sys.exit(f"after the unregistration: leader {now.leader} {now.replicas} {now.isrs}, "
             f"not 1 [0, 1] [1]")

seen = read_back(bootstrap, topic, count, deadline)
if seen != [(i, f"key-{i}") for i in range(count)]:
    sys.exit("records lost, doubled or out of order")
print(f"librdkafka {libversion()[0]}: the leader was unregistered while it ran; "
      f"{to_unregistered} Produce request(s) to it refused (it still runs), "
      f"{len(metadata)} Metadata request(s), then {len(to_leader)} Produce request(s) to the "
      f"new leader only, {count - half} records sent after it delivered in {took:.1f} s; "
      f"{count} records each landed once")
