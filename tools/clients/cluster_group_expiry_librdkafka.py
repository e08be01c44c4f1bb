"""librdkafka (confluent-kafka) consumer group against kafka-codec's in-memory cluster: a
member's session expired mid-consumption through the HTTP control surface
(`POST /sessions/expire`, issue 30 item 5's third scenario).

Two consumers of one group share a topic of 4 partitions and commit each record's offset
synchronously once they have it (a record counts as consumed only when its commit
succeeded: a failed commit means the record is handed out again, as at-least-once
consumption with committed offsets works). Half way through, consumer A's session is
expired. Checked:

- the group rebalanced: B rejoined with its member id; A sent a Heartbeat or OffsetCommit
  (or another group request) as its old member (refused UNKNOWN_MEMBER_ID) and then joined again as a new member (a
  JoinGroup with no member id in the request log, a new member id); the group's generation
  moved on, A's old id is gone;
- no record was lost or consumed twice: every record's commit succeeded exactly once, and
  every record handed out again had a failed commit before;
- a fresh consumer of the group reads committed offsets equal to each partition's end.

Prints one summary line; exits non-zero on any difference.

    python cluster_group_expiry_librdkafka.py BOOTSTRAP CONTROL_HOST:PORT [RECORDS]
"""

import sys
import time

from confluent_kafka import KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from cluster_control import Control
from rdkafka_group import SpreadProducer, group_consumer

bootstrap, control = sys.argv[1], Control(sys.argv[2])
count = int(sys.argv[3]) if len(sys.argv) > 3 else 400
topic = "expiry-proof"
group = "expiry-proof"
partitions = 4
deadline = time.monotonic() + 50  # a hang guard, under CI's one minute


def the_group():
    found = [g for g in control.call("GET", "/groups") if g["group"] == group]
    return found[0] if found else None


def guard(what):
    if time.monotonic() > deadline:
        sys.exit(f"hang guard: {what}")


admin = AdminClient({"bootstrap.servers": bootstrap})
for future in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
    future.result(timeout=20)
producer = SpreadProducer(bootstrap, topic, partitions)


def consumer(name):
    return group_consumer(bootstrap, group, name, **{
        # Only the control surface ends a session here: far longer than the test.
        "session.timeout.ms": 30000,
        # Rebalances are noticed by heartbeats: faster than the 3 s default.
        "heartbeat.interval.ms": 100,
        # Little prefetched, so that records are still to come when the session expires.
        "max.partition.fetch.bytes": 512,
    })


committed = {}  # (partition, offset) -> who committed it, the record's index
handed_out = {}  # (partition, offset) -> how many times a consumer was given it
failed = {}  # (partition, offset) -> the error of a commit that failed
failures = []  # (who, error name)


def poll(who, c):
    message = c.poll(0.02)
    if message is None:
        return
    if message.error():
        sys.exit(f"{who}: consume failed: {message.error()}")
    where = (message.partition(), message.offset())
    if handed_out.get(where) and where not in failed:
        sys.exit(f"{who}: {where} handed out again, though its commit had not failed")
    handed_out[where] = handed_out.get(where, 0) + 1
    index = int(message.key().decode()[4:])
    if message.value().decode() != f"value-{index}":
        sys.exit(f"{who}: a record is not as produced: {message.key()} {message.value()}")
    try:
        c.commit(message=message, asynchronous=False)
    except KafkaException as e:
        failed[where] = e.args[0].name()
        failures.append((who, e.args[0].name()))
        return
    if where in committed:
        sys.exit(f"{who}: {where} consumed twice (first by {committed[where][0]})")
    committed[where] = (who, index)


producer.produce(0, count)
a, b = consumer("expiry-a"), consumer("expiry-b")
a.subscribe([topic])
b.subscribe([topic])
while len(committed) < count // 2 or not a.assignment() or not b.assignment():
    guard(f"consumed {len(committed)}; assignments {a.assignment()} {b.assignment()}")
    poll("a", a)
    poll("b", b)

# A's session expires now.
before = the_group()
a_id, b_id = a.memberid(), b.memberid()
if {m["member"] for m in before["members"]} != {a_id, b_id}:
    sys.exit(f"the group's members {before['members']} are not a {a_id} and b {b_id}")
sequence = max(e["sequence"] for e in control.call("GET", "/log"))
control.call("POST", "/sessions/expire", {"group": group, "member": a_id})
consumed_at_expiry = len(committed)

# Both go on until every record is committed and both hold partitions again.
while len(committed) < count or not a.assignment() or not b.assignment() \
        or a.memberid() == a_id:
    guard(f"after the expiry: consumed {len(committed)} of {count}; a is {a.memberid()}, "
          f"assignments {a.assignment()} {b.assignment()}")
    poll("a", a)
    poll("b", b)
producer.produce(count, 2 * count)
total = 2 * count
while len(committed) < total:
    guard(f"consumed {len(committed)} of {total}")
    poll("a", a)
    poll("b", b)

# What the clients did about it, as the cluster saw it.
after = the_group()
members = {m["member"] for m in after["members"]}
if a_id in members or members != {a.memberid(), b_id}:
    sys.exit(f"after the expiry the members are {members}: a was {a_id}, is {a.memberid()}, "
             f"b {b_id}")
if after["generation"] <= before["generation"]:
    sys.exit(f"the generation did not move on: {before['generation']} -> {after['generation']}")
since = control.call("GET", f"/log?after={sequence}")
joins = [e for e in since if e["api"] == "JoinGroup"]
if not any(j["clientId"] == "expiry-b" and j["request"]["memberId"] == b_id for j in joins):
    sys.exit("b did not rejoin with its member id")
# A went on as the old member (a Heartbeat, OffsetCommit or other group request naming its
# id, which the cluster answers UNKNOWN_MEMBER_ID), then joined as a new member.
rejoin = next((e["sequence"] for e in joins
               if e["clientId"] == "expiry-a" and e["request"]["memberId"] == ""), None)
if rejoin is None:
    sys.exit("a did not join again as a new member after its session expired")
told = [e for e in since if e["clientId"] == "expiry-a" and e["sequence"] < rejoin
        and e["request"].get("memberId") == a_id]
if not told:
    sys.exit("a rejoined without a request of its old member being refused first")

# No record lost or consumed twice, and the group's commits are at each partition's end.
if sorted(index for _, index in committed.values()) != list(range(total)):
    sys.exit(f"the committed records are not each of 0..{total - 1} once")
ends = {p: len([1 for (q, _) in committed if q == p]) for p in range(partitions)}
if sorted(committed) != sorted((p, o) for p in range(partitions) for o in range(ends[p])) \
        or len(committed) != total:
    sys.exit("the committed records are not each offset of each partition once")
redelivered = [where for where, n in handed_out.items() if n > 1]
fresh = consumer("expiry-fresh")
read_back = fresh.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=20)
fresh.close()
got = {tp.partition: tp.offset for tp in read_back}
if got != ends or sum(ends.values()) != total:
    sys.exit(f"committed offsets read back {got}, expected {ends}")
a.close()
b.close()
print(f"librdkafka {__import__('confluent_kafka').libversion()[0]}: a's session expired after "
      f"{consumed_at_expiry} of {count} records; generation {before['generation']} -> "
      f"{after['generation']}, a told by its {told[0]['api']} and rejoined as a new member; "
      f"{len(failures)} commit(s) failed "
      f"({sorted(set(e for _, e in failures))}), {len(redelivered)} record(s) handed out "
      f"again; {total} records each committed once, offsets {got} read back")
