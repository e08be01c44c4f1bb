"""librdkafka (confluent-kafka) against kafka-codec's in-memory cluster with SASL and so ACLs
on: a super user's admin client creates two topics; another user's producer is refused
(TOPIC_AUTHORIZATION_FAILED) until the admin creates a PREFIXED WRITE ACL for it, which
DescribeAcls finds with a MATCH filter on the topic; then its records are delivered to the
topic the prefix covers and refused on the other; after DeleteAcls removes the ACL, it is
refused again. Prints one summary line; exits non-zero on any difference.

    python cluster_acls_librdkafka.py BOOTSTRAP ADMIN_USER ADMIN_PASSWORD USER PASSWORD

The admin logs in with SCRAM-SHA-512, the user with PLAIN (SASL_PLAINTEXT).
"""

import sys

from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation,
                                   AclPermissionType, AdminClient, NewTopic, ResourcePatternType,
                                   ResourceType)

bootstrap, admin_user, admin_password, user, password = sys.argv[1:6]


def sasl(mechanism, name, secret):
    return {"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": mechanism, "sasl.username": name, "sasl.password": secret}


admin = AdminClient(sasl("SCRAM-SHA-512", admin_user, admin_password))
covered, other = "acl-orders-eu", "acl-payments"
for future in admin.create_topics([NewTopic(covered, 1, 1), NewTopic(other, 1, 1)]).values():
    future.result(timeout=20)


def produce(topic, count=5):
    """The delivery error codes of `count` records sent by the user (None: delivered)."""
    outcomes = []
    producer = Producer(sasl("PLAIN", user, password) | {
        "linger.ms": 1, "message.timeout.ms": 5000, "log_level": 0})
    for i in range(count):
        producer.produce(topic, value=f"v{i}", on_delivery=lambda e, m: outcomes.append(
            None if e is None else e.code()))
    producer.flush(10)
    if len(outcomes) != count:
        sys.exit(f"{topic}: {len(outcomes)} of {count} delivery reports")
    return set(outcomes)


denied = {KafkaError.TOPIC_AUTHORIZATION_FAILED}
if produce(covered) != denied:
    sys.exit("without an ACL the user's records were not refused TOPIC_AUTHORIZATION_FAILED")

binding = AclBinding(ResourceType.TOPIC, "acl-orders", ResourcePatternType.PREFIXED,
                     f"User:{user}", "*", AclOperation.WRITE, AclPermissionType.ALLOW)
for future in admin.create_acls([binding]).values():
    future.result(timeout=10)
matching = AclBindingFilter(ResourceType.TOPIC, covered, ResourcePatternType.MATCH, None, None,
                            AclOperation.ANY, AclPermissionType.ANY)
found = admin.describe_acls(matching).result(timeout=10)
if found != [binding]:
    sys.exit(f"DescribeAcls MATCH {covered}: {found}, not the prefixed ACL")

if produce(covered) != {None}:
    sys.exit("with the prefixed WRITE ACL the user's records were not delivered")
if produce(other) != denied:
    sys.exit(f"{other}, outside the prefix, was not refused")

by_user = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, f"User:{user}", None,
                           AclOperation.ANY, AclPermissionType.ANY)
deleted = next(iter(admin.delete_acls([by_user]).values())).result(timeout=10)
if deleted != [binding]:
    sys.exit(f"DeleteAcls by principal removed {deleted}")
if produce(covered) != denied:
    sys.exit("after DeleteAcls the user's records were not refused")
print(f"librdkafka ACLs: {user} refused without an ACL, delivered under PREFIXED acl-orders, "
      f"refused on {other}, refused again once DeleteAcls removed it")
