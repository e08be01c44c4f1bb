//! The `kafka-codec` binary's commands: the output contract (`general`), decode and encode of
//! every API, records, and keeping secrets out of the output. One test binary for the area.

#[path = "../support/mod.rs"]
mod support;

mod cluster;
mod decode_records;
mod every_api;
mod general;
mod not_kafka;
mod records;
mod secrets;
