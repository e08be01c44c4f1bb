"""Makes a ZooKeeper-mode broker's controller talk to the brokers
(tools/clients/tap-proof-inter-broker.sh): creates a topic with two partitions (LeaderAndIsr
and UpdateMetadata to the broker), waits until both partitions have a leader, deletes the
topic (StopReplica, UpdateMetadata) and waits until it is gone. Talks to BROKER directly with
kafka-python at its own versions; the controller's requests are what the tap sees. Prints one
JSON line.

    python inter_broker_workload.py BROKER TOPIC
"""

import json
import sys
import time

TIMEOUT = 60


def wait_for(what, condition):
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not within {TIMEOUT} s")
        time.sleep(0.2)


def main():
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    broker, topic = sys.argv[1], sys.argv[2]
    admin = KafkaAdminClient(bootstrap_servers=broker)
    try:
        admin.create_topics([NewTopic(topic, 2, 1)])

        def led():
            described = admin.describe_topics([topic])
            partitions = described[0]["partitions"] if described else []
            return len(partitions) == 2 and all(p["leader_id"] >= 0 for p in partitions)

        wait_for("both partitions led", led)
        admin.delete_topics([topic])
        wait_for("topic deleted", lambda: topic not in admin.list_topics())
    finally:
        admin.close()
    print(json.dumps({"topic": topic, "partitions": 2, "created": True, "deleted": True}))


if __name__ == "__main__":
    main()
