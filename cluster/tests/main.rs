//! The cluster's tests, one binary: each file of `tests/` is a module here (filter a run by
//! its path, `cargo test -p kafka-codec-cluster --test cluster fencing::`), since each test
//! binary costs a link of the cluster, the server and the library. Helpers two modules
//! need live in `support`, once.

mod support;

mod acl_refusals;
mod admin;
mod admin_resources;
mod aiokafka;
mod api_versions_kafka;
mod assignor_reference;
mod authorization;
mod auto_create;
mod brokers;
mod cleaning;
mod client_metrics;
mod client_quotas;
mod combined_quorum;
mod configs;
mod consumer_groups;
mod controllers;
mod conversation;
mod describe_topic_partitions;
mod deterministic;
mod elect_leaders;
mod elect_leaders_preferred_kafka;
mod elect_leaders_unclean;
mod elr;
mod elr_reference;
mod error_responses;
mod faults;
mod features;
mod fencing;
mod fetch_sessions;
mod group_configs;
mod groups;
mod idempotence;
mod idle_timeout;
mod java;
mod java_fetch_sessions;
mod kafka_python;
mod leaderless_coordinator;
mod leaderless_coordinator_groups_kafka;
mod leaderless_coordinator_kafka;
mod legacy_formats;
mod librdkafka;
mod old_clients;
mod produce_legacy_versions_kafka;
mod produce_timestamps;
mod reassignments;
mod rebalance;
mod release;
mod security;
mod share_assignor_reference;
mod share_fetch_unknown_group;
mod share_group_configs;
mod share_group_offsets;
mod share_groups;
mod share_groups_assignments;
mod streams_topology_kafka;
mod telemetry;
mod topic_configs;
mod transactions;
mod unclean_election;
mod unregister_controller;
mod update_features;
