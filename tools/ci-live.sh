#!/usr/bin/env bash
# Everything that needs a real Kafka broker, in one place so the broker starts once: start a
# single KRaft node on 127.0.0.1 (tools/kafka-broker/broker.sh), run each live step against
# it, always stop it. Exits non-zero if the broker does not start or a step fails.
# Meant for .ci/run; by hand: `bash tools/ci-live.sh [STEP...]` runs only the named steps.
set -euo pipefail
cd "$(dirname "$0")/.."
broker=tools/kafka-broker/broker.sh
t0=$(date +%s)
say() { printf 'ci-live: %s (%ss)\n' "$*" "$(($(date +%s) - t0))"; }

# Every live step: a name and the command that runs it. Steps read KAFKA_BROKER,
# KAFKA_CONTROLLER, KAFKA_NODE_ID and KAFKA_CLUSTER_ID from the environment, and the SASL ones
# KAFKA_BROKER_SASL_SSL, KAFKA_BROKER_SASL_PLAINTEXT, KAFKA_SASL_USERS, KAFKA_TLS_* and
# KAFKA_TAP_TLS_* (all written by broker.sh). The step tap_sasl is defined below but not run by
# default (see there); `bash tools/ci-live.sh tap_sasl` runs it by name.
steps=(live_broker clients cluster_groups quorum_describe quorum_kafka_tool tap tap_tls tap_mtls pcap
    tap_deny cluster_configs cluster_authz cluster_reassign)
step_live_broker() { cargo test --test live live_broker:: -- --ignored --nocapture --skip clients_; }
# librdkafka, kafka-python and aiokafka produce known records with every codec; the test
# fetches their batches with our framing and reads them (tools/clients/produce_known.py).
step_clients() {
    KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh) \
        cargo test --test live live_broker::clients_ -- --ignored --nocapture
}
# `kafka-codec quorum describe` against this node's controller (DescribeQuorum v2).
# The in-memory cluster's group tests (classic, KIP-848 and share groups; the share groups'
# two scenarios take 0.5-11 s: Kafka may release a closed share session's records after the
# other member's fetch began, which then returns at its 10 s wait), DescribeTopicPartitions paging
# and the transaction tests, their assertions as written, against the real broker (the
# transactions' six scenarios take about half a second), and the librdkafka transactions
# script the cluster's librdkafka test runs (about 9 s): the same summary from both. The
# share group offsets scenario (describe, alter, delete) takes 0.2-5 s (a fresh broker makes
# its share state topic first); the Java AdminClient's and kafka-share-groups' one
# (tests/java.rs, four JVMs) about 20 s on a loaded machine.
step_cluster_groups() {
    # `&&`: a step runs as an `if` condition, where `set -e` does not stop at a failure.
    # The cluster's tests are one binary (cluster/tests/main.rs): a filter per file's module.
    cargo test --test cluster -- --ignored --nocapture groups:: consumer_groups:: \
        describe_topic_partitions:: transactions:: share_groups:: share_group_offsets:: &&
        KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh) cargo test \
            --test cluster -- --ignored --exact \
            java::a_real_kafka_broker_answers_the_java_share_offsets_scenario &&
        "$(bash tools/clients/venv.sh)" tools/clients/cluster_txn_librdkafka.py "$KAFKA_BROKER"
}
step_quorum_describe() {
    cargo test --test quorum -- --ignored --exact \
        quorum_live::quorum_describe_reads_a_real_kafka_controller --nocapture
}
# Kafka's kafka-metadata-quorum against `kafka-codec quorum serve`, against a `kafka-codec
# cluster` without controllers through its broker (combined quorum), and against the
# controllers of `kafka-codec cluster --controllers 3` (describe --status and --replication,
# remove-controller held between current and committed by the control surface,
# add-controller): needs the jars broker.sh fetched, not the broker itself. One cargo run.
step_quorum_kafka_tool() {
    cargo test --test quorum -- --ignored --nocapture \
        quorum_live::kafka_metadata_quorum_reads_and_reconfigures_
}

# `kafka-codec tap --rewrite-brokers` in front of this broker, and librdkafka, kafka-python,
# aiokafka and Java kafka-clients through it (tools/clients/tap-proof.sh): every client run
# succeeds, every frame in the tap's logs decodes, every byte is forwarded as received; prints
# the frames per API and client. Then, with what that built, the same clients' scenarios
# against this broker and against `kafka-codec cluster`, each through a tap, their results
# compared (tools/clients/compare_cluster.py, after its own test; about 40 s).
step_tap() {
    bash tools/clients/tap-proof.sh &&
        python3 tools/clients/test_compare_cluster.py &&
        "$(bash tools/clients/venv.sh)" tools/clients/compare_cluster.py "$KAFKA_BROKER" \
            --java "tools/clients/java/target/java-clients.jar:$(cat tools/clients/java/target/classpath)"
}

# The same clients, each logging in with PLAIN and with SCRAM-SHA-512, through a tap with TLS
# on both sides in front of the broker's SASL_SSL listener (tools/clients/tap-proof-tls.sh,
# which first runs the secrets check's own test): every run succeeds, every frame decodes,
# every connection logs in through the tap, and no password shows in a log or the tap's
# stderr.
step_tap_tls() { bash tools/clients/tap-proof-tls.sh; }
# Client certificates both ways (tools/clients/tap-proof-mtls.sh): librdkafka and Java
# present theirs to a tap that requires them, the tap presents its own to the broker's
# ssl.client.auth=required listener; one run each, every frame decoded, every connection's
# client subject logged. And a self-signed CA:TRUE broker certificate, refused in words
# unless it is itself in --upstream-ca, then one librdkafka run trusting it.
step_tap_mtls() { bash tools/clients/tap-proof-mtls.sh; }
# tcpdump captures librdkafka and Java clients talking to the broker through a tap on
# loopback; `kafka-codec decode pcap` of the capture gives the tap's own log of the session,
# pairs and byte counts per connection (tools/clients/pcap-proof.sh).
step_pcap() { bash tools/clients/pcap-proof.sh; }
# `kafka-codec tap --deny-topic` with librdkafka through it (tools/clients/tap-deny-proof.sh):
# the producer and consumer see TOPIC_AUTHORIZATION_FAILED for the denied topic and carry on
# with the allowed one in the same requests; nothing of the denied topic reaches the broker.
step_tap_deny() { bash tools/clients/tap-deny-proof.sh; }
# The in-memory cluster's DescribeConfigs (topic and broker configs, sources, synonyms,
# types) equal, config by config, to this broker's, through kafka-python's admin client; then
# CreateTopics v7 with topic configs (taken, refused, validate_only) answered byte for byte as
# this broker answers, and a batch produced to a LogAppendTime topic stored as it stores it
# (tools/clients/cluster_create_topics_vs_broker.py, about a second); then a group's configs
# (ConfigResource GROUP) through the Java AdminClient (ClusterGroupConfigs via
# cluster/tests/group_configs.rs: described, set, refused, deleted, the group deleted), the
# same lines from both (about 10 s). Then the cluster's own assertions against this broker:
# a CreateTime topic's timestamp bounds (INVALID_TIMESTAMP, record errors; under a second)
# and a ShareFetch in a group not held (UNKNOWN_SERVER_ERROR; about 6 s: the broker answers
# at the fetch's 3 s wait).
# And the streams group answers (cluster/tests/streams_topology_kafka.rs):
# StreamsGroupTopologyDescriptionUpdate, StreamsGroupDescribe's topology description and
# the heartbeat's error paths, this broker's answers against the committed fixture (well
# under a second).
# And UpdateFeatures' steps (cluster/tests/update_features.rs: refusals, validate-only, v0,
# downgrades and back) compared with their recording: about a second; they end where they
# began. Alone: while they run, features other tests need are downgraded.
step_cluster_configs() {
    bash tools/clients/cluster-configs-proof.sh &&
        KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh) cargo test \
            --test cluster -- --ignored group_configs:: &&
        cargo test --test cluster -- --ignored produce_timestamps:: \
            share_fetch_unknown_group:: \
            streams_topology_kafka::kafka_answers_streams_topology_updates &&
        cargo test --test cluster -- --ignored update_features::
}
# ACLs entry by entry: librdkafka's producer, consumer and admin client as a user with ACLs
# on some topics and groups and not others, against this broker's SASL_PLAINTEXT listener
# (StandardAuthorizer) and against the in-memory cluster, the outcomes compared
# (tools/clients/cluster_authz_compare.py via cluster/tests/authorization.rs). It removes
# the ACLs it creates, so the steps after it meet none.
# The Java AdminClient's side too (ClusterAuthz: DescribeTopicPartitions with authorized
# operations, ListTransactions filtered, DescribeTransactions), with the Java module the tap
# step built (built here when this step runs alone). About 10 s in all.
# And delegation tokens, the Java AdminClient's (DelegationTokens) at the broker and the
# cluster, compared line for line: about 8 s more.
# And refusals request by request (cluster/tests/acl_refusals.rs): 124 requests (every version
# served) of a user with ACLs on one topic only, compared with their recording; under a second. Alone: its ACL on
# the cluster would refuse the other tests' user cluster operations. It removes what it makes
# (and what a failed run left).
step_cluster_authz() {
    local java=$PWD/tools/clients/java/target
    local java_cp
    if [ -f "$java/java-clients.jar" ] && [ -f "$java/classpath" ]; then
        java_cp="$java/java-clients.jar:$(cat "$java/classpath")"
    else
        java_cp=$(bash tools/clients/java-classpath.sh)
    fi
    KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh) KAFKA_CLIENTS_JAVA=$java_cp \
        cargo test --test cluster -- --ignored --nocapture authorization:: &&
        cargo test --test cluster -- --ignored acl_refusals::
}
# The same without TLS, against the SASL_PLAINTEXT listener. Not in the default list: TLS
# adds only the transport to what it checks; by name, `bash tools/ci-live.sh tap_sasl`.
# Kafka's AdminClient (tools/clients/ReassignmentsVsBroker.java, two JVMs at once; 38 s here
# at load 25, 9 s of CPU)
# against this broker and the in-memory cluster: partition reassignments and their errors,
# AlterReplicaLogDirs, ListConfigResources; the same lines from both.
# Then client telemetry (cluster/tests/telemetry.rs): subscriptions, GetTelemetrySubscriptions
# and PushTelemetry through every check, at this broker and the cluster, every field compared.
# It turns on broker.sh's receiver (KAFKA_TELEMETRY=1 above) with the dynamic config
# `metric.reporters`, which Kafka keeps on until it stops: hence last, after the Java clients.
# And librdkafka's pushes kept by the cluster. About 4 s in all.
step_cluster_reassign() {
    cargo test --test cluster -- --ignored --exact \
        reassignments::the_admin_client_sees_what_a_real_kafka_broker_answers --nocapture &&
        KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh) cargo test --test cluster -- --ignored telemetry::
}
step_tap_sasl() { bash tools/clients/tap-proof-tls.sh --no-tls; }

[ $# -gt 0 ] && steps=("$@")

# Build first, so the broker does not idle through a compile. No `-p`: the default members'
# features, those `cargo test` in .ci/run built with, so these reuse its build (a `-p`
# rebuilt the library with that package's features alone); `--test quorum` also selects the
# library's own quorum test, whose tests the filters below leave out. The CLI build shares
# the fuzz-seeds run's features in .ci/run.
cargo test --test live --no-run
cargo test --test cluster --no-run
cargo test --test quorum --no-run
cargo build --bin kafka-codec

cleanup() {
    bash "$broker" stop || true
    say "done"
}
trap cleanup EXIT

# A broker left over from an interrupted run of this checkout would hold the ports.
bash "$broker" stop
KAFKA_TELEMETRY=1 bash "$broker" start >/dev/null
set -a
# shellcheck disable=SC1090
. "$(bash "$broker" envfile)"
set +a
say "broker up: KAFKA_BROKER=$KAFKA_BROKER KAFKA_CONTROLLER=$KAFKA_CONTROLLER"
for step in "${steps[@]}"; do
    say "step $step"
    if ! "step_$step"; then
        say "step $step failed; broker log: target/kafka-broker/logs/server.log" >&2
        tail -n 30 target/kafka-broker/logs/server.log >&2 || true
        exit 1
    fi
done
