//! Hex text in and out.
//!
//! Input is forgiving so that annotated dumps can be pasted as they are: whitespace is ignored
//! and `#` starts a comment that runs to the end of the line. Output is plain lowercase hex.

/// Decodes hex text into bytes. The error names the line, column and text offset of the
/// first character that is not a hex digit, whitespace or comment.
pub fn decode(text: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len() / 2);
    let mut high: Option<u8> = None;
    let mut in_comment = false;
    let (mut line, mut line_start) = (1, 0);
    for (offset, &c) in text.iter().enumerate() {
        if c == b'\n' {
            in_comment = false;
            line += 1;
            line_start = offset + 1;
            continue;
        }
        if in_comment || c.is_ascii_whitespace() {
            continue;
        }
        if c == b'#' {
            in_comment = true;
            continue;
        }
        let Some(nibble) = (c as char).to_digit(16) else {
            return Err(format!(
                "invalid character {:?} in hex input at line {line}, column {} (text offset {offset})",
                c.escape_ascii().to_string(),
                offset - line_start + 1,
            ));
        };
        // `to_digit(16)` is below 16, so it fits a nibble.
        let nibble = nibble as u8;
        match high.take() {
            None => high = Some(nibble),
            Some(h) => out.push(h << 4 | nibble),
        }
    }
    if high.is_some() {
        return Err(format!(
            "hex input ends with half a byte (odd number of digits) at byte offset {}",
            out.len()
        ));
    }
    Ok(out)
}

/// Lowercase hex, no separators.
pub fn encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_annotated_text() {
        let text = b"00 12 # api key\n\tAB\r\n# whole-line comment\ncd";
        assert_eq!(decode(text).unwrap(), [0x00, 0x12, 0xab, 0xcd]);
        assert_eq!(encode(&[0x00, 0x12, 0xab, 0xcd]), "0012abcd");
    }

    #[test]
    fn rejects_bad_digits_and_odd_length() {
        let err = decode(b"00\n1g").unwrap_err();
        assert!(err.contains("line 2, column 2"), "{err}");
        assert!(err.contains("text offset 4"), "{err}");
        let err = decode(b"001").unwrap_err();
        assert!(err.contains("byte offset 1"), "{err}");
    }
}
