"""The --deny-topic proof (tools/clients/tap-deny-proof.sh): librdkafka (confluent-kafka)
through `kafka-codec tap --deny-topic 'PREFIX-denied*'`, and the tap's log checked after.

    python deny_proof.py run TAP BROKER PREFIX     # the workload; prints one JSON line
    python deny_proof.py check LOG PREFIX [--expect "API ACTION"...]   # the tap's log

The workload: creates PREFIX-allowed and PREFIX-denied directly at the broker, and asks the
tap to create PREFIX-denied-2, which the tap refuses (CreateTopics answered with
TOPIC_AUTHORIZATION_FAILED). One producer through the tap sends N records to each of the two
topics, interleaved (librdkafka sends one Produce request per partition, pipelined, so the tap
answers the denied ones among the broker's answers): every record to PREFIX-allowed is delivered, every one to PREFIX-denied
fails with TOPIC_AUTHORIZATION_FAILED and the producer carries on. A consumer through the tap,
assigned partition 0 of both from offset 0, reads the N records of PREFIX-allowed and reports
TOPIC_AUTHORIZATION_FAILED for PREFIX-denied. Directly at the broker, PREFIX-denied holds no
record. Any other outcome raises (exit non-zero).

The check: every line is JSON; no frame failed to decode; denials (`denied` lines) name only
topics of PREFIX's denied ones; every request got its response, unless the client hung up with it in flight; and each
`--expect "API ACTION"` (say "Produce split") happened at least once.
"""

import json
import sys
import time

# A client may hang up with a request in flight: closing cleanly, or resetting when it closes
# with bytes unread. Either is the client's doing, never the tap's.
CLIENT_HUNG_UP = ("the client closed the connection first", "the client reset the connection first")

N = 20
TIMEOUT = 60
DENIED = "TOPIC_AUTHORIZATION_FAILED"


def run(tap, broker, prefix):
    from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    allowed, denied = f"{prefix}-allowed", f"{prefix}-denied"
    direct = AdminClient({"bootstrap.servers": broker})
    for future in direct.create_topics([NewTopic(allowed, 1, 1), NewTopic(denied, 1, 1)]).values():
        future.result(TIMEOUT)
    through = AdminClient({"bootstrap.servers": tap})
    refused = through.create_topics([NewTopic(f"{denied}-2", 1, 1)])[f"{denied}-2"]
    try:
        refused.result(TIMEOUT)
        raise RuntimeError("the tap let CreateTopics of a denied topic through")
    except Exception as e:  # KafkaException carrying the KafkaError
        error = e.args[0] if e.args else None
        if getattr(error, "name", lambda: None)() != DENIED:
            raise RuntimeError(f"CreateTopics of {denied}-2: {e!r}, want {DENIED}") from e

    outcomes = {allowed: [], denied: []}

    def delivered(error, message):
        outcomes[message.topic()].append(error.name() if error else None)

    producer = Producer({"bootstrap.servers": tap, "linger.ms": 50, "acks": "all"})
    for i in range(N):
        for topic in (allowed, denied):
            producer.produce(topic, key=b"k%d" % i, value=b"v%d" % i, on_delivery=delivered)
    if producer.flush(TIMEOUT) != 0:
        raise RuntimeError("records left unacknowledged")
    if outcomes[allowed] != [None] * N:
        raise RuntimeError(f"{allowed}: {outcomes[allowed]}")
    if outcomes[denied] != [DENIED] * N:
        raise RuntimeError(f"{denied}: {outcomes[denied]}, want {DENIED} for each")

    consumer = Consumer({"bootstrap.servers": tap, "group.id": f"{prefix}-group",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(allowed, 0, 0), TopicPartition(denied, 0, 0)])
    values, errors = [], set()
    deadline = time.time() + TIMEOUT
    while (len(values) < N or not errors) and time.time() < deadline:
        message = consumer.poll(1)
        if message is None:
            continue
        if message.error():
            if message.error().code() != KafkaError._PARTITION_EOF:
                errors.add((message.topic(), message.error().name()))
            continue
        values.append(message.value())
    consumer.close()
    if sorted(values) != sorted(b"v%d" % i for i in range(N)):
        raise RuntimeError(f"{allowed} read back {values}")
    if (denied, DENIED) not in errors:
        raise RuntimeError(f"consuming {denied}: errors {errors}, want {DENIED}")

    check_consumer = Consumer({"bootstrap.servers": broker, "group.id": f"{prefix}-direct"})
    low, high = check_consumer.get_watermark_offsets(TopicPartition(denied, 0), TIMEOUT)
    check_consumer.close()
    if high != 0:
        raise RuntimeError(f"{denied} holds {high} records at the broker; the tap let some through")
    print(json.dumps({"client": "confluent-kafka", "delivered": len(outcomes[allowed]),
                      "denied": len(outcomes[denied]), "consumed": len(values),
                      "consumerErrors": sorted(map(list, errors))}))


def check(path, prefix, expect):
    problems, denials, pairs, abandoned = [], [], 0, []
    with open(path, encoding="utf-8") as lines:
        for number, text in enumerate(lines, 1):
            try:
                line = json.loads(text)
            except ValueError as e:
                problems.append(f"line {number} is not JSON: {e}")
                continue
            for key in ("requestError", "responseError", "requestSkipped", "responseSkipped"):
                if key in line:
                    problems.append(f"line {number}: {key}: {line[key]}")
            # A client may close with a request in flight (librdkafka's consumer during a
            # long poll); that is the client's doing, noted. Anything else left unanswered
            # (the tap or the broker closed first) is a problem.
            why = line.get("unanswered")
            if why in CLIENT_HUNG_UP:
                abandoned.append(f'{line.get("api")} v{line.get("apiVersion")}')
            elif why:
                problems.append(f"line {number}: unanswered: {why}")
            if line.get("event") == "pair":
                pairs += 1
            if line.get("event") == "denied":
                denials.append(line)
    for denial in denials:
        topics = denial.get("topics", [])
        denied = (f"{prefix}-denied", f"{prefix}-jdenied")
        if not topics or not all(t.startswith(denied) for t in topics):
            problems.append(f"a denial names other topics: {denial}")
    actions = {}
    for denial in denials:
        key = f'{denial["api"]} {denial["action"]}'
        actions[key] = actions.get(key, 0) + 1
    for wanted in expect:
        if wanted not in actions:
            problems.append(f"no {wanted!r} among the denials {actions}")
    print(json.dumps({"pairs": pairs, "denials": actions,
                      "abandonedByTheClient": abandoned}))
    for problem in problems:
        print(f"deny-proof: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["run"] and len(sys.argv) == 5:
        run(*sys.argv[2:])
    elif sys.argv[1:2] == ["check"] and len(sys.argv) >= 4 and len(sys.argv) % 2 == 0 \
            and all(flag == "--expect" for flag in sys.argv[4::2]):
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[5::2]))
    else:
        sys.exit(__doc__)
