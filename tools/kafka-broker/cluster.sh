#!/usr/bin/env bash
# A real Kafka cluster of one KRaft controller (node 1) and two brokers (nodes 2 and 3; with
# --brokers N, nodes 2 to N+1; with --controllers M before it, M controllers, nodes 1 to M, all
# voters, node 1 leading once elected, and the brokers after them) on 127.0.0.1, for the live comparisons that need a broker to
# go while another stays (cluster/tests/leaderless_coordinator_kafka.rs,
# cluster/tests/elect_leaders_unclean.rs). The internal topics have one replica
# (offsets.topic.replication.factor=1 and the transaction log's alike, two partitions each),
# so a partition on a stopped broker has no leader. Same jars as broker.sh (its `fetch`).
#
#   tools/kafka-broker/cluster.sh [--controllers M] [--brokers N] start  # format, start all,
#                                                 # wait for the brokers
#   tools/kafka-broker/cluster.sh stop-broker N   # stop broker N gracefully: it is fenced
#   tools/kafka-broker/cluster.sh kill-broker N   # SIGKILL broker N: fenced only once its
#                                                 # session times out (9 s)
#   tools/kafka-broker/cluster.sh start-broker N  # start it again (its data kept)
#   tools/kafka-broker/cluster.sh stop            # stop everything and delete the data
#   tools/kafka-broker/cluster.sh env             # the addresses (also in $home/run/env)
#
# `start` writes KAFKA_CLUSTER_CONTROLLER, KAFKA_CLUSTER_BROKER_2, KAFKA_CLUSTER_BROKER_3 (...)
# to $home/run/env (with --controllers M, also KAFKA_CLUSTER_CONTROLLER_1 to _M). Ports: the
# first free block of M+N from 19592 (or KAFKA_CLUSTER_PORT), the controllers' first. State in <repo>/target/kafka-cluster (KAFKA_CLUSTER_HOME).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/kafka-broker/common.sh
. "$here/common.sh"
repo=$(cd "$here/../.." && pwd)
home=${KAFKA_CLUSTER_HOME:-$repo/target/kafka-cluster}
lib=${KAFKA_BROKER_HOME:-$repo/target/kafka-broker}/lib
run=$home/run
logs=$home/logs
cluster_id=a2Fma2EtY29kZWMtbGl2ZQ

say() { printf 'kafka-cluster: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

pid_alive() {
    local pidfile=$run/$1.pid pid
    [ -f "$pidfile" ] || return 1
    pid=$(cat "$pidfile")
    is_our_process "$pid" "$run/$1.properties" "$pidfile"
}

block_busy() {
    local port
    for port in $(seq "$1" $(($1 + controllers + brokers - 1))); do
        port_busy "$port" && return 0
    done
    return 1
}

choose_ports() {
    local base=${KAFKA_CLUSTER_PORT:-19592}
    while block_busy "$base"; do
        [ -n "${KAFKA_CLUSTER_PORT:-}" ] &&
            die "port $base (or one of the next $((controllers + brokers - 1))) is taken"
        base=$((base + controllers + brokers))
        [ "$base" -lt 19700 ] || die "no free block of ports in 19592-19700"
    done
    controller_port=$base
}

broker_port() { echo $((controller_port + $1 - 1)); }

# config NODE ROLE
config() {
    local node=$1 role=$2 listeners
    if [ "$role" = controller ]; then
        listeners="listeners=CONTROLLER://127.0.0.1:$(broker_port "$node")"
    else
        local port
        port=$(broker_port "$node")
        listeners="listeners=PLAINTEXT://127.0.0.1:$port
advertised.listeners=PLAINTEXT://127.0.0.1:$port
inter.broker.listener.name=PLAINTEXT"
    fi
    cat >"$run/$node.properties" <<EOF
# Written by tools/kafka-broker/cluster.sh.
process.roles=$role
node.id=$node
$listeners
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
controller.quorum.voters=$voters
log.dirs=$run/data-$node
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=2
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=2
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
EOF
}

launch_node() {
    local node=$1
    launch "$run/$node.pid" "$logs/$node.out" java -Xmx"${KAFKA_HEAP:-384m}" -Xms64m \
        -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
        -Dlog4j2.configurationFile="$run/log4j2-$node.properties" -Dkafka.logs.dir="$logs" \
        -cp "$lib/*" kafka.Kafka "$run/$node.properties"
}

cmd_start() {
    local node
    for node in $(seq 1 9); do
        pid_alive "$node" && die "node $node still runs; run '$0 stop' first"
    done
    bash "$here/broker.sh" fetch
    choose_ports
    voters=$(for node in $(seq 1 "$controllers"); do printf '%s@127.0.0.1:%s\n' "$node" "$(broker_port "$node")"; done | paste -sd,)
    rm -rf "$run"
    mkdir -p "$run" "$logs"
    for node in $(seq 1 "$controllers"); do config "$node" controller; done
    for node in $(seq $((controllers + 1)) $((controllers + brokers))); do config "$node" broker; done
    for node in $(seq 1 $((controllers + brokers))); do
        cat >"$run/log4j2-$node.properties" <<EOF
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = $logs/server-$node.log
appender.file.append = false
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
EOF
        # Static voters: no --standalone, the same format for all three.
        java -XX:TieredStopAtLevel=1 -cp "$lib/*" kafka.tools.StorageTool format \
            --config "$run/$node.properties" --cluster-id "$cluster_id" \
            >"$logs/format-$node.out" 2>&1 &
    done
    wait || die "formatting failed (see $logs/format-*.out)"
    for node in $(seq 1 $((controllers + brokers))); do launch_node "$node"; done
    for node in $(seq $((controllers + 1)) $((controllers + brokers))); do wait_for "$node"; done
    {
        echo "KAFKA_CLUSTER_CONTROLLER=127.0.0.1:$controller_port"
        if [ "$controllers" -gt 1 ]; then
            for node in $(seq 1 "$controllers"); do
                echo "KAFKA_CLUSTER_CONTROLLER_$node=127.0.0.1:$(broker_port "$node")"
            done
        fi
        for node in $(seq $((controllers + 1)) $((controllers + brokers))); do
            echo "KAFKA_CLUSTER_BROKER_$node=127.0.0.1:$(broker_port "$node")"
        done
    } >"$run/env"
    cat "$run/env"
}

# wait_for NODE: until broker NODE answers (or it exits, or the start timeout passes).
wait_for() {
    local node=$1 deadline=$(($(date +%s) + ${KAFKA_START_TIMEOUT:-120})) port
    port=$(sed -n 's|^listeners=PLAINTEXT://127.0.0.1:\([0-9]*\)$|\1|p' "$run/$node.properties")
    until answers_api_versions "$port"; do
        pid_alive "$node" || { tail -n 30 "$logs/$node.out" >&2; cmd_stop; die "node $node exited"; }
        [ "$(date +%s)" -lt "$deadline" ] || { cmd_stop; die "node $node did not answer in time"; }
        sleep 0.5
    done
}

# stop_node NODE: SIGTERM (a broker shuts down in a controlled way: the controller fences
# it at once), then SIGKILL after 30 s.
stop_node() {
    local node=$1 pid
    pid_alive "$node" || return 0
    pid=$(cat "$run/$node.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 300); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
    # Gone before a restart: its data directory's lock with it.
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
}

# kill_node NODE: SIGKILL, no controlled shutdown: the controller keeps it unfenced (and in
# the ISRs) until its heartbeats have been missing for broker.session.timeout.ms.
kill_node() {
    local node=$1 pid
    pid_alive "$node" || return 0
    pid=$(cat "$run/$node.pid")
    kill -9 "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
}

cmd_stop() {
    local node
    for node in $(seq 9 -1 1); do stop_node "$node"; done
    rm -rf "$run"
}

# Whether $1 names a broker node of the running cluster.
broker_arg() {
    [[ ${1:-} =~ ^[2-9]$ ]] && grep -qx 'process.roles=broker' "$run/$1.properties" 2>/dev/null ||
        die "no broker ${1:-} (brokers are the nodes after the controllers)"
}

controllers=1
if [ "${1:-}" = --controllers ]; then
    [[ ${2:-} =~ ^[1-3]$ ]] || die "--controllers takes 1 to 3"
    controllers=$2
    shift 2
fi
brokers=2
if [ "${1:-}" = --brokers ]; then
    [[ ${2:-} =~ ^[1-8]$ ]] || die "--brokers takes 1 to 8"
    brokers=$2
    shift 2
fi
case ${1:-} in
start) cmd_start ;;
stop) cmd_stop ;;
stop-broker) broker_arg "${2:-}"; stop_node "$2" ;;
kill-broker) broker_arg "${2:-}"; kill_node "$2" ;;
start-broker)
    broker_arg "${2:-}"
    pid_alive "$2" && die "broker $2 runs"
    launch_node "$2"
    wait_for "$2"
    ;;
env) cat "$run/env" ;;
*) die "usage: $0 start|stop|stop-broker N|kill-broker N|start-broker N|env" ;;
esac
