"""librdkafka's side of the group proofs against kafka-codec's in-memory cluster
(cluster_librdkafka_group.py, cluster_group_expiry_librdkafka.py): numbered records (key-i,
value-i) spread over a topic's partitions, and the consumers of one group."""

import sys

from confluent_kafka import Consumer, Producer


class SpreadProducer:
    """A producer to `topic`, record i to partition i % `partitions`."""

    def __init__(self, bootstrap, topic, partitions):
        self.topic = topic
        self.partitions = partitions
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})

    def produce(self, first, last):
        """Records first..last-1, flushed; the program ends if they are not within 30 s."""
        for i in range(first, last):
            self.producer.produce(self.topic, key=f"key-{i}", value=f"value-{i}",
                                  partition=i % self.partitions)
            self.producer.poll(0)
        if self.producer.flush(30) != 0:
            sys.exit("producer did not flush in 30 s")


def group_consumer(bootstrap, group, name, **config):
    """A consumer of `group` (client.id `name`) that commits only when told and starts at
    the earliest offset; `config` adds to its settings."""
    return Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "client.id": name,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        **config,
    })
