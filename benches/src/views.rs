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
