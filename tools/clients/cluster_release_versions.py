"""kafka-python against kafka-codec's in-memory cluster started with `--as-version` for each
Kafka release: kafka-python connects, asks ApiVersions as it does against any broker, and
the versions the cluster listed must equal, for every API both name, the ApiVersions answers
kafka-python records from real brokers of that release
(`kafka.protocol.broker_version_data.BROKER_API_VERSIONS`, "copied from brokers via
api_versions_response" for 0.10.1 and later). Prints one summary line; exits non-zero on any
difference.

    python cluster_release_versions.py RELEASE=BOOTSTRAP [RELEASE=BOOTSTRAP ...]
"""

import sys

from kafka.net.compat import KafkaNetClient
from kafka.protocol.broker_version_data import BROKER_API_VERSIONS

# Where the cluster's table (from the last patch release of each line) differs from
# kafka-python's recording (from another patch release of that line), and why.
KNOWN = {
    # kafka-python recorded 4.0.0, which served JoinGroup from v2 (KIP-896); the table's 4.0
    # column is kafka-clients 4.0.2's, which lists JoinGroup from v0 again, as 4.1 does.
    ((4, 0), 11): ((2, 9), (0, 9)),
}
# APIs the cluster lists that kafka-python's recording lacks, and why: it recorded 3.8 and 3.9
# brokers in ZooKeeper mode (their lists hold the ZooKeeper-only LeaderAndIsr, StopReplica,
# UpdateMetadata and ControlledShutdown, and lack UnregisterBroker), which do not serve
# DescribeTopicPartitions (its schema's listeners: broker, not zkBroker); the cluster answers
# as a KRaft broker of that release, which does. The same holds for 3.7 to 3.9 and
# ListClientMetricsResources (74, KIP-714; listeners: broker only in kafka-clients 3.7.2 and
# 3.9.1), which the cluster serves as ListConfigResources v0.
KNOWN_ABSENT = {((3, 8), 75), ((3, 9), 75), ((3, 7), 74), ((3, 8), 74), ((3, 9), 74)}
# UnregisterBroker (64): a KRaft broker of 2.8 to 3.9 lists it (the release table), the
# ZooKeeper-mode brokers kafka-python recorded do not.
KNOWN_ABSENT |= {(release, 64) for release in [(2, 8)] + [(3, minor) for minor in range(10)]}
# DescribeQuorum (55), AddRaftVoter (80), RemoveRaftVoter (81): the cluster's brokers list
# them at the release table's versions with or without controllers (without, they answer as
# combined KRaft nodes); the ZooKeeper-mode brokers kafka-python recorded before 4.0 do not.
KNOWN_ABSENT |= {((2, 7), 55), ((2, 8), 55), ((3, 9), 80), ((3, 9), 81)}
KNOWN_ABSENT |= {((3, minor), 55) for minor in range(10)}


def release_tuple(name):
    parts = tuple(int(p) for p in name.split("."))
    return parts


compared = 0
releases = 0
failures = []
for pair in sys.argv[1:]:
    name, bootstrap = pair.split("=", 1)
    release = release_tuple(name)
    recorded = BROKER_API_VERSIONS.get(release)
    if recorded is None or release < (0, 10, 1):
        # Not in kafka-python's table, or synthesized there rather than recorded.
        continue
    client = KafkaNetClient(bootstrap_servers=bootstrap, client_id="release-versions")
    try:
        client.check_version(timeout_ms=20000)
        listed = dict(client._manager.broker_version_data.api_versions)
    finally:
        client.close()
    releases += 1
    for key, versions in sorted(listed.items()):
        if key not in recorded:
            if (release, key) in KNOWN_ABSENT:
                continue
            failures.append(f"{name}: the cluster lists API {key} {versions}, "
                            f"which Kafka {name} did not")
            continue
        compared += 1
        expected = tuple(recorded[key])
        if tuple(versions) != expected and KNOWN.get((release, key)) != (expected, tuple(versions)):
            failures.append(f"{name}: API {key}: the cluster lists {tuple(versions)}, "
                            f"Kafka {name} listed {expected}")
if failures:
    sys.exit("\n".join(failures))
if releases == 0:
    sys.exit("no release compared")
print(f"kafka-python {__import__('kafka').__version__}: {compared} API version ranges over "
      f"{releases} releases equal what real brokers of those releases listed")
