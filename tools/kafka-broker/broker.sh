#!/usr/bin/env bash
# A real single-node Kafka broker (KRaft, combined broker+controller) on 127.0.0.1, for the
# live tests in tests/live/live_broker.rs. Jars come from Maven Central; nothing else is fetched.
#
# Listeners: PLAINTEXT (the broker) and CONTROLLER, which the live tests use, and two with
# SASL for clients that log in (tools/clients/tap-proof-tls.sh): SASL_SSL and SASL_PLAINTEXT,
# each with PLAIN and SCRAM-SHA-512, users from sasl-users. Two more with TLS only, for the
# certificates people use (tools/clients/tap-proof-mtls.sh): MTLS (SSL, ssl.client.auth
# required: clients present a certificate signed by the test CA) and SELFSIGNED (SSL, the
# broker's certificate self-signed with CA:TRUE, as `openssl req -x509` makes one). The TLS
# material is made with `keytool` (a test CA, the broker's PKCS12 keystore, a truststore, a
# client's keystore, the self-signed keystore) plus a certificate for a TLS tap (server and
# client), and kept in $KAFKA_BROKER_HOME/tls across starts (see make_tls).
#
#   tools/kafka-broker/broker.sh fetch    # copy the broker's jars into the cache (idempotent)
#   tools/kafka-broker/broker.sh start    # fetch, write config, format storage, start, wait
#   tools/kafka-broker/broker.sh stop     # stop it and delete its data
#   tools/kafka-broker/broker.sh status   # exit 0 if it runs; prints the addresses
#   tools/kafka-broker/broker.sh env      # KAFKA_BROKER=... / KAFKA_CONTROLLER=... lines
#   tools/kafka-broker/broker.sh tls      # make the TLS material only (start does it if needed)
#
# Two other setups, for the proof with old protocol versions (tools/ci-live-old.sh), each with
# its own state dir and ports, so either can run beside the pinned broker:
#
#   tools/kafka-broker/broker.sh --kafka 3.9 COMMAND
#       Kafka 3.9.1 (3.9/pom.xml), the last release that speaks Produce v0-v2, Fetch v0-v3 and
#       the other versions Kafka 4.0 dropped: one KRaft node as above, with only the PLAINTEXT
#       and CONTROLLER listeners (no SASL, no TLS). State in target/kafka-broker-3.9.
#   tools/kafka-broker/broker.sh --kafka 3.9 --zookeeper COMMAND
#       The same release in ZooKeeper mode: a single-node ZooKeeper (ZooKeeperServerMain from
#       the ZooKeeper jar Kafka 3.9.1 depends on) and one broker, which is also the
#       controller. With KAFKA_INTER_BROKER_PROXY=1 its inter-broker listener (INTERNAL,
#       KAFKA_INTER_BROKER in the env file) is advertised at another port
#       (KAFKA_INTER_BROKER_ADVERTISED), where the caller starts a proxy that forwards to it:
#       the controller reaches even itself through that address, so the proxy sees the
#       controller's LeaderAndIsr, UpdateMetadata and StopReplica and the broker's
#       ControlledShutdown. Until the proxy runs, the controller retries. State in
#       target/kafka-broker-3.9-zk; jars shared with the KRaft setup.
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
#   KAFKA_MTLS_PORT        MTLS listener port (default: broker port + 102)
#   KAFKA_SELF_SIGNED_PORT SELFSIGNED listener port (default: broker port + 103)
#   KAFKA_START_TIMEOUT    seconds to wait for both listeners to answer (default 90)
#   KAFKA_TELEMETRY        1 (pinned release only): compile telemetry/TelemetryLog.java, a
#                          metrics reporter that receives client telemetry, onto the broker's
#                          classpath, each push a line in logs/telemetry.log. The broker still
#                          starts without it configured (ApiVersions as a default node's);
#                          setting the dynamic broker config `metric.reporters` to
#                          kafkacodec.TelemetryLog turns it on (GetTelemetrySubscriptions and
#                          PushTelemetry advertised from then until the broker stops).
#   KAFKA_HEAP             JVM heap (default 512m)
#   KAFKA_INTER_BROKER_PROTOCOL_VERSION  --zookeeper only: the broker's
#                          inter.broker.protocol.version (default: Kafka's, the newest); an
#                          older one (e.g. 0.10.0) makes the controller send older versions
#   KAFKA_INTER_BROKER_PROXY  --zookeeper only: 1 to advertise INTERNAL where a proxy is
#                          to listen (see above). --zookeeper picks its ports in blocks of four
#                          from 19492: ZooKeeper (KAFKA_ZOOKEEPER), PLAINTEXT (KAFKA_BROKER),
#                          INTERNAL (KAFKA_INTER_BROKER) and the proxy's
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/kafka-broker/common.sh
. "$here/common.sh"
repo=$(cd "$here/../.." && pwd)

# The setup: the pinned release in KRaft mode (current), or 3.9 in KRaft or ZooKeeper mode.
release=current
zookeeper=0
while :; do
    case ${1:-} in
    --kafka)
        [ "${2:-}" = 3.9 ] || { echo "broker.sh: --kafka takes 3.9 (the pinned release needs no flag)" >&2; exit 2; }
        release=3.9
        shift 2
        ;;
    --zookeeper) zookeeper=1; shift ;;
    *) break ;;
    esac
done
if [ $zookeeper = 1 ] && [ $release != 3.9 ]; then
    echo "broker.sh: --zookeeper needs --kafka 3.9 (Kafka 4 has no ZooKeeper mode)" >&2
    exit 2
fi
if [ $release = 3.9 ]; then
    pom=$here/3.9/pom.xml
    suffix=-3.9
    [ $zookeeper = 1 ] && suffix=-3.9-zk
    home=${KAFKA_BROKER_HOME:-$repo/target/kafka-broker$suffix}
    # Both 3.9 setups run the same jars: one copy.
    lib=$repo/target/kafka-broker-3.9/lib
else
    pom=$here/pom.xml
    home=${KAFKA_BROKER_HOME:-$repo/target/kafka-broker}
    lib=$home/lib
fi
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
    local pinned in_pom
    in_pom=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")
    if [ $release = 3.9 ]; then
        printf '%s\n' "$in_pom"
        return
    fi
    pinned=$(tr -d '[:space:]' <"$repo/tools/kafka-version")
    [ "$pinned" = "$in_pom" ] ||
        die "tools/kafka-version says $pinned but tools/kafka-broker/pom.xml says $in_pom"
    printf '%s\n' "$pinned"
}

# Copies the broker and its runtime dependencies into $lib, once per pom.xml content.
cmd_fetch() {
    command -v java >/dev/null || die "java (17+) is needed"
    command -v mvn >/dev/null || die "mvn is needed to fetch the broker from Maven Central"
    local version stamp want
    version=$(kafka_version)
    stamp=$lib/.pom.sha256
    want=$(sha256sum "$pom" | cut -d' ' -f1)
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$lib/kafka_2.13-$version.jar" ]; then
        return 0
    fi
    say "fetching org.apache.kafka:kafka_2.13:$version and its runtime dependencies"
    rm -rf "$lib"
    mkdir -p "$lib"
    mkdir -p "$logs"
    if ! mvn -q -B -f "$pom" dependency:copy-dependencies \
        -DincludeScope=runtime -DoutputDirectory="$lib" >"$logs/mvn.out" 2>&1; then
        cat "$logs/mvn.out" >&2
        die "mvn dependency:copy-dependencies failed"
    fi
    [ -f "$lib/kafka_2.13-$version.jar" ] || die "kafka_2.13-$version.jar missing after fetch"
    printf '%s\n' "$want" >"$stamp"
}

# True if the pid file names a live process that is our broker (a stale pid may have been
# reused by something else, which `stop` must not kill).
# pid_alive [PIDFILE MARKER]: the same for another process of ours (ZooKeeper), whose
# command line holds MARKER.
pid_alive() {
    local pidfile=${1:-$run/pid} marker=${2:-$run/server.properties} pid
    [ -f "$pidfile" ] || return 1
    pid=$(cat "$pidfile")
    # Before exec the inner shell holds the pid; after it, java with our config on its line.
    is_our_process "$pid" "$marker" "$pidfile"
}

# The SASL and TLS-only listeners sit 100-103 above the broker port: each pair of the search
# below has its own, and the range of pairs (19092-19131) stays as it was for checkouts
# without them.
choose_ports() {
    if [ $zookeeper = 1 ]; then
        choose_ports_zookeeper
        return
    elif [ $release = 3.9 ]; then
        choose_ports_kraft_39
        return
    fi
    broker_port=${KAFKA_BROKER_PORT:-}
    controller_port=${KAFKA_CONTROLLER_PORT:-}
    sasl_ssl_port=${KAFKA_SASL_SSL_PORT:-}
    sasl_plaintext_port=${KAFKA_SASL_PLAINTEXT_PORT:-}
    mtls_port=${KAFKA_MTLS_PORT:-}
    self_signed_port=${KAFKA_SELF_SIGNED_PORT:-}
    if [ -n "$broker_port" ]; then
        controller_port=${controller_port:-$((broker_port + 1))}
        sasl_ssl_port=${sasl_ssl_port:-$((broker_port + 100))}
        sasl_plaintext_port=${sasl_plaintext_port:-$((broker_port + 101))}
        mtls_port=${mtls_port:-$((broker_port + 102))}
        self_signed_port=${self_signed_port:-$((broker_port + 103))}
        port_busy "$broker_port" && die "port $broker_port (KAFKA_BROKER_PORT) is in use"
        port_busy "$controller_port" && die "port $controller_port (KAFKA_CONTROLLER_PORT) is in use"
        port_busy "$sasl_ssl_port" && die "port $sasl_ssl_port (KAFKA_SASL_SSL_PORT) is in use"
        port_busy "$sasl_plaintext_port" &&
            die "port $sasl_plaintext_port (KAFKA_SASL_PLAINTEXT_PORT) is in use"
        port_busy "$mtls_port" && die "port $mtls_port (KAFKA_MTLS_PORT) is in use"
        port_busy "$self_signed_port" && die "port $self_signed_port (KAFKA_SELF_SIGNED_PORT) is in use"
        return 0
    fi
    # The pairs step by 4, so that neighbouring pairs' four listeners above do not overlap.
    local p
    for p in $(seq 19092 4 19128); do
        if ! port_busy "$p" && ! port_busy "$((p + 1))" &&
            ! port_busy "${sasl_ssl_port:-$((p + 100))}" &&
            ! port_busy "${sasl_plaintext_port:-$((p + 101))}" &&
            ! port_busy "${mtls_port:-$((p + 102))}" &&
            ! port_busy "${self_signed_port:-$((p + 103))}"; then
            broker_port=$p
            controller_port=${controller_port:-$((p + 1))}
            sasl_ssl_port=${sasl_ssl_port:-$((p + 100))}
            sasl_plaintext_port=${sasl_plaintext_port:-$((p + 101))}
            mtls_port=${mtls_port:-$((p + 102))}
            self_signed_port=${self_signed_port:-$((p + 103))}
            return 0
        fi
    done
    die "no free ports in 19092-19131 (and 100 above); set KAFKA_BROKER_PORT"
}

# free_block FIRST COUNT: the first of the blocks of COUNT consecutive ports, from FIRST on
# (ten blocks), in which no port is in use.
free_block() {
    local p i
    for p in $(seq "$1" "$2" $(($1 + 9 * $2))); do
        for i in $(seq 0 $(($2 - 1))); do
            port_busy $((p + i)) && continue 2
        done
        printf '%s\n' "$p"
        return 0
    done
    return 1
}

# 3.9 in KRaft mode: a pair (broker, controller) from 19392, without SASL listeners.
choose_ports_kraft_39() {
    broker_port=${KAFKA_BROKER_PORT:-}
    if [ -n "$broker_port" ]; then
        controller_port=${KAFKA_CONTROLLER_PORT:-$((broker_port + 1))}
        port_busy "$broker_port" && die "port $broker_port (KAFKA_BROKER_PORT) is in use"
        port_busy "$controller_port" && die "port $controller_port (KAFKA_CONTROLLER_PORT) is in use"
        return 0
    fi
    broker_port=$(free_block 19392 2) || die "no free pair of ports in 19392-19411; set KAFKA_BROKER_PORT"
    controller_port=$((broker_port + 1))
}

# ZooKeeper mode: blocks of four ports from 19492: ZooKeeper, the broker's PLAINTEXT and
# INTERNAL listeners, and the one a proxy of the inter-broker traffic may listen on.
choose_ports_zookeeper() {
    local p
    p=$(free_block 19492 4) || die "no four free ports in 19492-19531"
    zookeeper_port=$p
    broker_port=$((p + 1))
    internal_port=$((p + 2))
    proxy_port=$((p + 3))
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
    # The broker's key, the tap's and a client's, each certified by the CA for 127.0.0.1 and
    # localhost: the broker's as a server, the client's as a client (the MTLS listener), the
    # tap's as both (a server to clients, a client to the MTLS listener).
    local usage
    for who in broker tap client; do
        case $who in
            broker) usage=serverAuth ;;
            tap) usage=serverAuth,clientAuth ;;
            client) usage=clientAuth ;;
        esac
        kt -genkeypair -alias "$who" -keyalg EC -groupname secp256r1 -validity 3650 \
            -dname "CN=kafka-codec test $who" -keystore "$dir/$who.p12" -storetype PKCS12
        kt -certreq -alias "$who" -keystore "$dir/$who.p12" -file "$dir/$who.csr"
        kt -gencert -alias ca -keystore "$dir/ca.p12" -infile "$dir/$who.csr" \
            -outfile "$dir/$who-cert.pem" -rfc -validity 3650 \
            -ext san=ip:127.0.0.1,dns:localhost -ext eku=$usage
    done
    # The broker's keystore holds its key with the chain to the CA: the CA's certificate
    # first (so that keytool can build the chain), then the CA's answer.
    kt -importcert -noprompt -alias ca -keystore "$dir/broker.p12" -file "$dir/ca.pem"
    kt -importcert -noprompt -alias broker -keystore "$dir/broker.p12" -file "$dir/broker-cert.pem"
    # The client's keystore, the same way (Java and librdkafka read PKCS12).
    kt -importcert -noprompt -alias ca -keystore "$dir/client.p12" -file "$dir/ca.pem"
    kt -importcert -noprompt -alias client -keystore "$dir/client.p12" -file "$dir/client-cert.pem"
    # The SELFSIGNED listener's keystore: a self-signed certificate with basic constraints
    # CA:TRUE and the names, as `openssl req -x509` makes one; its PEM is what a client trusts.
    kt -genkeypair -alias selfsigned -keyalg EC -groupname secp256r1 -validity 3650 \
        -dname "CN=kafka-codec self-signed broker" -ext bc:c \
        -ext san=ip:127.0.0.1,dns:localhost -keystore "$dir/selfsigned.p12" -storetype PKCS12
    kt -exportcert -rfc -alias selfsigned -keystore "$dir/selfsigned.p12" \
        -file "$dir/selfsigned.pem"
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

# The settings of every setup: one node, so every internal topic has one replica.
common_config() {
    cat <<EOF
log.dirs=$run/data
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
# Tests create topics of their own; nothing should appear behind their back.
auto.create.topics.enable=false
EOF
}

write_config() {
    if [ $release = 3.9 ]; then
        write_config_39
        return
    fi
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
listeners=PLAINTEXT://127.0.0.1:$broker_port,CONTROLLER://127.0.0.1:$controller_port,SASL_SSL://127.0.0.1:$sasl_ssl_port,SASL_PLAINTEXT://127.0.0.1:$sasl_plaintext_port,MTLS://127.0.0.1:$mtls_port,SELFSIGNED://127.0.0.1:$self_signed_port
advertised.listeners=PLAINTEXT://127.0.0.1:$broker_port,CONTROLLER://127.0.0.1:$controller_port,SASL_SSL://127.0.0.1:$sasl_ssl_port,SASL_PLAINTEXT://127.0.0.1:$sasl_plaintext_port,MTLS://127.0.0.1:$mtls_port,SELFSIGNED://127.0.0.1:$self_signed_port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,MTLS:SSL,SELFSIGNED:SSL
inter.broker.listener.name=PLAINTEXT
# The SASL listeners are for clients only: PLAIN users are listed in the JAAS config below,
# SCRAM users were created when the storage was formatted (--add-scram).
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512
# ACLs, for the cluster's authorization proof (tools/clients/cluster_authz_compare.py, which
# removes the ones it creates): a resource no ACL names is open to everyone, so whoever meets
# no ACL may do anything, as without an authorizer; the principal of the PLAINTEXT and
# CONTROLLER listeners (the broker itself, and the live steps' admin) is a super user.
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=true
super.users=User:ANONYMOUS
# Delegation tokens, for the cluster's token proof (cluster/tests/java_tokens.rs). Test-only.
delegation.token.secret.key=kafka-codec-delegation-token-key
listener.name.sasl_ssl.plain.sasl.jaas.config=$plain_jaas
listener.name.sasl_plaintext.plain.sasl.jaas.config=$plain_jaas
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
ssl.keystore.type=PKCS12
ssl.keystore.location=$tls/broker.p12
ssl.keystore.password=$store_password
ssl.key.password=$store_password
ssl.client.auth=none
# MTLS requires a client certificate signed by the test CA.
listener.name.mtls.ssl.client.auth=required
listener.name.mtls.ssl.truststore.type=PKCS12
listener.name.mtls.ssl.truststore.location=$tls/truststore.p12
listener.name.mtls.ssl.truststore.password=$store_password
# SELFSIGNED serves the self-signed CA:TRUE certificate.
listener.name.selfsigned.ssl.keystore.type=PKCS12
listener.name.selfsigned.ssl.keystore.location=$tls/selfsigned.p12
listener.name.selfsigned.ssl.keystore.password=$store_password
listener.name.selfsigned.ssl.key.password=$store_password
controller.listener.names=CONTROLLER
# A dynamic quorum (kraft.version 1), formatted with --standalone: DescribeQuorum v2 then
# reports the voter's endpoints.
controller.quorum.bootstrap.servers=127.0.0.1:$controller_port
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
share.coordinator.state.topic.num.partitions=1
EOF
    common_config >>"$run/server.properties"
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

# 3.9: only PLAINTEXT for clients (the old versions are the point, not the logins), in KRaft
# mode as above or in ZooKeeper mode with the inter-broker listener apart.
write_config_39() {
    if [ $zookeeper = 1 ]; then
        cat >"$run/server.properties" <<EOF
# Written by tools/kafka-broker/broker.sh --kafka 3.9 --zookeeper: one broker, which is also
# the controller; the controller reaches it, and it the controller, through INTERNAL as
# advertised, where a proxy may listen.
broker.id=$node_id
zookeeper.connect=127.0.0.1:$zookeeper_port
listeners=PLAINTEXT://127.0.0.1:$broker_port,INTERNAL://127.0.0.1:$internal_port
advertised.listeners=PLAINTEXT://127.0.0.1:$broker_port,INTERNAL://$inter_broker_advertised
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT
inter.broker.listener.name=INTERNAL
EOF
        if [ -n "${KAFKA_INTER_BROKER_PROTOCOL_VERSION:-}" ]; then
            # Below 3.0 the message format must not be newer than the protocol, and its
            # default is 3.0: the same version for both.
            printf '%s\n' "inter.broker.protocol.version=$KAFKA_INTER_BROKER_PROTOCOL_VERSION" \
                "log.message.format.version=$KAFKA_INTER_BROKER_PROTOCOL_VERSION" \
                >>"$run/server.properties"
        fi
    else
        cat >"$run/server.properties" <<EOF
# Written by tools/kafka-broker/broker.sh --kafka 3.9: one node that is both broker and
# controller.
process.roles=broker,controller
node.id=$node_id
listeners=PLAINTEXT://127.0.0.1:$broker_port,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=PLAINTEXT://127.0.0.1:$broker_port,CONTROLLER://127.0.0.1:$controller_port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
controller.quorum.bootstrap.servers=127.0.0.1:$controller_port
EOF
    fi
    common_config >>"$run/server.properties"
    # Kafka 3.9 logs through reload4j (log4j 1): the broker into server.log, ZooKeeper into
    # zookeeper.log, each kept after stop.
    local who
    for who in server zookeeper; do
        cat >"$run/log4j-$who.properties" <<EOF
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=$logs/$who.log
log4j.appender.file.Append=false
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
EOF
    done
}

# The JVM command line, up to the main class; $1 (3.9 only) names whose log config: server
# (the default) or zookeeper.
java_args() {
    local log_config=(-Dlog4j2.configurationFile="$run/log4j2.properties")
    if [ $release = 3.9 ]; then
        log_config=(-Dlog4j.configuration="file:$run/log4j-${1:-server}.properties")
    fi
    # C1 only: the broker starts noticeably faster on a small shared machine, and the tests
    # send a few hundred requests, not a workload.
    jvm=(java -Xmx"${KAFKA_HEAP:-512m}" -Xms128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1
        -Djava.awt.headless=true
        "${log_config[@]}"
        -Dkafka.logs.dir="$logs"
        -cp "$lib/*${telemetry_classes:+:$telemetry_classes}")
}

# KAFKA_TELEMETRY=1: the telemetry receiver, compiled against the broker's jars (1-4 s of
# javac, beside the storage format) into $home/telemetry, which is then telemetry_classes.
telemetry_classes=
compile_telemetry() {
    rm -rf "$home/telemetry"
    mkdir -p "$home/telemetry"
    javac -nowarn -d "$home/telemetry" -cp "$lib/*" "$here/telemetry/TelemetryLog.java"
}

show_logs() {
    local file
    for file in server.log kafka.out zookeeper.log zookeeper.out; do
        [ -f "$logs/$file" ] || continue
        say "last lines of $logs/$file:"
        tail -n 30 "$logs/$file" >&2 2>/dev/null || true
    done
}

# ZooKeeper for --zookeeper: standalone, its data under $run, its admin server (an HTTP
# port) off. Waits until it answers `srvr`, the one four-letter command it allows by default.
start_zookeeper() {
    java_args zookeeper
    mkdir -p "$run/zookeeper"
    launch "$run/zk.pid" "$logs/zookeeper.out" "${jvm[@]}" -Dzookeeper.admin.enableServer=false \
        org.apache.zookeeper.server.ZooKeeperServerMain "$zookeeper_port" "$run/zookeeper"
    local deadline=$(($(date +%s) + 30)) got
    while :; do
        if ! pid_alive "$run/zk.pid" "$run/zookeeper"; then
            show_logs
            die "ZooKeeper exited during startup"
        fi
        # shellcheck disable=SC2016 # expanded by the inner shell
        got=$(timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
            printf srvr >&3; head -c 17 <&3' _ "$zookeeper_port" 2>/dev/null) || true
        [ "$got" = "Zookeeper version" ] && return 0
        if [ "$(date +%s)" -ge "$deadline" ]; then
            show_logs
            cmd_stop
            die "ZooKeeper did not answer on port $zookeeper_port within 30s"
        fi
        sleep 0.3
    done
}

cmd_start() {
    if pid_alive; then
        die "already running (pid $(cat "$run/pid")); run '$0 stop' first"
    fi
    if pid_alive "$run/zk.pid" "$run/zookeeper"; then
        die "ZooKeeper still running (pid $(cat "$run/zk.pid")); run '$0 --kafka 3.9 --zookeeper stop' first"
    fi
    choose_ports
    inter_broker_advertised=127.0.0.1:${internal_port:-}
    [ "${KAFKA_INTER_BROKER_PROXY:-0}" = 1 ] && inter_broker_advertised=127.0.0.1:${proxy_port:-}
    cmd_fetch
    local t0 t0_ms
    t0=$(date +%s)
    t0_ms=$(date +%s%3N)
    rm -rf "$run"
    mkdir -p "$run" "$logs"
    local tls_job=
    if [ $release = current ]; then
        # The TLS material (several JVM starts when not made yet) beside the format (one).
        make_tls &
        tls_job=$!
    fi
    write_config
    local telemetry_job=
    if [ "${KAFKA_TELEMETRY:-0}" = 1 ]; then
        [ $release = current ] || die "KAFKA_TELEMETRY=1 needs the pinned release"
        command -v javac >/dev/null || die "javac is needed for KAFKA_TELEMETRY=1"
        compile_telemetry &
        telemetry_job=$!
        telemetry_classes=$home/telemetry
        echo "kafka.codec.telemetry.log=$logs/telemetry.log" >>"$run/server.properties"
    fi
    if [ $zookeeper = 1 ]; then
        start_zookeeper
    else
        java_args
        local scram=() user password
        if [ $release = current ]; then
            while read -r user password; do
                scram+=(--add-scram "SCRAM-SHA-512=[name=$user,password=$password]")
            done < <(sasl_users SCRAM-SHA-512)
        fi
        "${jvm[@]}" kafka.tools.StorageTool format --config "$run/server.properties" \
            --cluster-id "$cluster_id" --standalone ${scram[@]+"${scram[@]}"} \
            >"$logs/format.out" 2>&1 || {
            cat "$logs/format.out" >&2
            die "formatting the storage failed"
        }
    fi
    if [ -n "$tls_job" ]; then
        wait "$tls_job" || die "no TLS material for the SASL_SSL listener"
    fi
    if [ -n "$telemetry_job" ]; then
        wait "$telemetry_job" || die "compiling telemetry/TelemetryLog.java failed"
    fi
    java_args server
    launch "$run/pid" "$logs/kafka.out" "${jvm[@]}" kafka.Kafka "$run/server.properties"
    local deadline=$((t0 + ${KAFKA_START_TIMEOUT:-90}))
    local broker_ok=0 controller_ok=0
    # ZooKeeper mode has no controller listener: the broker's answer is enough.
    [ $zookeeper = 1 ] && controller_ok=1
    while :; do
        if ! pid_alive; then
            show_logs
            cmd_stop
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
    if [ $release = current ]; then
        # The client listeners start together, so the SASL_SSL one is up too; a TLS
        # handshake that verifies its certificate against the CA catches a keystore the
        # broker took but clients would not.
        if ! openssl s_client -connect "127.0.0.1:$sasl_ssl_port" -CAfile "$tls/ca.pem" \
            -verify_hostname localhost -verify_ip 127.0.0.1 -verify_return_error \
            </dev/null >"$logs/s_client.out" 2>&1; then
            cat "$logs/s_client.out" >&2
            show_logs
            cmd_stop
            die "the SASL_SSL listener on port $sasl_ssl_port did not complete a verified TLS handshake"
        fi
    fi
    write_env >"$run/env"
    local ms=$(($(date +%s%3N) - t0_ms)) mode=
    [ $zookeeper = 1 ] && mode=" (ZooKeeper mode)"
    say "Kafka $(kafka_version)$mode up in $((ms / 1000)).$(printf %03d $((ms % 1000)))s (pid $(cat "$run/pid")), logs in $logs"
    cat "$run/env"
}

write_env() {
    echo "KAFKA_BROKER=127.0.0.1:$broker_port"
    echo "KAFKA_NODE_ID=$node_id"
    if [ $zookeeper = 1 ]; then
        echo "KAFKA_ZOOKEEPER=127.0.0.1:$zookeeper_port"
        echo "KAFKA_INTER_BROKER=127.0.0.1:$internal_port"
        echo "KAFKA_INTER_BROKER_ADVERTISED=$inter_broker_advertised"
        return
    fi
    echo "KAFKA_CONTROLLER=127.0.0.1:$controller_port"
    echo "KAFKA_CLUSTER_ID=$cluster_id"
    [ $release = current ] || return 0
    echo "KAFKA_BROKER_SASL_SSL=127.0.0.1:$sasl_ssl_port"
    echo "KAFKA_BROKER_SASL_PLAINTEXT=127.0.0.1:$sasl_plaintext_port"
    echo "KAFKA_BROKER_MTLS=127.0.0.1:$mtls_port"
    echo "KAFKA_BROKER_SELF_SIGNED=127.0.0.1:$self_signed_port"
    echo "KAFKA_SASL_USERS=$users"
    echo "KAFKA_TLS_CA=$tls/ca.pem"
    echo "KAFKA_TLS_TRUSTSTORE=$tls/truststore.p12"
    echo "KAFKA_TLS_STORE_PASSWORD=$store_password"
    echo "KAFKA_TAP_TLS_CERT=$tls/tap-cert.pem"
    echo "KAFKA_TAP_TLS_KEY=$tls/tap-key.pem"
    echo "KAFKA_TLS_CLIENT_KEYSTORE=$tls/client.p12"
    echo "KAFKA_TLS_SELF_SIGNED_CERT=$tls/selfsigned.pem"
}

# stop_pid PIDFILE MARKER WHAT SECONDS: TERM, then KILL after SECONDS.
stop_pid() {
    local pidfile=$1 marker=$2 what=$3 seconds=$4 pid _
    pid_alive "$pidfile" "$marker" || return 0
    pid=$(cat "$pidfile")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 $((seconds * 2))); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.5
    done
    if kill -0 "$pid" 2>/dev/null; then
        say "$what (pid $pid) still running after ${seconds}s; killing it"
        kill -KILL "$pid" 2>/dev/null || true
        sleep 0.5
    fi
    say "stopped $what (pid $pid)"
}

cmd_stop() {
    # A combined node shuts down in a few seconds. A ZooKeeper-mode broker first asks the
    # controller to move its leaders away (ControlledShutdown), which needs ZooKeeper and
    # whatever proxies the inter-broker listener: the broker goes first, then ZooKeeper.
    stop_pid "$run/pid" "$run/server.properties" "the broker" 30
    stop_pid "$run/zk.pid" "$run/zookeeper" ZooKeeper 15
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
    echo "usage: $0 [--kafka 3.9 [--zookeeper]] fetch|start|stop|status|env|envfile|tls" >&2
    exit 2
    ;;
esac
