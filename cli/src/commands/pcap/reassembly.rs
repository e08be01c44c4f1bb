//! One direction of a TCP connection put back in order from captured segments: segments
//! out of order are held (up to a cap, charged to the memory budget), retransmitted bytes
//! are delivered once, and what the capture does not hold (a lost segment, a packet cut by
//! the snap length) is delivered as a gap of its length.

use kafka_codec::bytes::Bytes;
use kafka_codec_server::budget::Charge;
use std::collections::BTreeMap;

/// What the stream delivers, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    Data(Bytes),
    /// Bytes of the stream the capture does not hold.
    Gap(u64),
}

/// A segment held until the bytes before it come: its bytes, then a hole of `missing` bytes
/// the capture cut off.
#[derive(Debug)]
struct Held {
    data: Bytes,
    missing: u64,
}

impl Held {
    fn len(&self) -> u64 {
        self.data.len() as u64 + self.missing
    }
}

/// One direction's reassembly.
#[derive(Debug)]
pub struct Reassembler {
    /// The next byte expected, as a 64-bit sequence number (TCP's 32 bits wrap; the offset
    /// of 2^32 lets a segment a little before the first one be placed).
    next: Option<u64>,
    /// The stream's start was seen (a SYN), so the first bytes are the stream's first.
    pub from_start: bool,
    held: BTreeMap<u64, Held>,
    held_bytes: usize,
    /// The most `held` may take.
    cap: usize,
    /// What `held` is charged to the memory budget.
    charge: Charge,
    /// Where the sender's FIN is.
    fin: Option<u64>,
    /// Bytes delivered again by retransmissions and dropped.
    pub retransmitted: u64,
    /// The sequence number of the sender's SYN, if one was seen.
    isn: Option<u32>,
}

impl Reassembler {
    pub fn new(cap: usize, charge: Charge) -> Self {
        Reassembler {
            next: None,
            from_start: false,
            held: BTreeMap::new(),
            held_bytes: 0,
            cap,
            charge,
            fin: None,
            retransmitted: 0,
            isn: None,
        }
    }

    /// Whether a SYN at `seq` opens another connection on the same ports: this side's SYN
    /// had another sequence number (a retransmitted SYN has the same).
    pub fn is_new_syn(&self, seq: u32) -> bool {
        self.isn.is_some_and(|isn| isn != seq)
    }

    /// `seq` placed on the 64-bit line, near the next byte expected.
    fn place(&self, seq: u32) -> u64 {
        match self.next {
            None => u64::from(seq) + (1 << 32),
            Some(next) => {
                let delta = i64::from(seq.wrapping_sub(next as u32) as i32);
                next.saturating_add_signed(delta)
            }
        }
    }

    /// Whether the sender's FIN has been reached: the direction ended.
    pub fn finished(&self) -> bool {
        matches!((self.fin, self.next), (Some(fin), Some(next)) if next >= fin)
    }

    /// Bytes held out of order.
    #[cfg(test)]
    pub fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// Takes one segment: `payload` at `seq`, then `missing` bytes the capture cut off.
    pub fn push(
        &mut self,
        seq: u32,
        syn: bool,
        fin: bool,
        payload: Bytes,
        missing: u32,
        out: &mut Vec<Delivery>,
    ) {
        if syn {
            self.isn.get_or_insert(seq);
            if self.next.is_none() {
                self.next = Some(self.place(seq) + 1);
                self.from_start = true;
            }
        } else if self.next.is_none() {
            // Captured after the connection opened: the stream starts here.
            self.next = Some(self.place(seq));
        }
        let mut start = self.place(seq) + u64::from(syn);
        let mut data = payload;
        let mut missing = u64::from(missing);
        let end = start + data.len() as u64 + missing;
        if fin {
            self.fin.get_or_insert(end);
        }
        let next = self.next.unwrap_or(start);
        if end <= next || (data.is_empty() && missing == 0) {
            // Old bytes, or none: a bare ACK, a RST (whose sequence number may be past the
            // FIN), a window probe.
            self.retransmitted += data.len() as u64;
            return;
        }
        if start < next {
            // Partly retransmitted: what is new starts at `next`.
            let old = next - start;
            self.retransmitted += old.min(data.len() as u64);
            if old <= data.len() as u64 {
                data = data.slice(old as usize..);
            } else {
                missing -= old - data.len() as u64;
                data = Bytes::new();
            }
            start = next;
        }
        if start == next {
            self.deliver(data, missing, out);
            self.drain(out);
            return;
        }
        // Ahead of a byte not yet seen: held, unless the cap or the budget is reached, when
        // the bytes before the first segment held are declared lost.
        let fits = self.held_bytes + data.len() <= self.cap
            && self.charge.try_grow_optional(self.held_bytes + data.len());
        match self.held.get(&start) {
            Some(held) if held.len() >= data.len() as u64 + missing => {
                self.retransmitted += data.len() as u64;
            }
            _ if fits => {
                if let Some(old) = self.held.insert(start, Held { data, missing }) {
                    self.held_bytes -= old.data.len();
                }
                self.held_bytes += self.held.get(&start).map_or(0, |h| h.data.len());
            }
            _ => {
                // No room: skip to the first held segment (or this one) as lost.
                let first = self.held.keys().next().copied().unwrap_or(start).min(start);
                self.gap_to(first, out);
                if first == start {
                    self.deliver(data, missing, out);
                } else {
                    self.held.entry(start).or_insert(Held { data, missing });
                    self.held_bytes = self.held.values().map(|h| h.data.len()).sum();
                }
                self.drain(out);
            }
        }
        self.charge.shrink_to(self.held_bytes);
    }

    /// The other side acknowledged the bytes before `ack`: those of them the capture does not
    /// hold were sent and received all the same, so the capture lost them. They are a gap
    /// now, rather than when the cap or the end of the capture declares it.
    pub fn acknowledged(&mut self, ack: u32, out: &mut Vec<Delivery>) {
        let Some(next) = self.next else {
            return;
        };
        let mut acked = self.place(ack);
        if let Some(fin) = self.fin {
            // A FIN takes a sequence number of its own, and carries no byte.
            acked = acked.min(fin);
        }
        if acked <= next {
            return;
        }
        while let Some(&first) = self.held.keys().next() {
            if first >= acked {
                break;
            }
            self.gap_to(first, out);
            self.drain(out);
        }
        self.gap_to(acked, out);
        self.drain(out);
    }

    /// The stream ends here (FIN reached, a RST, the capture's end, eviction): what is held
    /// is delivered, with the bytes missing before it as gaps.
    pub fn flush(&mut self, out: &mut Vec<Delivery>) {
        while let Some(&first) = self.held.keys().next() {
            self.gap_to(first, out);
            self.drain(out);
        }
        self.charge.shrink_to(0);
    }

    fn gap_to(&mut self, to: u64, out: &mut Vec<Delivery>) {
        let next = self.next.unwrap_or(to);
        if to > next {
            push_gap(out, to - next);
            self.next = Some(to);
        }
    }

    fn deliver(&mut self, data: Bytes, missing: u64, out: &mut Vec<Delivery>) {
        let len = data.len() as u64;
        if !data.is_empty() {
            out.push(Delivery::Data(data));
        }
        if missing > 0 {
            push_gap(out, missing);
        }
        self.next = Some(self.next.unwrap_or(0) + len + missing);
    }

    /// Delivers the held segments that now follow on.
    fn drain(&mut self, out: &mut Vec<Delivery>) {
        while let Some(entry) = self.held.first_entry() {
            let start = *entry.key();
            let next = self.next.unwrap_or(start);
            if start > next {
                break;
            }
            let Held { data, missing } = entry.remove();
            self.held_bytes -= data.len();
            let end = start + data.len() as u64 + missing;
            if end <= next {
                self.retransmitted += data.len() as u64;
                continue;
            }
            let old = next - start;
            let (data, missing) = if old <= data.len() as u64 {
                self.retransmitted += old;
                (data.slice(old as usize..), missing)
            } else {
                self.retransmitted += data.len() as u64;
                (Bytes::new(), missing - (old - data.len() as u64))
            };
            self.deliver(data, missing, out);
        }
        self.charge.shrink_to(self.held_bytes);
    }
}

/// Adds a gap, merged with a gap just before it.
fn push_gap(out: &mut Vec<Delivery>, bytes: u64) {
    if let Some(Delivery::Gap(last)) = out.last_mut() {
        *last += bytes;
    } else {
        out.push(Delivery::Gap(bytes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_codec_server::budget::Budget;

    fn reassembler(cap: usize) -> Reassembler {
        Reassembler::new(cap, Budget::new(1 << 30).none())
    }

    /// Bytes delivered, with each gap as that many `?`.
    fn text(out: &[Delivery]) -> String {
        out.iter()
            .map(|d| match d {
                Delivery::Data(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                Delivery::Gap(n) => "?".repeat(*n as usize),
            })
            .collect()
    }

    /// Segments of `stream` (starting after a SYN at `isn`) at the given byte ranges, fed
    /// in the order given.
    fn feed(r: &mut Reassembler, isn: u32, stream: &[u8], ranges: &[(usize, usize)]) -> String {
        let mut out = Vec::new();
        r.push(isn, true, false, Bytes::new(), 0, &mut out);
        for &(from, to) in ranges {
            let seq = isn.wrapping_add(1).wrapping_add(from as u32);
            let payload = Bytes::copy_from_slice(&stream[from..to]);
            r.push(seq, false, false, payload, 0, &mut out);
        }
        r.flush(&mut out);
        text(&out)
    }

    const STREAM: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";

    #[test]
    fn in_order_reordered_and_retransmitted_segments_give_the_stream_once() {
        let orders: [&[(usize, usize)]; 4] = [
            &[(0, 10), (10, 20), (20, 36)],
            &[(20, 36), (0, 10), (10, 20)],
            &[(0, 10), (5, 15), (0, 10), (15, 36), (12, 30)],
            &[(30, 36), (20, 30), (10, 20), (0, 10)],
        ];
        for ranges in orders {
            // Near the wrap of the 32-bit sequence number, too.
            for isn in [1000, u32::MAX - 12] {
                let mut r = reassembler(1 << 20);
                assert_eq!(
                    feed(&mut r, isn, STREAM, ranges),
                    "0123456789abcdefghijklmnopqrstuvwxyz"
                );
                assert_eq!(r.held_bytes(), 0);
            }
        }
    }

    #[test]
    fn a_lost_segment_is_a_gap_of_its_length() {
        let mut r = reassembler(1 << 20);
        let got = feed(&mut r, 7, STREAM, &[(0, 10), (20, 36)]);
        assert_eq!(got, "0123456789??????????klmnopqrstuvwxyz");
    }

    #[test]
    fn past_the_cap_the_missing_bytes_are_declared_lost_at_once() {
        let mut r = reassembler(8);
        let mut out = Vec::new();
        r.push(0, true, false, Bytes::new(), 0, &mut out);
        r.push(1, false, false, Bytes::from_static(b"ab"), 0, &mut out);
        // Bytes 2..4 are lost; what follows is held until the cap.
        r.push(5, false, false, Bytes::from_static(b"efgh"), 0, &mut out);
        assert_eq!(text(&out), "ab");
        r.push(9, false, false, Bytes::from_static(b"ijklmn"), 0, &mut out);
        assert_eq!(text(&out), "ab??efghijklmn");
        assert_eq!(r.held_bytes(), 0);
    }

    #[test]
    fn bytes_cut_by_the_snap_length_are_a_gap() {
        let mut r = reassembler(1 << 20);
        let mut out = Vec::new();
        r.push(99, true, false, Bytes::new(), 0, &mut out);
        // Out of order, with a cut: held with its hole.
        r.push(106, false, false, Bytes::from_static(b"gh"), 2, &mut out);
        r.push(100, false, false, Bytes::from_static(b"abc"), 3, &mut out);
        r.push(110, false, true, Bytes::from_static(b"z"), 0, &mut out);
        assert_eq!(text(&out), "abc???gh??z");
        assert!(r.finished());
    }

    #[test]
    fn bytes_acknowledged_and_not_captured_are_a_gap_at_once() {
        let mut r = reassembler(1 << 20);
        let mut out = Vec::new();
        r.push(0, true, false, Bytes::new(), 0, &mut out);
        r.push(1, false, false, Bytes::from_static(b"ab"), 0, &mut out);
        r.push(6, false, false, Bytes::from_static(b"fg"), 0, &mut out);
        // Acknowledged up to 9: 3..6 and 8..9 were lost by the capture.
        r.acknowledged(9, &mut out);
        assert_eq!(text(&out), "ab???fg?");
        // An acknowledgment of what came already, or of the FIN, is no gap.
        r.push(9, false, true, Bytes::from_static(b"i"), 0, &mut out);
        r.acknowledged(5, &mut out);
        r.acknowledged(11, &mut out);
        assert_eq!(text(&out), "ab???fg?i");
        assert!(r.finished());
    }

    #[test]
    fn a_fin_ends_the_direction_once_the_bytes_before_it_came() {
        let mut r = reassembler(1 << 20);
        let mut out = Vec::new();
        r.push(0, true, false, Bytes::new(), 0, &mut out);
        r.push(4, false, true, Bytes::from_static(b"d"), 0, &mut out);
        assert!(!r.finished());
        r.push(1, false, false, Bytes::from_static(b"abc"), 0, &mut out);
        assert!(r.finished());
        assert_eq!(text(&out), "abcd");
        // A RST after the FIN (one past it) brings no gap.
        r.push(5, false, false, Bytes::new(), 0, &mut out);
        r.flush(&mut out);
        assert_eq!(text(&out), "abcd");
    }

    #[test]
    fn held_bytes_are_charged_to_the_budget_and_given_back() {
        let budget = Budget::new(1 << 20);
        let mut r = Reassembler::new(1 << 20, budget.none());
        let mut out = Vec::new();
        r.push(0, true, false, Bytes::new(), 0, &mut out);
        r.push(11, false, false, Bytes::from(vec![1; 1000]), 0, &mut out);
        assert!(budget.in_use() >= 1000);
        r.push(1, false, false, Bytes::from(vec![0; 10]), 0, &mut out);
        assert_eq!(budget.in_use(), 0);
        assert_eq!(out.len(), 2);
    }
}
