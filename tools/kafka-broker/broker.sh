#!/usr/bin/env bash
# A real single-node Kafka broker (KRaft, combined broker+controller) on 127.0.0.1, for the
# live tests in tests/live_broker.rs. Jars come from Maven Central; nothing else is fetched.
#
# Listeners: PLAINTEXT (the broker) and CONTROLLER, which the live tests use, and two with
# SASL for clients that log in (tools/clients/tap-proof-tls.sh): SASL_SSL and SASL_PLAINTEXT,
# each with PLAIN and SCRAM-SHA-512, users from sasl-users. The TLS material is made with
# `keytool` (a test CA, the broker's PKCS12 keystore, a truststore) plus a second certificate
# for a TLS tap, and kept in $KAFKA_BROKER_HOME/tls across starts (see make_tls).
#
#   tools/kafka-broker/broker.sh fetch    # copy the broker's jars into the cache (idempotent)
#   tools/kafka-broker/broker.sh start    # fetch, write config, format storage, start, wait
#   tools/kafka-broker/broker.sh stop     # stop it and delete its data
#   tools/kafka-broker/broker.sh status   # exit 0 if it runs; prints the addresses
#   tools/kafka-broker/broker.sh env      # KAFKA_BROKER=... / KAFKA_CONTROLLER=... lines
#   tools/kafka-broker/broker.sh tls      # make the TLS material only (start does it if needed)
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
#   KAFKA_SASL_SSL_PORT    SASL_SSL listener port (default: broker port + 100)
#   KAFKA_SASL_PLAINTEXT_PORT  SASL_PLAINTEXT listener port (default: broker port + 101)
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
tls=$home/tls
# The password of every keystore and of the truststore; test-only, like the keys they hold.
store_password=kafka-codec-test-store
users=$here/sasl-users

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

# The SASL listeners sit 100 above the broker port: each pair of the search below has its
# own, and the range of pairs (19092-19131) stays as it was for checkouts without them.
choose_ports() {
    broker_port=${KAFKA_BROKER_PORT:-}
    controller_port=${KAFKA_CONTROLLER_PORT:-}
    sasl_ssl_port=${KAFKA_SASL_SSL_PORT:-}
    sasl_plaintext_port=${KAFKA_SASL_PLAINTEXT_PORT:-}
    if [ -n "$broker_port" ]; then
        controller_port=${controller_port:-$((broker_port + 1))}
        sasl_ssl_port=${sasl_ssl_port:-$((broker_port + 100))}
        sasl_plaintext_port=${sasl_plaintext_port:-$((broker_port + 101))}
        port_busy "$broker_port" && die "port $broker_port (KAFKA_BROKER_PORT) is in use"
        port_busy "$controller_port" && die "port $controller_port (KAFKA_CONTROLLER_PORT) is in use"
        port_busy "$sasl_ssl_port" && die "port $sasl_ssl_port (KAFKA_SASL_SSL_PORT) is in use"
        port_busy "$sasl_plaintext_port" &&
            die "port $sasl_plaintext_port (KAFKA_SASL_PLAINTEXT_PORT) is in use"
        return 0
    fi
    local p
    for p in $(seq 19092 2 19130); do
        if ! port_busy "$p" && ! port_busy "$((p + 1))" &&
            ! port_busy "${sasl_ssl_port:-$((p + 100))}" &&
            ! port_busy "${sasl_plaintext_port:-$((p + 101))}"; then
            broker_port=$p
            controller_port=${controller_port:-$((p + 1))}
            sasl_ssl_port=${sasl_ssl_port:-$((p + 100))}
            sasl_plaintext_port=${sasl_plaintext_port:-$((p + 101))}
            return 0
        fi
    done
    die "no free ports in 19092-19131 (and 100 above); set KAFKA_BROKER_PORT"
}

# Prints the users of sasl-users for MECHANISM, one "USER PASSWORD" line each.
sasl_users() {
    local mechanism user password
    while read -r mechanism user password; do
        case $mechanism in '' | '#'*) continue ;; esac
        [ -n "$password" ] || die "$users: a line without a password"
        if [ "$mechanism" = "$1" ]; then
            printf '%s %s\n' "$user" "$password"
        fi
    done <"$users"
}

# The TLS material, made into $1 (a fresh directory). All keys are EC P-256 (quick to make)
# and all certificates valid for ten years. Each call of keytool starts a JVM, which is most
# of its time: the steps are as few as keytool allows, and the JVM runs C1 only with the
# serial collector, as the broker's does (ten calls: 11 s instead of 16-20 s on a loaded
# 2-core machine).
make_tls_files() {
    local dir=$1 who
    tls_failed() {
        cat "$dir/keytool.log" >&2
        die "making the TLS material failed: $*"
    }
    kt() {
        keytool -J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC "$@" -storepass "$store_password" \
            >>"$dir/keytool.log" 2>&1 || tls_failed "keytool $1"
    }
    # The CA: a self-signed certificate allowed to sign (basic constraints CA).
    kt -genkeypair -alias ca -keyalg EC -groupname secp256r1 -validity 3650 \
        -dname "CN=kafka-codec test CA" -ext bc:c -keystore "$dir/ca.p12" -storetype PKCS12
    kt -exportcert -rfc -alias ca -keystore "$dir/ca.p12" -file "$dir/ca.pem"
    # The broker's key and the tap's, each certified by the CA for 127.0.0.1 and localhost.
    for who in broker tap; do
        kt -genkeypair -alias "$who" -keyalg EC -groupname secp256r1 -validity 3650 \
            -dname "CN=kafka-codec test $who" -keystore "$dir/$who.p12" -storetype PKCS12
        kt -certreq -alias "$who" -keystore "$dir/$who.p12" -file "$dir/$who.csr"
        kt -gencert -alias ca -keystore "$dir/ca.p12" -infile "$dir/$who.csr" \
            -outfile "$dir/$who-cert.pem" -rfc -validity 3650 \
            -ext san=ip:127.0.0.1,dns:localhost -ext eku=serverAuth
    done
    # The broker's keystore holds its key with the chain to the CA: the CA's certificate
    # first (so that keytool can build the chain), then the CA's answer.
    kt -importcert -noprompt -alias ca -keystore "$dir/broker.p12" -file "$dir/ca.pem"
    kt -importcert -noprompt -alias broker -keystore "$dir/broker.p12" -file "$dir/broker-cert.pem"
    # The clients' truststore (Java); the others read ca.pem.
    kt -importcert -noprompt -alias ca -keystore "$dir/truststore.p12" -storetype PKCS12 \
        -file "$dir/ca.pem"
    # keytool does not write private keys: the tap's comes out of its PKCS12 store as PKCS#8
    # PEM with openssl (the key is the one the CA certified; the store's self-signed
    # certificate is left behind). Java stores an EC key without its public half, which
    # rustls's key loader requires: `openssl ec` puts it back.
    openssl pkcs12 -in "$dir/tap.p12" -nocerts -nodes -passin "pass:$store_password" \
        2>>"$dir/keytool.log" | openssl ec 2>>"$dir/keytool.log" |
        openssl pkcs8 -topk8 -nocrypt -out "$dir/tap-key.pem" \
        2>>"$dir/keytool.log" || tls_failed "openssl"
    grep -q 'BEGIN PRIVATE KEY' "$dir/tap-key.pem" || tls_failed "no key in tap-key.pem"
}

# Makes the TLS material into $tls unless it is there already, made by this recipe (the
# stamp is a hash of make_tls_files and the store password): a rerun does not pay for the
# JVM starts again.
make_tls() {
    local want
    want=$({ declare -f make_tls_files; echo "$store_password"; } | sha256sum | cut -d' ' -f1)
    [ -f "$tls/.recipe.sha256" ] && [ "$(cat "$tls/.recipe.sha256")" = "$want" ] && return 0
    command -v keytool >/dev/null || die "keytool (from the JDK) is needed for the SASL_SSL listener"
    command -v openssl >/dev/null || die "openssl is needed to write the tap's key as PEM"
    rm -rf "$tls" "$tls.new"
    mkdir -p "$tls.new"
    make_tls_files "$tls.new"
    printf '%s\n' "$want" >"$tls.new/.recipe.sha256"
    mv "$tls.new" "$tls"
}

write_config() {
    local plain_jaas user password
    # Once in this shell, so that a bad line stops the start (the loops below read it in
    # subshells, where `die` would end only the subshell).
    sasl_users PLAIN >/dev/null
    plain_jaas="org.apache.kafka.common.security.plain.PlainLoginModule required"
    while read -r user password; do
        plain_jaas+=" user_$user=\"$password\""
    done < <(sasl_users PLAIN)
    plain_jaas+=";"
    cat >"$run/server.properties" <<EOF
# Written by tools/kafka-broker/broker.sh: one node that is both broker and controller.
process.roles=broker,controller
node.id=$node_id
listeners=PLAINTEXT://127.0.0.1:$broker_port,CONTROLLER://127.0.0.1:$controller_port,SASL_SSL://127.0.0.1:$sasl_ssl_port,SASL_PLAINTEXT://127.0.0.1:$sasl_plaintext_port
advertised.listeners=PLAINTEXT://127.0.0.1:$broker_port,CONTROLLER://127.0.0.1:$controller_port,SASL_SSL://127.0.0.1:$sasl_ssl_port,SASL_PLAINTEXT://127.0.0.1:$sasl_plaintext_port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL,SASL_PLAINTEXT:SASL_PLAINTEXT
inter.broker.listener.name=PLAINTEXT
# The SASL listeners are for clients only: PLAIN users are listed in the JAAS config below,
# SCRAM users were created when the storage was formatted (--add-scram). No authorizer, so a
# user who logs in may do anything.
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512
listener.name.sasl_ssl.plain.sasl.jaas.config=$plain_jaas
listener.name.sasl_plaintext.plain.sasl.jaas.config=$plain_jaas
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
ssl.keystore.type=PKCS12
ssl.keystore.location=$tls/broker.p12
ssl.keystore.password=$store_password
ssl.key.password=$store_password
ssl.client.auth=none
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
    local t0 t0_ms
    t0=$(date +%s)
    t0_ms=$(date +%s%3N)
    rm -rf "$run"
    mkdir -p "$run" "$logs"
    # The TLS material (several JVM starts when not made yet) beside the format (one).
    make_tls &
    local tls_job=$!
    write_config
    java_args
    local scram=() user password
    while read -r user password; do
        scram+=(--add-scram "SCRAM-SHA-512=[name=$user,password=$password]")
    done < <(sasl_users SCRAM-SHA-512)
    "${jvm[@]}" kafka.tools.StorageTool format --config "$run/server.properties" \
        --cluster-id "$cluster_id" --standalone "${scram[@]}" >"$logs/format.out" 2>&1 || {
        cat "$logs/format.out" >&2
        die "formatting the storage failed"
    }
    wait "$tls_job" || die "no TLS material for the SASL_SSL listener"
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
    # The client listeners start together, so the SASL_SSL one is up too; a TLS handshake
    # that verifies its certificate against the CA catches a keystore the broker took but
    # clients would not.
    if ! openssl s_client -connect "127.0.0.1:$sasl_ssl_port" -CAfile "$tls/ca.pem" \
        -verify_hostname localhost -verify_ip 127.0.0.1 -verify_return_error \
        </dev/null >"$logs/s_client.out" 2>&1; then
        cat "$logs/s_client.out" >&2
        show_logs
        cmd_stop
        die "the SASL_SSL listener on port $sasl_ssl_port did not complete a verified TLS handshake"
    fi
    {
        echo "KAFKA_BROKER=127.0.0.1:$broker_port"
        echo "KAFKA_CONTROLLER=127.0.0.1:$controller_port"
        echo "KAFKA_NODE_ID=$node_id"
        echo "KAFKA_CLUSTER_ID=$cluster_id"
        echo "KAFKA_BROKER_SASL_SSL=127.0.0.1:$sasl_ssl_port"
        echo "KAFKA_BROKER_SASL_PLAINTEXT=127.0.0.1:$sasl_plaintext_port"
        echo "KAFKA_SASL_USERS=$users"
        echo "KAFKA_TLS_CA=$tls/ca.pem"
        echo "KAFKA_TLS_TRUSTSTORE=$tls/truststore.p12"
        echo "KAFKA_TLS_STORE_PASSWORD=$store_password"
        echo "KAFKA_TAP_TLS_CERT=$tls/tap-cert.pem"
        echo "KAFKA_TAP_TLS_KEY=$tls/tap-key.pem"
    } >"$run/env"
    local ms=$(($(date +%s%3N) - t0_ms))
    say "Kafka $(kafka_version) up in $((ms / 1000)).$(printf %03d $((ms % 1000)))s (pid $(cat "$run/pid")), logs in $logs"
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
tls) make_tls && ls "$tls" ;;
*)
    echo "usage: $0 fetch|start|stop|status|env|envfile|tls" >&2
    exit 2
    ;;
esac
