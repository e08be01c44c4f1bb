//! The idle-connection timeout on the cluster's clock: on tokio's paused clock a connection
//! that sends nothing for the timeout is closed in simulated time, and one that keeps
//! talking across many timeouts' worth of simulated time stays open (its activity is timed
//! on the same clock as the deadline it is checked against).

use crate::support;

use kafka_codec::messages::ApiVersionsRequest;
use kafka_codec::Response;
use std::time::Duration;
use support::pipe::{paused, PipeClient};

#[test]
fn an_idle_connection_is_closed_in_simulated_time_and_a_busy_one_is_not() {
    paused().block_on(async {
        let cluster = support::pipe::paused_cluster(1, 1)
            .idle_timeout(Some(Duration::from_secs(60)))
            .build()
            .await
            .expect("cluster");
        let mut busy = PipeClient::connect(&cluster, 0);
        let mut idle = PipeClient::connect(&cluster, 0);
        // Ten simulated minutes, a request every 40 s: ten timeouts' worth, none idle.
        for _ in 0..15 {
            tokio::time::sleep(Duration::from_secs(40)).await;
            let answer = busy.answer(3, ApiVersionsRequest::default()).await;
            assert!(
                matches!(answer, Some(Response::ApiVersions(_))),
                "a connection with a request every 40 s was closed"
            );
        }
        // The other sent nothing for ten minutes: it was closed.
        assert!(
            idle.answer(3, ApiVersionsRequest::default())
                .await
                .is_none(),
            "an idle connection outlived the timeout"
        );
        // A new connection idle just under the timeout is still open; past it, closed.
        let mut fresh = PipeClient::connect(&cluster, 0);
        tokio::time::sleep(Duration::from_secs(59)).await;
        assert!(fresh
            .answer(3, ApiVersionsRequest::default())
            .await
            .is_some());
        tokio::time::sleep(Duration::from_secs(61)).await;
        assert!(fresh
            .answer(3, ApiVersionsRequest::default())
            .await
            .is_none());
    });
}
