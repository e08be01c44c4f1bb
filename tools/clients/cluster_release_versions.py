"""kafka-python against kafka-codec's in-memory cluster started with `--as-version` for each
Kafka release: kafka-python connects, asks ApiVersions as it does against any broker, and
the versions the cluster listed must equal, for every API both name, the ApiVersions answers
kafka-python records from real brokers of that release
(`kafka.protocol.broker_version_data.BROKER_API_VERSIONS`, "copied from brokers via
api_versions_response" for 0.10.1 and later). Prints one summary line; exits non-zero on any
difference.

Which APIs a broker lists depends on its mode: kafka-python recorded ZooKeeper-mode brokers
before 4.0 (their lists hold LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown)
and KRaft brokers from 4.0 (the only mode). `cluster/release-api-listeners.tsv` (read from
each release's jars) says which listener listed each API; the recording must agree with its
column (every API recorded listed by that listener, and the reverse), and an API the cluster
lists that the recording lacks is accepted only when the cluster answers as another listener
(a KRaft broker, from 3.3) and the table says that listener listed it and the recorded one
did not.

    python cluster_release_versions.py RELEASE=BOOTSTRAP=LISTENER [...]

LISTENER is the table's letter of the broker the cluster answers as (`Z` or `B`).
"""

import sys
from pathlib import Path

from kafka.net.compat import KafkaNetClient
from kafka.protocol.broker_version_data import BROKER_API_VERSIONS

LISTENERS = Path(__file__).resolve().parents[2] / "cluster" / "release-api-listeners.tsv"
LISTENER_NAMES = {"Z": "ZooKeeper-mode broker", "B": "KRaft broker"}

# Where the cluster's table (from the last patch release of each line) differs from
# kafka-python's recording (from another patch release of that line), and why.
KNOWN = {
    # kafka-python recorded 4.0.0, which served JoinGroup from v2 (KIP-896); the table's 4.0
    # column is kafka-clients 4.0.2's, which lists JoinGroup from v0 again, as 4.1 does.
    ((4, 0), 11): ((2, 9), (0, 9)),
}

# GetTelemetrySubscriptions and PushTelemetry (KIP-714): a KRaft broker lists them only when a
# metrics reporter that receives client telemetry is configured (`ApiVersionsResponse`'s
# client telemetry filter, applied after the listener's set); the brokers kafka-python
# recorded had none, nor has the cluster unless built `with_telemetry`.
TELEMETRY = {71, 72}


def read_listeners():
    """Release tuple -> API key -> the letters of the listeners that listed it."""
    rows = [line.split("\t") for line in LISTENERS.read_text().splitlines()
            if line and not line.startswith("#")]
    names = rows[0][2:]
    table = {release_tuple(name): {} for name in names}
    for row in rows[1:]:
        for name, cell in zip(names, row[2:]):
            if cell not in ("-", "none"):
                table[release_tuple(name)][int(row[0])] = cell
    return table


def release_tuple(name):
    parts = tuple(int(p) for p in name.split("."))
    return parts


listeners = read_listeners()
compared = 0
releases = 0
other_listener = 0
failures = []
for entry in sys.argv[1:]:
    name, bootstrap, answers_as = entry.split("=", 2)
    release = release_tuple(name)
    recorded = BROKER_API_VERSIONS.get(release)
    if recorded is None or release < (0, 10, 1):
        # Not in kafka-python's table, or synthesized there rather than recorded.
        continue
    by_listener = listeners[release]
    recorded_as = "Z" if release < (4, 0) else "B"
    # The table against the real brokers: the recorded listener's column is what they listed.
    column = {key for key, letters in by_listener.items()
              if recorded_as in letters and key not in TELEMETRY}
    for key in sorted(set(recorded) ^ column):
        failures.append(f"{name}: release-api-listeners.tsv says the "
                        f"{LISTENER_NAMES[recorded_as]} {'listed' if key in column else 'lacked'} "
                        f"API {key}, the recorded broker did not")
    client = KafkaNetClient(bootstrap_servers=bootstrap, client_id="release-versions")
    try:
        client.check_version(timeout_ms=20000)
        listed = dict(client._manager.broker_version_data.api_versions)
    finally:
        client.close()
    releases += 1
    for key, versions in sorted(listed.items()):
        letters = by_listener.get(key, "")
        if answers_as not in letters:
            failures.append(f"{name}: the cluster, as a {LISTENER_NAMES[answers_as]}, lists API "
                            f"{key} {versions}, which that listener of Kafka {name} did not")
            continue
        if key not in recorded:
            if answers_as != recorded_as and recorded_as not in letters:
                # A fact of the table: listed by the broker the cluster answers as, not by
                # the one recorded.
                other_listener += 1
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
      f"{releases} releases equal what real brokers of those releases listed; "
      f"{other_listener} more listed only by the KRaft broker the cluster answers as (3.3-3.9, "
      f"recorded in ZooKeeper mode), as release-api-listeners.tsv says")
