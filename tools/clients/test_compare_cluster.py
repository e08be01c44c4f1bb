"""Tests of compare_cluster.py's comparison and normalizations (no server, no client): a
difference anywhere in a result is reported, and the normalizations replace only what they
name. Run before the comparison itself (tools/ci-live.sh, step `tap`):

    python3 tools/clients/test_compare_cluster.py
"""

import unittest

from compare_cluster import Run, differences


class Differences(unittest.TestCase):
    def test_equal_results_have_none(self):
        result = {"consumed": [[0, 0, "k", "v", 1]], "errors": {"exists": "TOPIC_ALREADY_EXISTS"}}
        self.assertEqual(differences(result, {**result}), [])

    def test_a_nested_value_differs(self):
        found = differences({"errors": {"exists": "TOPIC_ALREADY_EXISTS"}},
                            {"errors": {"exists": "OK"}})
        self.assertEqual(found, ['/errors/exists: broker "TOPIC_ALREADY_EXISTS" | cluster "OK"'])

    def test_a_record_list_differs_in_one_offset(self):
        found = differences({"read": [[0, 3, "k", "v", 1]]}, {"read": [[0, 4, "k", "v", 1]]})
        self.assertEqual(len(found), 1)
        self.assertTrue(found[0].startswith("/read: "))

    def test_a_key_only_one_side_has(self):
        found = differences({"a": 1, "b": 2}, {"a": 1})
        self.assertEqual(found, ['/b: broker 2 | cluster "<absent>"'])

    def test_types_are_not_confused(self):
        self.assertEqual(len(differences({"n": 0}, {"n": None})), 1)
        self.assertEqual(len(differences({"n": "1"}, {"n": 1})), 1)


class Normalizations(unittest.TestCase):
    def test_node_ids_in_order_first_met(self):
        broker, cluster = Run("b", "p"), Run("c", "p")
        self.assertEqual([broker.node(1), broker.node(7), broker.node(1)],
                         [cluster.node(0), cluster.node(3), cluster.node(0)])
        self.assertEqual(broker.node(-1), -1)  # "no leader" stays what it is
        self.assertEqual(broker.node(None), None)

    def test_node_order_still_matters(self):
        broker, cluster = Run("b", "p"), Run("c", "p")
        first = [broker.node(1), broker.node(2), broker.node(1)]
        second = [cluster.node(0), cluster.node(1), cluster.node(1)]
        self.assertNotEqual(first, second)

    def test_the_prefix_alone_is_stripped(self):
        run = Run("b", "compare-17-librdkafka")
        stripped = run.strip({"compare-17-librdkafka-records": ["compare-17-librdkafka-group",
                                                                "other-records", 3]})
        self.assertEqual(stripped, {"records": ["group", "other-records", 3]})
        # Another run's prefix is a difference, not a name.
        self.assertEqual(run.strip("compare-18-librdkafka-records"),
                         "compare-18-librdkafka-records")


if __name__ == "__main__":
    unittest.main()
