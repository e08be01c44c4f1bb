//! One module per subcommand. Each defines its arguments (clap derive) and implements
//! [`Run`](crate::common::Run); `main.rs` lists them.

pub mod apis;
pub mod cluster;
pub mod decode;
pub mod encode;
pub mod pcap;
pub mod quorum;
pub mod records;
pub mod tap;
