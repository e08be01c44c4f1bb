#!/usr/bin/env bash
# Smoke test for the Java oracle: builds the jar, pipes a handful of requests through one
# process and checks each reply line. Exits non-zero on the first mismatch.
# Then the same for the Kafka 3.9.1 build (-Pkafka3): a version Kafka 4 removed.
# Set SKIP_BUILD=1 to reuse existing jars.
set -euo pipefail
cd "$(dirname "$0")"

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  mvn -q -B -f pom.xml package -DskipTests
  mvn -q -B -f pom.xml package -DskipTests -Pkafka3
fi

# Bodies in our JSON form (keys in schema order, so a decode must give them back verbatim).
DQ='{"errorCode":0,"errorMessage":null,"topics":[{"topicName":"t","partitions":[{"partitionIndex":0,"errorCode":0,"errorMessage":null,"leaderId":1,"leaderEpoch":2,"highWatermark":3,"currentVoters":[{"replicaId":1,"replicaDirectoryId":"AAAAAAAAAAAAAAAAAAAAAQ","logEndOffset":3,"lastFetchTimestamp":-1,"lastCaughtUpTimestamp":-1}],"observers":[]}]}],"nodes":[{"nodeId":1,"listeners":[{"name":"C","host":"h","port":9093}]}]}'
DQ_HEX='0000000202740200000000000000000000010000000200000000000000030200000001000000000000000000000000000000010000000000000003ffffffffffffffffffffffffffffffff00010000020000000102024302682385000000'
# FetchSnapshotResponse carries a records field: base64 "AAECAwQ=" is the bytes 00 01 02 03 04.
FS='{"throttleTimeMs":0,"errorCode":0,"topics":[{"name":"t","partitions":[{"index":0,"errorCode":0,"snapshotId":{"endOffset":5,"epoch":1},"size":5,"position":0,"unalignedRecords":"AAECAwQ="}]}]}'
FS_HEX='000000000000020274020000000000000000000000000005000000010000000000000000050000000000000000060001020304000000'
AV='{"clientSoftwareName":"a","clientSoftwareVersion":"1"}'

out=$(java -jar target/java-oracle.jar 2>/dev/null <<IN
{"op":"ping"}
{"id":1,"op":"encode","schema":"ApiVersionsRequest","version":3,"json":$AV}
{"id":2,"op":"decode","schema":"ApiVersionsRequest","version":3,"hex":"0261023100"}
{"id":3,"op":"encode","schema":"DescribeQuorumResponse","version":2,"json":$DQ}
{"id":4,"op":"decode","schema":"DescribeQuorumResponse","version":2,"hex":"$DQ_HEX"}
{"id":5,"op":"encode","schema":"FetchSnapshotResponse","version":0,"json":$FS}
{"id":6,"op":"decode","schema":"FetchSnapshotResponse","version":0,"hex":"$FS_HEX"}
{"id":7,"op":"encode","schema":"DescribeQuorumResponse","version":0,"json":{"errorCode":0,"topics":[],"nodes":[{"nodeId":1,"listeners":[]}]}}
{"id":8,"op":"decode","schema":"ApiVersionsRequest","version":3,"hex":"026102310000"}
not json
IN
)

fail=0
expect() { # expect LINE_NO EXACT_TEXT
  local got
  got=$(sed -n "$1p" <<<"$out")
  if grep -qxF -- "$2" <<<"$got"; then echo "ok   $1"; else echo "FAIL $1: expected $2"; echo "          got $got"; fail=1; fi
}
expect 1 '{"ok":true,"kafka":"4.4.0"}'
expect 2 '{"id":1,"ok":true,"hex":"0261023100"}'
expect 3 "{\"id\":2,\"ok\":true,\"json\":$AV}"
expect 4 "{\"id\":3,\"ok\":true,\"hex\":\"$DQ_HEX\"}"
expect 5 "{\"id\":4,\"ok\":true,\"json\":$DQ}"
expect 6 "{\"id\":5,\"ok\":true,\"hex\":\"$FS_HEX\"}"
expect 7 "{\"id\":6,\"ok\":true,\"json\":$FS}"
# Error lines: check the kind only, messages are Kafka's wording.
sed -n 8p <<<"$out" | grep -q '"id":7,"ok":false,"kind":"UnsupportedVersionException"' && echo "ok   8" || { echo "FAIL 8: $(sed -n 8p <<<"$out")"; fail=1; }
sed -n 9p <<<"$out" | grep -q '"id":8,"ok":false,"kind":"TrailingBytes".*"trailing":1' && echo "ok   9" || { echo "FAIL 9: $(sed -n 9p <<<"$out")"; fail=1; }
sed -n 10p <<<"$out" | grep -q '"ok":false,"kind":"JsonParseException"' && echo "ok   10" || { echo "FAIL 10: $(sed -n 10p <<<"$out")"; fail=1; }
[[ $(wc -l <<<"$out") -eq 10 ]] || { echo "FAIL: expected 10 reply lines"; fail=1; }

# Kafka 3.9.1: Produce v2 (gone from 4.x) both ways; record batches are the 4.4.0 oracle's job.
PRODUCE='{"acks":1,"timeoutMs":5,"topicData":[]}'
out=$(java -jar target/kafka3/java-oracle.jar 2>/dev/null <<IN
{"op":"ping"}
{"id":1,"op":"encode","schema":"ProduceRequest","version":2,"json":$PRODUCE}
{"id":2,"op":"decode","schema":"ProduceRequest","version":2,"hex":"00010000000500000000"}
{"id":3,"op":"records_read","hex":""}
IN
)
expect 1 '{"ok":true,"kafka":"3.9.1"}'
expect 2 '{"id":1,"ok":true,"hex":"00010000000500000000"}'
expect 3 "{\"id\":2,\"ok\":true,\"json\":$PRODUCE}"
sed -n 4p <<<"$out" | grep -q '"id":3,"ok":false,"kind":"BadRequest"' && echo "ok   3.9.1 records" || { echo "FAIL: $(sed -n 4p <<<"$out")"; fail=1; }

if [[ $fail -ne 0 ]]; then echo "java-oracle selftest FAILED"; exit 1; fi
echo "java-oracle selftest passed"
