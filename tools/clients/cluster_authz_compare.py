"""ACLs entry by entry, as librdkafka (confluent-kafka) sees them: the same scenario against a
real Kafka 4.4 broker (StandardAuthorizer) and against kafka-codec's cluster, the outcomes
printed as one JSON line for the caller to compare (cluster/tests/authorization.rs).

    python cluster_authz_compare.py ADMIN_CONFIG_JSON USER_CONFIG_JSON USER PREFIX

ADMIN_CONFIG_JSON: a super user's client config; USER_CONFIG_JSON: the user's (who is
User:USER). The admin creates PREFIX-allowed and PREFIX-denied, commits an offset for the
groups PREFIX-ok-g and PREFIX-no-g, and creates the ACLs: the user may READ and WRITE
PREFIX-allowed and do ALL on the groups prefixed PREFIX-ok-; User:nobody holds an ACL on
PREFIX-denied, the PREFIX-no- groups and the cluster, so that a broker whose
allow.everyone.if.no.acl.found is true still finds an ACL on every resource the user touches.
Then the user: produces one record to each topic from one producer (delivery outcome per
topic), consumes both from offset 0 (the records read), commits an offset for both and
fetches the group's offsets for both, lists the consumer groups (those of PREFIX), describes
the groups and the topics with their authorized operations, and describes the cluster with
its authorized operations. The ACLs and topics are deleted at the end, whatever happened.
"""

import json
import sys
import time

from confluent_kafka import (ConsumerGroupTopicPartitions, Consumer, KafkaException, Producer,
                             TopicCollection, TopicPartition)
from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation,
                                   AclPermissionType, AdminClient, NewTopic,
                                   ResourcePatternType, ResourceType)

TIMEOUT = 20
admin_config, user_config = json.loads(sys.argv[1]), json.loads(sys.argv[2])
user, prefix = sys.argv[3], sys.argv[4]
allowed, denied = f"{prefix}-allowed", f"{prefix}-denied"
ok_group, no_group = f"{prefix}-ok-g", f"{prefix}-no-g"
quiet = {"log_level": 0}


def error_name(exception):
    """The Kafka error name an exception carries, else its text."""
    if isinstance(exception, KafkaException):
        return exception.args[0].name()
    return str(exception)


def acl(kind, name, pattern, principal, operation):
    return AclBinding(kind, name, pattern, principal, "*", operation, AclPermissionType.ALLOW)


def acls():
    return [
        acl(ResourceType.TOPIC, allowed, ResourcePatternType.LITERAL, f"User:{user}",
            AclOperation.READ),
        acl(ResourceType.TOPIC, allowed, ResourcePatternType.LITERAL, f"User:{user}",
            AclOperation.WRITE),
        acl(ResourceType.GROUP, f"{prefix}-ok-", ResourcePatternType.PREFIXED, f"User:{user}",
            AclOperation.ALL),
        acl(ResourceType.TOPIC, denied, ResourcePatternType.LITERAL, "User:nobody",
            AclOperation.READ),
        acl(ResourceType.GROUP, f"{prefix}-no-", ResourcePatternType.PREFIXED, "User:nobody",
            AclOperation.READ),
        acl(ResourceType.BROKER, "kafka-cluster", ResourcePatternType.LITERAL, "User:nobody",
            AclOperation.DESCRIBE),
    ]


def ops(operations):
    return sorted(op.name for op in operations) if operations is not None else None


def scenario(admin):
    for future in admin.create_topics([NewTopic(allowed, 1, 1), NewTopic(denied, 1, 1)]).values():
        future.result(timeout=TIMEOUT)
    for group in (ok_group, no_group):
        committer = Consumer(admin_config | quiet | {"group.id": group})
        committer.commit(offsets=[TopicPartition(allowed, 0, 0)], asynchronous=False)
        committer.close()
    for future in admin.create_acls(acls()).values():
        future.result(timeout=TIMEOUT)
    time.sleep(1)  # the broker's authorizer applies new ACLs from its metadata log
    outcome = {}

    delivered = {}
    producer = Producer(user_config | quiet | {"linger.ms": 50, "message.timeout.ms": 10000})
    for topic in (allowed, denied):
        producer.produce(topic, value=b"v", on_delivery=lambda e, m: delivered.__setitem__(
            m.topic(), "ok" if e is None else e.name()))
    producer.flush(TIMEOUT)
    outcome["produce"] = {topic[len(prefix):]: code for topic, code in sorted(delivered.items())}

    # librdkafka learns from Metadata that the denied topic may not be read and does not
    # fetch it; whether it reports that to poll() within a given time is its own timing, so
    # only the records read are compared.
    consumer = Consumer(user_config | quiet | {"group.id": ok_group, "enable.auto.commit": False})
    consumer.assign([TopicPartition(allowed, 0, 0), TopicPartition(denied, 0, 0)])
    consumed, deadline = [], time.time() + TIMEOUT
    while time.time() < deadline and not consumed:
        message = consumer.poll(0.5)
        if message is not None and not message.error():
            consumed.append((message.topic()[len(prefix):], message.value().decode()))
    # One OffsetCommit naming both topics: committed for the one, refused for the other.
    try:
        committed = consumer.commit(offsets=[TopicPartition(allowed, 0, 1),
                                             TopicPartition(denied, 0, 1)], asynchronous=False)
        outcome["commit"] = sorted((tp.topic[len(prefix):], tp.error.name() if tp.error else "ok")
                                   for tp in committed)
    except KafkaException as e:
        outcome["commit"] = error_name(e)
    consumer.close()
    outcome["consume"] = consumed

    user_admin = AdminClient(user_config | quiet)
    listed = user_admin.list_consumer_groups().result(timeout=TIMEOUT)
    outcome["list_groups"] = sorted(g.group_id[len(prefix):] for g in listed.valid
                                    if g.group_id.startswith(prefix))
    groups = {}
    for group, future in user_admin.describe_consumer_groups(
            [ok_group, no_group], include_authorized_operations=True).items():
        try:
            described = future.result(timeout=TIMEOUT)
            groups[group[len(prefix):]] = ops(described.authorized_operations)
        except Exception as e:  # noqa: BLE001 - the error is the outcome compared
            groups[group[len(prefix):]] = error_name(e)
    outcome["describe_groups"] = groups
    # OffsetFetch of both topics' partitions.
    wanted = ConsumerGroupTopicPartitions(ok_group, [TopicPartition(allowed, 0),
                                                     TopicPartition(denied, 0)])
    try:
        fetched = user_admin.list_consumer_group_offsets([wanted])[ok_group].result(
            timeout=TIMEOUT)
        outcome["fetch_offsets"] = sorted(
            (tp.topic[len(prefix):], tp.offset, tp.error.name() if tp.error else "ok")
            for tp in fetched.topic_partitions)
    except Exception as e:  # noqa: BLE001
        outcome["fetch_offsets"] = error_name(e)
    topics = {}
    for topic, future in user_admin.describe_topics(
            TopicCollection([allowed, denied]), include_authorized_operations=True).items():
        try:
            described = future.result(timeout=TIMEOUT)
            topics[topic[len(prefix):]] = ops(described.authorized_operations)
        except Exception as e:  # noqa: BLE001
            topics[topic[len(prefix):]] = error_name(e)
    outcome["describe_topics"] = topics
    try:
        cluster = user_admin.describe_cluster(include_authorized_operations=True).result(
            timeout=TIMEOUT)
        outcome["describe_cluster"] = ops(cluster.authorized_operations)
    except Exception as e:  # noqa: BLE001
        outcome["describe_cluster"] = error_name(e)
    return outcome


def main():
    admin = AdminClient(admin_config | quiet)
    try:
        outcome = scenario(admin)
    finally:
        # Leave the broker as found: other steps' users must not meet these ACLs. Exactly the
        # bindings made here: a filter by principal would also remove the ACLs of the Java
        # side's scenario, which runs at the same broker at the same time with the same users.
        filters = [AclBindingFilter(b.restype, b.name, b.resource_pattern_type, b.principal,
                                    b.host, b.operation, b.permission_type) for b in acls()]
        for future in admin.delete_acls(filters).values():
            future.result(timeout=TIMEOUT)
        for future in admin.delete_topics([allowed, denied]).values():
            try:
                future.result(timeout=TIMEOUT)
            except Exception:  # noqa: BLE001 - not created when the scenario failed early
                pass
    print(json.dumps(outcome, sort_keys=True))


main()
