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
        }
    }
}
