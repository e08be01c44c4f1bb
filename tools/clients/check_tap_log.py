"""Checks the logs `kafka-codec tap` wrote while real clients ran through it, and prints how
many frames of each API each client sent and received.

    python3 check_tap_log.py [--expect-login] [--versions]
        [--expect API[:VERSION],...] CLIENT[/LABEL]=LOG [[--expect ...] CLIENT[/LABEL]=LOG ...]

CLIENT names the workload that wrote the log (what it produced): a client of tap_workload.py,
`java`, a setting of old_workload.py (the proof with old versions), `inter-broker` (a
broker's own traffic: no records expected) or `compare` (compare_cluster.py, which compares
the records itself: none expected here); LABEL, if given, tells runs of the same client
apart in the table.

Fails (exit 1, every problem listed) unless, in every log:
- every line is JSON;
- no frame failed to decode or was skipped (`requestError`, `responseError`,
  `requestSkipped`, `responseSkipped`), no stream was unframeable, no response answered
  nothing, and no request was passed over by the response to a later one;
- every connection that opened closed, and for each: the client's bytes as the tap received
  them equal, in count and CRC-32C, the bytes it forwarded to the broker; the broker's bytes as
  received equal those forwarded to the client, counting each rewritten frame (broker address
  rewriting) as the frame it replaced, followed by any bytes dropped; bytes are dropped only
  toward a client that had closed its side first (a response still in flight when it hung
  up), never toward the broker;
- the frames the close lines count equal the frames the pair lines show, so no frame is
  missing from the log.

With `--records` (the tap proof runs with it), also:
- every `records` field of a Produce request and a Fetch response is shown as its batches
  (no `requestRecordsError` / `responseRecordsError`, no base64 left);
- every (key, value) the client produced with each codec (produce_known.py's records for the
  Python clients, Workload.java's values for Java) appears in the Produce requests' records
  with that codec's compression, and again in the Fetch responses' records.

With `--expect API[:VERSION],...` before a log, also: that log has a request of each API
named (at that version, if given); this is how the proof with old versions shows that the
old versions really went through. `--versions` prints the versions of each API each client
sent.

With `--expect-login` (the clients logged in with SASL), also:
- every connection that sent a request logged in through the tap: a SaslHandshake and a
  SaslAuthenticate request are among its requests (decoded, as above).

Noted without failing: bytes after a message body (Kafka's broker and clients ignore them;
the tap logs them as `requestTrailing`/`responseTrailing`), requests still unanswered when
the client closed the connection, and the responses to them that the broker sent anyway.
"""

import base64
import collections
import json
import sys

import old_workload
from produce_known import CODECS, known_records

# A client may hang up with a request in flight: closing cleanly, or resetting when it closes
# with bytes unread. Either is the client's doing, never the tap's.
CLIENT_HUNG_UP = ("the client closed the connection first", "the client reset the connection first")
SERVER_CLOSED = "the server closed the connection first"
# A client may open a connection and close it unused (seen in CI once, against the cluster, in
# a run with four clients): the tap logs it and never reaches the server. Not a fault of
# either server; any other failed start is.
CLIENT_LEFT_UNUSED = "the client closed before sending anything; not connected upstream"
UPSTREAM_REFUSED = "cannot connect upstream: Connection refused"

SIDES = ("request", "response")
CASTAGNOLI = 0x82F63B78  # CRC-32C, reflected


def gf2_times(matrix, vector):
    total, row = 0, 0
    while vector:
        if vector & 1:
            total ^= matrix[row]
        vector >>= 1
        row += 1
    return total


def crc32c_combine(crc1, crc2, len2):
    """CRC-32C of A followed by B, from CRC(A), CRC(B) and len(B): zlib's method of
    applying len(B) zero bytes to CRC(A) with squared shift operators."""
    if len2 == 0:
        return crc1
    odd = [CASTAGNOLI] + [1 << n for n in range(31)]  # shift by one zero bit
    even = [gf2_times(odd, odd[n]) for n in range(32)]  # two bits
    odd = [gf2_times(even, even[n]) for n in range(32)]  # four bits
    while True:
        even = [gf2_times(odd, odd[n]) for n in range(32)]
        if len2 & 1:
            crc1 = gf2_times(even, crc1)
        len2 >>= 1
        if not len2:
            break
        odd = [gf2_times(even, even[n]) for n in range(32)]
        if len2 & 1:
            crc1 = gf2_times(odd, crc1)
        len2 >>= 1
        if not len2:
            break
    return crc1 ^ crc2


def followed_by(first, second):
    """The {bytes, crc32c} of stream `first` followed by stream `second`."""
    crc = crc32c_combine(int(first["crc32c"], 16), int(second["crc32c"], 16), second["bytes"])
    return {"bytes": first["bytes"] + second["bytes"], "crc32c": f"{crc:08x}"}
FAILED = [f"{side}{kind}" for side in SIDES for kind in ("Error", "Skipped", "RecordsError")]


def records_fields(value):
    """Every `records` field in a message's JSON, wherever it is nested."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "records":
                yield inner
            else:
                yield from records_fields(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from records_fields(inner)


def collect_records(message, seen, problems, where):
    """Adds the (key, value) of every record of every batch in `message` to `seen`, by
    compression and under "any"; a field left as base64 is a problem (--records shows it)."""
    for field in records_fields(message):
        if field is None:
            continue
        if not isinstance(field, list):
            problems.append(f"{where}: a records field is not expanded: {str(field)[:60]}")
            continue
        for batch in field:
            if "truncatedTail" in batch:
                continue
            for record in batch["records"]:
                pair = tuple(base64.b64decode(record[k]) if record[k] is not None else b""
                             for k in ("key", "value"))
                seen[batch["compression"]].add(pair)
                seen["any"].add(pair)


def expected_values(client):
    """(codec, key, value) of every record the client's workload produces with a codec."""
    if client in ("inter-broker", "compare"):
        return
    if client in old_workload.SETTINGS:
        yield from old_workload.expected_records(client)
        return
    if client == "java":
        for codec in CODECS:
            for i in range(5):
                value = f"java {codec} record {i} " + "x" * (40 * i)
                yield codec, f"java-{codec}-{i}".encode(), value.encode()
        return
    for codec in CODECS:
        for record in known_records(client, codec):
            yield codec, record["key"] or b"", record["value"] or b""


def check(client, path, expect_login=False, expect=()):
    """Checks one log; `client` is CLIENT[/LABEL], as messages name it. `expect`: (api,
    version or None) pairs that must be among the requests."""
    workload = client.split("/", 1)[0]
    problems, notes = [], []
    apis_by_connection = collections.defaultdict(set)
    versions = collections.defaultdict(set)  # API name -> versions of its requests
    requests, responses = collections.Counter(), collections.Counter()
    connects, closes, ended_at_connect = set(), {}, set()
    rewritten_lines = collections.Counter()
    server_closed = []  # requests a server closed on, when the inter-broker proof may allow it
    # (key, value) pairs seen in records fields, by the compression of their batch.
    produced, fetched = collections.defaultdict(set), collections.defaultdict(set)
    logged = collections.Counter()  # per connection: [requests, responses]
    with open(path, encoding="utf-8") as log:
        for number, text in enumerate(log, 1):
            where = f"{client}: {path}:{number}"
            try:
                line = json.loads(text)
            except ValueError as e:
                problems.append(f"{where}: not JSON: {e}")
                continue
            event, connection = line.get("event"), line.get("connection")
            if event == "connect":
                error = line.get("error")
                if error == CLIENT_LEFT_UNUSED:
                    notes.append(f"{where}: {error}")
                elif error and error.startswith(UPSTREAM_REFUSED) and \
                        workload == "inter-broker":
                    # The controller reconnecting to a broker that closed its listener:
                    # judged with the requests the server closed on, below.
                    server_closed.append(f"{where}: {error}")
                elif error:
                    problems.append(f"{where}: {error}")
                connects.add(connection)
                if error:
                    # A connection that failed to start logs no close event.
                    ended_at_connect.add(connection)
            elif event == "close":
                closes[connection] = line
            elif event == "unframeable":
                problems.append(f"{where}: {line['error']}")
            elif event in ("pair", "request", "response"):
                api = line.get("api") or f"key {line.get('apiKey')}"
                if api == "Produce" and line.get("request") is not None:
                    collect_records(line["request"], produced, problems, where)
                if api == "Fetch" and line.get("response") is not None:
                    collect_records(line["response"], fetched, problems, where)
                for failed in FAILED:
                    if failed in line:
                        problems.append(f"{where}: {api} v{line.get('apiVersion')} {failed}: "
                                        f"{json.dumps(line[failed])}")
                if event == "response" and "correlationId" in line and "api" not in line:
                    problems.append(f"{where}: a response that answers no request")
                why = line.get("unanswered")
                if why in CLIENT_HUNG_UP:
                    notes.append(f"{api} v{line['apiVersion']} unanswered: the client closed "
                                 "the connection first")
                elif why == SERVER_CLOSED and workload == "inter-broker":
                    # Judged once the whole log is read: see below.
                    server_closed.append(f"{where}: {api} unanswered: {why}")
                elif why:
                    problems.append(f"{where}: {api} unanswered: {why}")
                if event in ("pair", "request"):
                    requests[api] += 1
                    versions[api].add(line.get("apiVersion"))
                    logged[(connection, "toServer")] += 1
                    apis_by_connection[connection].add(api)
                if line.get("response") is not None or "responseError" in line \
                        or "responseSkipped" in line:
                    responses[api] += 1
                    logged[(connection, "toClient")] += 1
                for side in SIDES:
                    trailing = line.get(f"{side}Trailing")
                    if trailing:
                        notes.append(f"{api} v{line['apiVersion']} {side}: {trailing['bytes']} "
                                     f"bytes after the body ({trailing['hex']}), ignored as Kafka "
                                     "does")
                if "rewritten" in line:
                    rewritten_lines[connection] += 1
    # The inter-broker proof stops its broker: once the broker has asked to shut down
    # (ControlledShutdown), it may close its listener with the controller's last request in
    # flight, and refuse the controller's reconnection. That is the broker's doing, noted;
    # any other server closing on a request or refusing a connection is a problem.
    if "ControlledShutdown" in requests:
        notes.extend(f"{closed} (the broker was shutting down)" for closed in server_closed)
    else:
        problems.extend(server_closed)
    for codec, key, value in expected_values(workload):
        if (key, value) not in produced[codec]:
            problems.append(f"{client}: a {codec} record ({key!r}, {value[:40]!r}...) is not in "
                            "the Produce requests' records with that compression")
        if (key, value) not in fetched["any"]:
            problems.append(f"{client}: a {codec} record ({key!r}, {value[:40]!r}...) is not in "
                            "the Fetch responses' records")
    for api, version in expect:
        if api not in versions or (version is not None and version not in versions[api]):
            sent = ", ".join(f"v{v}" for v in sorted(versions.get(api, ()))) or "none"
            problems.append(f"{client}: no {api}{'' if version is None else f' v{version}'} "
                            f"request in the log (sent: {sent})")
    notes.append(f"records: {sum(len(v) for k, v in produced.items() if k != 'any')} produced "
                 f"and {len(fetched['any'])} fetched (key, value) pairs, expanded by --records")
    if expect_login:
        for connection, apis in sorted(apis_by_connection.items()):
            missing = [api for api in ("SaslHandshake", "SaslAuthenticate") if api not in apis]
            if missing:
                problems.append(f"{client}: connection {connection} sent requests but no "
                                f"{' or '.join(missing)}: it did not log in through the tap")
        if not apis_by_connection:
            problems.append(f"{client}: no requests in the log")
    for connection in sorted(connects - closes.keys() - ended_at_connect):
        problems.append(f"{client}: connection {connection} never closed")
    totals = collections.Counter()
    for connection, close in sorted(closes.items()):
        for direction in ("toServer", "toClient"):
            stats = close[direction]
            name = f"{client}: connection {connection} {direction}"
            received, dropped = stats["received"], stats["dropped"]
            accounted = followed_by(stats["forwardedAsReceived"], dropped)
            if received != accounted:
                problems.append(f"{name}: received {received}, forwarded (as received) and "
                                f"dropped {accounted}")
            if direction == "toServer" and stats["forwarded"] != received:
                problems.append(f"{name}: forwarded {stats['forwarded']} != received {received}")
            if dropped["bytes"]:
                hung_up = direction == "toClient" and close["toServer"]["end"] == "eof" \
                    and ("Broken pipe" in stats["end"] or "reset" in stats["end"])
                if hung_up:
                    notes.append("the client hung up with a response in flight; the tap "
                                 "dropped the response's bytes")
                else:
                    problems.append(f"{name}: {dropped['bytes']} bytes dropped ({stats['end']})")
            if stats["partialFrameBytes"]:
                # A client that closes with a response in flight: the broker stops writing
                # the response when it reads the end of the request stream (Kafka's broker
                # drops a send on a closed channel), so the tap saw a part of it.
                client_left = direction == "toClient" and close["toServer"]["end"] == "eof"
                if client_left:
                    notes.append("the client hung up with a response in flight; the server "
                                 f"stopped after {stats['partialFrameBytes']} bytes of it")
                else:
                    problems.append(f"{name}: ended inside a frame ({stats['partialFrameBytes']} "
                                    "bytes of it)")
            if stats["frames"] != logged[(connection, direction)]:
                problems.append(f"{name}: {stats['frames']} frames passed, "
                                f"{logged[(connection, direction)]} in the log")
            totals[f"{direction} bytes"] += received["bytes"]
            totals[f"{direction} frames"] += stats["frames"]
        if close["toClient"]["rewritten"] != rewritten_lines[connection]:
            problems.append(f"{client}: connection {connection}: "
                            f"{close['toClient']['rewritten']} frames rewritten, "
                            f"{rewritten_lines[connection]} lines say so")
        totals["rewritten"] += close["toClient"]["rewritten"]
    totals["connections"] = len(closes)
    return requests, responses, totals, problems, notes, versions


def parse_expect(text):
    """`API[:VERSION],...` as (api, version or None) pairs."""
    pairs = []
    for item in text.split(","):
        api, _, version = item.partition(":")
        pairs.append((api, int(version) if version else None))
    return pairs


USAGE = ("usage: check_tap_log.py [--expect-login] [--versions] "
         "[--expect API[:VERSION],...] CLIENT[/LABEL]=LOG ...")


def main():
    clients, results = [], {}
    args = sys.argv[1:]
    expect_login = "--expect-login" in args
    show_versions = "--versions" in args
    expect = []
    arguments = iter(args)
    for arg in arguments:
        if arg in ("--expect-login", "--versions"):
            continue
        if arg == "--expect":
            try:
                expect = parse_expect(next(arguments))
            except (StopIteration, ValueError):
                sys.exit(USAGE)
            continue
        if arg.startswith("-") or "=" not in arg:
            sys.exit(USAGE)
        name, path = arg.split("=", 1)
        clients.append(name)
        results[name] = check(name, path, expect_login, expect)
        expect = []
    apis = sorted({api for r in results.values() for api in r[0] | r[1]})
    width = max([len("API")] + [len(api) for api in apis])
    columns = [max(len(c), 9) for c in clients]
    print("Frames through the tap per API and client (requests/responses):")
    print(f"{'API':<{width}}  " + "  ".join(f"{c:>{w}}" for c, w in zip(clients, columns)))
    for api in apis:
        cells = [f"{results[c][0][api]}/{results[c][1][api]}" for c in clients]
        print(f"{api:<{width}}  " + "  ".join(f"{v:>{w}}" for v, w in zip(cells, columns)))
    for key in ("connections", "toServer frames", "toClient frames", "toServer bytes",
                "toClient bytes", "rewritten"):
        cells = [str(results[c][2][key]) for c in clients]
        print(f"{key:<{width}}  " + "  ".join(f"{v:>{w}}" for v, w in zip(cells, columns)))
    if show_versions:
        print("Request versions per client:")
        for client in clients:
            sent = results[client][5]
            print(f"  {client}: " + ", ".join(
                f"{api} " + "/".join(f"v{v}" for v in sorted(sent[api])) for api in sorted(sent)))
    failed = False
    for client in clients:
        _, _, _, problems, notes, _ = results[client]
        for note, count in collections.Counter(notes).items():
            print(f"note: {client}: {note} (x{count})")
        for problem in problems:
            print(f"FAIL: {problem}")
            failed = True
    decoded = sum(sum(r[0].values()) + sum(r[1].values()) for r in results.values())
    if failed:
        print("tap proof: FAILED")
        sys.exit(1)
    print(f"tap proof: {decoded} frames, every one decoded; every connection's bytes forwarded "
          "as received")


if __name__ == "__main__":
    main()
