"""librdkafka (confluent-kafka) against kafka-codec's in-memory cluster: a produce whose
answer is lost after it was written (issue 30, item 5's first scenario), driven through the
cluster's HTTP control surface (kafka-codec cluster --control).

A rule `{"applyThen": "disconnect"}` on the next Produce lets the cluster append the batch,
then closes the connection without answering: the producer cannot know the batch landed,
and retries it on a new connection. Run twice, each on a topic of its own:

- with `enable.idempotence=true` the retry carries the same producer id, epoch and
  sequence, the cluster recognises it (as Kafka's producer state does) and answers with the
  original offset: every record is in the log once, offsets 0..n-1;
- without idempotence the retry is a new batch to the cluster: the records are in the log
  twice, offsets 0..2n-1, and the delivery reports name the second copy (n..2n-1).

Checked from both sides: the request log (the rule acted on the first Produce, which the
cluster applied and left unanswered; the producer sent the same records again on a new
connection, and that one was answered), the delivery reports, the partition's end offset
and every record a consumer reads back. Prints one summary line; exits non-zero on any
difference.

    python cluster_retry_librdkafka.py BOOTSTRAP CONTROL_HOST:PORT [RECORDS]
"""

import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition, OFFSET_BEGINNING
from confluent_kafka.admin import AdminClient, NewTopic

from cluster_control import Control

bootstrap, control = sys.argv[1], Control(sys.argv[2])
count = int(sys.argv[3]) if len(sys.argv) > 3 else 20
deadline = time.monotonic() + 50  # a hang guard, under CI's one minute


def records_of(entry):
    """The record bytes of a logged Produce request (one topic, one partition here)."""
    topics = entry["request"]["topicData"]
    if len(topics) != 1 or len(topics[0]["partitionData"]) != 1:
        sys.exit(f"a produce request for more than one partition: {entry['request']}")
    return topics[0]["partitionData"][0]["records"]


admin = AdminClient({"bootstrap.servers": bootstrap})


def run(idempotent):
    """Produces `count` records through one lost answer; what happened, as numbers."""
    mode = "idempotent" if idempotent else "plain"
    topic = f"retry-{mode}"
    for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        future.result(timeout=20)
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": idempotent,
                         "acks": "all", "linger.ms": 100, "batch.num.messages": 10000,
                         "retry.backoff.ms": 50, "client.id": f"retry-{mode}"})
    # Connected and its metadata known before the fault is set, so that the fault meets
    # the first Produce and nothing else.
    producer.list_topics(topic, timeout=20)
    before = control.last_sequence()
    rule = control.call("POST", "/rules",
                        {"match": {"api": "Produce", "clientId": f"retry-{mode}"},
                         "action": {"applyThen": "disconnect"}})["ids"][0]
    delivered = []

    def on_delivery(error, message):
        if error is not None:
            sys.exit(f"{mode}: delivery failed: {error}")
        delivered.append(message.offset())

    for i in range(count):
        producer.produce(topic, key=f"key-{i}", value=f"value-{i}", partition=0,
                         on_delivery=on_delivery)
    while len(delivered) < count:
        if time.monotonic() > deadline:
            sys.exit(f"{mode}: {len(delivered)} of {count} delivered before the guard")
        producer.poll(0.05)
    if producer.flush(10) != 0:
        sys.exit(f"{mode}: the producer did not flush")

    # The request log: the rule acted on the first Produce, applied and unanswered; the
    # same records went again on another connection and were answered.
    if any(r["id"] == rule for r in control.call("GET", "/rules")):
        sys.exit(f"{mode}: the rule is still in force: the fault never fired")
    produces = [e for e in control.call("GET", f"/log?api=Produce&after={before}")
                if e["clientId"] == f"retry-{mode}"]
    if len(produces) < 2:
        sys.exit(f"{mode}: {len(produces)} produce request(s): the producer did not retry")
    first, retry = produces[0], produces[1]
    if first["outcome"] != f"rule {rule}: apply, then disconnect":
        sys.exit(f"{mode}: the first produce's outcome is {first['outcome']!r}")
    if retry["outcome"] != "answered":
        sys.exit(f"{mode}: the retry's outcome is {retry['outcome']!r}")
    if retry["connection"] == first["connection"]:
        sys.exit(f"{mode}: the retry came on the connection that was closed")
    if records_of(retry) != records_of(first):
        sys.exit(f"{mode}: the second produce request does not carry the same records")
    answered = [e for e in produces[1:] if e["outcome"] != "answered"]
    if answered:
        sys.exit(f"{mode}: later produce requests not answered: {answered}")

    consumer = Consumer({"bootstrap.servers": bootstrap, "enable.auto.commit": False,
                         "group.id": f"retry-{mode}-reader"})
    low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    seen = []
    while len(seen) < high:
        if time.monotonic() > deadline:
            sys.exit(f"{mode}: consumed {len(seen)} of {high} before the guard")
        message = consumer.poll(1.0)
        if message is None:
            continue
        if message.error():
            sys.exit(f"{mode}: consume failed: {message.error()}")
        seen.append((message.offset(), message.key().decode(), message.value().decode()))
    consumer.close()
    once = [(f"key-{i}", f"value-{i}") for i in range(count)]
    if [offset for offset, _, _ in seen] != list(range(high)):
        sys.exit(f"{mode}: consumed offsets are not 0..{high - 1}")
    records = [(key, value) for _, key, value in seen]
    if idempotent:
        want_end, want_records, want_delivered = count, once, list(range(count))
    else:
        want_end, want_records, want_delivered = 2 * count, once + once, \
            list(range(count, 2 * count))
    if (low, high) != (0, want_end):
        sys.exit(f"{mode}: the partition holds offsets {low}..{high - 1}, not 0..{want_end - 1}")
    if records != want_records:
        sys.exit(f"{mode}: the records read back are not as expected: {records[:3]}...")
    if sorted(delivered) != want_delivered:
        sys.exit(f"{mode}: delivered offsets {sorted(delivered)[:3]}..., not {want_delivered[:3]}...")
    return len(produces), high


idempotent_requests, idempotent_end = run(True)
plain_requests, plain_end = run(False)
print(f"librdkafka {__import__('confluent_kafka').libversion()[0]}: a produce of {count} "
      f"records applied and its answer lost was retried on a new connection; idempotent: "
      f"{idempotent_requests} produce requests, {idempotent_end} records in the log (no "
      f"duplicate); without idempotence: {plain_requests} produce requests, {plain_end} "
      f"records in the log (each record twice)")
