//! The routing reads of the `views` benchmark (issue 25), shared with `examples/views_ir.rs`:
//! each reads what a router needs from a frame's body through kafka-codec's zero-copy view,
//! kafka-codec's owned decode, kafka-protocol's decode and krabka-protocol's borrowed decode,
//! and sums it, so that all four give the same answer and nothing is optimised away.

use bytes::Bytes;
use kafka_codec::messages::fetch_response::FetchResponseView;
use kafka_codec::messages::metadata_response::MetadataResponseView;
use kafka_codec::messages::produce_request::ProduceRequestView;
use kafka_codec::messages::{FetchResponse, MetadataResponse, ProduceRequest};
use kafka_codec::{view_message, DecodeError, Lazy, LazyMessage, Message};
use kafka_protocol::protocol::Decodable;

pub fn produce_route_view(bytes: &Bytes) -> u64 {
    let view: ProduceRequestView<'_> = view_message(bytes, 13).expect("valid");
    let mut sum = 0u64;
    for topic in view.topic_data() {
        sum ^= topic.topic_id().halves().0 as u64;
        for partition in topic.partition_data() {
            sum += partition.index() as u64 + partition.records().map_or(0, <[u8]>::len) as u64;
        }
    }
    sum
}

/// The same read through the lazy view: nothing checked but what is read.
pub fn produce_route_lazy(bytes: &Bytes) -> u64 {
    let read = || -> Result<u64, DecodeError> {
        let message = LazyMessage::new::<ProduceRequest>(bytes, 13)?;
        let view: ProduceRequestView<'_, Lazy> = message.view().expect("its view");
        let mut sum = 0u64;
        for topic in view.topic_data()? {
            let topic = topic?;
            sum ^= topic.topic_id()?.halves().0 as u64;
            for partition in topic.partition_data()? {
                let partition = partition?;
                sum += partition.index()? as u64;
                sum += partition.records()?.map_or(0, <[u8]>::len) as u64;
            }
        }
        Ok(sum)
    };
    read().expect("valid")
}

pub fn produce_route_owned(bytes: &Bytes) -> u64 {
    let message = ProduceRequest::decode(&mut bytes.clone(), 13).expect("valid");
    let mut sum = 0u64;
    for topic in &message.topic_data {
        sum ^= topic.topic_id.halves().0 as u64;
        for partition in &topic.partition_data {
            sum += partition.index as u64 + partition.records.as_ref().map_or(0, Bytes::len) as u64;
        }
    }
    sum
}

pub fn produce_route_kp(bytes: &Bytes) -> u64 {
    let message =
        kafka_protocol::messages::ProduceRequest::decode(&mut bytes.clone(), 13).expect("valid");
    let mut sum = 0u64;
    for topic in &message.topic_data {
        sum ^= topic.topic_id.as_u64_pair().0;
        for partition in &topic.partition_data {
            sum += partition.index as u64 + partition.records.as_ref().map_or(0, Bytes::len) as u64;
        }
    }
    sum
}

#[cfg(feature = "krabka")]
/// The first eight bytes of a krabka uuid, as `Uuid::halves().0` gives ours.
fn krabka_high(id: &krabka_protocol::primitives::uuid::Uuid) -> u64 {
    let [a, b, c, d, e, f, g, h, ..] = id.0;
    u64::from_be_bytes([a, b, c, d, e, f, g, h])
}

#[cfg(feature = "krabka")]
/// A records field's length in krabka's borrowed form (which parses the record batches).
fn krabka_records_len(
    records: &Option<krabka_protocol::records::RecordsPayloadBorrowed<'_>>,
) -> u64 {
    records.as_ref().map_or(0, |r| r.payload_len()) as u64
}

#[cfg(feature = "krabka")]
pub fn produce_route_krabka(bytes: &Bytes) -> u64 {
    use krabka_protocol::DecodeBorrow;
    let message = krabka_protocol::borrowed::produce_request::ProduceRequest::decode_borrow(
        &mut &bytes[..],
        13,
    )
    .expect("valid");
    let mut sum = 0u64;
    for topic in &message.topic_data {
        sum ^= krabka_high(&topic.topic_id);
        for partition in &topic.partition_data {
            sum += partition.index as u64 + krabka_records_len(&partition.records);
        }
    }
    sum
}

pub fn fetch_route_view(bytes: &Bytes) -> u64 {
    let view: FetchResponseView<'_> = view_message(bytes, 18).expect("valid");
    let mut sum = 0u64;
    for topic in view.responses() {
        sum ^= topic.topic_id().halves().0 as u64;
        for p in topic.partitions() {
            sum += p.partition_index() as u64 + p.error_code() as u64 + p.high_watermark() as u64;
            sum += p.records().map_or(0, <[u8]>::len) as u64;
        }
    }
    sum
}

pub fn fetch_route_lazy(bytes: &Bytes) -> u64 {
    let read = || -> Result<u64, DecodeError> {
        let message = LazyMessage::new::<FetchResponse>(bytes, 18)?;
        let view: FetchResponseView<'_, Lazy> = message.view().expect("its view");
        let mut sum = 0u64;
        for topic in view.responses()? {
            let topic = topic?;
            sum ^= topic.topic_id()?.halves().0 as u64;
            for p in topic.partitions()? {
                let p = p?;
                sum += p.partition_index()? as u64 + p.error_code()? as u64;
                sum += p.high_watermark()? as u64;
                sum += p.records()?.map_or(0, <[u8]>::len) as u64;
            }
        }
        Ok(sum)
    };
    read().expect("valid")
}

pub fn fetch_route_owned(bytes: &Bytes) -> u64 {
    let message = FetchResponse::decode(&mut bytes.clone(), 18).expect("valid");
    let mut sum = 0u64;
    for topic in &message.responses {
        sum ^= topic.topic_id.halves().0 as u64;
        for p in &topic.partitions {
            sum += p.partition_index as u64 + p.error_code as u64 + p.high_watermark as u64;
            sum += p.records.as_ref().map_or(0, Bytes::len) as u64;
        }
    }
    sum
}

pub fn fetch_route_kp(bytes: &Bytes) -> u64 {
    let message =
        kafka_protocol::messages::FetchResponse::decode(&mut bytes.clone(), 18).expect("valid");
    let mut sum = 0u64;
    for topic in &message.responses {
        sum ^= topic.topic_id.as_u64_pair().0;
        for p in &topic.partitions {
            sum += p.partition_index as u64 + p.error_code as u64 + p.high_watermark as u64;
            sum += p.records.as_ref().map_or(0, Bytes::len) as u64;
        }
    }
    sum
}

#[cfg(feature = "krabka")]
pub fn fetch_route_krabka(bytes: &Bytes) -> u64 {
    use krabka_protocol::DecodeBorrow;
    let message = krabka_protocol::borrowed::fetch_response::FetchResponse::decode_borrow(
        &mut &bytes[..],
        18,
    )
    .expect("valid");
    let mut sum = 0u64;
    for topic in &message.responses {
        sum ^= krabka_high(&topic.topic_id);
        for p in &topic.partitions {
            sum += p.partition_index as u64 + p.error_code as u64 + p.high_watermark as u64;
            sum += krabka_records_len(&p.records);
        }
    }
    sum
}

pub fn metadata_route_view(bytes: &Bytes) -> u64 {
    let view: MetadataResponseView<'_> = view_message(bytes, 13).expect("valid");
    let mut sum = 0u64;
    for topic in view.topics() {
        sum += topic.name().map_or(0, str::len) as u64;
        for p in topic.partitions() {
            sum += p.leader_id() as u64;
        }
    }
    sum
}

pub fn metadata_route_lazy(bytes: &Bytes) -> u64 {
    let read = || -> Result<u64, DecodeError> {
        let message = LazyMessage::new::<MetadataResponse>(bytes, 13)?;
        let view: MetadataResponseView<'_, Lazy> = message.view().expect("its view");
        let mut sum = 0u64;
        for topic in view.topics()? {
            let topic = topic?;
            sum += topic.name()?.map_or(0, str::len) as u64;
            for p in topic.partitions()? {
                sum += p?.leader_id()? as u64;
            }
        }
        Ok(sum)
    };
    read().expect("valid")
}

pub fn metadata_route_owned(bytes: &Bytes) -> u64 {
    let message = MetadataResponse::decode(&mut bytes.clone(), 13).expect("valid");
    let mut sum = 0u64;
    for topic in &message.topics {
        sum += topic.name.as_ref().map_or(0, |n| n.len()) as u64;
        for p in &topic.partitions {
            sum += p.leader_id as u64;
        }
    }
    sum
}

pub fn metadata_route_kp(bytes: &Bytes) -> u64 {
    let message =
        kafka_protocol::messages::MetadataResponse::decode(&mut bytes.clone(), 13).expect("valid");
    let mut sum = 0u64;
    for topic in &message.topics {
        sum += topic.name.as_ref().map_or(0, |n| n.len()) as u64;
        for p in &topic.partitions {
            sum += p.leader_id.0 as u64;
        }
    }
    sum
}

#[cfg(feature = "krabka")]
pub fn metadata_route_krabka(bytes: &Bytes) -> u64 {
    use krabka_protocol::DecodeBorrow;
    let message = krabka_protocol::borrowed::metadata_response::MetadataResponse::decode_borrow(
        &mut &bytes[..],
        13,
    )
    .expect("valid");
    let mut sum = 0u64;
    for topic in &message.topics {
        sum += topic.name.map_or(0, str::len) as u64;
        for p in &topic.partitions {
            sum += p.leader_id as u64;
        }
    }
    sum
}

/// A routing read: the bytes in, a sum of what was read out (so nothing is optimised away).
pub type Route = fn(&Bytes) -> u64;

/// `Some(route)` where the `krabka` feature builds it.
macro_rules! krabka {
    ($route:ident) => {{
        #[cfg(feature = "krabka")]
        let route: Option<Route> = Some($route);
        #[cfg(not(feature = "krabka"))]
        let route: Option<Route> = None;
        route
    }};
}

/// The routing reads of a case by its benchmark name: checked view, lazy view, owned,
/// kafka-protocol, and krabka-protocol's where the `krabka` feature builds it.
pub fn routes(case: &str) -> Option<([Route; 4], Option<Route>)> {
    Some(match case {
        "produce_request_v13" => (
            [
                produce_route_view,
                produce_route_lazy,
                produce_route_owned,
                produce_route_kp,
            ],
            krabka!(produce_route_krabka),
        ),
        "fetch_response_v18" => (
            [
                fetch_route_view,
                fetch_route_lazy,
                fetch_route_owned,
                fetch_route_kp,
            ],
            krabka!(fetch_route_krabka),
        ),
        crate::METADATA_SMALL => (
            [
                metadata_route_view,
                metadata_route_lazy,
                metadata_route_owned,
                metadata_route_kp,
            ],
            krabka!(metadata_route_krabka),
        ),
        _ => return None,
    })
}

/// The tap's `--deny-topic` decision (`named_topics` in `cli/src/commands/tap/policy.rs`):
/// whether any topic a Produce request frame (header and body, no size prefix) names is
/// denied, here every name starting `denied-`. Three readers of the same frame: the owned
/// decode the tap uses, the checked view (which refuses what the owned decode refuses), and
/// the lazy view (which checks only the header and the names it reads).
pub mod tap_decision {
    use bytes::{Bytes, BytesMut};
    use kafka_codec::messages::produce_request::{
        PartitionProduceData, ProduceRequestView, TopicProduceData,
    };
    use kafka_codec::messages::ProduceRequest;
    use kafka_codec::records::{Compression, RecordBatchBuilder};
    use kafka_codec::{
        DecodeError, DecodeOptions, Framing, Lazy, LazyRequestFrame, Request, RequestFrame,
        RequestFrameView,
    };

    fn denied(name: &str) -> bool {
        name.starts_with("denied-")
    }

    /// The tap bench's traffic (`benches/tap.rs`): a Produce v9 request naming one topic,
    /// one partition of 64 KiB of records, as the tap holds it (no size prefix).
    pub fn frame() -> Bytes {
        frame_naming("bench")
    }

    /// [`frame`] naming the topic `name`.
    pub fn frame_naming(name: &str) -> Bytes {
        frame_with(name, None)
    }

    /// [`frame`] naming the topic `name`, with a transactional id.
    pub fn frame_with(name: &str, transactional_id: Option<&str>) -> Bytes {
        let mut builder = RecordBatchBuilder::new(Compression::None);
        for i in 0..64u8 {
            builder.append(1_700_000_000_000, None, Some(vec![i; 1024].into()));
        }
        let records = builder.build().encode_to_bytes().expect("a batch");
        let request = ProduceRequest::default()
            .with_transactional_id(transactional_id.map(Into::into))
            .with_acks(-1)
            .with_timeout_ms(30_000)
            .with_topic_data(vec![TopicProduceData::default()
                .with_name(name.into())
                .with_partition_data(vec![PartitionProduceData::default()
                    .with_index(0)
                    .with_records(Some(records))])]);
        let mut out = BytesMut::new();
        RequestFrame::new(request, 9, 1)
            .with_client_id("bench")
            .encode(&mut out, Framing::Bare)
            .expect("encodes");
        out.freeze()
    }

    pub fn owned(frame: &Bytes) -> Result<bool, DecodeError> {
        let request = RequestFrame::decode_with(frame.clone(), &DecodeOptions::default())?;
        Ok(match &request.body {
            Request::Produce(r) => r.topic_data.iter().any(|t| denied(&t.name)),
            _ => false,
        })
    }

    pub fn checked_view(frame: &Bytes) -> Result<bool, DecodeError> {
        let view = RequestFrameView::new(frame, &DecodeOptions::default())?;
        Ok(match view.body::<ProduceRequestView<'_>>() {
            Some(body) => body.topic_data().any(|t| denied(t.name())),
            None => false,
        })
    }

    pub fn lazy_view(frame: &Bytes) -> Result<bool, DecodeError> {
        let view = LazyRequestFrame::new(frame, &DecodeOptions::default())?;
        let Some(body) = view.body::<ProduceRequestView<'_, Lazy>>() else {
            return Ok(false);
        };
        for topic in body.topic_data()? {
            if denied(topic?.name()?) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// `kafka-codec quorum serve`'s request reading (issue 25 item 4): the requests its
/// controller answers read whole (every field: the quorum model takes them all), by the
/// owned frame decode the cluster's transport runs, by the checked view
/// (`RequestFrameView`) and by the lazy view (`LazyRequestFrame`), summed. DescribeQuorum v2
/// (what `kafka-metadata-quorum` polls) and AddRaftVoter v1 (`add-controller`), frames as
/// the transport holds them (no size prefix). `views_ir quorum_serve_<api> quorum-owned|
/// quorum-view|quorum-lazy`.
pub mod quorum_serve {
    use bytes::{Bytes, BytesMut};
    use kafka_codec::messages::add_raft_voter_request::{AddRaftVoterRequestView, Listener};
    use kafka_codec::messages::describe_quorum_request::{
        DescribeQuorumRequestView, PartitionData, TopicData,
    };
    use kafka_codec::messages::{AddRaftVoterRequest, DescribeQuorumRequest};
    use kafka_codec::{
        DecodeError, DecodeOptions, Framing, Lazy, LazyRequestFrame, Request, RequestFrame,
        RequestFrameView, Uuid,
    };

    type Sum = Result<u64, DecodeError>;

    fn bare(frame: RequestFrame) -> Bytes {
        let mut out = BytesMut::new();
        frame
            .with_client_id("kafka-metadata-quorum")
            .encode(&mut out, Framing::Bare)
            .expect("encodes");
        out.freeze()
    }

    /// A DescribeQuorum v2 request for the metadata partition.
    pub fn describe_quorum() -> Bytes {
        let request = DescribeQuorumRequest::default().with_topics(vec![TopicData::default()
            .with_topic_name("__cluster_metadata".into())
            .with_partitions(vec![PartitionData::default().with_partition_index(0)])]);
        bare(RequestFrame::new(request, 2, 7))
    }

    /// An AddRaftVoter v1 request adding controller 4 with one listener.
    pub fn add_raft_voter() -> Bytes {
        let request = AddRaftVoterRequest::default()
            .with_cluster_id(Some("kafka-codec-quorum".into()))
            .with_timeout_ms(30_000)
            .with_voter_id(4)
            .with_voter_directory_id(Uuid([7; 16]))
            .with_listeners(vec![Listener::default()
                .with_name("CONTROLLER".into())
                .with_host("controller-4.invalid".into())
                .with_port(9093)])
            .with_ack_when_committed(true);
        bare(RequestFrame::new(request, 1, 7))
    }

    fn uuid(id: Uuid) -> u64 {
        let (high, low) = id.halves();
        (high ^ low) as u64
    }

    pub fn owned(frame: &Bytes) -> Sum {
        let request = RequestFrame::decode_with(frame.clone(), &DecodeOptions::default())?;
        let mut sum = request.header.correlation_id as u64;
        match &request.body {
            Request::DescribeQuorum(body) => {
                for topic in &body.topics {
                    sum += topic.topic_name.len() as u64;
                    for partition in &topic.partitions {
                        sum += partition.partition_index as u64;
                    }
                }
            }
            Request::AddRaftVoter(body) => {
                sum += body.cluster_id.as_ref().map_or(1, |s| s.len()) as u64;
                sum += body.timeout_ms as u64 + body.voter_id as u64;
                sum ^= uuid(body.voter_directory_id);
                for listener in &body.listeners {
                    sum += listener.name.len() as u64 + listener.host.len() as u64;
                    sum += listener.port as u64;
                }
                sum += body.ack_when_committed as u64;
            }
            _ => {}
        }
        Ok(sum)
    }

    pub fn checked_view(frame: &Bytes) -> Sum {
        let view = RequestFrameView::new(frame, &DecodeOptions::default())?;
        let mut sum = view.header().correlation_id() as u64;
        if let Some(body) = view.body::<DescribeQuorumRequestView<'_>>() {
            for topic in body.topics() {
                sum += topic.topic_name().len() as u64;
                for partition in topic.partitions() {
                    sum += partition.partition_index() as u64;
                }
            }
        } else if let Some(body) = view.body::<AddRaftVoterRequestView<'_>>() {
            sum += body.cluster_id().map_or(1, str::len) as u64;
            sum += body.timeout_ms() as u64 + body.voter_id() as u64;
            sum ^= uuid(body.voter_directory_id());
            for listener in body.listeners() {
                sum += listener.name().len() as u64 + listener.host().len() as u64;
                sum += listener.port() as u64;
            }
            sum += body.ack_when_committed() as u64;
        }
        Ok(sum)
    }

    pub fn lazy_view(frame: &Bytes) -> Sum {
        let view = LazyRequestFrame::new(frame, &DecodeOptions::default())?;
        let mut sum = view.header().correlation_id() as u64;
        if let Some(body) = view.body::<DescribeQuorumRequestView<'_, Lazy>>() {
            for topic in body.topics()? {
                let topic = topic?;
                sum += topic.topic_name()?.len() as u64;
                for partition in topic.partitions()? {
                    sum += partition?.partition_index()? as u64;
                }
            }
        } else if let Some(body) = view.body::<AddRaftVoterRequestView<'_, Lazy>>() {
            sum += body.cluster_id()?.map_or(1, str::len) as u64;
            sum += body.timeout_ms()? as u64 + body.voter_id()? as u64;
            sum ^= uuid(body.voter_directory_id()?);
            for listener in body.listeners()? {
                let listener = listener?;
                sum += listener.name()?.len() as u64 + listener.host()?.len() as u64;
                sum += listener.port()? as u64;
            }
            sum += body.ack_when_committed()? as u64;
        }
        Ok(sum)
    }
}

/// A full walk of every field through a lazy view (issue 25: "a full walk of every field
/// through the view no slower than the owned decode"), as a reader of every field writes it:
/// each struct's `fields()` (every field of the struct read in one pass, one `Result`), its
/// arrays of structs iterated as their elements' fields, its arrays of numbers as
/// `ViewArray`s, tagged fields read with the section in the same pass; every value folded
/// into a sum so that nothing is optimised away; nothing built, nothing allocated. The owned
/// decode it is set against reads every field too (and builds the message).
/// `views_ir <case> walk-fields`; [`full_walk_accessors`] is the same walk through one
/// accessor per field, which gives the same sums.
pub mod full_walk {
    use bytes::Bytes;
    use kafka_codec::messages::describe_quorum_response::{
        DescribeQuorumResponseView, ReplicaStateFields,
    };
    use kafka_codec::messages::fetch_response::FetchResponseView;
    use kafka_codec::messages::metadata_response::MetadataResponseView;
    use kafka_codec::messages::produce_request::ProduceRequestView;
    use kafka_codec::messages::{
        DescribeQuorumResponse, FetchResponse, MetadataResponse, ProduceRequest,
    };
    use kafka_codec::{DecodeError, Lazy, LazyMessage, Uuid};

    type Sum = Result<u64, DecodeError>;

    fn text(value: Option<&str>) -> u64 {
        value.map_or(1, |s| s.len() as u64)
    }

    fn uuid(id: Uuid) -> u64 {
        let (high, low) = id.halves();
        (high ^ low) as u64
    }

    pub fn produce(bytes: &Bytes, _: i16) -> Sum {
        let message = LazyMessage::new::<ProduceRequest>(bytes, 13)?;
        let view: ProduceRequestView<'_, Lazy> = message.view().expect("its view");
        let f = view.fields()?;
        let mut sum = text(f.transactional_id);
        sum = sum
            .wrapping_add(f.acks as u64)
            .wrapping_add(f.timeout_ms as u64);
        for topic in f.topic_data {
            let topic = topic?;
            sum ^= uuid(topic.topic_id);
            for partition in topic.partition_data {
                let partition = partition?;
                sum = sum.wrapping_add(partition.index as u64);
                sum = sum.wrapping_add(partition.records.map_or(1, <[u8]>::len) as u64);
            }
        }
        Ok(sum)
    }

    pub fn fetch(bytes: &Bytes, _: i16) -> Sum {
        let message = LazyMessage::new::<FetchResponse>(bytes, 18)?;
        let view: FetchResponseView<'_, Lazy> = message.view().expect("its view");
        let f = view.fields()?;
        let mut sum = f.throttle_time_ms as u64;
        sum = sum
            .wrapping_add(f.error_code as u64)
            .wrapping_add(f.session_id as u64);
        for topic in f.responses {
            let topic = topic?;
            sum ^= uuid(topic.topic_id);
            for p in topic.partitions {
                let p = p?;
                sum = sum
                    .wrapping_add(p.partition_index as u64)
                    .wrapping_add(p.error_code as u64);
                sum = sum
                    .wrapping_add(p.high_watermark as u64)
                    .wrapping_add(p.last_stable_offset as u64);
                sum = sum.wrapping_add(p.log_start_offset as u64);
                let diverging = p.diverging_epoch;
                sum = sum
                    .wrapping_add(diverging.epoch as u64)
                    .wrapping_add(diverging.end_offset as u64);
                let leader = p.current_leader;
                sum = sum
                    .wrapping_add(leader.leader_id as u64)
                    .wrapping_add(leader.leader_epoch as u64);
                let snapshot = p.snapshot_id;
                sum = sum
                    .wrapping_add(snapshot.end_offset as u64)
                    .wrapping_add(snapshot.epoch as u64);
                if let Some(aborted) = p.aborted_transactions {
                    for a in aborted {
                        let a = a?;
                        sum = sum
                            .wrapping_add(a.producer_id as u64)
                            .wrapping_add(a.first_offset as u64);
                    }
                }
                sum = sum.wrapping_add(p.preferred_read_replica as u64);
                sum = sum.wrapping_add(p.records.map_or(1, <[u8]>::len) as u64);
            }
        }
        for node in f.node_endpoints {
            let node = node?;
            sum = sum
                .wrapping_add(node.node_id as u64)
                .wrapping_add(node.host.len() as u64);
            sum = sum
                .wrapping_add(node.port as u64)
                .wrapping_add(text(node.rack));
        }
        Ok(sum)
    }

    pub fn metadata(bytes: &Bytes, _: i16) -> Sum {
        let message = LazyMessage::new::<MetadataResponse>(bytes, 13)?;
        let view: MetadataResponseView<'_, Lazy> = message.view().expect("its view");
        let f = view.fields()?;
        let mut sum = f.throttle_time_ms as u64;
        for broker in f.brokers {
            let broker = broker?;
            sum = sum
                .wrapping_add(broker.node_id as u64)
                .wrapping_add(broker.host.len() as u64);
            sum = sum
                .wrapping_add(broker.port as u64)
                .wrapping_add(text(broker.rack));
        }
        sum = sum
            .wrapping_add(text(f.cluster_id))
            .wrapping_add(f.controller_id as u64);
        for topic in f.topics {
            let topic = topic?;
            sum = sum
                .wrapping_add(topic.error_code as u64)
                .wrapping_add(text(topic.name));
            sum ^= uuid(topic.topic_id);
            sum = sum.wrapping_add(topic.is_internal as u64);
            for p in topic.partitions {
                let p = p?;
                sum = sum
                    .wrapping_add(p.error_code as u64)
                    .wrapping_add(p.partition_index as u64);
                sum = sum
                    .wrapping_add(p.leader_id as u64)
                    .wrapping_add(p.leader_epoch as u64);
                for node in p.replica_nodes {
                    sum = sum.wrapping_add(node as u64);
                }
                for node in p.isr_nodes {
                    sum = sum.wrapping_add(node as u64);
                }
                for node in p.offline_replicas {
                    sum = sum.wrapping_add(node as u64);
                }
            }
            sum = sum.wrapping_add(topic.topic_authorized_operations as u64);
        }
        sum = sum.wrapping_add(f.error_code as u64);
        Ok(sum)
    }

    /// A full walk of a message at a version.
    pub type Walk = fn(&Bytes, i16) -> Sum;

    /// The walk of a case of `views_ir` (and the bench).
    pub fn of(case: &str) -> Option<Walk> {
        Some(match case {
            "produce_request_v13" => produce,
            "fetch_response_v18" => fetch,
            crate::METADATA_SMALL => metadata,
            _ if case.starts_with("describe_quorum_response_v") => describe_quorum,
            _ => return None,
        })
    }

    fn replica(replica: ReplicaStateFields<'_, Lazy>) -> u64 {
        let mut sum = replica.replica_id as u64 ^ uuid(replica.replica_directory_id);
        sum = sum
            .wrapping_add(replica.log_end_offset as u64)
            .wrapping_add(replica.last_fetch_timestamp as u64);
        sum.wrapping_add(replica.last_caught_up_timestamp as u64)
    }

    pub fn describe_quorum(bytes: &Bytes, version: i16) -> Sum {
        let message = LazyMessage::new::<DescribeQuorumResponse>(bytes, version)?;
        let view: DescribeQuorumResponseView<'_, Lazy> = message.view().expect("its view");
        let f = view.fields()?;
        let mut sum = (f.error_code as u64).wrapping_add(text(f.error_message));
        for topic in f.topics {
            let topic = topic?;
            sum = sum.wrapping_add(topic.topic_name.len() as u64);
            for p in topic.partitions {
                let p = p?;
                sum = sum
                    .wrapping_add(p.partition_index as u64)
                    .wrapping_add(p.error_code as u64);
                sum = sum
                    .wrapping_add(text(p.error_message))
                    .wrapping_add(p.leader_id as u64);
                sum = sum
                    .wrapping_add(p.leader_epoch as u64)
                    .wrapping_add(p.high_watermark as u64);
                for voter in p.current_voters {
                    sum = sum.wrapping_add(replica(voter?));
                }
                if let Some(committed) = p.committed_voters {
                    for voter in committed {
                        sum = sum.wrapping_add(replica(voter?));
                    }
                }
                for observer in p.observers {
                    sum = sum.wrapping_add(replica(observer?));
                }
            }
        }
        for node in f.nodes {
            let node = node?;
            sum = sum.wrapping_add(node.node_id as u64);
            for listener in node.listeners {
                let listener = listener?;
                sum = sum
                    .wrapping_add(listener.name.len() as u64)
                    .wrapping_add(listener.host.len() as u64);
                sum = sum.wrapping_add(listener.port as u64);
            }
        }
        Ok(sum)
    }
}

/// Every field of a message handed to a visitor in wire order by the lazy root view's
/// `walk` (`ViewVisitor`): each byte read once, nothing built. The visitor sums every value
/// as [`full_walk`] does (numbers added, strings and bytes by length, 1 for null, uuids by
/// their halves' xor), but knows no field by name: `views_ir <case> walk-visit`.
pub mod full_visit {
    use bytes::Bytes;
    use kafka_codec::codegen::DecodeFields;
    use kafka_codec::messages::{
        DescribeQuorumResponse, FetchResponse, MetadataResponse, ProduceRequest,
    };
    use kafka_codec::{
        DecodeError, LazyMessage, Message, StructView, Uuid, ViewArray, ViewScalar, ViewVisitor,
        Viewable,
    };

    type Sum = Result<u64, DecodeError>;

    /// The sum of every value it is handed.
    #[derive(Default)]
    pub struct Summer(pub u64);

    impl Summer {
        #[inline]
        fn add(&mut self, value: u64) {
            self.0 = self.0.wrapping_add(value);
        }
    }

    impl<'a> ViewVisitor<'a> for Summer {
        #[inline]
        fn bool(&mut self, _: &'static str, value: bool) {
            self.add(value as u64);
        }
        #[inline]
        fn i8(&mut self, _: &'static str, value: i8) {
            self.add(value as u64);
        }
        #[inline]
        fn i16(&mut self, _: &'static str, value: i16) {
            self.add(value as u64);
        }
        #[inline]
        fn u16(&mut self, _: &'static str, value: u16) {
            self.add(value as u64);
        }
        #[inline]
        fn i32(&mut self, _: &'static str, value: i32) {
            self.add(value as u64);
        }
        #[inline]
        fn u32(&mut self, _: &'static str, value: u32) {
            self.add(value as u64);
        }
        #[inline]
        fn i64(&mut self, _: &'static str, value: i64) {
            self.add(value as u64);
        }
        #[inline]
        fn f64(&mut self, _: &'static str, value: f64) {
            self.add(value.to_bits());
        }
        #[inline]
        fn uuid(&mut self, _: &'static str, value: Uuid) {
            let (high, low) = value.halves();
            self.0 ^= (high ^ low) as u64;
        }
        #[inline]
        fn string(&mut self, _: &'static str, value: Option<&'a str>) {
            self.add(value.map_or(1, |s| s.len() as u64));
        }
        #[inline]
        fn bytes(&mut self, _: &'static str, value: Option<&'a [u8]>) {
            self.add(value.map_or(1, <[u8]>::len) as u64);
        }
        #[inline]
        fn fixed_array<T: ViewScalar>(
            &mut self,
            field: &'static str,
            values: Option<ViewArray<'a, T>>,
        ) {
            for value in values.unwrap_or_default() {
                value.visit(field, self);
            }
        }
    }

    /// Every field of `M` at `version` from `bytes`, summed.
    pub fn sum<M: Message + Viewable + DecodeFields + 'static>(bytes: &Bytes, version: i16) -> Sum {
        let message = LazyMessage::new::<M>(bytes, version)?;
        let view: M::LazyView<'_> = message.view().expect("its view");
        let mut summer = Summer::default();
        view.walk_struct(&mut summer)?;
        Ok(summer.0)
    }

    /// A full walk of a message at a version.
    pub type Walk = fn(&Bytes, i16) -> Sum;

    /// The walk of a case of `views_ir` (and the bench).
    pub fn of(case: &str) -> Option<Walk> {
        Some(match case {
            "produce_request_v13" => sum::<ProduceRequest>,
            "fetch_response_v18" => sum::<FetchResponse>,
            crate::METADATA_SMALL => sum::<MetadataResponse>,
            _ if case.starts_with("describe_quorum_response_v") => sum::<DescribeQuorumResponse>,
            _ => return None,
        })
    }
}

/// The walk of [`full_walk`] through a lazy view's accessors, one per field (each a walk to
/// its field and a `Result`), tagged ones by tag: what a walk took before `fields()`; the same
/// sums. `views_ir <case> walk-accessors`.
pub mod full_walk_accessors {
    use bytes::Bytes;
    use kafka_codec::messages::describe_quorum_response::{
        DescribeQuorumResponseView, ReplicaStateView,
    };
    use kafka_codec::messages::fetch_response::FetchResponseView;
    use kafka_codec::messages::metadata_response::MetadataResponseView;
    use kafka_codec::messages::produce_request::ProduceRequestView;
    use kafka_codec::messages::{
        DescribeQuorumResponse, FetchResponse, MetadataResponse, ProduceRequest,
    };
    use kafka_codec::{DecodeError, Lazy, LazyMessage, Uuid};

    type Sum = Result<u64, DecodeError>;

    fn text(value: Option<&str>) -> u64 {
        value.map_or(1, |s| s.len() as u64)
    }

    fn uuid(id: Uuid) -> u64 {
        let (high, low) = id.halves();
        (high ^ low) as u64
    }

    pub fn produce(bytes: &Bytes, _: i16) -> Sum {
        let message = LazyMessage::new::<ProduceRequest>(bytes, 13)?;
        let view: ProduceRequestView<'_, Lazy> = message.view().expect("its view");
        let mut sum = text(view.transactional_id()?);
        sum = sum
            .wrapping_add(view.acks()? as u64)
            .wrapping_add(view.timeout_ms()? as u64);
        for topic in view.topic_data()? {
            let topic = topic?;
            sum ^= uuid(topic.topic_id()?);
            for partition in topic.partition_data()? {
                let partition = partition?;
                sum = sum.wrapping_add(partition.index()? as u64);
                sum = sum.wrapping_add(partition.records()?.map_or(1, <[u8]>::len) as u64);
            }
        }
        Ok(sum)
    }

    pub fn fetch(bytes: &Bytes, _: i16) -> Sum {
        let message = LazyMessage::new::<FetchResponse>(bytes, 18)?;
        let view: FetchResponseView<'_, Lazy> = message.view().expect("its view");
        let mut sum = view.throttle_time_ms()? as u64;
        sum = sum
            .wrapping_add(view.error_code()? as u64)
            .wrapping_add(view.session_id()? as u64);
        for topic in view.responses()? {
            let topic = topic?;
            sum ^= uuid(topic.topic_id()?);
            for p in topic.partitions()? {
                let p = p?;
                sum = sum
                    .wrapping_add(p.partition_index()? as u64)
                    .wrapping_add(p.error_code()? as u64);
                sum = sum
                    .wrapping_add(p.high_watermark()? as u64)
                    .wrapping_add(p.last_stable_offset()? as u64);
                sum = sum.wrapping_add(p.log_start_offset()? as u64);
                let diverging = p.diverging_epoch()?;
                sum = sum
                    .wrapping_add(diverging.epoch()? as u64)
                    .wrapping_add(diverging.end_offset()? as u64);
                let leader = p.current_leader()?;
                sum = sum
                    .wrapping_add(leader.leader_id()? as u64)
                    .wrapping_add(leader.leader_epoch()? as u64);
                let snapshot = p.snapshot_id()?;
                sum = sum
                    .wrapping_add(snapshot.end_offset()? as u64)
                    .wrapping_add(snapshot.epoch()? as u64);
                if let Some(aborted) = p.aborted_transactions()? {
                    for a in aborted {
                        let a = a?;
                        sum = sum
                            .wrapping_add(a.producer_id()? as u64)
                            .wrapping_add(a.first_offset()? as u64);
                    }
                }
                sum = sum.wrapping_add(p.preferred_read_replica()? as u64);
                sum = sum.wrapping_add(p.records()?.map_or(1, <[u8]>::len) as u64);
            }
        }
        for node in view.node_endpoints()? {
            let node = node?;
            sum = sum
                .wrapping_add(node.node_id()? as u64)
                .wrapping_add(node.host()?.len() as u64);
            sum = sum
                .wrapping_add(node.port()? as u64)
                .wrapping_add(text(node.rack()?));
        }
        Ok(sum)
    }

    pub fn metadata(bytes: &Bytes, _: i16) -> Sum {
        let message = LazyMessage::new::<MetadataResponse>(bytes, 13)?;
        let view: MetadataResponseView<'_, Lazy> = message.view().expect("its view");
        let mut sum = view.throttle_time_ms()? as u64;
        for broker in view.brokers()? {
            let broker = broker?;
            sum = sum
                .wrapping_add(broker.node_id()? as u64)
                .wrapping_add(broker.host()?.len() as u64);
            sum = sum
                .wrapping_add(broker.port()? as u64)
                .wrapping_add(text(broker.rack()?));
        }
        sum = sum
            .wrapping_add(text(view.cluster_id()?))
            .wrapping_add(view.controller_id()? as u64);
        for topic in view.topics()? {
            let topic = topic?;
            sum = sum
                .wrapping_add(topic.error_code()? as u64)
                .wrapping_add(text(topic.name()?));
            sum ^= uuid(topic.topic_id()?);
            sum = sum.wrapping_add(topic.is_internal()? as u64);
            for p in topic.partitions()? {
                let p = p?;
                sum = sum
                    .wrapping_add(p.error_code()? as u64)
                    .wrapping_add(p.partition_index()? as u64);
                sum = sum
                    .wrapping_add(p.leader_id()? as u64)
                    .wrapping_add(p.leader_epoch()? as u64);
                for node in p.replica_nodes()? {
                    sum = sum.wrapping_add(node? as u64);
                }
                for node in p.isr_nodes()? {
                    sum = sum.wrapping_add(node? as u64);
                }
                for node in p.offline_replicas()? {
                    sum = sum.wrapping_add(node? as u64);
                }
            }
            sum = sum.wrapping_add(topic.topic_authorized_operations()? as u64);
        }
        sum = sum.wrapping_add(view.error_code()? as u64);
        Ok(sum)
    }

    /// A full walk of a message at a version.
    pub type Walk = fn(&Bytes, i16) -> Sum;

    /// The walk of a case of `views_ir` (and the bench).
    pub fn of(case: &str) -> Option<Walk> {
        Some(match case {
            "produce_request_v13" => produce,
            "fetch_response_v18" => fetch,
            crate::METADATA_SMALL => metadata,
            _ if case.starts_with("describe_quorum_response_v") => describe_quorum,
            _ => return None,
        })
    }

    fn replica(replica: ReplicaStateView<'_, Lazy>) -> Sum {
        let mut sum = replica.replica_id()? as u64 ^ uuid(replica.replica_directory_id()?);
        sum = sum
            .wrapping_add(replica.log_end_offset()? as u64)
            .wrapping_add(replica.last_fetch_timestamp()? as u64);
        sum = sum.wrapping_add(replica.last_caught_up_timestamp()? as u64);
        Ok(sum)
    }

    pub fn describe_quorum(bytes: &Bytes, version: i16) -> Sum {
        let message = LazyMessage::new::<DescribeQuorumResponse>(bytes, version)?;
        let view: DescribeQuorumResponseView<'_, Lazy> = message.view().expect("its view");
        let mut sum = (view.error_code()? as u64).wrapping_add(text(view.error_message()?));
        for topic in view.topics()? {
            let topic = topic?;
            sum = sum.wrapping_add(topic.topic_name()?.len() as u64);
            for p in topic.partitions()? {
                let p = p?;
                sum = sum
                    .wrapping_add(p.partition_index()? as u64)
                    .wrapping_add(p.error_code()? as u64);
                sum = sum
                    .wrapping_add(text(p.error_message()?))
                    .wrapping_add(p.leader_id()? as u64);
                sum = sum
                    .wrapping_add(p.leader_epoch()? as u64)
                    .wrapping_add(p.high_watermark()? as u64);
                for voter in p.current_voters()? {
                    sum = sum.wrapping_add(replica(voter?)?);
                }
                if let Some(committed) = p.committed_voters()? {
                    for voter in committed {
                        sum = sum.wrapping_add(replica(voter?)?);
                    }
                }
                for observer in p.observers()? {
                    sum = sum.wrapping_add(replica(observer?)?);
                }
            }
        }
        for node in view.nodes()? {
            let node = node?;
            sum = sum.wrapping_add(node.node_id()? as u64);
            for listener in node.listeners()? {
                let listener = listener?;
                sum = sum
                    .wrapping_add(listener.name()?.len() as u64)
                    .wrapping_add(listener.host()?.len() as u64);
                sum = sum.wrapping_add(listener.port()? as u64);
            }
        }
        Ok(sum)
    }
}

/// A hand-written routing read: plain safe code for exactly the fields a route needs and
/// this one layout (no views, no version tests), as a programmer would write it without a
/// codec: every read bounds-checked (`Option` and `?`), lengths and counts read as the owned
/// decoder reads them, names checked as UTF-8. A reference for the views' routing reads
/// (`views_ir ... route-hand-written`), not a proven lower bound: tighter code can beat it.
mod hand_written {
    /// A position in a body; `None` from any read past its end.
    pub struct Cursor<'a> {
        bytes: &'a [u8],
        pos: usize,
    }

    impl<'a> Cursor<'a> {
        pub fn new(bytes: &'a [u8]) -> Self {
            Cursor { bytes, pos: 0 }
        }

        #[inline]
        pub fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
            let value = *self.bytes.get(self.pos..)?.first_chunk::<N>()?;
            self.pos += N;
            Some(value)
        }

        #[inline]
        pub fn skip(&mut self, len: usize) -> Option<()> {
            let end = self.pos.checked_add(len)?;
            (end <= self.bytes.len()).then(|| self.pos = end)
        }

        #[inline]
        pub fn i32(&mut self) -> Option<i32> {
            self.take().map(i32::from_be_bytes)
        }

        /// An unsigned varint of at most five bytes, as the owned decoder reads lengths.
        #[inline]
        pub fn uvarint(&mut self) -> Option<u32> {
            let mut value = 0u32;
            for shift in 0..5 {
                let byte = *self.bytes.get(self.pos)?;
                self.pos += 1;
                value |= u32::from(byte & 0x7f) << (7 * shift);
                if byte < 0x80 {
                    return Some(value);
                }
            }
            None
        }

        /// A compact length (`None` inside for null).
        #[inline]
        pub fn compact_len(&mut self) -> Option<Option<usize>> {
            Some((self.uvarint()? as usize).checked_sub(1))
        }

        /// A compact nullable `bytes`/`records` value.
        #[inline]
        pub fn compact_bytes(&mut self) -> Option<Option<&'a [u8]>> {
            let Some(len) = self.compact_len()? else {
                return Some(None);
            };
            let start = self.pos;
            self.skip(len)?;
            Some(Some(&self.bytes[start..self.pos]))
        }

        /// A compact nullable string, checked as UTF-8.
        #[inline]
        pub fn compact_str(&mut self) -> Option<Option<&'a str>> {
            self.compact_bytes()?
                .map(|b| std::str::from_utf8(b).ok())
                .map_or(Some(None), |s| s.map(Some))
        }

        /// An array of fixed-width values.
        #[inline]
        pub fn skip_compact_fixed_array(&mut self, width: usize) -> Option<()> {
            let count = self.compact_len()?.unwrap_or(0);
            self.skip(count.checked_mul(width)?)
        }

        /// A tagged section, unread.
        #[inline]
        pub fn skip_tagged(&mut self) -> Option<()> {
            if self.bytes.get(self.pos) == Some(&0) {
                self.pos += 1;
                return Some(());
            }
            for _ in 0..self.uvarint()? {
                self.uvarint()?;
                let size = self.uvarint()? as usize;
                self.skip(size)?;
            }
            Some(())
        }
    }

    /// Produce v13: topic id, then each partition's index and records length.
    pub fn produce(bytes: &[u8]) -> Option<u64> {
        let mut c = Cursor::new(bytes);
        let _transactional_id = c.compact_bytes()?;
        c.skip(2 + 4)?; // acks, timeout
        let mut sum = 0u64;
        for _ in 0..c.compact_len()?.unwrap_or(0) {
            sum ^= u64::from_be_bytes(c.take::<8>()?);
            c.skip(8)?;
            for _ in 0..c.compact_len()?.unwrap_or(0) {
                sum += c.i32()? as u64;
                sum += c.compact_bytes()?.map_or(0, <[u8]>::len) as u64;
                c.skip_tagged()?;
            }
            c.skip_tagged()?;
        }
        c.skip_tagged()?; // the body's, read so that a cut body is refused
        Some(sum)
    }

    /// Fetch v18: topic id, then each partition's index, error code, high watermark and
    /// records length.
    pub fn fetch(bytes: &[u8]) -> Option<u64> {
        let mut c = Cursor::new(bytes);
        c.skip(4 + 2 + 4)?; // throttle time, error code, session id
        let mut sum = 0u64;
        for _ in 0..c.compact_len()?.unwrap_or(0) {
            sum ^= u64::from_be_bytes(c.take::<8>()?);
            c.skip(8)?;
            for _ in 0..c.compact_len()?.unwrap_or(0) {
                sum += c.i32()? as u64;
                sum += i16::from_be_bytes(c.take()?) as u64;
                sum += i64::from_be_bytes(c.take()?) as u64;
                c.skip(8 + 8)?; // last stable offset, log start offset
                for _ in 0..c.compact_len()?.unwrap_or(0) {
                    c.skip(8 + 8)?; // an aborted transaction
                    c.skip_tagged()?;
                }
                c.skip(4)?; // preferred read replica
                sum += c.compact_bytes()?.map_or(0, <[u8]>::len) as u64;
                c.skip_tagged()?;
            }
            c.skip_tagged()?;
        }
        c.skip_tagged()?; // the body's (node endpoints)
        Some(sum)
    }

    /// Metadata v13: each topic's name and its partitions' leader ids.
    pub fn metadata(bytes: &[u8]) -> Option<u64> {
        let mut c = Cursor::new(bytes);
        c.skip(4)?; // throttle time
        for _ in 0..c.compact_len()?.unwrap_or(0) {
            c.skip(4)?; // node id
            c.compact_bytes()?; // host
            c.skip(4)?; // port
            c.compact_bytes()?; // rack
            c.skip_tagged()?;
        }
        c.compact_bytes()?; // cluster id
        c.skip(4)?; // controller id
        let mut sum = 0u64;
        for _ in 0..c.compact_len()?.unwrap_or(0) {
            c.skip(2)?; // error code
            sum += c.compact_str()?.map_or(0, str::len) as u64;
            c.skip(16 + 1)?; // topic id, is internal
            for _ in 0..c.compact_len()?.unwrap_or(0) {
                c.skip(2 + 4)?; // error code, partition index
                sum += c.i32()? as u64;
                c.skip(4)?; // leader epoch
                for _ in 0..3 {
                    c.skip_compact_fixed_array(4)?; // replicas, ISR, offline replicas
                }
                c.skip_tagged()?;
            }
            c.skip(4)?; // topic authorized operations
            c.skip_tagged()?;
        }
        c.skip(2)?; // error code
        c.skip_tagged()?;
        Some(sum)
    }
}

/// The floor of a Produce v13 routing read: the least a safe reader of this one layout can
/// do to reach every partition's index and records length (and the topic id) and refuse a cut
/// body. One position over the slice, kept in a register (every helper takes and returns it),
/// a one-byte fast path for varints, an empty tagged section one compare (a non-empty one
/// cold), every read bounds-checked by `get`, nothing
/// else read or checked (the transactional id is stepped over by its length). Issue 25's
/// routing target is measured against this (`views_ir produce_request_v13 route-floor`): what
/// is left above it is the views' own cost, what it costs is the wire format's.
mod floor {
    /// An unsigned varint of at most five bytes at `pos`: its value and the position after it.
    #[inline(always)]
    fn uvarint(b: &[u8], pos: usize) -> Option<(u32, usize)> {
        let first = *b.get(pos)?;
        if first < 0x80 {
            return Some((u32::from(first), pos + 1));
        }
        let mut value = u32::from(first & 0x7f);
        for i in 1..5 {
            let byte = *b.get(pos + i)?;
            value |= u32::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                return Some((value, pos + i + 1));
            }
        }
        None
    }

    /// An unsigned varint from five bytes in hand: its value and its length.
    #[inline(always)]
    fn uvarint_in(bytes: &[u8; 5]) -> Option<(u32, usize)> {
        let mut value = 0u32;
        for (i, &byte) in bytes.iter().enumerate() {
            value |= u32::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                return Some((value, i + 1));
            }
        }
        None
    }

    /// A compact length or count (null is 0: nothing to step over) and the position after it.
    #[inline(always)]
    fn compact_len(b: &[u8], pos: usize) -> Option<(usize, usize)> {
        let (len, pos) = uvarint(b, pos)?;
        Some(((len as usize).saturating_sub(1), pos))
    }

    /// The position after a tagged section.
    #[inline(always)]
    fn tagged(b: &[u8], pos: usize) -> Option<usize> {
        if *b.get(pos)? == 0 {
            return Some(pos + 1);
        }
        tagged_long(b, pos)
    }

    #[cold]
    #[inline(never)]
    fn tagged_long(b: &[u8], pos: usize) -> Option<usize> {
        let (count, mut pos) = uvarint(b, pos)?;
        for _ in 0..count {
            let (_tag, at) = uvarint(b, pos)?;
            let (size, at) = uvarint(b, at)?;
            pos = at.checked_add(size as usize)?;
        }
        (pos <= b.len()).then_some(pos)
    }

    #[inline(always)]
    fn array<const N: usize>(b: &[u8], pos: usize) -> Option<[u8; N]> {
        b.get(pos..)?.first_chunk::<N>().copied()
    }

    /// Produce v13: the topic id, then each partition's index and records length.
    pub fn produce(b: &[u8]) -> Option<u64> {
        let (id, pos) = compact_len(b, 0)?; // transactional id
        let (topics, mut pos) = compact_len(b, pos + id + 2 + 4)?; // after it, acks, timeout
        let mut sum = 0u64;
        for _ in 0..topics {
            sum ^= u64::from_be_bytes(array(b, pos)?);
            let (partitions, at) = compact_len(b, pos + 16)?;
            pos = at;
            for _ in 0..partitions {
                // The index and the records' length from one bounds check where nine bytes
                // are left (the length's varint read from the array, unchecked by position).
                let (index, records, at) = match array::<9>(b, pos) {
                    Some(head) => {
                        let [i0, i1, i2, i3, varint @ ..] = head;
                        let (len, n) = uvarint_in(&varint)?;
                        let index = i32::from_be_bytes([i0, i1, i2, i3]);
                        (index, (len as usize).saturating_sub(1), pos + 4 + n)
                    }
                    None => {
                        let index = i32::from_be_bytes(array(b, pos)?);
                        let (records, at) = compact_len(b, pos + 4)?;
                        (index, records, at)
                    }
                };
                sum += index as u64 + records as u64;
                pos = tagged(b, at + records)?;
            }
            pos = tagged(b, pos)?;
        }
        tagged(b, pos)?; // the body's: a cut body is refused
        Some(sum)
    }
}

pub fn produce_route_floor(bytes: &Bytes) -> u64 {
    floor::produce(bytes).expect("valid")
}

/// The floor of a case's routing read where there is one (Produce v13: `floor`).
pub fn floor_route(case: &str) -> Option<Route> {
    match case {
        "produce_request_v13" => Some(produce_route_floor),
        _ => None,
    }
}

pub fn produce_route_hand_written(bytes: &Bytes) -> u64 {
    hand_written::produce(bytes).expect("valid")
}

pub fn fetch_route_hand_written(bytes: &Bytes) -> u64 {
    hand_written::fetch(bytes).expect("valid")
}

pub fn metadata_route_hand_written(bytes: &Bytes) -> u64 {
    hand_written::metadata(bytes).expect("valid")
}

/// The hand-written routing read of a case (see `hand_written`).
pub fn hand_written_route(case: &str) -> Option<Route> {
    Some(match case {
        "produce_request_v13" => produce_route_hand_written,
        "fetch_response_v18" => fetch_route_hand_written,
        crate::METADATA_SMALL => metadata_route_hand_written,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{fetch_response, metadata_response, produce_request, METADATA_SMALL};

    /// The three readers of `quorum serve`'s requests read the same sums, and refuse a frame
    /// cut short.
    #[test]
    fn the_quorum_serve_reads_agree() {
        use quorum_serve::{add_raft_voter, checked_view, describe_quorum, lazy_view, owned};
        for frame in [describe_quorum(), add_raft_voter()] {
            let sum = owned(&frame).unwrap();
            assert_eq!(checked_view(&frame).unwrap(), sum);
            assert_eq!(lazy_view(&frame).unwrap(), sum);
            let cut = frame.slice(..frame.len() - 3);
            for read in [owned, checked_view, lazy_view] {
                assert!(read(&cut).is_err());
            }
        }
    }

    /// Each full walk reads its case whole, and fails (not panics) on the case cut short.
    #[test]
    fn the_full_walks_read_every_case() {
        use crate::describe_quorum_response;
        let quorum = describe_quorum_response().message;
        let cases = [
            ("produce_request_v13", produce_request().bytes, 13),
            ("fetch_response_v18", fetch_response().bytes, 18),
            (
                METADATA_SMALL,
                metadata_response(METADATA_SMALL, 100, 10).bytes,
                13,
            ),
            (
                "describe_quorum_response_v2",
                quorum.encode_to_bytes(2).unwrap(),
                2,
            ),
            (
                "describe_quorum_response_v3",
                quorum.encode_to_bytes(3).unwrap(),
                3,
            ),
        ];
        for (case, bytes, version) in cases {
            // `fields()` and the accessors read the same values.
            let sum = full_walk_accessors::of(case).unwrap()(&bytes, version);
            assert_eq!(full_walk::of(case).unwrap()(&bytes, version), sum, "{case}");
            assert!(
                full_walk_accessors::of(case).unwrap()(&bytes.slice(..bytes.len() - 2), version)
                    .is_err(),
                "{case}"
            );
            let walk = full_walk::of(case).unwrap();
            assert!(walk(&bytes, version).is_ok(), "{case}");
            assert!(
                walk(&bytes.slice(..bytes.len() - 2), version).is_err(),
                "{case}"
            );
        }
    }

    /// The three readers of the tap's decision agree on its traffic and on a denied name, and
    /// refuse a frame cut short; a transactional id that is not UTF-8 is refused by the owned
    /// decode and the checked view, and stepped over by the lazy view (what a lazy decision
    /// leaves unchecked).
    #[test]
    fn the_tap_decision_reads_agree() {
        use tap_decision::{checked_view, frame, frame_naming, frame_with, lazy_view, owned};
        let (bytes, named) = (frame(), frame_naming("denied-orders"));
        for read in [owned, checked_view, lazy_view] {
            assert!(!read(&bytes).unwrap());
            assert!(read(&named).unwrap());
        }
        // A transactional id that is not UTF-8: the lazy view steps over it by its length.
        let with_id = frame_with("bench", Some("txn-id-a"));
        let at = with_id.windows(8).position(|w| w == b"txn-id-a").unwrap();
        let mut bad = with_id.to_vec();
        bad[at] = 0xff;
        let bad = Bytes::from(bad);
        assert!(owned(&bad).is_err());
        assert!(checked_view(&bad).is_err());
        assert!(!lazy_view(&bad).unwrap());
        // A frame cut inside its records: refused by all three, the lazy view when it steps
        // over the topic to find its end.
        let cut = bytes.slice(..bytes.len() - 100);
        for read in [owned, checked_view, lazy_view] {
            assert!(read(&cut).is_err());
        }
    }

    /// The hand-written read (`hand_written`) reads what the views, the owned decode and
    /// kafka-protocol read, on every case; a body cut anywhere is refused (`None`), never a
    /// panic.
    #[test]
    fn hand_written_reads_what_every_route_reads() {
        let cases = [
            ("produce_request_v13", produce_request().bytes),
            ("fetch_response_v18", fetch_response().bytes),
            (
                METADATA_SMALL,
                metadata_response(METADATA_SMALL, 100, 10).bytes,
            ),
        ];
        for (case, bytes) in cases {
            let ([view, lazy, owned, kp], _) = routes(case).expect("a views case");
            let hand_written = hand_written_route(case).expect("a views case");
            let want = owned(&bytes);
            for (name, route) in [
                ("view", view),
                ("lazy", lazy),
                ("kp", kp),
                ("hand-written", hand_written),
            ] {
                assert_eq!(route(&bytes), want, "{case}: {name}");
            }
            let read = match case {
                "produce_request_v13" => hand_written::produce,
                "fetch_response_v18" => hand_written::fetch,
                _ => hand_written::metadata,
            };
            // Every cut of the small case; a spread of cuts of the large ones.
            let step = (bytes.len() / 4096).max(1);
            for cut in (0..bytes.len()).step_by(step) {
                assert_eq!(read(&bytes[..cut]), None, "{case}: cut at {cut}");
            }
            if let Some(floor) = floor_route(case) {
                assert_eq!(floor(&bytes), want, "{case}: floor");
                for cut in (0..bytes.len()).step_by(step) {
                    assert_eq!(
                        floor::produce(&bytes[..cut]),
                        None,
                        "{case}: floor, cut at {cut}"
                    );
                }
            }
        }
    }
}
