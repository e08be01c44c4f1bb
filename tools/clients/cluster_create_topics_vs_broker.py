"""CreateTopics v7 with topic configs, byte for byte: the same requests to a real Kafka broker
and to kafka-codec's in-memory cluster, each answer's frame compared with the other's once the
topic ids (random on both) are zeroed. The requests name configs Kafka takes (and returns with
their values and sources), an unknown config, values of the wrong type and out of range, a
null value, and `validate_only`; each topic name carries a per-run suffix so that a broker
left with an earlier run's topics still answers the same. Then one batch (with create
times of 2020) is produced (Produce v8) to the topic created with
`message.timestamp.type=LogAppendTime` on each and fetched back (Fetch v11): the two stored
batches must be equal byte for byte once the max timestamp and the CRC (which covers it) are
set aside, each CRC must match its batch, and each max timestamp must be the append time the
Produce answer gave. Prints one summary line; exits non-zero on any difference, showing
both answers decoded.

    python cluster_create_topics_vs_broker.py BROKER_BOOTSTRAP CLUSTER_BOOTSTRAP
    python cluster_create_topics_vs_broker.py --show BOOTSTRAP   # one side's answers, decoded
"""

import json
import socket
import struct
import sys
import time

API_KEY, VERSION = 19, 7
RUN = str(int(time.time() * 1000))

# (topic, partitions, replication factor, {config: value or None}, validate_only)
CASES = [
    ("ct-compact", 2, 1, {"cleanup.policy": "compact", "retention.ms": "60000"}, False),
    ("ct-many", -1, -1, {"max.message.bytes": "2048", "min.insync.replicas": "1",
                         "message.timestamp.type": "LogAppendTime",
                         "retention.bytes": "1048576", "segment.bytes": "16777216"}, False),
    ("ct-plain", 1, -1, {}, False),
    ("ct-unknown", 1, 1, {"no.such.config": "1"}, False),
    ("ct-type", 1, 1, {"retention.ms": "soon"}, False),
    ("ct-int", 1, 1, {"max.message.bytes": "3000000000"}, False),
    ("ct-bool", 1, 1, {"preallocate": "yes"}, False),
    ("ct-policy", 1, 1, {"cleanup.policy": "shred"}, False),
    ("ct-tstype", 1, 1, {"message.timestamp.type": "WallClock"}, False),
    ("ct-range", 1, 1, {"min.insync.replicas": "0"}, False),
    ("ct-null", 1, 1, {"retention.ms": None}, False),
    ("ct-validate", 3, 1, {"cleanup.policy": "compact,delete", "retention.ms": "-1"}, True),
]


def uvarint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def compact_string(s):
    if s is None:
        return uvarint(0)
    data = s.encode()
    return uvarint(len(data) + 1) + data


def request(correlation_id):
    frames = []
    # One request per validate_only value: the flag is the request's, not a topic's.
    for validate_only in (False, True):
        picked = [case for case in CASES if case[4] == validate_only]
        body = bytearray(uvarint(len(picked) + 1))
        for topic, partitions, factor, configs, _ in picked:
            body += compact_string(f"{topic}-{RUN}")
            body += struct.pack(">ih", partitions, factor)
            body += uvarint(1)
            body += uvarint(len(configs) + 1)
            for name, value in configs.items():
                body += compact_string(name) + compact_string(value) + uvarint(0)
            body += uvarint(0)
        body += struct.pack(">i?", 30000, validate_only) + uvarint(0)
        client = b"create-topics-proof"
        header = struct.pack(">hhih", API_KEY, VERSION, correlation_id, len(client)) + client
        header += uvarint(0)
        frames.append(header + bytes(body))
    return frames


class Reader:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, n):
        out = self.data[self.at:self.at + n]
        self.at += n
        return out

    def int(self, fmt):
        size = struct.calcsize(fmt)
        return struct.unpack(fmt, self.take(size))[0]

    def uvarint(self):
        shift = value = 0
        while True:
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7

    def string(self):
        n = self.uvarint()
        return None if n == 0 else self.take(n - 1).decode()

    def tags(self):
        out = {}
        for _ in range(self.uvarint()):
            tag = self.uvarint()
            out[tag] = self.take(self.uvarint()).hex()
        return out


def decode(frame):
    """The response decoded, and the frame with each topic id zeroed."""
    r = Reader(frame)
    masked = bytearray(frame)
    answer = {"correlation_id": r.int(">i"), "header_tags": r.tags(),
              "throttle_time_ms": r.int(">i"), "topics": []}
    for _ in range(r.uvarint() - 1):
        topic = {"name": r.string()}
        masked[r.at:r.at + 16] = bytes(16)
        topic["topic_id_zero"] = r.take(16) == bytes(16)
        topic["error_code"] = r.int(">h")
        topic["error_message"] = r.string()
        topic["num_partitions"] = r.int(">i")
        topic["replication_factor"] = r.int(">h")
        n = r.uvarint()
        configs = None
        if n:
            configs = []
            for _ in range(n - 1):
                configs.append({"name": r.string(), "value": r.string(),
                                "read_only": r.int(">?"), "source": r.int(">b"),
                                "sensitive": r.int(">?"), "tags": r.tags()})
        topic["configs"] = configs
        topic["tags"] = r.tags()
        answer["topics"].append(topic)
    answer["tags"] = r.tags()
    if r.at != len(frame):
        raise ValueError(f"{len(frame) - r.at} bytes after the response")
    return answer, bytes(masked)


def exchange(bootstrap, frames):
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    out = []
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        for frame in frames:
            sock.sendall(struct.pack(">i", len(frame)) + frame)
            size = struct.unpack(">i", recv(sock, 4))[0]
            out.append(recv(sock, size))
    return out


def recv(sock, n):
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("connection closed")
        data += chunk
    return bytes(data)


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def zigzag(n):
    return uvarint((n << 1) ^ (n >> 63))


def known_batch():
    """A v2 batch of three records (keys, values, one header) with create times of 2020."""
    records = bytearray()
    for i in range(3):
        body = bytes([0]) + zigzag(i * 7) + zigzag(i)
        key, value = f"key-{i}".encode(), f"value-{i}".encode()
        body += zigzag(len(key)) + key + zigzag(len(value)) + value
        body += zigzag(1) + zigzag(1) + b"h" + zigzag(1) + b"x"
        records += zigzag(len(body)) + body
    after_crc = struct.pack(">hiqqqhii", 0, 2, 1_600_000_000_000, 1_600_000_000_014, -1, -1,
                            -1, 3) + bytes(records)
    head = struct.pack(">qiib", 0, 4 + 1 + 4 + len(after_crc), -1, 2)
    return head + struct.pack(">I", crc32c(after_crc)) + after_crc


def short_string(s):
    data = s.encode()
    return struct.pack(">h", len(data)) + data


def header(api_key, version):
    return struct.pack(">hhi", api_key, version, 9) + short_string("create-topics-proof")


def produce_and_fetch(bootstrap, topic):
    """(the Produce answer's log append time, the batch fetched back)."""
    batch = known_batch()
    produce = header(0, 8) + struct.pack(">hhii", -1, 1, 10_000, 1) + short_string(topic)
    produce += struct.pack(">iii", 1, 0, len(batch)) + batch
    fetch = header(1, 11) + struct.pack(">iiiibiii", -1, 500, 1, 1 << 20, 0, 0, -1, 1)
    fetch += short_string(topic) + struct.pack(">iiiqqi", 1, 0, -1, 0, -1, 1 << 20)
    fetch += struct.pack(">i", 0) + short_string("")
    # A topic just created may not have its leader yet on the broker: NOT_LEADER_OR_FOLLOWER
    # (6) or UNKNOWN_TOPIC_OR_PARTITION (3) until it does, as a client retries them.
    for _ in range(50):
        (produced,) = exchange(bootstrap, [produce])
        r = Reader(produced)
        r.int(">i"), r.int(">i")
        r.take(r.int(">h")), r.int(">i")
        _, error, _, append_time = r.int(">i"), r.int(">h"), r.int(">q"), r.int(">q")
        if error not in (3, 6):
            break
        time.sleep(0.1)
    if error:
        raise RuntimeError(f"{bootstrap}: Produce to {topic}: error {error}")
    (fetched,) = exchange(bootstrap, [fetch])
    r = Reader(fetched)
    r.int(">i"), r.int(">i"), r.int(">h"), r.int(">i"), r.int(">i")
    r.take(r.int(">h")), r.int(">i")
    _, error = r.int(">i"), r.int(">h")
    r.int(">q"), r.int(">q"), r.int(">q")
    aborted = r.int(">i")
    r.take(16 * max(aborted, 0))
    r.int(">i")
    records = r.take(r.int(">i"))
    if error:
        raise RuntimeError(f"{bootstrap}: Fetch of {topic}: error {error}")
    return append_time, records


def stamped_difference(name, append_time, batch):
    """Why `batch` is not a LogAppendTime batch stamped at `append_time`, if it is not."""
    attributes, max_timestamp = struct.unpack(">h", batch[21:23])[0], struct.unpack(">q", batch[35:43])[0]
    if not attributes & 0x08:
        return f"{name}: the timestamp type attribute is not set ({attributes:#x})"
    if max_timestamp != append_time:
        return f"{name}: max timestamp {max_timestamp}, the Produce answer said {append_time}"
    if struct.unpack(">I", batch[17:21])[0] != crc32c(batch[21:]):
        return f"{name}: the CRC does not match the batch"
    return None


def main():
    frames = request(7)
    if sys.argv[1] == "--show":
        for frame in exchange(sys.argv[2], frames):
            print(json.dumps(decode(frame)[0], indent=1))
        return
    kafka = exchange(sys.argv[1], frames)
    cluster = exchange(sys.argv[2], frames)
    differences = 0
    topics = 0
    for real, ours in zip(kafka, cluster):
        (real_answer, real_masked), (our_answer, our_masked) = decode(real), decode(ours)
        topics += len(real_answer["topics"])
        if real_masked != our_masked:
            differences += 1
            print("Kafka:  ", json.dumps(real_answer, indent=1), file=sys.stderr)
            print("cluster:", json.dumps(our_answer, indent=1), file=sys.stderr)
    if differences:
        sys.exit(f"{differences} of {len(frames)} CreateTopics v7 answers differ")
    stamped_topic = f"ct-many-{RUN}"
    batches = []
    for name, bootstrap in (("Kafka", sys.argv[1]), ("cluster", sys.argv[2])):
        append_time, batch = produce_and_fetch(bootstrap, stamped_topic)
        problem = stamped_difference(name, append_time, batch)
        if problem:
            sys.exit(f"LogAppendTime: {problem}")
        batches.append(batch[:17] + batch[21:35] + batch[43:])
    if batches[0] != batches[1]:
        sys.exit(f"LogAppendTime: the stored batches differ beyond the max timestamp and CRC:\n"
                 f"  Kafka   {batches[0].hex()}\n  cluster {batches[1].hex()}")
    print(f"CreateTopics v7 with configs: {len(frames)} answers ({topics} topics, "
          f"{sum(len(f) for f in kafka)} bytes) equal to a real Kafka broker's, topic ids aside; "
          f"a batch produced to its LogAppendTime topic stored as Kafka stores it "
          f"({len(batches[0]) + 12} bytes, the append time aside)")


if __name__ == "__main__":
    main()
