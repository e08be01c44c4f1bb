//! Packets out of a capture file: pcap or pcapng (`pcap-parser`, streaming through a buffer
//! of bounded size), their link, IP and TCP headers (`etherparse`), as TCP segments with the
//! capture's time stamps.

use kafka_codec::bytes::Bytes;
use pcap_parser::traits::{PcapNGPacketBlock, PcapReaderIterator};
use pcap_parser::{Block, Linktype, PcapBlockOwned, PcapError};
use std::io::Read;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, SystemTime};

/// The reader's buffer to begin with: a few packets of the largest loopback MTU.
const BUFFER: usize = 256 * 1024;
/// The most a single record (a packet and its headers, a pcapng block) may take: above any
/// snap length tcpdump or Wireshark write (262144), so a larger one is a damaged file.
pub const MAX_RECORD: usize = 16 * 1024 * 1024;
/// Interfaces a pcapng section may describe before the file is taken for damaged.
const MAX_INTERFACES: usize = 4096;

/// One TCP segment as captured.
#[derive(Debug, Clone)]
pub struct Segment {
    pub time: SystemTime,
    pub source: SocketAddr,
    pub destination: SocketAddr,
    pub seq: u32,
    pub syn: bool,
    pub fin: bool,
    pub rst: bool,
    /// The acknowledgment number, if the ACK flag is set.
    pub ack: Option<u32>,
    /// The payload bytes the capture holds.
    pub payload: Bytes,
    /// Payload bytes the packet had and the capture does not (cut by the snap length).
    pub missing: u32,
}

/// What the capture held that is not a TCP segment, counted for the summary.
#[derive(Debug, Default, Clone, Copy)]
pub struct Skipped {
    /// Packets of other protocols (UDP, ARP, ...), or fragments.
    pub not_tcp: u64,
    /// Packets on a link type this reader does not know.
    pub link_type: u64,
    /// Packets cut before the end of their TCP header.
    pub cut_headers: u64,
}

/// How a pcapng interface's time stamps and packets are read.
#[derive(Debug, Clone, Copy)]
struct Interface {
    link: Linktype,
    /// Units per second.
    resolution: u64,
    offset: i64,
}

/// Reads a capture's packets one at a time, in the bounded buffer of `pcap-parser`.
pub struct Packets {
    reader: Box<dyn PcapReaderIterator + Send>,
    blocks: Blocks,
    /// Bytes of the file read so far, for error messages.
    position: u64,
    /// The reader's buffer: doubled for a record that does not fit, up to [`MAX_RECORD`].
    capacity: usize,
}

/// What the blocks read so far say about the ones after them.
struct Blocks {
    /// The legacy format's link type and whether its time stamps are nanoseconds.
    legacy: Option<(Linktype, bool)>,
    interfaces: Vec<Interface>,
    skipped: Skipped,
}

/// Why the capture cannot be read on.
pub type CaptureError = String;

impl Packets {
    /// Starts reading `input` (named `name` in errors).
    pub fn open(input: impl Read + Send + 'static) -> Result<Packets, CaptureError> {
        let reader = pcap_parser::create_reader(BUFFER, input).map_err(|e| match e {
            PcapError::Eof | PcapError::Incomplete(_) | PcapError::UnexpectedEof => {
                "the file is shorter than a capture's header: it is empty or truncated".to_owned()
            }
            PcapError::ReadError => "cannot read the file".to_owned(),
            _ => "not a capture: neither a pcap nor a pcapng header (tcpdump -w and Wireshark \
                  write either)"
                .to_owned(),
        })?;
        Ok(Packets {
            reader,
            blocks: Blocks {
                legacy: None,
                interfaces: Vec::new(),
                skipped: Skipped::default(),
            },
            position: 0,
            capacity: BUFFER,
        })
    }

    /// What was read past, so far.
    pub fn skipped(&self) -> Skipped {
        self.blocks.skipped
    }

    /// The next TCP segment; `Ok(None)` at the end of the capture.
    pub fn next_segment(&mut self) -> Result<Option<Segment>, CaptureError> {
        loop {
            let (length, segment) = match self.reader.next() {
                Ok((length, block)) => {
                    let segment = self.blocks.block(block).map_err(|e| {
                        format!("{e} at byte {}: the file is damaged there", self.position)
                    })?;
                    (length, segment)
                }
                Err(PcapError::Eof) => return Ok(None),
                Err(PcapError::Incomplete(_)) => {
                    self.refill()?;
                    continue;
                }
                Err(PcapError::BufferTooSmall) => {
                    self.capacity *= 2;
                    if self.capacity > MAX_RECORD || !self.reader.grow(self.capacity) {
                        return Err(format!(
                            "a record at byte {} declares more than {MAX_RECORD} bytes, more \
                             than any capture's packet: the file is damaged there",
                            self.position
                        ));
                    }
                    self.refill()?;
                    continue;
                }
                Err(PcapError::UnexpectedEof) => {
                    return Err(format!(
                        "the capture ends in the middle of a record at byte {}: the file is \
                         truncated (was the capture stopped while writing?)",
                        self.position
                    ))
                }
                Err(PcapError::ReadError) => {
                    return Err(format!("cannot read the file after byte {}", self.position))
                }
                Err(_) => {
                    return Err(format!(
                        "the record at byte {} is malformed: the file is damaged there",
                        self.position
                    ))
                }
            };
            self.reader.consume(length);
            self.position += length as u64;
            if let Some(segment) = segment {
                return Ok(Some(segment));
            }
        }
    }

    fn refill(&mut self) -> Result<(), CaptureError> {
        self.reader
            .refill()
            .map_err(|_| format!("cannot read the file after byte {}", self.position))
    }
}

impl Blocks {
    /// The segment a block carries, if any.
    fn block(&mut self, block: PcapBlockOwned<'_>) -> Result<Option<Segment>, CaptureError> {
        match block {
            PcapBlockOwned::LegacyHeader(header) => {
                self.legacy = Some((header.network, header.is_nanosecond_precision()));
                Ok(None)
            }
            PcapBlockOwned::Legacy(packet) => {
                let Some((link, nanos)) = self.legacy else {
                    return Ok(None);
                };
                let fraction = if nanos {
                    Duration::from_nanos(u64::from(packet.ts_usec))
                } else {
                    Duration::from_micros(u64::from(packet.ts_usec))
                };
                let time = SystemTime::UNIX_EPOCH
                    + Duration::from_secs(u64::from(packet.ts_sec))
                    + fraction;
                let cut = packet.origlen.saturating_sub(packet.caplen);
                let data = &packet.data[..packet.data.len().min(packet.caplen as usize)];
                Ok(self.packet(link, time, data, cut))
            }
            PcapBlockOwned::NG(Block::SectionHeader(_)) => {
                // Interface numbers start again in each section.
                self.interfaces.clear();
                Ok(None)
            }
            PcapBlockOwned::NG(Block::InterfaceDescription(interface)) => {
                if self.interfaces.len() >= MAX_INTERFACES {
                    return Err(format!(
                        "more than {MAX_INTERFACES} interfaces in one section"
                    ));
                }
                self.interfaces.push(Interface {
                    link: interface.linktype,
                    resolution: interface.ts_resolution().unwrap_or(1_000_000).max(1),
                    offset: interface.ts_offset(),
                });
                Ok(None)
            }
            PcapBlockOwned::NG(Block::EnhancedPacket(packet)) => {
                let Some(interface) = self.interfaces.get(packet.if_id as usize).copied() else {
                    self.skipped.link_type += 1;
                    return Ok(None);
                };
                let units = (u64::from(packet.ts_high) << 32) | u64::from(packet.ts_low);
                let seconds =
                    (units / interface.resolution).saturating_add_signed(interface.offset);
                let nanos = u128::from(units % interface.resolution) * 1_000_000_000
                    / u128::from(interface.resolution);
                let time = SystemTime::UNIX_EPOCH
                    + Duration::from_secs(seconds)
                    + Duration::from_nanos(nanos as u64);
                let cut = packet.origlen.saturating_sub(packet.caplen);
                Ok(self.packet(interface.link, time, packet.packet_data(), cut))
            }
            PcapBlockOwned::NG(Block::SimplePacket(packet)) => {
                // No time stamp and no captured length: the first interface's link, and the
                // time of the epoch (the log's times then say nothing).
                let Some(interface) = self.interfaces.first().copied() else {
                    self.skipped.link_type += 1;
                    return Ok(None);
                };
                let data = packet.packet_data();
                let cut = (packet.origlen as usize).saturating_sub(data.len()) as u32;
                Ok(self.packet(interface.link, SystemTime::UNIX_EPOCH, data, cut))
            }
            PcapBlockOwned::NG(_) => Ok(None),
        }
    }

    /// A packet's TCP segment, if it carries one.
    fn packet(
        &mut self,
        link: Linktype,
        time: SystemTime,
        data: &[u8],
        cut: u32,
    ) -> Option<Segment> {
        use etherparse::{EtherType, LaxSlicedPacket};
        let sliced = match link {
            Linktype::ETHERNET => LaxSlicedPacket::from_ethernet(data).ok(),
            Linktype::RAW | Linktype::IPV4 | Linktype::IPV6 => LaxSlicedPacket::from_ip(data).ok(),
            // BSD loopback: the address family in 4 bytes, in the capturing host's byte order
            // (DLT_NULL) or big-endian (DLT_LOOP); 2 is IPv4, and IPv6 is 24, 28 or 30.
            Linktype::NULL | Linktype::LOOP => {
                let family = data.get(..4)?;
                let family = u32::from_le_bytes(family.try_into().ok()?)
                    .min(u32::from_be_bytes(family.try_into().ok()?));
                match family {
                    2 => Some(LaxSlicedPacket::from_ether_type(
                        EtherType::IPV4,
                        &data[4..],
                    )),
                    24 | 28 | 30 => Some(LaxSlicedPacket::from_ether_type(
                        EtherType::IPV6,
                        &data[4..],
                    )),
                    _ => None,
                }
            }
            // Linux cooked v1: 16 bytes, the protocol (an EtherType) last.
            Linktype::LINUX_SLL => {
                let protocol = u16::from_be_bytes(data.get(14..16)?.try_into().ok()?);
                Some(LaxSlicedPacket::from_ether_type(
                    EtherType(protocol),
                    &data[16..],
                ))
            }
            // Linux cooked v2: 20 bytes, the protocol first.
            Linktype::LINUX_SLL2 => {
                let protocol = u16::from_be_bytes(data.get(..2)?.try_into().ok()?);
                let payload = data.get(20..)?;
                Some(LaxSlicedPacket::from_ether_type(
                    EtherType(protocol),
                    payload,
                ))
            }
            _ => {
                self.skipped.link_type += 1;
                return None;
            }
        };
        let Some(sliced) = sliced else {
            self.skipped.not_tcp += 1;
            return None;
        };
        let (source, destination) = match &sliced.net {
            Some(etherparse::LaxNetSlice::Ipv4(ip)) => (
                IpAddr::V4(ip.header().source_addr()),
                IpAddr::V4(ip.header().destination_addr()),
            ),
            Some(etherparse::LaxNetSlice::Ipv6(ip)) => (
                IpAddr::V6(ip.header().source_addr()),
                IpAddr::V6(ip.header().destination_addr()),
            ),
            _ => {
                self.skipped.not_tcp += 1;
                return None;
            }
        };
        if sliced.ip_payload().is_some_and(|p| p.fragmented) {
            self.skipped.not_tcp += 1;
            return None;
        }
        let Some(etherparse::TransportSlice::Tcp(tcp)) = &sliced.transport else {
            let tcp = sliced
                .ip_payload()
                .is_some_and(|p| p.ip_number == etherparse::IpNumber::TCP);
            if tcp {
                self.skipped.cut_headers += 1;
            } else {
                self.skipped.not_tcp += 1;
            }
            return None;
        };
        Some(Segment {
            time,
            source: SocketAddr::new(source, tcp.source_port()),
            destination: SocketAddr::new(destination, tcp.destination_port()),
            seq: tcp.sequence_number(),
            syn: tcp.syn(),
            fin: tcp.fin(),
            rst: tcp.rst(),
            ack: tcp.ack().then(|| tcp.acknowledgment_number()),
            payload: Bytes::copy_from_slice(tcp.payload()),
            missing: cut,
        })
    }
}
