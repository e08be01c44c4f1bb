# Sourced by broker.sh and cluster.sh: what both ask of a broker or controller process.

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

# is_our_process PID MARKER...: true if PID is a live process whose command line holds one of
# the MARKERs (a stale pid may have been reused by something else, which `stop` must not
# kill). A process in the middle of an exec shows an empty command line for a moment (the
# kernel has swapped in the new image but not yet set its arguments): that is ours, still
# starting, not a dead one. Taken for dead, it was stopped with SIGTERM before the JVM said
# a word, under load in CI. A zombie also shows an empty line, and is dead.
is_our_process() {
    local pid=$1 cmdline state
    shift
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
    state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1) || return 1
    [ -n "$state" ] && [ "$state" != Z ] || return 1
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
    [ -n "$cmdline" ] || return 0
    local marker
    for marker in "$@"; do
        case $cmdline in *"$marker"*) return 0 ;; esac
    done
    return 1
}

# launch PIDFILE OUT ARGS...: runs ARGS with stdout and stderr in OUT, and waits until
# PIDFILE names it.
launch() {
    local pidfile=$1 out=$2 _
    shift 2
    # A stale pid file (a node stopped earlier) must not pass for the new one's below.
    rm -f "$pidfile"
    # setsid: the process gets its own session, so a Ctrl-C or the end of the calling job
    # does not hit it; `stop` ends it by pid. The inner shell writes its own pid (which exec
    # hands to java), since setsid may fork.
    # shellcheck disable=SC2016 # expanded by the inner shell
    setsid bash -c 'echo $$ >"$1"; shift; exec "$@" >"$0" 2>&1 </dev/null' \
        "$out" "$pidfile" "$@" &
    for _ in $(seq 1 50); do
        [ -s "$pidfile" ] && break
        sleep 0.1
    done
}
