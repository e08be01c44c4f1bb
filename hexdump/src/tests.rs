use super::*;

/// The bytes behind the dumps below: a DescribeQuorumRequest v2 frame (40 bytes), 41 zero
/// bytes and `01 02`, so that dumps squeeze repeated lines and end with a short one.
fn frame() -> Vec<u8> {
    let mut bytes = decode_plain(
        b"0037000200000007000163000213 5f5f636c75737465725f6d65746164617461 02 00000000 00 00 00",
    )
    .unwrap();
    bytes.extend([0; 41]);
    bytes.extend([1, 2]);
    bytes
}

/// `xxd frame.bin` (xxd 2022-01-14 by Juergen Weigert et al.).
const XXD: &str = "\
00000000: 0037 0002 0000 0007 0001 6300 0213 5f5f  .7........c...__
00000010: 636c 7573 7465 725f 6d65 7461 6461 7461  cluster_metadata
00000020: 0200 0000 0000 0000 0000 0000 0000 0000  ................
00000030: 0000 0000 0000 0000 0000 0000 0000 0000  ................
00000040: 0000 0000 0000 0000 0000 0000 0000 0000  ................
00000050: 0001 02                                  ...
";

/// `xxd -g1 frame.bin`.
const XXD_G1: &str = "\
00000000: 00 37 00 02 00 00 00 07 00 01 63 00 02 13 5f 5f  .7........c...__
00000010: 63 6c 75 73 74 65 72 5f 6d 65 74 61 64 61 74 61  cluster_metadata
00000020: 02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................
00000030: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................
00000040: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................
00000050: 00 01 02                                         ...
";

/// `hexdump -C frame.bin` (util-linux 2.38.1): squeezes the repeated line into `*` and ends
/// with the total length.
const HEXDUMP_C: &str = "\
00000000  00 37 00 02 00 00 00 07  00 01 63 00 02 13 5f 5f  |.7........c...__|
00000010  63 6c 75 73 74 65 72 5f  6d 65 74 61 64 61 74 61  |cluster_metadata|
00000020  02 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|
00000030  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|
*
00000050  00 01 02                                          |...|
00000053
";

/// `tshark -x -r frame.pcap` (TShark 4.0.17), the bytes written to the capture by
/// `text2pcap -l 147` (link type USER0: the frame alone).
const TSHARK: &str = "\
0000  00 37 00 02 00 00 00 07 00 01 63 00 02 13 5f 5f   .7........c...__
0010  63 6c 75 73 74 65 72 5f 6d 65 74 61 64 61 74 61   cluster_metadata
0020  02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00   ................
0030  00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00   ................
0040  00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00   ................
0050  00 01 02                                          ...
";

/// The same frame in a TCP segment to port 9092 (`text2pcap -T 50000,9092 -4 …`): the dump
/// holds the link, IP and TCP headers too, and its first ASCII column starts with a space.
const TSHARK_TCP: &str = "\
0000  20 52 45 43 56 00 20 53 45 4e 44 00 08 00 45 00    RECV. SEND...E.
0010  00 7b 12 34 00 00 ff 06 ab 46 7f 00 00 01 7f 00   .{.4.....F......
0020  00 01 c3 50 23 84 00 00 00 00 00 00 00 00 50 00   ...P#.........P.
0030  20 00 67 d7 00 00 00 37 00 02 00 00 00 07 00 01    .g....7........
0040  63 00 02 13 5f 5f 63 6c 75 73 74 65 72 5f 6d 65   c...__cluster_me
0050  74 61 64 61 74 61 02 00 00 00 00 00 00 00 00 00   tadata..........
0060  00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00   ................
0070  00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00   ................
0080  00 00 00 00 00 00 00 01 02                        .........
";

#[test]
fn plain_hex_with_comments_and_any_spacing() {
    let text = b"00 12 # api key\n\tAB\r\n# whole-line comment\ncd";
    assert_eq!(decode(text).unwrap(), [0x00, 0x12, 0xab, 0xcd]);
    assert_eq!(encode(&[0x00, 0x12, 0xab, 0xcd]), "0012abcd");
    // Digits pair up across whitespace, as they always did.
    assert_eq!(decode(b"0 0 1\n2").unwrap(), [0x00, 0x12]);
    assert_eq!(decode(b"").unwrap(), []);
    assert_eq!(decode(b"# nothing but a comment\n\n").unwrap(), []);
}

#[test]
fn plain_hex_with_0x_prefixes() {
    assert_eq!(decode(b"0x0037 0X0002").unwrap(), [0, 0x37, 0, 2]);
    assert_eq!(
        decode(b"{ 0x00, 0x37,\n 0x00, 0x02 }".as_slice())
            .unwrap_err()
            .kind(),
        &ErrorKind::InvalidCharacter(b'{')
    );
    assert_eq!(
        decode(b"0x00, 0x37,\n0x00,0x02, # C array\n").unwrap(),
        [0, 0x37, 0, 2]
    );
    // Mixed with bare digits.
    assert_eq!(decode(b"00 0x37 0002").unwrap(), [0, 0x37, 0, 2]);
}

#[test]
fn plain_hex_errors_say_where() {
    let err = decode(b"00\n1g").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid character \"g\" in hex input at line 2, column 2 (text offset 4)"
    );
    let err = decode(b"001").unwrap_err();
    assert_eq!(
        err.to_string(),
        "hex input ends with half a byte (odd number of digits) at byte offset 1"
    );
    // A 0x word holds whole bytes: an odd count, an empty one or half a byte before it has
    // no single reading.
    for text in [&b"0x037"[..], b"0x", b"0 0x37"] {
        let err = decode(text).unwrap_err();
        assert_eq!(
            err.kind(),
            &ErrorKind::OddDigits,
            "{:?}",
            String::from_utf8_lossy(text)
        );
    }
    let err = decode(b"0x00\n  0x12z").unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::InvalidCharacter(b'z'));
    assert_eq!(err.position().unwrap().line, 2);
    assert_eq!(err.position().unwrap().column, 7);
    // `x` in the middle of a word is no prefix.
    assert!(decode(b"00x1").is_err());
}

#[test]
fn xxd_output_in_any_grouping() {
    assert_eq!(detect(XXD.as_bytes()), Format::Xxd);
    assert_eq!(decode(XXD.as_bytes()).unwrap(), frame());
    assert_eq!(decode(XXD_G1.as_bytes()).unwrap(), frame());
    // The ASCII column is not read, even when it looks like hex.
    let text = b"00000000: 6162 6364  abcd\n00000004: 3132       12\n";
    assert_eq!(decode(text).unwrap(), b"abcd12");
}

#[test]
fn hexdump_c_with_squeezed_lines() {
    assert_eq!(detect(HEXDUMP_C.as_bytes()), Format::OffsetDump);
    assert_eq!(decode(HEXDUMP_C.as_bytes()).unwrap(), frame());
}

#[test]
fn tshark_dumps() {
    assert_eq!(detect(TSHARK.as_bytes()), Format::OffsetDump);
    assert_eq!(decode(TSHARK.as_bytes()).unwrap(), frame());
    let packet = decode(TSHARK_TCP.as_bytes()).unwrap();
    assert_eq!(packet.len(), 137);
    assert_eq!(packet[137 - 83..], frame());
}

#[test]
fn offset_dumps_as_wireshark_writes_them() {
    // Wireshark's "Copy as Hex Dump" puts three spaces after the offset; the ASCII column
    // follows three spaces after the last pair.
    let text = "\
0000   00 37 00 02 00 00 00 07 00 01 63 00 02 13 5f 5f   .7........c...__
0010   63 6c 75 73                                       clus
";
    assert_eq!(decode(text.as_bytes()).unwrap(), frame()[..20]);
}

#[test]
fn dumps_refuse_lost_or_extra_lines() {
    // A line left out.
    let missing: String = XXD
        .lines()
        .filter(|l| !l.starts_with("00000010"))
        .map(|l| format!("{l}\n"))
        .collect();
    let err = decode(missing.as_bytes()).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::OffsetGap {
            expected: 0x10,
            found: 0x20
        }
    );
    assert_eq!(err.position().unwrap().line, 2);
    // A line pasted twice.
    let twice = format!("{}{XXD}", &XXD[..XXD.find('\n').unwrap() + 1]);
    assert!(matches!(
        decode(twice.as_bytes()).unwrap_err().kind(),
        ErrorKind::OffsetGap {
            expected: 0x10,
            found: 0
        }
    ));
    // An ASCII column set off by only two spaces, that looks like hex, reads as more bytes
    // than the first line holds.
    let text = b"0000  00 01   ..\n0002  61 62  ab\n";
    assert!(matches!(
        decode(text).unwrap_err().kind(),
        ErrorKind::LineTooLong { first: 2, found: 3 }
    ));
    // A line that is not part of the dump.
    let text = format!("{XXD}some words\n");
    assert_eq!(
        decode(text.as_bytes()).unwrap_err().kind(),
        &ErrorKind::NotADumpLine(Format::Xxd)
    );
    let err = decode(b"0000  00 01 0g\n").unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::InvalidCharacter(b'g'));
    assert_eq!(err.position().unwrap().column, 14);
    let err = decode(b"00000000: 0037 00z2  .7..\n").unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::InvalidCharacter(b'z'));
    assert!(decode(b"00000000: 003  .\n").is_err(), "odd group");
}

#[test]
fn squeezed_lines_are_bounded_and_whole() {
    let repeat = |text: &str| decode(text.as_bytes()).map_err(|e| e.kind().clone());
    assert_eq!(repeat("*\n0010  00\n"), Err(ErrorKind::BadRepeat));
    assert_eq!(repeat("0000  00 01\n*\n"), Err(ErrorKind::BadRepeat));
    assert_eq!(
        repeat("0000  00 01\n*\n0003  02\n"),
        Err(ErrorKind::BadRepeat)
    );
    assert_eq!(
        repeat("0000  00 01\n*\n0006  02\n").unwrap(),
        [0, 1, 0, 1, 0, 1, 2]
    );
    // Ten characters may not stand for 4 GiB.
    assert_eq!(
        repeat("0000  00 01\n*\nffffffff  02\n"),
        Err(ErrorKind::RepeatTooLarge(0xffff_fffd))
    );
}

#[test]
fn plain_text_is_not_taken_for_a_dump() {
    // Words of four digits with single spaces, or two-digit words: plain hex.
    assert_eq!(detect(b"0037 0002 0000 0007"), Format::Plain);
    assert_eq!(detect(b"00 00 00 28   # size"), Format::Plain);
    assert_eq!(
        detect(b"# comment\n0003000400000009 ffff 00000001"),
        Format::Plain
    );
    assert_eq!(detect(b"00000028    # size"), Format::Plain);
}

#[test]
fn encode_decode_round_trip() {
    let all: Vec<u8> = (0..=255).collect();
    assert_eq!(decode(encode(&all).as_bytes()).unwrap(), all);
}
