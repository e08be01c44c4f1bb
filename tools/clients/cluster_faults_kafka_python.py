"""kafka-python against kafka-codec's in-memory cluster, with faults driven through the
cluster's HTTP control surface (kafka-codec cluster --control): the scenarios of
cluster_faults_librdkafka.py and cluster_retry_librdkafka.py, with kafka-python's producer.

1. a leader moved mid-produce: the partition's leadership goes from broker 0 to broker 1
   (leader epoch bumped) while records are in flight; the producer meets
   NOT_LEADER_OR_FOLLOWER at the old leader, refreshes its metadata and sends the rest to
   the new one; every record lands once, in order;
2. a broker stopped and restarted: the leader (now broker 1) is stopped with records
   waiting and restarted a second later; the producer reconnects on a new connection and
   delivers them all, once;
3. a produce applied and its answer lost (`{"applyThen": "disconnect"}` on the next
   Produce): with `enable_idempotence=True` the retry carries the same producer id, epoch
   and sequence, the cluster answers it with the original offset and each record is in the
   log once; without idempotence each record is in the log twice.

Checked from both sides: the cluster's request log (which broker each Produce met, on which
connection, and what the cluster did with it) and every record a consumer reads back.
Prints one summary line; exits non-zero on any difference.

    python cluster_faults_kafka_python.py BOOTSTRAP CONTROL_HOST:PORT [RECORDS]
"""

import logging
import sys
import time

import kafka
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

from cluster_control import Control

logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
bootstrap, control = sys.argv[1].split(","), Control(sys.argv[2])
count = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
deadline = time.monotonic() + 50  # a hang guard, under CI's one minute


def guard(what):
    if time.monotonic() > deadline:
        sys.exit(f"hang guard: {what}")


def read_back(topic):
    """Every record of partition 0 of `topic`: (offset, key, value)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                             group_id=None, consumer_timeout_ms=1000)
    partition = TopicPartition(topic, 0)
    consumer.assign([partition])
    end = consumer.end_offsets([partition])[partition]
    consumer.seek_to_beginning(partition)
    seen = []
    while len(seen) < end:
        guard(f"{topic}: consumed {len(seen)} of {end}")
        for records in consumer.poll(timeout_ms=500).values():
            seen.extend((r.offset, r.key.decode(), r.value.decode()) for r in records)
    consumer.close()
    return end, seen


admin = KafkaAdminClient(bootstrap_servers=bootstrap)
admin.create_topics([NewTopic(t, 1, 1) for t in
                     ("kp-faults", "kp-retry-idempotent", "kp-retry-plain")])
admin.close()

# 1. The leader moves mid-produce.
topic = "kp-faults"
delivered, failed = [], []
producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="kp-faults", acks="all",
                         linger_ms=2, batch_size=4096, retries=20, retry_backoff_ms=50,
                         reconnect_backoff_ms=50, reconnect_backoff_max_ms=200,
                         max_in_flight_requests_per_connection=1, enable_idempotence=False)


def produce(first, last):
    for i in range(first, last):
        future = producer.send(topic, key=f"key-{i}".encode(), value=f"value-{i}".encode(),
                               partition=0)
        future.add_callback(lambda metadata: delivered.append(metadata.offset))
        future.add_errback(lambda error: failed.append(repr(error)))


def wait_delivered(n, what):
    while len(delivered) < n:
        if failed:
            sys.exit(f"{what}: delivery failed: {failed[0]}")
        guard(f"{what}: {len(delivered)} of {n} delivered")
        time.sleep(0.01)


half = count // 2
produce(0, half)
wait_delivered(half // 2, "before the move")
before_move = control.last_sequence()
moved = control.call("POST", "/leaders", {"topic": topic, "partition": 0, "leader": 1})
if moved["leaderEpoch"] != 1:
    sys.exit(f"the move answered {moved}")
produce(half, count)
producer.flush(30)
wait_delivered(count, "after the move")
after = [e for e in control.log_of("Produce", before_move) if e["clientId"] == "kp-faults"]
to_old = [e for e in after if e["broker"] == 0]
to_new = [e for e in after if e["broker"] == 1]
if not to_old:
    sys.exit("no produce request met the old leader after the move: the fault never fired")
if not to_new:
    sys.exit("no produce request reached the new leader after the move")
if not [e for e in control.log_of("Metadata", before_move) if e["clientId"] == "kp-faults"]:
    sys.exit("the producer did not refresh its metadata after the move")
if any(e["broker"] == 0 for e in after if e["sequence"] > to_new[0]["sequence"]):
    sys.exit("the producer went back to the old leader")

# 2. The leader (now broker 1) stops with records waiting, and comes back.
connections_before = {e["connection"] for e in control.log_of("Produce") if e["broker"] == 1}
control.call("POST", "/brokers/1/stop")
stopped_at = control.last_sequence()
produce(count, count + 100)
time.sleep(1.0)
if len(delivered) != count:
    sys.exit(f"{len(delivered) - count} record(s) delivered while the leader was stopped")
control.call("POST", "/brokers/1/restart")
producer.flush(30)
wait_delivered(count + 100, "after the restart")
producer.close()
reconnected = {e["connection"] for e in control.log_of("Produce", stopped_at) if e["broker"] == 1}
if not reconnected or reconnected & connections_before:
    sys.exit(f"no new connection to the restarted broker: {reconnected} vs {connections_before}")
total = count + 100
if sorted(delivered) != list(range(total)):
    sys.exit(f"delivered offsets are not 0..{total - 1}: {sorted(delivered)[:5]}...")
end, seen = read_back(topic)
keys = [key for _, key, _ in seen]
if end != total or keys != [f"key-{i}" for i in range(total)]:
    sys.exit(f"records lost, doubled or out of order: {end} in the log, {len(set(keys))} "
             f"distinct of {total}")
if [offset for offset, _, _ in seen] != list(range(total)):
    sys.exit("consumed offsets are not 0..n-1")


# 3. A produce applied and its answer lost, with and without idempotence.
def records_of(entry):
    topics = entry["request"]["topicData"]
    if len(topics) != 1 or len(topics[0]["partitionData"]) != 1:
        sys.exit(f"a produce request for more than one partition: {entry['request']}")
    return topics[0]["partitionData"][0]["records"]


def retried(idempotent, n=20):
    mode = "idempotent" if idempotent else "plain"
    topic, client = f"kp-retry-{mode}", f"kp-retry-{mode}"
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id=client, acks="all",
                             linger_ms=100, retries=5, retry_backoff_ms=50,
                             reconnect_backoff_ms=50, enable_idempotence=idempotent,
                             max_in_flight_requests_per_connection=1)
    # Connected and its metadata known before the fault is set (and, idempotent, its
    # producer id), so that the fault meets the first Produce.
    producer.partitions_for(topic)
    before = control.last_sequence()
    rule = control.call("POST", "/rules", {"match": {"api": "Produce", "clientId": client},
                                           "action": {"applyThen": "disconnect"}})["ids"][0]
    futures = [producer.send(topic, key=f"key-{i}".encode(), value=f"value-{i}".encode(),
                             partition=0) for i in range(n)]
    producer.flush(30)
    offsets = sorted(future.get(timeout=30).offset for future in futures)
    producer.close()
    if any(r["id"] == rule for r in control.call("GET", "/rules")):
        sys.exit(f"{mode}: the rule is still in force: the fault never fired")
    produces = [e for e in control.log_of("Produce", before) if e["clientId"] == client]
    if len(produces) < 2:
        sys.exit(f"{mode}: {len(produces)} produce request(s): the producer did not retry")
    first, retry = produces[0], produces[1]
    if first["outcome"] != f"rule {rule}: apply, then disconnect":
        sys.exit(f"{mode}: the first produce's outcome is {first['outcome']!r}")
    if retry["outcome"] != "answered" or retry["connection"] == first["connection"]:
        sys.exit(f"{mode}: the retry was not answered on a new connection: {retry}")
    if records_of(retry) != records_of(first):
        sys.exit(f"{mode}: the retry does not carry the same records")
    end, seen = read_back(topic)
    once = [(f"key-{i}", f"value-{i}") for i in range(n)]
    records = [(key, value) for _, key, value in seen]
    want = (n, once, list(range(n))) if idempotent else \
        (2 * n, once + once, list(range(n, 2 * n)))
    if (end, records, offsets) != want:
        sys.exit(f"{mode}: the partition holds offsets 0..{end - 1} and the producer was "
                 f"told {offsets[:3]}...; want 0..{want[0] - 1} and {want[2][:3]}...")
    return len(produces), end


idempotent_requests, idempotent_end = retried(True)
plain_requests, plain_end = retried(False)
print(f"kafka-python {kafka.__version__}: followed a leader moved mid-produce ({len(to_old)} "
      f"produce requests to the old leader after the move, {len(to_new)} to the new one), "
      f"reconnected to a restarted broker ({len(reconnected)} new connection(s)); {total} "
      f"records each landed once. A produce applied and its answer lost: idempotent "
      f"{idempotent_requests} requests, {idempotent_end} records in the log; without "
      f"idempotence {plain_requests} requests, {plain_end} records (each twice)")
