//! Frame boundaries on the forwarding path: where each size-prefixed frame starts and ends,
//! found by reading nothing but the 4-byte size prefixes, so that forwarding never waits for
//! a decoder.
//!
//! The [`Framer`] turns each chunk read from a socket into [`Piece`]s: bytes to forward at
//! once, and whole frames for the decoder. Normally every byte is forwarded as it arrives.
//! Only with broker address rewriting may a response be *held*: its bytes are kept until the
//! frame is complete, so that the forwarding side can replace it.
//!
//! Every byte a frame keeps is charged to the memory budget as it arrives (a size prefix is
//! only a claim): a frame the budget cannot take any more is kept as its first bytes only.

use kafka_codec::bytes::{Bytes, BytesMut};
use kafka_codec_server::budget::Charge;

/// What a frame's bytes, kept for the decoder, are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// The whole frame, without its size prefix.
    Whole(Bytes),
    /// Only its first bytes: the frame was not kept for decoding.
    Head { head: Bytes, skipped: Skipped },
}

/// Why a frame was not kept whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skipped {
    /// Its size is above the frame limit.
    TooLarge,
    /// The decoder is behind by the whole budget of this connection.
    Backlog,
    /// The process's memory budget could not take it.
    MemoryBudget,
    /// Nothing is logged (`--no-log`).
    NotLogged,
}

/// One frame, as it passed.
#[derive(Debug)]
pub struct Frame {
    /// The size its prefix announced.
    pub size: usize,
    /// What the decoder gets.
    pub content: Content,
    /// The whole frame with its size prefix when it was held: none of its bytes have been
    /// forwarded yet, and the caller forwards these (or a replacement).
    pub held: Option<Bytes>,
    /// What the kept bytes (`content` and `held`) are charged to the memory budget; held
    /// only to be given back when the frame is dropped, once logged.
    #[allow(dead_code)]
    pub charge: Charge,
}

/// What a chunk of the stream turned into, in stream order.
#[derive(Debug)]
pub enum Piece {
    /// Bytes to forward now, unchanged.
    Forward(Bytes),
    /// A frame whose last byte is in this chunk. Unless it was held, its bytes are in the
    /// `Forward` pieces.
    Frame(Frame),
    /// A size prefix that is negative: the stream cannot be split any more. Reported once;
    /// everything after it is forwarded without framing.
    Unframeable(i32),
}

/// How the framer's caller decides about each frame.
pub trait Policy {
    /// Whether a frame of `size` bytes (at most the frame limit) may be kept whole for the
    /// decoder; a `true` reserves that much of the connection's own backlog, which the caller
    /// releases once the frame has been decoded (see [`Framer::reserved`]).
    fn keep_whole(&mut self, size: usize) -> Result<(), Skipped>;
    /// Grows `charge` to cover `bytes` kept in all; `false` if the memory budget cannot take
    /// them (the frame is then kept as its head only).
    fn grow(&mut self, charge: &mut Charge, bytes: usize) -> bool;
    /// An empty charge, to grow.
    fn no_charge(&mut self) -> Charge;
    /// Gives back the backlog [`Policy::keep_whole`] reserved for a frame of `size` bytes
    /// that is no longer kept whole.
    fn release(&mut self, size: usize);
    /// Whether to hold the frame of `size` bytes that starts with `head` (its first 4 bytes,
    /// or fewer if the frame is shorter) until it is complete, and the charge for holding it
    /// whole. Only asked when holding is enabled, for frames of any size.
    fn hold(&mut self, head: &[u8], size: usize) -> Option<Charge>;
}

#[derive(Debug)]
enum State {
    /// Reading a size prefix; `len` bytes of it are in `prefix`.
    Prefix { prefix: [u8; 4], len: usize },
    /// Reading a frame body.
    Body(Current),
    /// After a negative size: no more frames.
    Broken,
}

#[derive(Debug)]
struct Current {
    size: usize,
    remaining: usize,
    /// Prefix and the body so far, whole or up to `head` body bytes.
    bytes: BytesMut,
    /// Reserved in the connection's backlog: the whole frame goes to the decoder.
    reserved: bool,
    /// Why the decoder gets only the head, if it does.
    skipped: Option<Skipped>,
    /// Accumulating all bytes (reserved, or held, or a hold decision pending).
    whole: bool,
    hold: Hold,
    /// What `bytes` is charged to the memory budget.
    charge: Charge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// The frame's bytes are forwarded as they arrive.
    Stream,
    /// Bytes are kept back until the first four body bytes are known.
    Pending,
    /// Bytes are kept back until the frame is complete.
    Held,
}

/// Finds frames in one direction of a connection.
#[derive(Debug)]
pub struct Framer {
    max_frame: usize,
    head: usize,
    holding: bool,
    state: State,
    frames: u64,
}

impl Framer {
    /// Frames above `max_frame` are only kept up to `head` bytes; `holding` enables
    /// [`Policy::hold`].
    pub fn new(max_frame: usize, head: usize, holding: bool) -> Self {
        Framer {
            max_frame,
            head,
            holding,
            state: State::Prefix {
                prefix: [0; 4],
                len: 0,
            },
            frames: 0,
        }
    }

    /// Whole frames seen.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Bytes of a frame that has started but not ended (what a peer that disconnects in the
    /// middle of a frame leaves), with its prefix.
    pub fn partial(&self) -> usize {
        match &self.state {
            State::Prefix { len, .. } => *len,
            State::Body(current) => 4 + current.size - current.remaining,
            State::Broken => 0,
        }
    }

    /// The incomplete frame's backlog reservation, if it has one: released when the stream
    /// ends before the frame does.
    pub fn reserved(&self) -> usize {
        match &self.state {
            State::Body(current) if current.reserved => current.size,
            _ => 0,
        }
    }

    /// The size the incomplete frame's prefix announced, if a frame has begun.
    pub fn current_size(&self) -> Option<usize> {
        match &self.state {
            State::Body(current) => Some(current.size),
            _ => None,
        }
    }

    /// Bytes the incomplete frame holds on the memory budget.
    pub fn charged(&self) -> usize {
        match &self.state {
            State::Body(current) => current.charge.bytes(),
            _ => 0,
        }
    }

    /// Bytes held back and not yet forwarded: at the end of the stream they are forwarded
    /// as they are, since the peer sent them.
    pub fn take_held(&mut self) -> Option<Bytes> {
        let held = match &mut self.state {
            State::Prefix { prefix, len } if self.holding && *len > 0 => {
                Bytes::copy_from_slice(&prefix[..*len])
            }
            State::Body(current) if current.hold != Hold::Stream => {
                current.hold = Hold::Stream;
                current.bytes.split().freeze()
            }
            _ => return None,
        };
        if let State::Prefix { len, .. } = &mut self.state {
            *len = 0;
        }
        Some(held)
    }

    /// Splits `chunk` into pieces.
    #[cfg(test)]
    pub fn push(&mut self, chunk: Bytes, policy: &mut impl Policy) -> Vec<Piece> {
        self.push_frames(chunk, policy, usize::MAX).0
    }

    /// Splits `chunk` into pieces, stopping right after `max_frames` frames have ended: the
    /// bytes after them are returned, untouched, for a later call.
    pub fn push_frames(
        &mut self,
        chunk: Bytes,
        policy: &mut impl Policy,
        max_frames: usize,
    ) -> (Vec<Piece>, Bytes) {
        let mut out = Vec::new();
        let first_frame = self.frames;
        // Start of the run of `chunk` forwarded as is, if one is open. Anything forwarded
        // otherwise (bytes kept back, then released) closes the run first, to keep the order.
        let mut run: Option<usize> = None;
        let flush = |out: &mut Vec<Piece>, run: &mut Option<usize>, at: usize| {
            if let Some(start) = run.take().filter(|&start| start < at) {
                out.push(Piece::Forward(chunk.slice(start..at)));
            }
        };
        let mut at = 0;
        while at < chunk.len() && self.frames - first_frame < max_frames as u64 {
            match &mut self.state {
                State::Broken => {
                    run.get_or_insert(at);
                    at = chunk.len();
                }
                State::Prefix { prefix, len } => {
                    if self.holding {
                        // Kept back until the frame's first bytes say whether to hold it.
                        flush(&mut out, &mut run, at);
                    } else {
                        run.get_or_insert(at);
                    }
                    let take = (4 - *len).min(chunk.len() - at);
                    prefix[*len..*len + take].copy_from_slice(&chunk[at..at + take]);
                    *len += take;
                    at += take;
                    if *len < 4 {
                        continue;
                    }
                    let prefix = *prefix;
                    let size = i32::from_be_bytes(prefix);
                    let Ok(size) = usize::try_from(size) else {
                        if self.holding {
                            out.push(Piece::Forward(Bytes::copy_from_slice(&prefix)));
                        }
                        out.push(Piece::Unframeable(size));
                        self.state = State::Broken;
                        continue;
                    };
                    let hold = self.start_frame(prefix, size, policy);
                    if self.holding && hold == Hold::Stream {
                        out.push(Piece::Forward(Bytes::copy_from_slice(&prefix)));
                    }
                    if size == 0 {
                        self.end_frame(&mut out);
                    }
                }
                State::Body(current) => {
                    let take = current.remaining.min(chunk.len() - at);
                    let mut keep = if current.whole {
                        take
                    } else {
                        (4 + self.head)
                            .saturating_sub(current.bytes.len())
                            .min(take)
                    };
                    if keep > 0 && !policy.grow(&mut current.charge, current.bytes.len() + keep) {
                        if current.hold == Hold::Held {
                            // Holding was charged whole when it was decided.
                        } else {
                            // The budget cannot take the frame: keep its head only.
                            if current.reserved {
                                policy.release(current.size);
                            }
                            current.reserved = false;
                            current.whole = current.hold == Hold::Pending;
                            current.skipped = Some(Skipped::MemoryBudget);
                            if !current.whole {
                                current.bytes.truncate(4 + self.head);
                                keep = (4 + self.head)
                                    .saturating_sub(current.bytes.len())
                                    .min(take);
                            }
                        }
                    }
                    current.bytes.extend_from_slice(&chunk[at..at + keep]);
                    if current.hold == Hold::Stream {
                        run.get_or_insert(at);
                    }
                    current.remaining -= take;
                    at += take;
                    if current.hold == Hold::Pending
                        && (current.bytes.len() >= 8 || current.remaining == 0)
                    {
                        let head_end = current.bytes.len().min(8);
                        if let Some(charge) = policy.hold(&current.bytes[4..head_end], current.size)
                        {
                            current.hold = Hold::Held;
                            current.charge.absorb(charge);
                        } else {
                            // Release what was kept back; the rest is forwarded as it comes.
                            current.hold = Hold::Stream;
                            out.push(Piece::Forward(Bytes::copy_from_slice(&current.bytes)));
                            run = Some(at);
                            if !current.reserved {
                                current.whole = false;
                                current.bytes.truncate(4 + self.head);
                            }
                        }
                    }
                    if current.remaining == 0 {
                        self.end_frame(&mut out);
                    }
                }
            }
        }
        flush(&mut out, &mut run, at);
        let rest = chunk.slice(at..);
        (out, rest)
    }

    fn start_frame(&mut self, prefix: [u8; 4], size: usize, policy: &mut impl Policy) -> Hold {
        let fits = size <= self.max_frame;
        let skipped = if fits {
            policy.keep_whole(size).err()
        } else {
            Some(Skipped::TooLarge)
        };
        let reserved = skipped.is_none();
        // An empty frame has nothing to rewrite. A frame above the limit is asked about too:
        // a request the tap's rules concern must not stream through unseen.
        let hold = if self.holding && size > 0 {
            Hold::Pending
        } else {
            Hold::Stream
        };
        let whole = reserved || hold != Hold::Stream;
        // Room is made as bytes arrive: a size prefix is only a claim.
        let capacity = 4 + if whole {
            size.min(64 * 1024)
        } else {
            self.head
        };
        let mut bytes = BytesMut::with_capacity(capacity);
        bytes.extend_from_slice(&prefix);
        // The prefix and an empty frame cost a unit like any other.
        let mut charge = policy.no_charge();
        policy.grow(&mut charge, 4);
        self.state = State::Body(Current {
            size,
            remaining: size,
            bytes,
            reserved,
            skipped,
            whole,
            hold,
            charge,
        });
        hold
    }

    /// The frame being read is complete.
    fn end_frame(&mut self, out: &mut Vec<Piece>) {
        let state = std::mem::replace(
            &mut self.state,
            State::Prefix {
                prefix: [0; 4],
                len: 0,
            },
        );
        let State::Body(current) = state else {
            unreachable!("end_frame is only called in a body");
        };
        self.frames += 1;
        let bytes = current.bytes.freeze();
        let content = if current.reserved {
            Content::Whole(bytes.slice(4..))
        } else {
            let end = bytes.len().min(4 + self.head);
            Content::Head {
                head: bytes.slice(4..end),
                skipped: current.skipped.unwrap_or(Skipped::Backlog),
            }
        };
        let held = (current.hold == Hold::Held).then_some(bytes);
        let mut charge = current.charge;
        if held.is_none() {
            if let Content::Head { head, .. } = &content {
                charge.shrink_to(4 + head.len());
            }
        }
        out.push(Piece::Frame(Frame {
            size: current.size,
            content,
            held,
            charge,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_codec_server::budget::Budget;
    use std::sync::Arc;

    /// Keeps every frame whole; holds frames whose first body byte is 0xee.
    struct Everything {
        reserved: usize,
        budget: Arc<Budget>,
    }

    impl Everything {
        fn new() -> Self {
            Everything {
                reserved: 0,
                budget: Budget::new(1 << 30),
            }
        }
    }

    impl Policy for Everything {
        fn keep_whole(&mut self, size: usize) -> Result<(), Skipped> {
            self.reserved += size;
            Ok(())
        }
        fn grow(&mut self, charge: &mut Charge, bytes: usize) -> bool {
            charge.try_grow_optional(bytes)
        }
        fn no_charge(&mut self) -> Charge {
            self.budget.none()
        }
        fn release(&mut self, size: usize) {
            self.reserved -= size;
        }
        fn hold(&mut self, head: &[u8], size: usize) -> Option<Charge> {
            (head.first() == Some(&0xee)).then(|| self.budget.try_reserve(size).unwrap())
        }
    }

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut bytes = (body.len() as u32).to_be_bytes().to_vec();
        bytes.extend_from_slice(body);
        bytes
    }

    /// Feeds `stream` in chunks of `step` bytes; returns the forwarded bytes (held frames
    /// forwarded where they complete) and the frames.
    fn run(framer: &mut Framer, stream: &[u8], step: usize) -> (Vec<u8>, Vec<Frame>) {
        run_with(framer, stream, step, &mut Everything::new())
    }

    fn run_with(
        framer: &mut Framer,
        stream: &[u8],
        step: usize,
        policy: &mut impl Policy,
    ) -> (Vec<u8>, Vec<Frame>) {
        let (mut forwarded, mut frames) = (Vec::new(), Vec::new());
        for chunk in stream.chunks(step) {
            for piece in framer.push(Bytes::copy_from_slice(chunk), policy) {
                match piece {
                    Piece::Forward(bytes) => forwarded.extend_from_slice(&bytes),
                    Piece::Frame(frame) => {
                        if let Some(held) = &frame.held {
                            forwarded.extend_from_slice(held);
                        }
                        frames.push(frame);
                    }
                    Piece::Unframeable(size) => panic!("unframeable {size}"),
                }
            }
        }
        if let Some(held) = framer.take_held() {
            forwarded.extend_from_slice(&held);
        }
        (forwarded, frames)
    }

    fn stream() -> Vec<u8> {
        let mut stream = frame(b"first frame");
        stream.extend(frame(&[0xee, 1, 2, 3, 4, 5]));
        stream.extend(frame(b""));
        stream.extend(frame(&[0xee]));
        stream.extend(frame(&[7; 300]));
        stream
    }

    #[test]
    fn every_byte_is_forwarded_in_order_at_any_chunk_size() {
        let stream = stream();
        for holding in [false, true] {
            for step in [1, 2, 3, 5, 7, 64, 1000] {
                let mut framer = Framer::new(1 << 20, 16, holding);
                let (forwarded, frames) = run(&mut framer, &stream, step);
                assert_eq!(forwarded, stream, "holding {holding}, step {step}");
                let sizes: Vec<usize> = frames.iter().map(|f| f.size).collect();
                assert_eq!(sizes, [11, 6, 0, 1, 300]);
                assert_eq!(
                    &frames[0].content,
                    &Content::Whole(Bytes::from("first frame"))
                );
                let held: Vec<bool> = frames.iter().map(|f| f.held.is_some()).collect();
                assert_eq!(held, [false, holding, false, holding, false]);
                assert_eq!(framer.partial(), 0);
            }
        }
    }

    #[test]
    fn frames_above_the_limit_keep_only_their_head() {
        let stream = stream();
        let mut framer = Framer::new(100, 4, true);
        let (forwarded, frames) = run(&mut framer, &stream, 9);
        assert_eq!(forwarded, stream);
        assert_eq!(
            frames[4].content,
            Content::Head {
                head: Bytes::from(vec![7; 4]),
                skipped: Skipped::TooLarge
            }
        );
        assert!(frames[4].held.is_none());
    }

    /// Keeps nothing whole: the decoder is behind.
    struct Behind(Everything);

    impl Policy for Behind {
        fn keep_whole(&mut self, _: usize) -> Result<(), Skipped> {
            Err(Skipped::Backlog)
        }
        fn grow(&mut self, charge: &mut Charge, bytes: usize) -> bool {
            self.0.grow(charge, bytes)
        }
        fn no_charge(&mut self) -> Charge {
            self.0.no_charge()
        }
        fn release(&mut self, size: usize) {
            self.0.release(size)
        }
        fn hold(&mut self, head: &[u8], size: usize) -> Option<Charge> {
            self.0.hold(head, size)
        }
    }

    #[test]
    fn frames_the_budget_cannot_take_keep_only_their_head() {
        let stream = stream();
        for holding in [false, true] {
            let mut framer = Framer::new(1 << 20, 2, holding);
            let (forwarded, frames) =
                run_with(&mut framer, &stream, 5, &mut Behind(Everything::new()));
            assert_eq!(forwarded, stream);
            assert_eq!(
                frames[0].content,
                Content::Head {
                    head: Bytes::from("fi"),
                    skipped: Skipped::Backlog
                }
            );
            // A held frame is still held whole for rewriting, whatever the decoder gets.
            assert_eq!(frames[1].held.is_some(), holding);
        }
    }

    #[test]
    fn a_stream_cut_in_a_frame_reports_the_partial_frame() {
        let stream = stream();
        for holding in [false, true] {
            let mut framer = Framer::new(1 << 20, 16, holding);
            let cut = stream.len() - 100;
            let (forwarded, frames) = run(&mut framer, &stream[..cut], 13);
            assert_eq!(forwarded, &stream[..cut]);
            assert_eq!(frames.len(), 4);
            assert_eq!(framer.partial(), 4 + 200);
            assert_eq!(framer.reserved(), 300);
        }
    }

    #[test]
    fn pushing_a_number_of_frames_leaves_the_rest_untouched() {
        let stream = stream();
        for holding in [false, true] {
            for limit in 1..=5 {
                let mut framer = Framer::new(1 << 20, 16, holding);
                let mut policy = Everything::new();
                let (mut forwarded, mut sizes) = (Vec::new(), Vec::new());
                let mut rest = Bytes::from(stream.clone());
                while !rest.is_empty() {
                    let (pieces, left) = framer.push_frames(rest, &mut policy, limit);
                    let mut frames = 0;
                    for piece in pieces {
                        match piece {
                            Piece::Forward(bytes) => forwarded.extend_from_slice(&bytes),
                            Piece::Frame(frame) => {
                                if let Some(held) = &frame.held {
                                    forwarded.extend_from_slice(held);
                                }
                                sizes.push(frame.size);
                                frames += 1;
                            }
                            Piece::Unframeable(size) => panic!("unframeable {size}"),
                        }
                    }
                    assert!(frames <= limit);
                    assert!(left.is_empty() || frames == limit);
                    rest = left;
                }
                assert_eq!(forwarded, stream, "holding {holding}, limit {limit}");
                assert_eq!(sizes, [11, 6, 0, 1, 300]);
            }
        }
    }

    #[test]
    fn a_negative_size_stops_framing_but_not_forwarding() {
        let mut stream = frame(b"ok");
        stream.extend_from_slice(&[0xff, 0xff, 0xff, 0xfe, 1, 2, 3]);
        stream.extend(frame(b"after"));
        for holding in [false, true] {
            let mut framer = Framer::new(1 << 20, 16, holding);
            let mut policy = Everything::new();
            let pieces = framer.push(Bytes::from(stream.clone()), &mut policy);
            let mut forwarded = Vec::new();
            let mut unframeable = Vec::new();
            for piece in pieces {
                match piece {
                    Piece::Forward(bytes) => forwarded.extend_from_slice(&bytes),
                    Piece::Unframeable(size) => unframeable.push(size),
                    Piece::Frame(_) => {}
                }
            }
            assert_eq!(forwarded, stream);
            assert_eq!(unframeable, [-2]);
            assert_eq!(framer.frames(), 1);
        }
    }
}
