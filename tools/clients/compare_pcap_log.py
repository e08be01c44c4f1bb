"""Compares the tap's log of a session with what `kafka-codec decode pcap` read from a
capture of the same session (tools/clients/pcap-proof.sh).

    python compare_pcap_log.py NAME TAP_LOG PCAP_LOG

Connections are matched by the client's address. For each, the lines about its frames
(pair, request, response, saslToken, unframeable) must be the same, in the same order, but
for the fields that differ by nature:

- time, latencyMs, durationMs: the tap reads its clock when bytes pass through it; a
  capture has the kernel's time stamps of the packets on the tap's client side;
- connection: each producer numbers connections in the order it saw them;
- rewritten, and a rewritten response's broker addresses (host and port fields): with
  --rewrite-brokers the tap logs a response as the broker sent it, and notes the addresses it
  replaced; the capture holds it as the client received it, with the tap's addresses.

A client that leaves with responses on their way: the tap logs each response as the broker
sent it and counts it as dropped; the capture holds at most its start, so the request is
unanswered there. Such pairs are compared without their response, and counted.

A TLS client at the plaintext tap must be named TLS by both: the tap's close line
(`notKafka`) and the capture's `tls` line.

Byte counts must be equal: what the client sent (the tap's toServer.received) and what it
received (the tap's toClient.forwarded), with their CRC-32C, and the frames each way. The
capture must have no gap. Prints one summary line; exits 1 on any difference.
"""

import json
import sys

FRAME_EVENTS = {"pair", "request", "response", "saslToken", "unframeable"}
DIFFERS = {"time", "latencyMs", "connection", "rewritten"}


def read(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def without_addresses(value):
    """A response with the broker addresses the tap rewrites taken out."""
    if isinstance(value, dict):
        return {k: without_addresses(v) for k, v in value.items() if k not in ("host", "port")}
    if isinstance(value, list):
        return [without_addresses(v) for v in value]
    return value


def by_connection(lines):
    """client address -> (frame lines, close line)."""
    ids = {}
    for line in lines:
        if line.get("event") == "connect" and "error" not in line:
            ids[line["connection"]] = line["client"]
    out = {client: ([], None) for client in ids.values()}
    for line in lines:
        client = ids.get(line.get("connection"))
        if client is None:
            continue
        frames, close = out[client]
        if line["event"] in FRAME_EVENTS:
            rewritten = "rewritten" in line
            kept = {k: v for k, v in line.items() if k not in DIFFERS}
            kept["_rewritten"] = rewritten
            frames.append(kept)
        elif line["event"] == "close":
            out[client] = (frames, line)
    return out


def comparable(frame, rewritten):
    frame = dict(frame)
    frame.pop("_rewritten", None)
    if rewritten and isinstance(frame.get("response"), dict):
        frame["response"] = without_addresses(frame["response"])
    return frame


def main():
    name, tap_path, pcap_path = sys.argv[1:4]
    tap_lines = read(tap_path)
    tap = by_connection(tap_lines)
    pcap_lines = read(pcap_path)
    pcap = by_connection(pcap_lines)
    problems = []
    # TLS spoken to the plaintext tap: the tap's close line says its first bytes were TLS;
    # the capture has one `tls` line for the connection and nothing else.
    tap_tls = {l["client"] for l in tap_lines if l.get("event") == "close"
               and "TLS" in l["toServer"].get("notKafka", "")}
    pcap_tls = {l["client"] for l in pcap_lines if l.get("event") == "tls"}
    if tap_tls != pcap_tls:
        problems.append(f"TLS connections differ: tap {sorted(tap_tls)}, capture {sorted(pcap_tls)}")
    for client in tap_tls:
        tap.pop(client, None)
    if set(tap) != set(pcap):
        problems.append(f"connections differ: tap {sorted(tap)}, capture {sorted(pcap)}")
    pairs = rewritten_pairs = undelivered_total = 0
    for client in sorted(set(tap) & set(pcap)):
        undelivered = 0
        tap_frames, tap_close = tap[client]
        pcap_frames, pcap_close = pcap[client]
        # When the client went away with responses on their way (the tap's `dropped`), the
        # tap logged the responses it received from the broker; the client's side of the
        # capture holds at most their start. Those requests are unanswered in the capture.
        dropped = tap_close is not None and tap_close["toClient"]["dropped"]["bytes"] > 0
        if len(tap_frames) != len(pcap_frames):
            problems.append(f"{client}: {len(tap_frames)} frame lines in the tap's log, "
                            f"{len(pcap_frames)} from the capture")
        for t, p in zip(tap_frames, pcap_frames):
            rewritten = t["_rewritten"]
            rewritten_pairs += rewritten
            a, b = comparable(t, rewritten), comparable(p, rewritten)
            if dropped and b.get("unanswered") and b.get("response") is None:
                a = {k: v for k, v in a.items() if k not in ("response", "unanswered")}
                b = {k: v for k, v in b.items() if k not in ("response", "unanswered")}
                undelivered += 1
            if a != b:
                problems.append(f"{client}: differs at correlation id {t.get('correlationId')}:"
                                f"\n  tap     {json.dumps(a)[:600]}"
                                f"\n  capture {json.dumps(b)[:600]}")
                break
            pairs += t["event"] == "pair"
        if tap_close is None or pcap_close is None:
            problems.append(f"{client}: no close line (tap {tap_close is not None}, "
                            f"capture {pcap_close is not None})")
            continue
        checks = [
            ("toServer bytes", tap_close["toServer"]["received"], pcap_close["toServer"]["received"]),
            ("toClient bytes", tap_close["toClient"]["forwarded"], pcap_close["toClient"]["received"]),
            ("toServer frames", tap_close["toServer"]["frames"], pcap_close["toServer"]["frames"]),
            ("toClient frames", tap_close["toClient"]["frames"],
             pcap_close["toClient"]["frames"] + (undelivered if dropped else 0)),
            ("gaps", 0, pcap_close["toServer"]["gaps"] + pcap_close["toClient"]["gaps"]),
        ]
        undelivered_total += undelivered
        for what, want, got in checks:
            if want != got:
                problems.append(f"{client}: {what}: tap {want}, capture {got}")
    summary = next((l for l in pcap_lines if l.get("event") == "capture"), {})
    for problem in problems:
        print(f"compare_pcap_log: {name}: {problem}", file=sys.stderr)
    verdict = "DIFFER" if problems else "equal"
    print(f"compare_pcap_log: {name}: {verdict}: {len(tap)} Kafka and {len(pcap_tls)} TLS "
          f"connections, {pairs} pairs "
          f"({rewritten_pairs} with rewritten addresses, {undelivered_total} answered after the "
          f"client left), byte counts per connection; capture: "
          f"{summary.get('tcpSegments')} segments")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
