//! Another protocol's bytes where a Kafka frame was expected, told by their first bytes: a
//! peer that answers in HTTP or TLS, or a capture taken on the wrong port. Read as a Kafka
//! size prefix they are absurd frame sizes ("HTTP" is 1213486160), so naming them is the only
//! useful thing to say.

/// What the bytes are, when they are not Kafka's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtherProtocol {
    /// An HTTP/1.x request line (`GET /`, `POST /`, ...) or HTTP/2's connection preface.
    HttpRequest,
    /// An HTTP/1.x status line (`HTTP/1.1 400 Bad Request`).
    HttpResponse,
    /// A TLS (or SSL 3.0) record: content type, then version 3.0 to 3.4.
    Tls(TlsRecord),
    /// An SSH identification line (`SSH-2.0-OpenSSH_9.6`).
    Ssh,
}

/// The content type of a TLS record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsRecord {
    /// 20.
    ChangeCipherSpec,
    /// 21: such as a TLS server's answer to plaintext.
    Alert,
    /// 22: a ClientHello opens every TLS connection.
    Handshake,
    /// 23.
    ApplicationData,
}

/// The first words of HTTP requests: RFC 9110's methods and HTTP/2's preface.
const HTTP_REQUESTS: [&[u8]; 10] = [
    b"GET ",
    b"HEAD ",
    b"POST ",
    b"PUT ",
    b"DELETE ",
    b"CONNECT ",
    b"OPTIONS ",
    b"TRACE ",
    b"PATCH ",
    b"PRI * HTTP/2.0",
];

/// Whether `first` begins with `token`, or, when `first` is shorter (the four bytes of a size
/// prefix, all the tap keeps of a frame it could not take), is `token`'s first four or more.
fn opens_with(first: &[u8], token: &[u8]) -> bool {
    let n = first.len().min(token.len());
    n >= 4 && first[..n] == token[..n]
}

impl OtherProtocol {
    /// What `first` (at least the four bytes a size prefix would take) is, if it is another
    /// protocol's opening.
    pub fn recognise(first: &[u8]) -> Option<OtherProtocol> {
        if HTTP_REQUESTS.iter().any(|token| opens_with(first, token)) {
            return Some(OtherProtocol::HttpRequest);
        }
        if opens_with(first, b"HTTP/") {
            return Some(OtherProtocol::HttpResponse);
        }
        if opens_with(first, b"SSH-") {
            return Some(OtherProtocol::Ssh);
        }
        let record = match first {
            [20, 3, 0..=4, ..] => TlsRecord::ChangeCipherSpec,
            [21, 3, 0..=4, ..] => TlsRecord::Alert,
            [22, 3, 0..=4, ..] => TlsRecord::Handshake,
            [23, 3, 0..=4, ..] => TlsRecord::ApplicationData,
            _ => return None,
        };
        Some(OtherProtocol::Tls(record))
    }

    /// The protocol's name: `HTTP`, `TLS` or `SSH`.
    pub fn name(self) -> &'static str {
        match self {
            OtherProtocol::HttpRequest | OtherProtocol::HttpResponse => "HTTP",
            OtherProtocol::Tls(_) => "TLS",
            OtherProtocol::Ssh => "SSH",
        }
    }

    /// Whether it is TLS: the one a Kafka tool can be told to speak.
    pub fn is_tls(self) -> bool {
        matches!(self, OtherProtocol::Tls(_))
    }
}

impl std::fmt::Display for OtherProtocol {
    /// With its article: "an HTTP request", "a TLS record (handshake)".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OtherProtocol::HttpRequest => f.write_str("an HTTP request"),
            OtherProtocol::HttpResponse => f.write_str("an HTTP response"),
            OtherProtocol::Ssh => f.write_str("an SSH greeting"),
            OtherProtocol::Tls(record) => write!(
                f,
                "a TLS record ({})",
                match record {
                    TlsRecord::ChangeCipherSpec => "change cipher spec",
                    TlsRecord::Alert => "alert",
                    TlsRecord::Handshake => "handshake",
                    TlsRecord::ApplicationData => "application data",
                }
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_prefix_alone_is_enough_and_kafka_frames_are_not_taken_for_others() {
        assert_eq!(
            OtherProtocol::recognise(&1213486160u32.to_be_bytes()),
            Some(OtherProtocol::HttpResponse)
        );
        assert_eq!(
            OtherProtocol::recognise(b"POST"),
            Some(OtherProtocol::HttpRequest)
        );
        assert_eq!(
            OtherProtocol::recognise(b"DELETE /topics HTTP/1.1\r\n"),
            Some(OtherProtocol::HttpRequest)
        );
        // A word that only starts like a method is not one.
        assert_eq!(OtherProtocol::recognise(b"GETS /"), None);
        assert_eq!(OtherProtocol::recognise(b"GE"), None);
        assert_eq!(
            OtherProtocol::recognise(&[0x16, 0x03, 0x01, 0x02]),
            Some(OtherProtocol::Tls(TlsRecord::Handshake))
        );
        // TLS version 3.9 does not exist.
        assert_eq!(OtherProtocol::recognise(&[0x16, 0x03, 0x09, 0x00]), None);
        // A Kafka frame of any sane size starts with 0x00.
        for size in [0u32, 10, 100 * 1024 * 1024] {
            assert_eq!(OtherProtocol::recognise(&size.to_be_bytes()), None);
        }
    }
}
