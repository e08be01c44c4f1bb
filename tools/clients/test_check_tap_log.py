"""Tests of what check_tap_log.py adds for the proof with old versions: `--expect` fails a log
without the named API and version, `--versions` reports what was sent, an old setting's
records are expected and a broker's own traffic expects none. Synthetic logs, no broker.

    python3 tools/clients/test_check_tap_log.py
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import check_tap_log
import old_workload

HERE = os.path.dirname(os.path.abspath(__file__))


def pair(api, version, correlation=1):
    return {"event": "pair", "connection": 1, "correlationId": correlation, "api": api,
            "apiVersion": version, "request": {"body": {}}, "response": {"body": {}}}


class ExpectTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def log(self, *lines):
        path = os.path.join(self.dir.name, f"log{len(os.listdir(self.dir.name))}.jsonl")
        with open(path, "w", encoding="utf-8") as out:
            for line in lines:
                out.write(json.dumps(line) + "\n")
        return path

    def expect_problems(self, client, path, expect):
        problems = check_tap_log.check(client, path, expect=expect)[3]
        return [p for p in problems if " request in the log " in p]

    def test_an_expected_version_that_was_sent_passes(self):
        path = self.log(pair("LeaderAndIsr", 0), pair("ControlledShutdown", 1, 2))
        self.assertEqual(self.expect_problems(
            "inter-broker", path, [("LeaderAndIsr", 0), ("ControlledShutdown", None)]), [])

    def test_another_version_or_api_fails_and_says_what_was_sent(self):
        path = self.log(pair("Produce", 2), pair("Produce", 3, 2))
        problems = self.expect_problems("inter-broker", path, [("Produce", 0), ("Fetch", None)])
        self.assertEqual(problems, [
            "inter-broker: no Produce v0 request in the log (sent: v2, v3)",
            "inter-broker: no Fetch request in the log (sent: none)",
        ])

    def test_a_stopping_broker_may_close_on_the_controllers_last_request(self):
        closed = pair("StopReplica", 4, 3)
        closed["response"] = None
        closed["unanswered"] = "the server closed the connection first"

        def unanswered(client, *lines):
            problems = check_tap_log.check(client, self.log(*lines))[3]
            return [p for p in problems if "unanswered" in p]

        # Allowed once the broker asked to shut down, in the inter-broker proof only.
        self.assertEqual(unanswered("inter-broker/ibp-3.9",
                                    pair("ControlledShutdown", 3, 2), closed), [])
        self.assertEqual(len(unanswered("inter-broker/ibp-3.9", closed)), 1)
        self.assertEqual(len(unanswered("confluent-kafka",
                                        pair("ControlledShutdown", 3, 2), closed)), 1)

    def test_a_stopping_broker_may_refuse_the_controllers_reconnection(self):
        refused = {"event": "connect", "connection": 2,
                   "error": "cannot connect upstream: Connection refused (os error 111)"}

        def problems(client, *lines):
            return [p for p in check_tap_log.check(client, self.log(*lines))[3]
                    if "Connection refused" in p or "never closed" in p]

        shutdown = pair("ControlledShutdown", 3, 2)
        self.assertEqual(problems("inter-broker/ibp-3.9", shutdown, refused), [])
        self.assertEqual(len(problems("inter-broker/ibp-3.9", refused)), 1)
        self.assertEqual(len(problems("confluent-kafka", shutdown, refused)), 1)

    def test_a_response_cut_short_after_the_client_left_is_a_note(self):
        def stats(end, partial=0):
            empty = {"bytes": 0, "crc32c": "00000000"}
            return {"received": empty, "forwarded": empty, "forwardedAsReceived": empty,
                    "dropped": empty, "rewritten": 0, "frames": 0,
                    "partialFrameBytes": partial, "end": end}

        def cut(to_server_end):
            close = {"event": "close", "connection": 1,
                     "toServer": stats(to_server_end), "toClient": stats("eof", 179)}
            path = self.log({"event": "connect", "connection": 1}, close)
            return [p for p in check_tap_log.check("librdkafka", path)[3] if "inside" in p]

        # The client ended its requests first: the broker stopped writing (not a problem).
        self.assertEqual(cut("eof"), [])
        # Otherwise a frame the server cut short is one.
        self.assertEqual(cut("read failed: connection reset"), [
            "librdkafka: connection 1 toClient: ended inside a frame (179 bytes of it)"])

    def test_a_connection_the_client_left_unused_is_a_note(self):
        def judged(error):
            path = self.log({"event": "connect", "connection": 7, "error": error})
            _, _, _, problems, notes, _ = check_tap_log.check("compare", path)
            return [p for p in problems if "connection" in p or error in p], \
                [n for n in notes if error in n]

        # Closed unused: a note, and no "never closed" (a failed start logs no close).
        self.assertEqual(judged(check_tap_log.CLIENT_LEFT_UNUSED),
                         ([], [f"compare: {self.dir.name}/log0.jsonl:1: "
                               f"{check_tap_log.CLIENT_LEFT_UNUSED}"]))
        # Any other failed start is a problem, still without "never closed".
        problems, notes = judged("cannot connect upstream: refused")
        self.assertEqual((len(problems), notes), (1, []))
        self.assertNotIn("never closed", problems[0])

    def test_a_response_alone_does_not_count_as_sent(self):
        line = pair("Produce", 0)
        line["event"] = "response"
        self.assertEqual(len(self.expect_problems("inter-broker", self.log(line),
                                                  [("Produce", 0)])), 1)

    def test_records_expected_per_client(self):
        path = self.log(pair("Metadata", 0))
        problems = check_tap_log.check("kafka-python-0.9", path)[3]
        missing = [p for p in problems if "is not in the Produce requests" in p]
        self.assertEqual(len(missing), len(list(old_workload.expected_records("kafka-python-0.9"))))
        self.assertEqual(len(missing), 5 * len(old_workload.CODECS))
        self.assertFalse([p for p in check_tap_log.check("inter-broker", path)[3]
                          if "record" in p])

    def test_the_command_line(self):
        path = self.log(pair("Produce", 1))
        run = subprocess.run(
            [sys.executable, os.path.join(HERE, "check_tap_log.py"), "--versions",
             "--expect", "Produce:0", "inter-broker/a=" + path,
             "inter-broker/b=" + path],
            capture_output=True, text=True, check=False)
        self.assertEqual(run.returncode, 1)
        self.assertIn("  inter-broker/a: Produce v1\n", run.stdout)
        self.assertIn("FAIL: inter-broker/a: no Produce v0 request in the log (sent: v1)",
                      run.stdout)
        # --expect applies to the next log only.
        self.assertNotIn("inter-broker/b: no Produce", run.stdout)
        bad = subprocess.run(
            [sys.executable, os.path.join(HERE, "check_tap_log.py"), "--expect", "Produce:x",
             "inter-broker=" + path], capture_output=True, text=True, check=False)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("usage", bad.stderr)


if __name__ == "__main__":
    unittest.main()
