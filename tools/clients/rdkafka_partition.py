"""librdkafka's side of the fault proofs against kafka-codec's in-memory cluster
(cluster_faults_librdkafka.py, cluster_fence_librdkafka.py,
cluster_rebalance_librdkafka.py): numbered records (key-i, value-i) sent to partition 0 of
a topic, and read back from its beginning. Any failure, or the hang guard's deadline
passing, ends the program with one line."""

import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition, OFFSET_BEGINNING


class PartitionProducer:
    """A producer to partition 0 of `topic`, keeping each delivered record's offset in
    `delivered`; `config` adds to (or overrides) its librdkafka settings."""

    def __init__(self, bootstrap, topic, deadline, **config):
        self.topic = topic
        self.deadline = deadline
        self.delivered = []
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 2,
                                  "acks": "all", "batch.num.messages": 50,
                                  "topic.metadata.refresh.interval.ms": 60000, **config})

    def _on_delivery(self, error, message):
        if error is not None:
            sys.exit(f"delivery failed: {error}")
        self.delivered.append(message.offset())

    def produce(self, first, last):
        """Records first..last-1, queued (not waited for)."""
        for i in range(first, last):
            self.producer.produce(self.topic, key=f"key-{i}", value=f"value-{i}", partition=0,
                                  on_delivery=self._on_delivery)
            self.producer.poll(0)

    def wait_delivered(self, n, what):
        """Until `n` records are delivered."""
        while len(self.delivered) < n:
            if time.monotonic() > self.deadline:
                sys.exit(f"{what}: {len(self.delivered)} of {n} delivered before the guard")
            self.producer.poll(0.05)

    def flush(self, timeout):
        if self.producer.flush(timeout) != 0:
            sys.exit("producer did not flush")


def read_back(bootstrap, topic, count, deadline):
    """The (offset, key) of partition 0's first `count` records, in the order consumed."""
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
    return seen
