# Shared by tap-proof.sh and tap-proof-tls.sh (sourced, not run): build what the clients need,
# start a tap, run one client's workload through it, wait for the tap to log every close,
# stop it. The caller sets `here` (this directory), `repo` and `out` (the logs' directory),
# and calls tap_build first.

tap_pid=
tap_address=

# Builds the CLI, the venv and, if `java` is among the arguments, the Java client. Sets
# `tap` and `py`.
tap_build() {
    cargo build -q --bin kafka-codec # no -p: the features of the other CLI builds (tools/ci-live.sh)
    tap=$repo/target/debug/kafka-codec
    py=$(bash "$here/venv.sh")
    if printf '%s\n' "$@" | grep -qx java; then
        # Maven's console library writes colour resets even with -B: its output goes to a
        # file, shown only if the build fails.
        mvn -q -B -f "$here/java/pom.xml" package dependency:build-classpath >"$out/mvn.log" 2>&1 ||
            { cat "$out/mvn.log" >&2; return 1; }
    fi
}

# tap_start ERR TAP_ARGS...: starts `kafka-codec tap TAP_ARGS...` with its stderr in ERR and
# waits for the line naming its address (sets tap_pid and tap_address). If the tap exits
# first, prints its stderr and returns 1.
tap_start() {
    local err=$1 _
    shift
    # The tap's stderr is opened by the background child, which may not have run yet when
    # the loop below first reads it: create it first (a missing file would end the script).
    : >"$err"
    "$tap" tap "$@" 2>"$err" &
    tap_pid=$!
    tap_address=
    for _ in $(seq 100); do
        tap_address=$(sed -n 's/^kafka-codec tap: listening on \([^,]*\),.*/\1/p' "$err")
        [ -n "$tap_address" ] && return 0
        if ! kill -0 "$tap_pid" 2>/dev/null; then
            wait "$tap_pid" 2>/dev/null || true
            tap_pid=
            cat "$err" >&2
            return 1
        fi
        sleep 0.1
    done
    echo "the tap did not say where it listens within 10 s" >&2
    return 1
}

# Waits until the tap has logged the end of every connection it logged (both directions of
# each): the client has exited, so its sockets are closed.
tap_wait_closed() {
    local log=$1 opened closed _
    for _ in $(seq 100); do
        opened=$(grep -c '"event":"connect"' "$log" || true)
        closed=$(grep -c '"event":"close"' "$log" || true)
        [ "$opened" -gt 0 ] && [ "$opened" = "$closed" ] && return 0
        sleep 0.1
    done
}

tap_stop() {
    if [ -n "$tap_pid" ]; then
        kill "$tap_pid" 2>/dev/null || true
        wait "$tap_pid" 2>/dev/null || true
        tap_pid=
    fi
}

# run_workload CLIENT BOOTSTRAP PREFIX: one client's workload (tap_workload.py, or the Java
# Workload), with the login arguments in the arrays `py_login` and `java_login` (empty: none).
run_workload() {
    local client=$1 bootstrap=$2 prefix=$3
    case $client in
        java)
            java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
                -cp "$here/java/target/java-clients.jar:$(cat "$here/java/target/classpath")" \
                kafkacodec.clients.Workload "$bootstrap" "$prefix" ${java_login[@]+"${java_login[@]}"} ;;
        *)
            (cd "$here" && "$py" tap_workload.py "$client" "$bootstrap" "$prefix" \
                ${py_login[@]+"${py_login[@]}"}) ;;
    esac
}
