"""The same client scenarios against a real Kafka broker and against `kafka-codec cluster`,
each through its own `kafka-codec tap`, and their observable results compared.

    python compare_cluster.py KAFKA_BROKER [--kafka-codec PATH] [--client CLIENT ...]
        [--java CLASSPATH] [--out DIR] [--against HOST:PORT]

Starts `kafka-codec cluster --brokers 1` (one broker, as the real one), a tap with
`--rewrite-brokers --records` in front of each server, and runs every scenario of every
client (librdkafka through confluent-kafka, kafka-python, aiokafka; with --java, the tap
proof's Java Workload too) once through each tap, in the same order, each client in a
process of its own (the two servers' runs side by side). Each scenario gives a JSON value:
the records consumed (partition, offset, key, value, timestamp), the offsets delivered and
committed, the group's assignment and state (classic groups; librdkafka also in a KIP-848
group), what read_committed and read_uncommitted consumers read of committed and aborted
transactions, the admin answers, and the error each failure case got (its Kafka error name
as the client reports it). Prints one table of scenario x client (match or mismatch), each
difference, and the tap check of both logs (check_tap_log.py: every frame decoded, every
byte forwarded), and exits 1 on any mismatch, any scenario that raised, or any tap problem.
`--against HOST:PORT` compares with a second server other than the cluster (for example
another `kafka-codec cluster`, to try the scenarios out without a broker). The JSON results
and the taps' logs are kept in --out (default target/compare-cluster).

What legitimately differs between the two servers, and how each scenario normalizes it:
- Names: topics, groups and transactional ids carry a per-run prefix (a rerun against the
  same broker starts clean, and the real broker keeps what earlier runs created); results
  name them without it.
- Node ids: the real broker is node 1 (tools/kafka-broker/broker.sh), the cluster's broker
  node 0; every node id a client reports (leaders, replicas, ISR, coordinators,
  controller) becomes `node0`, `node1`, ... in the order the scenario first meets it.
  Hosts and ports are never recorded (each tap rewrites them anyway).
- Cluster ids are random per cluster: recorded only as present or not.
- Member ids and client ids are generated (a UUID per member): recorded only as counts and
  assignments; the single member's id is not.
- Error messages are free text that Kafka and the cluster word differently: only the error
  (its name, or code as the client gives it) is recorded.
- Producer ids and epochs are allocated by each coordinator from its own counters: not
  recorded. Generation ids and member epochs are not recorded either (no client here shows
  them; Kafka 4.4 also batches KIP-848 assignments, so its epochs run ahead).
Nothing else is normalized: record timestamps are set by the producers (CreateTime), so
they are compared; offsets include transaction markers, so the markers' places are compared.
"""

import argparse
import asyncio
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time
import traceback

import check_tap_log

PARTITIONS = 3
RECORDS = 30
T0 = 1_700_000_000_000  # record timestamps: T0 + i
TIMEOUT = 30  # a hang guard per client call
CLIENTS = ("librdkafka", "kafka-python", "aiokafka")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Run:
    """What one client's scenarios share on one server: the name prefix and the node map."""

    def __init__(self, bootstrap, prefix, java_classpath=None):
        self.bootstrap = bootstrap
        self.prefix = prefix
        self.java_classpath = java_classpath
        self.nodes = {}

    def name(self, what):
        return f"{self.prefix}-{what}"

    def node(self, node_id):
        """node0, node1, ... in the order first met (see the docstring)."""
        if node_id is None or node_id < 0:
            return node_id
        return self.nodes.setdefault(node_id, f"node{len(self.nodes)}")

    def strip(self, value):
        """The result without this run's prefix in any string."""
        if isinstance(value, str):
            return value.replace(self.prefix + "-", "")
        if isinstance(value, list):
            return [self.strip(v) for v in value]
        if isinstance(value, dict):
            return {self.strip(k): self.strip(v) for k, v in value.items()}
        return value


def record(i, tag=""):
    return f"key-{tag}{i}".encode(), f"value-{tag}{i}".encode(), T0 + i


# ---- librdkafka (confluent-kafka) -------------------------------------------------------


def librdkafka(run):
    from confluent_kafka import (Consumer, ConsumerGroupTopicPartitions, KafkaError,
                                 KafkaException, Producer, TopicCollection, TopicPartition)
    from confluent_kafka.admin import (AdminClient, ConfigResource, NewPartitions, NewTopic,
                                       OffsetSpec)

    boot = {"bootstrap.servers": run.bootstrap}
    admin = AdminClient(boot)
    topic, txn_topic, group = run.name("records"), run.name("txn"), run.name("group")
    results = {}

    def outcome(future):
        try:
            future.result(TIMEOUT)
            return "OK"
        except KafkaException as e:
            return e.args[0].name()

    def partition_errors(future):
        """The answer's error, else each partition's (an admin commit answers per partition)."""
        try:
            answer = future.result(TIMEOUT)
        except KafkaException as e:
            return e.args[0].name()
        return [[tp.partition, tp.error.name() if tp.error else "OK"]
                for tp in answer.topic_partitions]

    def read_in_group(consumer):
        """Subscribes to `topic`, reads to the end of every partition, commits: the records
        read, the partitions assigned and the offsets committed."""
        consumer.subscribe([topic])
        count, ended, deadline = 0, set(), time.monotonic() + TIMEOUT
        while len(ended) < PARTITIONS and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None:
                continue
            if message.error():
                if message.error().code() != KafkaError._PARTITION_EOF:
                    raise KafkaException(message.error())
                ended.add(message.partition())
                continue
            count += 1
        assignment = sorted(tp.partition for tp in consumer.assignment())
        consumer.commit(asynchronous=False)
        committed = consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)],
                                       TIMEOUT)
        return count, assignment, [[tp.partition, tp.offset] for tp in committed]

    def read_to_end(topic, partitions, isolation="read_uncommitted"):
        consumer = Consumer({**boot, "group.id": run.name("reader"), "enable.auto.commit": False,
                             "enable.partition.eof": True, "isolation.level": isolation})
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        got, ended, deadline = [], set(), time.monotonic() + TIMEOUT
        while len(ended) < partitions and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None:
                continue
            if message.error():
                if message.error().code() != KafkaError._PARTITION_EOF:
                    raise KafkaException(message.error())
                ended.add(message.partition())
                continue
            got.append([message.partition(), message.offset(), message.key().decode(),
                        message.value().decode(), message.timestamp()[1]])
        consumer.close()
        return sorted(got)

    # Produce with keys and timestamps to named partitions, read back without a group.
    created = outcome(admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic])
    producer = Producer({**boot, "linger.ms": 5, "acks": "all"})
    delivered = []
    for i in range(RECORDS):
        key, value, ts = record(i)
        producer.produce(topic, key=key, value=value, partition=i % PARTITIONS, timestamp=ts,
                         on_delivery=lambda e, m: delivered.append(
                             [m.partition(), m.offset(), m.key().decode()] if e is None
                             else ["error", e.name()]))
    producer.flush(TIMEOUT)
    results["produce, consume"] = {"create": created, "delivered": sorted(delivered),
                                   "consumed": read_to_end(topic, PARTITIONS)}

    # A consumer group: subscribe, read everything, commit, commit one offset by hand.
    consumer = Consumer({**boot, "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False, "enable.partition.eof": True})
    count, assignment, committed = read_in_group(consumer)
    consumer.commit(offsets=[TopicPartition(topic, 0, 5)], asynchronous=False)
    described = admin.describe_consumer_groups([group])[group].result(TIMEOUT)
    listed = admin.list_consumer_groups().result(TIMEOUT)
    failures = {
        # An admin commit (no member id) to a group with a member; deleting that group.
        "alter offsets of an active group": partition_errors(admin.alter_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 1, 1)])])[group]),
        "delete an active group": outcome(admin.delete_consumer_groups([group])[group]),
    }
    consumer.close()
    after = admin.describe_consumer_groups([group])[group].result(TIMEOUT)
    offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group]
    offsets = offsets.result(TIMEOUT)
    results["group, commits"] = {
        "records": count,
        "assignment": assignment,
        "committed": committed,
        "listed": group in {g.group_id for g in listed.valid},
        "described": {
            "state": str(described.state), "assignor": described.partition_assignor,
            "simple": described.is_simple_consumer_group,
            "coordinator": run.node(described.coordinator.id),
            "members": [sorted(tp.partition for tp in m.assignment.topic_partitions)
                        for m in described.members]},
        "after close": {"state": str(after.state), "members": len(after.members)},
        "offsets": sorted([tp.partition, tp.offset] for tp in offsets.topic_partitions),
        "delete": {g: outcome(f) for g, f in
                   admin.delete_consumer_groups([group, run.name("no-such-group")]).items()},
    }

    # A KIP-848 consumer group (ConsumerGroupHeartbeat): the server assigns.
    group = run.name("kip848")
    consumer = Consumer({**boot, "group.id": group, "group.protocol": "consumer",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "enable.partition.eof": True})
    count, assignment, committed = read_in_group(consumer)
    described = admin.describe_consumer_groups([group])[group].result(TIMEOUT)
    consumer.close()
    after = admin.describe_consumer_groups([group])[group].result(TIMEOUT)
    results["KIP-848 group"] = {
        "records": count,
        "assignment": assignment,
        "committed": committed,
        "described": {
            "state": str(described.state), "type": str(described.type),
            "assignor": described.partition_assignor,
            "members": [sorted(tp.partition for tp in m.assignment.topic_partitions)
                        for m in described.members]},
        "after close": {"state": str(after.state), "members": len(after.members)},
    }

    # Transactions: commit 3, abort 2, commit 2; both isolation levels read it back.
    created = outcome(admin.create_topics([NewTopic(txn_topic, 1, 1)])[txn_topic])
    producer = Producer({**boot, "transactional.id": run.name("txn-id"), "linger.ms": 5})
    producer.init_transactions(TIMEOUT)
    for tag, n, commit in (("a", 3, True), ("b", 2, False), ("c", 2, True)):
        producer.begin_transaction()
        for i in range(n):
            key, value, ts = record(i, tag)
            producer.produce(txn_topic, key=key, value=value, partition=0, timestamp=ts)
        producer.flush(TIMEOUT)
        (producer.commit_transaction if commit else producer.abort_transaction)(TIMEOUT)
    watermarks = Consumer({**boot, "group.id": run.name("reader")})
    results["transactions"] = {
        "create": created,
        "read_committed": read_to_end(txn_topic, 1, "read_committed"),
        "read_uncommitted": read_to_end(txn_topic, 1),
        "watermarks": list(watermarks.get_watermark_offsets(TopicPartition(txn_topic, 0),
                                                            TIMEOUT)),
    }
    watermarks.close()

    # Admin answers and the errors of the failure cases.
    cluster = admin.describe_cluster().result(TIMEOUT)
    topics = admin.describe_topics(TopicCollection([topic]))[topic].result(TIMEOUT)
    tp0 = TopicPartition(topic, 0)
    listed = {}
    for name, spec in (("earliest", OffsetSpec.earliest()), ("latest", OffsetSpec.latest()),
                       ("max timestamp", OffsetSpec.max_timestamp()),
                       ("for timestamp", OffsetSpec.for_timestamp(T0 + 4))):
        info = admin.list_offsets({tp0: spec})[tp0].result(TIMEOUT)
        listed[name] = [info.offset, info.timestamp]
    deleted = admin.delete_records([TopicPartition(topic, 0, 4)])[tp0].result(TIMEOUT)
    earliest = admin.list_offsets({tp0: OffsetSpec.earliest()})[tp0].result(TIMEOUT)
    bad_config = ConfigResource(ConfigResource.Type.TOPIC, run.name("no-such-topic"))
    results["admin"] = {
        "cluster": {"nodes": [run.node(n.id) for n in cluster.nodes],
                    "controller": run.node(cluster.controller.id),
                    "cluster id": bool(cluster.cluster_id)},
        "topic": [[p.id, run.node(p.leader.id), [run.node(r.id) for r in p.replicas],
                   [run.node(r.id) for r in p.isr]] for p in topics.partitions],
        "list offsets": listed,
        "delete records": [deleted.low_watermark, earliest.offset],
        "create partitions 4": outcome(
            admin.create_partitions([NewPartitions(topic, 4)])[topic]),
        "create partitions 2": outcome(
            admin.create_partitions([NewPartitions(topic, 2)])[topic]),
    }
    errors = {}
    for label, new in (("exists", NewTopic(topic, 1, 1)),
                       ("replication 3", NewTopic(run.name("rf3"), 1, 3)),
                       ("bad name", NewTopic(run.name("bad name!"), 1, 1))):
        errors[f"create topic: {label}"] = outcome(admin.create_topics([new])[new.topic])
    errors["delete topic: unknown"] = outcome(
        admin.delete_topics([run.name("no-such-topic")])[run.name("no-such-topic")])
    errors["describe configs: unknown topic"] = outcome(
        admin.describe_configs([bad_config])[bad_config])
    results["admin errors"] = errors

    # The error each failure case gets.
    tp9 = TopicPartition(topic, 9)
    failures["list offsets: no such partition"] = outcome(
        admin.list_offsets({tp9: OffsetSpec.latest()})[tp9])
    failures["delete records past the end"] = outcome(
        admin.delete_records([TopicPartition(topic, 1, 100)])[TopicPartition(topic, 1)])
    missing = run.name("no-such-topic")
    failures["create partitions: unknown topic"] = outcome(
        admin.create_partitions([NewPartitions(missing, 2)])[missing])
    unknown = admin.describe_consumer_groups([run.name("no-such-group")])
    unknown = unknown[run.name("no-such-group")]
    failures["describe an unknown group"] = outcome(unknown)
    if failures["describe an unknown group"] == "OK":
        failures["describe an unknown group"] = str(unknown.result().state)
    # A transactional producer fenced by a new instance of its transactional id.
    fenced = Producer({**boot, "transactional.id": run.name("fenced-id")})
    fenced.init_transactions(TIMEOUT)
    fenced.begin_transaction()
    fenced.produce(topic, value=b"fenced", partition=1)
    fenced.flush(TIMEOUT)
    Producer({**boot, "transactional.id": run.name("fenced-id")}).init_transactions(TIMEOUT)
    try:
        fenced.commit_transaction(TIMEOUT)
        failures["commit when fenced"] = "OK"
    except KafkaException as e:
        error = e.args[0]
        failures["commit when fenced"] = [error.name(), error.fatal()]
    results["failure cases"] = failures
    errors["delete topics"] = {t: outcome(f) for t, f in
                               admin.delete_topics([topic, txn_topic]).items()}
    return results


# ---- kafka-python ------------------------------------------------------------------------


def kafka_python(run):
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=run.bootstrap)
    try:
        return kafka_python_scenarios(run, admin)
    finally:
        admin.close()


def kafka_python_scenarios(run, admin):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import ConfigResource, ConfigResourceType
    from kafka.errors import KafkaError
    from kafka.structs import OffsetAndMetadata

    topic, txn_topic, group = run.name("records"), run.name("txn"), run.name("group")
    results = {}

    def codes(response, *path):
        """The error code of each entry of an admin answer, by name (messages dropped)."""
        entries = response.to_dict() if hasattr(response, "to_dict") else response
        for key in path:
            entries = entries[key]
        return {e.get("name") or e.get("topic"): e["error_code"] for e in entries}

    def read_to_end(topic, partitions, isolation="read_uncommitted"):
        consumer = KafkaConsumer(bootstrap_servers=run.bootstrap, enable_auto_commit=False,
                                 isolation_level=isolation)
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning()
        end = consumer.end_offsets(tps)
        got, deadline = [], time.monotonic() + TIMEOUT
        while any(consumer.position(tp) < end[tp] for tp in tps) \
                and time.monotonic() < deadline:
            for messages in consumer.poll(timeout_ms=200).values():
                got.extend([m.partition, m.offset, m.key.decode(), m.value.decode(),
                            m.timestamp] for m in messages)
        consumer.close()
        return sorted(got), [end[tp] for tp in tps]

    created = admin.create_topics({topic: {"num_partitions": PARTITIONS,
                                           "replication_factor": 1}}, raise_errors=False)
    producer = KafkaProducer(bootstrap_servers=run.bootstrap, linger_ms=5, acks="all")
    futures = []
    for i in range(RECORDS):
        key, value, ts = record(i)
        futures.append(producer.send(topic, key=key, value=value, partition=i % PARTITIONS,
                                     timestamp_ms=ts))
    delivered = sorted([m.partition, m.offset, m.timestamp] for m in
                       (f.get(TIMEOUT) for f in futures))
    producer.close()
    consumed, end = read_to_end(topic, PARTITIONS)
    results["produce, consume"] = {"create": codes(created, "topics"), "delivered": delivered,
                                   "consumed": consumed, "end offsets": end}

    consumer = KafkaConsumer(topic, bootstrap_servers=run.bootstrap, group_id=group,
                             auto_offset_reset="earliest", enable_auto_commit=False)
    count, deadline = 0, time.monotonic() + TIMEOUT
    while count < RECORDS and time.monotonic() < deadline:
        count += sum(len(m) for m in consumer.poll(timeout_ms=200).values())
    assignment = sorted(tp.partition for tp in consumer.assignment())
    consumer.commit()
    committed = [[p, consumer.committed(TopicPartition(topic, p))] for p in range(PARTITIONS)]
    consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(5, "", -1)})
    described = admin.describe_groups([group])[group]
    listed = {g["group_id"] for g in admin.list_groups()}

    def outcome(call, *args):
        try:
            answer = call(*args)
        except KafkaError as e:
            return type(e).__name__
        if isinstance(answer, dict):  # partition -> error class
            return {f"{tp.topic}:{tp.partition}" if isinstance(tp, TopicPartition) else tp:
                    getattr(e, "__name__", e) for tp, e in answer.items()}
        return answer

    tp1 = TopicPartition(topic, 1)
    failures = {
        "alter offsets of an active group": outcome(
            admin.alter_group_offsets, group, {tp1: OffsetAndMetadata(1, "", -1)}),
        "delete offsets of an active group": outcome(admin.delete_group_offsets, group, [tp1]),
        "delete an active group": outcome(admin.delete_groups, [group]),
    }
    consumer.close()
    after = admin.describe_groups([group])[group]
    offsets = admin.list_group_offsets(group)[group]

    def member(m):
        assignment = m.get("member_assignment") or {}
        return sorted(p for t in assignment.get("assigned_partitions", ())
                      for p in t["partitions"])

    results["group, commits"] = {
        "records": count,
        "assignment": assignment,
        "committed": committed,
        "listed": group in listed,
        "described": {"state": described["group_state"],
                      "protocol type": described["protocol_type"],
                      "protocol": described["protocol_data"]
                      if "protocol_data" in described else described.get("protocol"),
                      "error": described.get("error_code"),
                      "members": [member(m) for m in described["members"]]},
        "after close": {"state": after["group_state"], "members": len(after["members"])},
        "offsets": sorted([tp.partition, o.offset] for tp, o in offsets.items()),
        "delete": admin.delete_groups([group, run.name("no-such-group")]),
    }

    created = admin.create_topics({txn_topic: {"num_partitions": 1, "replication_factor": 1}},
                                  raise_errors=False)
    producer = KafkaProducer(bootstrap_servers=run.bootstrap,
                             transactional_id=run.name("txn-id"), linger_ms=5)
    producer.init_transactions()
    for tag, n, commit in (("a", 3, True), ("b", 2, False), ("c", 2, True)):
        producer.begin_transaction()
        for i in range(n):
            key, value, ts = record(i, tag)
            producer.send(txn_topic, key=key, value=value, partition=0,
                          timestamp_ms=ts).get(TIMEOUT)
        (producer.commit_transaction if commit else producer.abort_transaction)()
    producer.close()
    committed_read, committed_end = read_to_end(txn_topic, 1, "read_committed")
    uncommitted_read, uncommitted_end = read_to_end(txn_topic, 1)
    results["transactions"] = {
        "create": codes(created, "topics"),
        "read_committed": committed_read, "read_uncommitted": uncommitted_read,
        "end offsets": [committed_end, uncommitted_end],
    }

    cluster = admin.describe_cluster()
    described = admin.describe_topics([topic])[0]
    deleted = admin.delete_records({TopicPartition(topic, 0): 4})
    results["admin"] = {
        "cluster": {"nodes": [run.node(b["broker_id"]) for b in cluster["brokers"]],
                    "controller": run.node(cluster["controller_id"]),
                    "cluster id": bool(cluster["cluster_id"])},
        "topic": sorted([p["partition_index"], run.node(p["leader_id"]),
                         [run.node(r) for r in p["replica_nodes"]],
                         [run.node(r) for r in p["isr_nodes"]]]
                        for p in described["partitions"]),
        "delete records": {f"{tp.topic}:{tp.partition}": m.get("low_watermark", m)
                           if isinstance(m, dict) else m for tp, m in deleted.items()},
        "create partitions 4": codes(admin.create_partitions({topic: 4}, raise_errors=False),
                                     "results"),
        "create partitions 2": codes(admin.create_partitions({topic: 2}, raise_errors=False),
                                     "results"),
    }
    errors = {}
    for label, name, partitions, replicas in (("exists", topic, 1, 1),
                                              ("replication 3", run.name("rf3"), 1, 3),
                                              ("bad name", run.name("bad name!"), 1, 1)):
        errors[f"create topic: {label}"] = codes(admin.create_topics(
            {name: {"num_partitions": partitions, "replication_factor": replicas}},
            raise_errors=False), "topics")
    errors["delete topic: unknown"] = codes(
        admin.delete_topics([run.name("no-such-topic")], raise_errors=False), "topics")
    try:
        # kafka-python 3.0 answers a topic with an error as one without configs.
        errors["describe configs: unknown topic"] = admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, run.name("no-such-topic"))])
    except KafkaError as e:
        errors["describe configs: unknown topic"] = type(e).__name__
    results["admin errors"] = errors

    failures["delete records past the end"] = outcome(
        admin.delete_records, {TopicPartition(topic, 1): 100})
    failures["create partitions: unknown topic"] = codes(admin.create_partitions(
        {run.name("no-such-topic"): 2}, raise_errors=False), "results")
    failures["describe an unknown group"] = outcome(
        lambda: admin.describe_groups([run.name("no-such-group")])[run.name("no-such-group")]
        ["group_state"])
    consumer = KafkaConsumer(bootstrap_servers=run.bootstrap, enable_auto_commit=False,
                             auto_offset_reset="none")
    consumer.assign([tp1])
    consumer.seek(tp1, 100)
    try:
        consumer.poll(timeout_ms=TIMEOUT * 1000)
        failures["fetch past the end"] = "no error"
    except KafkaError as e:
        failures["fetch past the end"] = type(e).__name__
    consumer.close()
    fenced = KafkaProducer(bootstrap_servers=run.bootstrap, transactional_id=run.name("fenced"))
    fenced.init_transactions()
    fenced.begin_transaction()
    fenced.send(topic, value=b"fenced", partition=1).get(TIMEOUT)
    fencing = KafkaProducer(bootstrap_servers=run.bootstrap,
                            transactional_id=run.name("fenced"))
    fencing.init_transactions()
    fencing.close()
    try:
        fenced.commit_transaction()
        failures["commit when fenced"] = "OK"
    except KafkaError as e:
        failures["commit when fenced"] = type(e).__name__
    fenced.close(timeout=1)
    results["failure cases"] = failures
    errors["delete topics"] = codes(admin.delete_topics([topic, txn_topic],
                                                        raise_errors=False), "topics")
    return results


# ---- aiokafka ---------------------------------------------------------------------------


async def aiokafka_async(run):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic, RecordsToDelete
    from aiokafka.errors import KafkaError
    from aiokafka.structs import OffsetAndMetadata

    admin = AIOKafkaAdminClient(bootstrap_servers=run.bootstrap)
    await admin.start()
    topic, txn_topic, group = run.name("records"), run.name("txn"), run.name("group")
    results = {}

    def topic_errors(response):
        return {e[0]: e[1] for e in response.topic_errors}

    async def outcome(call):
        try:
            await call
            return "OK"
        except KafkaError as e:
            return type(e).__name__

    async def read_to_end(topic, partitions, isolation="read_uncommitted"):
        consumer = AIOKafkaConsumer(bootstrap_servers=run.bootstrap, enable_auto_commit=False,
                                    isolation_level=isolation)
        await consumer.start()
        try:
            tps = [TopicPartition(topic, p) for p in range(partitions)]
            consumer.assign(tps)
            await consumer.seek_to_beginning()
            end = await consumer.end_offsets(tps)
            got, deadline = [], time.monotonic() + TIMEOUT
            while time.monotonic() < deadline:
                positions = [await consumer.position(tp) for tp in tps]
                if all(pos >= end[tp] for pos, tp in zip(positions, tps)):
                    break
                for messages in (await consumer.getmany(timeout_ms=200)).values():
                    got.extend([m.partition, m.offset, m.key.decode(), m.value.decode(),
                                m.timestamp] for m in messages)
            return sorted(got), [end[tp] for tp in tps]
        finally:
            await consumer.stop()

    try:
        created = topic_errors(await admin.create_topics([NewTopic(topic, PARTITIONS, 1)]))
        producer = AIOKafkaProducer(bootstrap_servers=run.bootstrap, linger_ms=5, acks="all")
        await producer.start()
        try:
            futures = []
            for i in range(RECORDS):
                key, value, ts = record(i)
                futures.append(await producer.send(topic, key=key, value=value,
                                                   partition=i % PARTITIONS, timestamp_ms=ts))
            delivered = sorted([m.partition, m.offset, m.timestamp]
                               for m in await asyncio.gather(*futures))
        finally:
            await producer.stop()
        consumed, end = await read_to_end(topic, PARTITIONS)
        results["produce, consume"] = {"create": created, "delivered": delivered,
                                       "consumed": consumed, "end offsets": end}

        consumer = AIOKafkaConsumer(topic, bootstrap_servers=run.bootstrap, group_id=group,
                                    auto_offset_reset="earliest", enable_auto_commit=False)
        await consumer.start()
        try:
            count, deadline = 0, time.monotonic() + TIMEOUT
            while count < RECORDS and time.monotonic() < deadline:
                count += sum(len(m) for m in (await consumer.getmany(timeout_ms=200)).values())
            assignment = sorted(tp.partition for tp in consumer.assignment())
            await consumer.commit()
            committed = [[p, await consumer.committed(TopicPartition(topic, p))]
                         for p in range(PARTITIONS)]
            await consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(5, "")})
            described = await admin.describe_consumer_groups([group])
            listed = {g[0] for g in await admin.list_consumer_groups()}
        finally:
            await consumer.stop()
        after = await admin.describe_consumer_groups([group])
        offsets = await admin.list_consumer_group_offsets(group)

        def group_of(response):
            # DescribeGroups: (error_code, group_id, state, protocol_type, protocol, members...)
            entry = response[0].groups[0]
            return {"error": entry[0], "state": entry[2], "protocol type": entry[3],
                    "protocol": entry[4], "members": len(entry[5])}

        results["group, commits"] = {
            "records": count, "assignment": assignment, "committed": committed,
            "listed": group in listed, "described": group_of(described),
            "after close": group_of(after),
            "offsets": sorted([tp.partition, o.offset] for tp, o in offsets.items()),
        }

        created = topic_errors(await admin.create_topics([NewTopic(txn_topic, 1, 1)]))
        producer = AIOKafkaProducer(bootstrap_servers=run.bootstrap,
                                    transactional_id=run.name("txn-id"), linger_ms=5)
        await producer.start()
        try:
            for tag, n, commit in (("a", 3, True), ("b", 2, False), ("c", 2, True)):
                await producer.begin_transaction()
                for i in range(n):
                    key, value, ts = record(i, tag)
                    await producer.send_and_wait(txn_topic, key=key, value=value, partition=0,
                                                 timestamp_ms=ts)
                await (producer.commit_transaction() if commit
                       else producer.abort_transaction())
        finally:
            await producer.stop()
        committed_read, committed_end = await read_to_end(txn_topic, 1, "read_committed")
        uncommitted_read, uncommitted_end = await read_to_end(txn_topic, 1)
        results["transactions"] = {
            "create": created, "read_committed": committed_read,
            "read_uncommitted": uncommitted_read,
            "end offsets": [committed_end, uncommitted_end],
        }

        described = (await admin.describe_topics([topic]))[0]
        deleted = await admin.delete_records({TopicPartition(topic, 0): RecordsToDelete(4)})
        results["admin"] = {
            "topic": sorted([p["partition"], run.node(p["leader"]),
                             [run.node(r) for r in p["replicas"]],
                             [run.node(r) for r in p["isr"]]]
                            for p in described["partitions"]),
            "topic error": described["error_code"],
            "delete records": {f"{tp.topic}:{tp.partition}": w for tp, w in deleted.items()},
            "create partitions 4": await outcome(
                admin.create_partitions({topic: NewPartitions(4)})),
            "create partitions 2": await outcome(
                admin.create_partitions({topic: NewPartitions(2)})),
        }
        errors = {}
        for label, new in (("exists", NewTopic(topic, 1, 1)),
                           ("replication 3", NewTopic(run.name("rf3"), 1, 3)),
                           ("bad name", NewTopic(run.name("bad name!"), 1, 1))):
            errors[f"create topic: {label}"] = topic_errors(await admin.create_topics([new]))
        deleted = await admin.delete_topics([run.name("no-such-topic")])
        errors["delete topic: unknown"] = {e[0]: e[1] for e in deleted.topic_error_codes}
        results["admin errors"] = errors

        tp1 = TopicPartition(topic, 1)
        failures = {
            "delete records past the end": await outcome(
                admin.delete_records({tp1: RecordsToDelete(100)})),
            "create partitions: unknown topic": await outcome(
                admin.create_partitions({run.name("no-such-topic"): NewPartitions(2)})),
        }
        unknown = (await admin.describe_consumer_groups([run.name("no-such-group")]))[0]
        failures["describe an unknown group"] = [unknown.groups[0][0], unknown.groups[0][2]]
        consumer = AIOKafkaConsumer(bootstrap_servers=run.bootstrap, enable_auto_commit=False,
                                    auto_offset_reset="none")
        await consumer.start()
        try:
            consumer.assign([tp1])
            consumer.seek(tp1, 100)
            failures["fetch past the end"] = await outcome(
                asyncio.wait_for(consumer.getone(), TIMEOUT))
        finally:
            await consumer.stop()
        fenced = AIOKafkaProducer(bootstrap_servers=run.bootstrap,
                                  transactional_id=run.name("fenced"))
        await fenced.start()
        try:
            await fenced.begin_transaction()
            await fenced.send_and_wait(topic, value=b"fenced", partition=1)
            fencing = AIOKafkaProducer(bootstrap_servers=run.bootstrap,
                                       transactional_id=run.name("fenced"))
            await fencing.start()
            await fencing.stop()
            failures["commit when fenced"] = await outcome(fenced.commit_transaction())
        finally:
            await fenced.stop()
        results["failure cases"] = failures
        deleted = await admin.delete_topics([topic, txn_topic])
        errors["delete topics"] = {e[0]: e[1] for e in deleted.topic_error_codes}
    finally:
        await admin.close()
    return results


def aiokafka(run):
    return asyncio.run(aiokafka_async(run))


# ---- Java kafka-clients -----------------------------------------------------------------

def java(run):
    """The tap proof's Java Workload (tools/clients/java): its one JSON line (records, the
    classic and KIP-848 groups' states) is its result."""
    output = subprocess.run(
        ["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", run.java_classpath,
         "kafkacodec.clients.Workload", run.bootstrap, run.prefix],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, check=False)
    if output.returncode != 0:
        raise RuntimeError(f"Workload exited {output.returncode}: {output.stderr[-2000:]}")
    return {"workload": json.loads(output.stdout.strip().splitlines()[-1])}


SCENARIOS = {"librdkafka": librdkafka, "kafka-python": kafka_python, "aiokafka": aiokafka,
             "java": java}


# ---- servers, taps, comparison ----------------------------------------------------------


def start(command, err, pattern, what):
    """Starts `command` with stderr to the file `err`; waits for its line matching
    `pattern` and returns (process, the first group)."""
    with open(err, "w", encoding="utf-8") as stderr:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=stderr)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with open(err, encoding="utf-8", errors="replace") as text:
            found = re.search(pattern, text.read(), re.M)
        if found:
            return process, found.group(1)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    with open(err, encoding="utf-8", errors="replace") as text:
        sys.exit(f"{what} did not start: {text.read()[-2000:]}")


def wait_closed(log):
    """Until the tap has logged a close for every connection it logged (hang guard 10 s)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(log, encoding="utf-8") as text:
            events = [json.loads(line).get("event") for line in text if line.strip()]
        if events.count("connect") == events.count("close"):
            return
        time.sleep(0.1)


def run_target(label, upstream, kafka_codec, out, clients, prefix, java_classpath):
    """Every client's scenarios through a tap in front of `upstream`: {client: results}."""
    log = os.path.join(out, f"{label}.tap.jsonl")
    tap, address = start([kafka_codec, "tap", "--listen", "127.0.0.1:0", "--upstream", upstream,
                          "--rewrite-brokers", "--records", "--log", log],
                         os.path.join(out, f"{label}.tap.err"),
                         r"^kafka-codec tap: listening on ([^,\s]+)", f"the tap before {label}")
    results = {}
    try:
        for client in clients:
            began = time.monotonic()
            # Each client in a process of its own: whatever it leaves open (librdkafka's
            # handles close when collected) closes when it exits, and a crash is its own.
            command = [sys.executable, os.path.abspath(__file__), "--scenarios", client, address,
                       f"{prefix}-{client}"] + (["--java", java_classpath] if java_classpath
                                                else [])
            child = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True,
                                   text=True, timeout=300, check=False)
            try:
                results[client] = json.loads(child.stdout)
            except ValueError:
                results[client] = {"raised": f"exit {child.returncode}: {child.stderr[-3000:]}"}
            print(f"compare: {label}: {client} in {time.monotonic() - began:.1f} s",
                  file=sys.stderr)
        wait_closed(log)
    finally:
        tap.terminate()
        tap.wait()
    with open(os.path.join(out, f"{label}.json"), "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    return results, log


def differences(a, b, path=""):
    """Paths where two JSON values differ, with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(a.keys() | b.keys(), key=str):
            found += differences(a.get(key, "<absent>"), b.get(key, "<absent>"),
                                 f"{path}/{key}")
        return found
    return [] if a == b else [f"{path}: broker {json.dumps(a)} | cluster {json.dumps(b)}"]


def scenarios_main(client, bootstrap, prefix, java_classpath):
    """One client's scenarios against `bootstrap`: prints its results as JSON."""
    run = Run(bootstrap, prefix, java_classpath)
    try:
        results = run.strip(SCENARIOS[client](run))
    except Exception:  # noqa: BLE001 - reported as the scenarios' result
        results = {"raised": traceback.format_exc()}
    print(json.dumps(results))


def main():
    if sys.argv[1:2] == ["--scenarios"]:
        java_classpath = sys.argv[6] if sys.argv[5:6] == ["--java"] else None
        return scenarios_main(*sys.argv[2:5], java_classpath)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("broker", help="the real broker's bootstrap address")
    parser.add_argument("--kafka-codec", default=os.path.join(REPO, "target/debug/kafka-codec"))
    parser.add_argument("--client", action="append", choices=CLIENTS)
    parser.add_argument("--out", default=os.path.join(REPO, "target/compare-cluster"))
    parser.add_argument("--against", help="compare with this server instead of a new cluster")
    parser.add_argument("--java", metavar="CLASSPATH",
                        help="also run the Java Workload (tools/clients/java, built) on it")
    args = parser.parse_args()
    clients = args.client or list(CLIENTS)
    if args.java:
        clients.append("java")
    os.makedirs(args.out, exist_ok=True)
    prefix = f"compare-{int(time.time())}"

    cluster = None
    if args.against:
        other = args.against
    else:
        # Auto-creation off, as tools/kafka-broker/broker.sh sets the real broker.
        cluster, other = start([args.kafka_codec, "cluster", "--brokers", "1", "--listen",
                                "127.0.0.1:0", "--broker-config",
                                "auto.create.topics.enable=false"],
                               os.path.join(args.out, "cluster.err"),
                               r"^kafka-codec cluster: bootstrap (\S+)", "kafka-codec cluster")
    try:
        # Both servers at once: they share nothing (own tap, log and client processes), and
        # the step's time is then the slower side's rather than the sum.
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            sides = [pool.submit(run_target, label, upstream, args.kafka_codec, args.out,
                                 clients, prefix, args.java)
                     for label, upstream in (("broker", args.broker), ("cluster", other))]
            (broker, broker_log), (ours, cluster_log) = [side.result() for side in sides]
    finally:
        if cluster:
            cluster.terminate()
            cluster.wait()

    failed = False
    scenarios = sorted({s for r in (broker, ours) for c in clients for s in r[c]} - {"raised"})
    width = max([len("scenario")] + [len(s) for s in scenarios])
    print("Scenario results, real broker vs kafka-codec cluster (each through a tap):")
    print(f"{'scenario':<{width}}  " + "  ".join(f"{c:>12}" for c in clients))
    details = []
    for scenario in scenarios:
        cells = []
        for client in clients:
            a, b = broker[client].get(scenario), ours[client].get(scenario)
            if "raised" in broker[client] or "raised" in ours[client]:
                cells.append("raised")
                continue
            if a is None and b is None:
                cells.append("-")
                continue
            found = differences(a, b)
            cells.append("mismatch" if found else "match")
            details += [f"{client}: {scenario}{d}" for d in found]
        failed |= any(c in ("mismatch", "raised") for c in cells)
        print(f"{scenario:<{width}}  " + "  ".join(f"{c:>12}" for c in cells))
    for client in clients:
        for label, result in (("broker", broker), ("cluster", ours)):
            if "raised" in result[client]:
                details.append(f"{client} against the {label} raised:\n{result[client]['raised']}")
    for line in details:
        print(f"MISMATCH: {line}")

    for label, log in (("broker", broker_log), ("cluster", cluster_log)):
        requests, responses, totals, problems, _, _ = check_tap_log.check("compare", log)
        frames = sum(requests.values()) + sum(responses.values())
        print(f"tap in front of the {label}: {totals['connections']} connections, {frames} "
              f"frames, {len(problems)} problems")
        for problem in problems:
            print(f"FAIL: {problem}")
        failed |= bool(problems)
    if failed:
        sys.exit("compare: FAILED (results in " + args.out + ")")
    print(f"compare: every scenario of {', '.join(clients)} matches; every frame decoded")


if __name__ == "__main__":
    main()
