#!/usr/bin/env bash
# A real single-node Kafka broker (KRaft, combined broker+controller) on 127.0.0.1, for the
# live tests in tests/live_broker.rs. Jars come from Maven Central; nothing else is fetched.
#
#   tools/kafka-broker/broker.sh fetch    # copy the broker's jars into the cache (idempotent)
#   tools/kafka-broker/broker.sh start    # fetch, write config, format storage, start, wait
#   tools/kafka-broker/broker.sh stop     # stop it and delete its data
#   tools/kafka-broker/broker.sh status   # exit 0 if it runs; prints the addresses
#   tools/kafka-broker/broker.sh env      # KAFKA_BROKER=... / KAFKA_CONTROLLER=... lines
#
# `start` prints the addresses as shell assignments and also writes them to
# $KAFKA_BROKER_HOME/run/env, so a caller can `. "$(broker.sh envfile)"` or `eval`.
#
# Environment (all optional):
#   KAFKA_BROKER_HOME      state dir (default: <repo>/target/kafka-broker): lib/ (jar cache),
#                          run/ (config, pid, env, data), logs/ (kept after stop)
#   KAFKA_BROKER_PORT      broker listener port (default 19092)
#   KAFKA_CONTROLLER_PORT  controller listener port (default: broker port + 1)
#                          If the default pair is taken (another checkout may run its own
#                          broker), the next free pair above it is used; explicit ports are
#                          used as given or the start fails.
#   KAFKA_START_TIMEOUT    seconds to wait for both listeners to answer (default 90)
#   KAFKA_HEAP             JVM heap (default 512m)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
home=${KAFKA_BROKER_HOME:-$repo/target/kafka-broker}
lib=$home/lib
run=$home/run
logs=$home/logs
# A fixed cluster id (base64url of the 16 bytes "kafka-codec-live") keeps runs reproducible
# and saves a JVM start for `kafka-storage random-uuid`.
cluster_id=a2Fma2EtY29kZWMtbGl2ZQ
node_id=1

say() { printf 'kafka-broker: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

kafka_version() {
    local pinned pom
    pinned=$(tr -d '[:space:]' <"$repo/tools/kafka-version")
    pom=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$here/pom.xml")
    [ "$pinned" = "$pom" ] ||
        die "tools/kafka-version says $pinned but tools/kafka-broker/pom.xml says $pom"
    printf '%s\n' "$pinned"
}

# Copies the broker and its runtime dependencies into $lib, once per pom.xml content.
cmd_fetch() {
    command -v java >/dev/null || die "java (17+) is needed"
    command -v mvn >/dev/null || die "mvn is needed to fetch the broker from Maven Central"
    local version stamp want
    version=$(kafka_version)
    stamp=$lib/.pom.sha256
    want=$(sha256sum "$here/pom.xml" | cut -d' ' -f1)
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$lib/kafka_2.13-$version.jar" ]; then
        return 0
    fi
    say "fetching org.apache.kafka:kafka_2.13:$version and its runtime dependencies"
    rm -rf "$lib"
    mkdir -p "$lib"
    mkdir -p "$logs"
    if ! mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies \
        -DincludeScope=runtime -DoutputDirectory="$lib" >"$logs/mvn.out" 2>&1; then
        cat "$logs/mvn.out" >&2
        die "mvn dependency:copy-dependencies failed"
    fi
    [ -f "$lib/kafka_2.13-$version.jar" ] || die "kafka_2.13-$version.jar missing after fetch"
    printf '%s\n' "$want" >"$stamp"
}

# True if something accepts TCP connections on 127.0.0.1:$1.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# True if 127.0.0.1:$1 answers an ApiVersions v0 request (correlation id 7) with a frame
# that carries the same correlation id: the listener is processing requests, not merely bound.
answers_api_versions() {
    local got
    # shellcheck disable=SC2016 # expanded by the inner shell
    got=$(timeout 3 bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
        # size 10 | api key 18 | version 0 | correlation id 7 | client id null
        printf "\x00\x00\x00\x0a\x00\x12\x00\x00\x00\x00\x00\x07\xff\xff" >&3
        head -c 8 <&3 | od -An -tx1 | tr -d " \n"
    ' _ "$1" 2>/dev/null) || return 1
    [ "${#got}" -eq 16 ] && [ "${got:8:8}" = 00000007 ]
}

# True if the pid file names a live process that is our broker (a stale pid may have been
# reused by something else, which `stop` must not kill).
pid_alive() {
    local pid
    [ -f "$run/pid" ] || return 1
    pid=$(cat "$run/pid")
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
    # Before exec the inner shell holds the pid; after it, java with our config on its line.
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -e "$run/server.properties" -e "$run/pid"
}

choose_ports() {
    broker_port=${KAFKA_BROKER_PORT:-}
    controller_port=${KAFKA_CONTROLLER_PORT:-}
    if [ -n "$broker_port" ]; then
        controller_port=${controller_port:-$((broker_port + 1))}
        port_busy "$broker_port" && die "port $broker_port (KAFKA_BROKER_PORT) is in use"
        port_busy "$controller_port" && die "port $controller_port (KAFKA_CONTROLLER_PORT) is in use"
        return 0
    fi
    local p
    for p in $(seq 19092 2 19130); do
        if ! port_busy "$p" && ! port_busy "$((p + 1))"; then
            broker_port=$p
            controller_port=${controller_port:-$((p + 1))}
            return 0
        fi
    done
    die "no free port pair in 19092-19131; set KAFKA_BROKER_PORT"
}

write_config() {
    cat >"$run/server.properties" <<EOF
# Written by tools/kafka-broker/broker.sh: one node that is both broker and controller.
process.roles=broker,controller
node.id=$node_id
listeners=PLAINTEXT://127.0.0.1:$broker_port,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=PLAINTEXT://127.0.0.1:$broker_port,CONTROLLER://127.0.0.1:$controller_port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
# A dynamic quorum (kraft.version 1), formatted with --standalone: DescribeQuorum v2 then
# reports the voter's endpoints.
controller.quorum.bootstrap.servers=127.0.0.1:$controller_port
log.dirs=$run/data
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
share.coordinator.state.topic.num.partitions=1
group.initial.rebalance.delay.ms=0
# Tests create topics of their own; nothing should appear behind their back.
auto.create.topics.enable=false
EOF
    cat >"$run/log4j2.properties" <<EOF
# Everything at INFO into one file, kept after stop for diagnosis; nothing on the console.
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = $logs/server.log
appender.file.append = false
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
EOF
}

# The JVM command line, up to the main class.
java_args() {
    # C1 only: the broker starts noticeably faster on a small shared machine, and the tests
    # send a few hundred requests, not a workload.
    jvm=(java -Xmx"${KAFKA_HEAP:-512m}" -Xms128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1
        -Djava.awt.headless=true
        -Dlog4j2.configurationFile="$run/log4j2.properties"
        -Dkafka.logs.dir="$logs"
        -cp "$lib/*")
}

show_logs() {
    say "last lines of $logs/server.log:"
    tail -n 40 "$logs/server.log" >&2 2>/dev/null || true
    say "last lines of $logs/kafka.out:"
    tail -n 20 "$logs/kafka.out" >&2 2>/dev/null || true
}

cmd_start() {
    if pid_alive; then
        die "already running (pid $(cat "$run/pid")); run '$0 stop' first"
    fi
    choose_ports
    cmd_fetch
    local t0
    t0=$(date +%s)
    rm -rf "$run"
    mkdir -p "$run" "$logs"
    write_config
    java_args
    "${jvm[@]}" kafka.tools.StorageTool format --config "$run/server.properties" \
        --cluster-id "$cluster_id" --standalone >"$logs/format.out" 2>&1 || {
        cat "$logs/format.out" >&2
        die "formatting the storage failed"
    }
    # setsid: the broker gets its own session, so a Ctrl-C or the end of the calling job does
    # not hit it; `stop` ends it by pid. The inner shell writes its own pid (which exec hands
    # to java), since setsid may fork.
    # shellcheck disable=SC2016 # expanded by the inner shell
    setsid bash -c 'echo $$ >"$1"; shift; exec "$@" >"$0/kafka.out" 2>&1 </dev/null' \
        "$logs" "$run/pid" "${jvm[@]}" kafka.Kafka "$run/server.properties" &
    local _
    for _ in $(seq 1 50); do
        [ -s "$run/pid" ] && break
        sleep 0.1
    done
    local deadline=$((t0 + ${KAFKA_START_TIMEOUT:-90}))
    local broker_ok=0 controller_ok=0
    while :; do
        if ! pid_alive; then
            show_logs
            die "the broker exited during startup"
        fi
        [ $controller_ok = 1 ] || { answers_api_versions "$controller_port" && controller_ok=1; }
        [ $broker_ok = 1 ] || { answers_api_versions "$broker_port" && broker_ok=1; }
        [ $broker_ok = 1 ] && [ $controller_ok = 1 ] && break
        if [ "$(date +%s)" -ge "$deadline" ]; then
            show_logs
            cmd_stop
            die "no answer within ${KAFKA_START_TIMEOUT:-90}s (broker=$broker_ok controller=$controller_ok)"
        fi
        sleep 0.5
    done
    {
        echo "KAFKA_BROKER=127.0.0.1:$broker_port"
        echo "KAFKA_CONTROLLER=127.0.0.1:$controller_port"
        echo "KAFKA_NODE_ID=$node_id"
        echo "KAFKA_CLUSTER_ID=$cluster_id"
    } >"$run/env"
    say "Kafka $(kafka_version) up in $(($(date +%s) - t0))s (pid $(cat "$run/pid")), logs in $logs"
    cat "$run/env"
}

cmd_stop() {
    if pid_alive; then
        local pid _
        pid=$(cat "$run/pid")
        kill -TERM "$pid" 2>/dev/null || true
        # A combined node shuts down in a few seconds; do not wait forever.
        for _ in $(seq 1 60); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.5
        done
        if kill -0 "$pid" 2>/dev/null; then
            say "pid $pid still running after 30s; killing it"
            kill -KILL "$pid" 2>/dev/null || true
            sleep 0.5
        fi
        say "stopped (pid $pid)"
    fi
    rm -rf "$run"
}

cmd_status() {
    if pid_alive; then
        say "running (pid $(cat "$run/pid"))"
        cat "$run/env" 2>/dev/null || true
        return 0
    fi
    say "not running"
    return 1
}

case "${1:-}" in
fetch) cmd_fetch ;;
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
env) cat "$run/env" ;;
envfile) printf '%s\n' "$run/env" ;;
*)
    echo "usage: $0 fetch|start|stop|status|env|envfile" >&2
    exit 2
    ;;
esac
