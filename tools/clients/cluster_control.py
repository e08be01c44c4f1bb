"""The HTTP control surface of kafka-codec's in-memory cluster (kafka-codec cluster
--control), as the fault proofs beside this file drive and read it: one JSON request, and
the request log."""

import json
import urllib.request


class Control:
    """The control surface at HOST:PORT."""

    def __init__(self, address):
        self.address = address

    def call(self, method, path, body=None):
        """One request (`body` sent as JSON); the decoded JSON answer. A non-2xx answer
        raises urllib's HTTPError."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://{self.address}{path}", data=data,
                                         method=method,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    def log_of(self, api, after=None):
        """The request log's entries of `api`, after sequence `after` if given."""
        query = f"?api={api}" + ("" if after is None else f"&after={after}")
        return self.call("GET", "/log" + query)

    def last_sequence(self):
        """The sequence of the request log's latest entry (-1: none yet)."""
        entries = self.call("GET", "/log")
        return entries[-1]["sequence"] if entries else -1
