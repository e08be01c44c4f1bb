//! Honest but dense frames (issue 11): many tiny array elements, so that the decoded message
//! is far larger in memory than on the wire. Shared by the memory tool
//! (`benches/examples/dense_memory.rs`) and by tests that
//! bound the memory a decode may take.
//!
//! The bytes are written here directly rather than through the crate's encoder: a 50 MB frame
//! is then written in milliseconds without first building the multi-gigabyte message it
//! decodes to. `dense_frames_are_what_the_encoder_writes` (in the bench crate) checks that the
//! bytes equal the crate's own encoding of the same message at a small size.
//!
//! Only `std` is used.

/// The dense shapes of issue 11.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// ListGroupsResponse v3 (flexible): groups with 3-byte ids and an empty protocol type
    /// (v3 has no GroupState or GroupType): 6 bytes per group.
    ListGroupsResponseV3,
    /// MetadataRequest v9 (flexible): topics with 2-byte names: 4 bytes per topic.
    MetadataRequestV9,
}

impl Shape {
    /// Both shapes.
    pub const ALL: [Shape; 2] = [Shape::ListGroupsResponseV3, Shape::MetadataRequestV9];

    /// A short name for tables and command lines.
    pub fn name(self) -> &'static str {
        match self {
            Shape::ListGroupsResponseV3 => "list_groups_response_v3",
            Shape::MetadataRequestV9 => "metadata_request_v9",
        }
    }

    /// The shape called `name` (see [`Shape::name`]).
    pub fn from_name(name: &str) -> Option<Shape> {
        Shape::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The API key of the message.
    pub fn api_key(self) -> i16 {
        match self {
            Shape::ListGroupsResponseV3 => 16,
            Shape::MetadataRequestV9 => 3,
        }
    }

    /// The message version.
    pub fn version(self) -> i16 {
        match self {
            Shape::ListGroupsResponseV3 => 3,
            Shape::MetadataRequestV9 => 9,
        }
    }

    /// Wire bytes of one array element.
    pub fn element_len(self) -> usize {
        match self {
            // compact string (1 + 3), compact empty string (1), no tagged fields (1)
            Shape::ListGroupsResponseV3 => 6,
            // compact string (1 + 2), no tagged fields (1)
            Shape::MetadataRequestV9 => 4,
        }
    }

    /// The message body (no header) as close to `target_len` bytes as whole elements allow
    /// (never more, never less than the fixed fields), and its number of elements.
    pub fn body(self, target_len: usize) -> (Vec<u8>, usize) {
        // Fixed fields besides the array: ListGroups has throttle (4), error code (2) and the
        // tagged-field count (1); Metadata has the three booleans v9 has (3) and the tagged
        // field count (1). The array length is a varint of count + 1, up to 5 bytes.
        let fixed = match self {
            Shape::ListGroupsResponseV3 => 7,
            Shape::MetadataRequestV9 => 4,
        };
        let mut count = target_len.saturating_sub(fixed + 1) / self.element_len();
        while count > 0
            && fixed + varint_len(count as u64 + 1) + count * self.element_len() > target_len
        {
            count -= 1;
        }
        let mut out = Vec::with_capacity(fixed + 5 + count * self.element_len());
        match self {
            Shape::ListGroupsResponseV3 => {
                out.extend_from_slice(&0i32.to_be_bytes()); // ThrottleTimeMs
                out.extend_from_slice(&0i16.to_be_bytes()); // ErrorCode
                put_varint(&mut out, count as u64 + 1); // Groups
                for i in 0..count {
                    out.push(4); // GroupId: compact length 3 + 1
                    out.extend_from_slice(&name::<3>(i));
                    out.push(1); // ProtocolType: ""
                    out.push(0); // no tagged fields
                }
                out.push(0);
            }
            Shape::MetadataRequestV9 => {
                put_varint(&mut out, count as u64 + 1); // Topics
                for i in 0..count {
                    out.push(3); // Name: compact length 2 + 1
                    out.extend_from_slice(&name::<2>(i));
                    out.push(0); // no tagged fields
                }
                out.push(1); // AllowAutoTopicCreation
                out.push(0); // IncludeClusterAuthorizedOperations (v8-10)
                out.push(0); // IncludeTopicAuthorizedOperations
                out.push(0); // no tagged fields
            }
        }
        (out, count)
    }

    /// The whole frame as the CLI's `decode` reads it (header, then body; no size prefix):
    /// a response header v1 (correlation id, no tagged fields) for ListGroups, a request
    /// header v2 (key, version, correlation id, client id "dense", no tagged fields) for
    /// Metadata. Returns the frame and the number of elements.
    pub fn frame(self, target_len: usize) -> (Vec<u8>, usize) {
        let mut header = Vec::new();
        match self {
            Shape::ListGroupsResponseV3 => {
                header.extend_from_slice(&7i32.to_be_bytes());
                header.push(0);
            }
            Shape::MetadataRequestV9 => {
                header.extend_from_slice(&self.api_key().to_be_bytes());
                header.extend_from_slice(&self.version().to_be_bytes());
                header.extend_from_slice(&7i32.to_be_bytes());
                header.extend_from_slice(&5i16.to_be_bytes());
                header.extend_from_slice(b"dense");
                header.push(0);
            }
        }
        let (body, count) = self.body(target_len.saturating_sub(header.len()));
        header.extend_from_slice(&body);
        (header, count)
    }
}

/// The `i`th name of `N` characters over `[a-z0-9]` (distinct until 36^N, then repeating).
pub fn name<const N: usize>(mut i: usize) -> [u8; N] {
    const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut out = [0u8; N];
    for byte in out.iter_mut().rev() {
        *byte = ALPHABET[i % 36];
        i /= 36;
    }
    out
}

fn varint_len(mut v: u64) -> usize {
    let mut len = 1;
    while v >= 0x80 {
        v >>= 7;
        len += 1;
    }
    len
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}
