"""kafka-python's admin client against a real Kafka broker and kafka-codec's in-memory
cluster: on each, create a topic, set one override (IncrementalAlterConfigs), then describe
the topic's and a broker's configs with synonyms (DescribeConfigs) and compare the two
answers config by config: value, source, read-only, sensitive, type and synonyms. Configs a
real broker takes from its own settings (source STATIC_BROKER_CONFIG, in the config or its
synonyms: what tools/kafka-broker/broker.sh sets) are left out, as are the broker configs
whose value is the machine's (paths, host names). Prints one summary line; exits non-zero on
any difference.

    python cluster_configs_vs_broker.py BROKER_BOOTSTRAP CLUSTER_BOOTSTRAP
"""

import sys

from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, NewTopic
from kafka.errors import TopicAlreadyExistsError

TOPIC = "configs-proof"
STATIC = "STATIC_BROKER_CONFIG"


def snapshot(bootstrap):
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="configs-proof")
    try:
        try:
            admin.create_topics([NewTopic(TOPIC, 1, 1)])
        except TopicAlreadyExistsError:
            pass
        admin.alter_configs(
            [ConfigResource("TOPIC", TOPIC, configs={"retention.ms": "1000"})],
            incremental=True)
        broker_id = str(min(b["broker_id"] for b in admin.describe_cluster()["brokers"]))
        topic = admin.describe_configs([ConfigResource("TOPIC", TOPIC)],
                                       include_synonyms=True, config_filter="all")
        broker = admin.describe_configs([ConfigResource("BROKER", broker_id)],
                                        include_synonyms=True, config_filter="all")
        return topic["topic"][TOPIC], broker["broker"][broker_id]
    finally:
        admin.close()


def shape(config):
    synonyms = [(s["name"], s["value"], s["source"]) for s in config.get("synonyms", [])]
    return {
        "value": config["value"],
        "source": config["config_source"],
        "read_only": config["read_only"],
        "sensitive": config["is_sensitive"],
        "type": config.get("config_type"),
        "synonyms": synonyms,
    }


def from_static(config):
    return config["config_source"] == STATIC or any(
        s["source"] == STATIC for s in config.get("synonyms", []))


real_topic, real_broker = snapshot(sys.argv[1])
ours_topic, ours_broker = snapshot(sys.argv[2])
failures = []
compared = {"topic": 0, "broker": 0}
skipped = {"topic": 0, "broker": 0}
for scope, real, ours in (("topic", real_topic, ours_topic), ("broker", real_broker, ours_broker)):
    for name in sorted(set(real) | set(ours)):
        if name in real and from_static(real[name]):
            # The real broker's own settings (listeners, log dirs, ...).
            skipped[scope] += 1
            continue
        if name not in ours:
            failures.append(f"{scope} config {name}: described by Kafka, not by the cluster")
            continue
        if name not in real:
            failures.append(f"{scope} config {name}: described by the cluster, not by Kafka")
            continue
        if from_static(real[name]) or (scope == "broker" and real[name]["config_source"] != "DEFAULT_CONFIG"):
            skipped[scope] += 1
            continue
        compared[scope] += 1
        if shape(real[name]) != shape(ours[name]):
            failures.append(f"{scope} config {name}:\n  Kafka   {shape(real[name])}\n  cluster {shape(ours[name])}")
if failures:
    sys.exit(f"{len(failures)} difference(s):\n" + "\n".join(failures))
print(f"kafka-python DescribeConfigs: {compared['topic']} topic and {compared['broker']} broker "
      f"configs equal to a real Kafka broker's (left out, set by the broker's own settings: "
      f"{skipped['topic']} topic, {skipped['broker']} broker)")
