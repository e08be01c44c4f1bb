"""A real client logs in to kafka-codec's in-memory cluster with SASL, over TLS (SASL_SSL) or
not (SASL_PLAINTEXT), with PLAIN or SCRAM-SHA-512: its admin client creates a topic, its
producer sends RECORDS records, a consumer reads every one back (keys, values, offsets); then
the same user with a wrong password is refused with the client's own authentication error.
Prints one summary line; exits non-zero on any difference. Passwords are never printed.

    python cluster_security.py CLIENT BOOTSTRAP PROTOCOL MECHANISM USER PASSWORD [CAFILE]

CLIENT is confluent-kafka, kafka-python or aiokafka; the settings come from security.py.
"""

import asyncio
import sys
import time

from security import Security, client_config

client, bootstrap, protocol, mechanism, user, password = sys.argv[1:7]
cafile = sys.argv[7] if len(sys.argv) > 7 else None
security = Security(protocol, mechanism, user, password, cafile)
wrong = Security(protocol, mechanism, user, password + "-wrong", cafile)
count = 200
topic = f"security-{client}-{protocol}-{mechanism}".lower()
partitions = 2
expected = [(f"key-{i}", f"value-{i}") for i in range(count)]


def check(consumed, how):
    """consumed: [(partition, offset, key, value)]."""
    if sorted((k, v) for _, _, k, v in consumed) != sorted(expected):
        sys.exit(f"{how}: consumed {len(consumed)} records, not the {count} produced")
    for partition in range(partitions):
        offsets = sorted(o for p, o, _, _ in consumed if p == partition)
        if offsets != list(range(len(offsets))):
            sys.exit(f"{how}: partition {partition} offsets are not 0..n-1")


def confluent():
    from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition, OFFSET_BEGINNING
    from confluent_kafka.admin import AdminClient, NewTopic

    settings = {"bootstrap.servers": bootstrap} | client_config("confluent-kafka", security)
    admin = AdminClient(settings)
    for future in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        future.result(timeout=20)
    producer = Producer(settings | {"linger.ms": 5, "acks": "all"})
    for i, (key, value) in enumerate(expected):
        producer.produce(topic, key=key, value=value, partition=i % partitions)
    if producer.flush(20) != 0:
        sys.exit("producer did not flush in 20 s")
    consumer = Consumer(settings | {"group.id": "security-proof", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    consumed, deadline = [], time.monotonic() + 20
    while len(consumed) < count and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is None or message.error():
            continue
        consumed.append((message.partition(), message.offset(), message.key().decode(),
                         message.value().decode()))
    consumer.close()
    check(consumed, "confluent-kafka")

    errors = []
    # The refusal comes to the error callback (served by poll); its log lines would repeat
    # it at every retry.
    refused = AdminClient({"bootstrap.servers": bootstrap, "error_cb": errors.append,
                           "log_level": 0} | client_config("confluent-kafka", wrong))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any(
            e.code() == KafkaError._AUTHENTICATION for e in errors):
        try:
            refused.list_topics(timeout=0.2)
            sys.exit("confluent-kafka: a wrong password listed topics")
        except Exception:  # noqa: BLE001 - the error callback says why
            refused.poll(0.1)
    codes = {e.code() for e in errors}
    if KafkaError._AUTHENTICATION not in codes:
        sys.exit(f"confluent-kafka: a wrong password gave {errors}, not _AUTHENTICATION")
    return next(e for e in errors if e.code() == KafkaError._AUTHENTICATION).str()


def kafka_python():
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import KafkaTimeoutError, SaslAuthenticationFailedError

    settings = {"bootstrap_servers": bootstrap.split(",")} | client_config("kafka-python",
                                                                           security)
    admin = KafkaAdminClient(**settings)
    admin.create_topics([NewTopic(topic, partitions, 1)])
    admin.close()
    producer = KafkaProducer(**settings, linger_ms=5, acks="all")
    for i, (key, value) in enumerate(expected):
        producer.send(topic, key=key.encode(), value=value.encode(), partition=i % partitions)
    producer.flush(20)
    producer.close()
    consumer = KafkaConsumer(**settings, enable_auto_commit=False)
    consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
    consumer.seek_to_beginning()
    consumed, deadline = [], time.monotonic() + 20
    while len(consumed) < count and time.monotonic() < deadline:
        for records in consumer.poll(500).values():
            consumed += [(r.partition, r.offset, r.key.decode(), r.value.decode())
                         for r in records]
    consumer.close()
    check(consumed, "kafka-python")

    # kafka-python 3 retries a refused bootstrap until its timeout and then says only
    # "Unable to bootstrap"; the refusal itself is the exception it logs for each attempt.
    import logging

    class Refusals(logging.Handler):
        def __init__(self):
            super().__init__(logging.WARNING)
            self.seen = []

        def emit(self, record):
            args = record.args if isinstance(record.args, tuple) else ()
            self.seen += [a for a in args if isinstance(a, SaslAuthenticationFailedError)]

    refusals = Refusals()
    logging.getLogger("kafka").addHandler(refusals)
    try:
        KafkaAdminClient(**({"bootstrap_servers": bootstrap.split(",")}
                            | client_config("kafka-python", wrong)),
                         bootstrap_timeout_ms=2000)
    except KafkaTimeoutError:
        if refusals.seen:
            return f"{type(refusals.seen[0]).__name__}: {refusals.seen[0]}"
        sys.exit("kafka-python: a wrong password timed out without SaslAuthenticationFailedError")
    except SaslAuthenticationFailedError as e:
        return f"{type(e).__name__}: {e}"
    sys.exit("kafka-python: a wrong password connected")


async def aiokafka_run():
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.errors import SaslAuthenticationFailed

    settings = {"bootstrap_servers": bootstrap} | client_config("aiokafka", security)
    admin = AIOKafkaAdminClient(**settings)
    await admin.start()
    await admin.create_topics([NewTopic(topic, partitions, 1)])
    await admin.close()
    producer = AIOKafkaProducer(**settings, linger_ms=5, acks="all")
    await producer.start()
    for i, (key, value) in enumerate(expected):
        await producer.send(topic, key=key.encode(), value=value.encode(),
                            partition=i % partitions)
    await producer.flush()
    await producer.stop()
    consumer = AIOKafkaConsumer(**settings, enable_auto_commit=False)
    await consumer.start()
    consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
    await consumer.seek_to_beginning()
    consumed, deadline = [], time.monotonic() + 20
    while len(consumed) < count and time.monotonic() < deadline:
        for records in (await consumer.getmany(timeout_ms=500)).values():
            consumed += [(r.partition, r.offset, r.key.decode(), r.value.decode())
                         for r in records]
    await consumer.stop()
    check(consumed, "aiokafka")

    # The producer's start() folds a refused bootstrap into "Unable to bootstrap"; the
    # connection it opens for it (aiokafka's own create_conn) raises the refusal itself.
    from aiokafka.conn import create_conn

    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    try:
        connection = await create_conn(host, int(port), **client_config("aiokafka", wrong))
        connection.close()
    except SaslAuthenticationFailed as e:
        return f"{type(e).__name__}: {e}"
    sys.exit("aiokafka: a wrong password connected")


refusal = {"confluent-kafka": confluent, "kafka-python": kafka_python,
           "aiokafka": lambda: asyncio.run(aiokafka_run())}[client]()
if password in refusal:
    sys.exit(f"{client}: the refusal names the password")
print(f"{client} {protocol} {mechanism}: {count} records produced and consumed as {user}; "
      f"a wrong password refused: {refusal}")
