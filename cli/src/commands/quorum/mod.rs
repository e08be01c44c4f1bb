//! `kafka-codec quorum`: the committed voter set, live. A simulated KRaft quorum behind a
//! socket (`serve`), and the admin side (`describe`, `add-controller`, `remove-controller`)
//! for it or any KRaft controller.

mod client;
mod describe;
mod reconfigure;
mod render;
mod serve;

use crate::common::{Failure, Run};

/// A KRaft quorum: serve a simulated one, describe one, add or remove voters.
#[derive(Debug, clap::Subcommand)]
pub enum Quorum {
    Serve(serve::Serve),
    Describe(describe::Describe),
    AddController(reconfigure::AddController),
    RemoveController(reconfigure::RemoveController),
}

impl Run for Quorum {
    fn run(self) -> Result<(), Failure> {
        match self {
            Quorum::Serve(command) => command.run(),
            Quorum::Describe(command) => command.run(),
            Quorum::AddController(command) => command.run(),
            Quorum::RemoveController(command) => command.run(),
        }
    }
}
