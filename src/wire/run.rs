//! Runs of consecutive fixed-width fields, read and written as one array.
//!
//! A struct's generated codec takes a run (say `int32, uuid, int64`: 28 bytes) from the input
//! with one length check ([`Decoder::fixed_run`](super::Decoder::fixed_run)), or builds it on
//! the stack and writes it with one capacity check, and moves each field in or out at a
//! constant offset. The offsets are checked when the generated code compiles, so the field
//! accesses need no check at run time.

/// The `W` bytes at offset `AT` of a run of `N` bytes.
#[inline(always)]
pub fn read_at<const AT: usize, const W: usize, const N: usize>(run: &[u8; N]) -> [u8; W] {
    const { assert!(AT + W <= N, "a field must lie inside its run") };
    let mut bytes = [0; W];
    bytes.copy_from_slice(&run[AT..AT + W]);
    bytes
}

/// Puts `bytes` at offset `AT` of a run of `N` bytes.
#[inline(always)]
pub fn write_at<const AT: usize, const W: usize, const N: usize>(
    run: &mut [u8; N],
    bytes: [u8; W],
) {
    const { assert!(AT + W <= N, "a field must lie inside its run") };
    run[AT..AT + W].copy_from_slice(&bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_at_their_offsets() {
        let mut run = [0u8; 14];
        write_at::<0, 2, 14>(&mut run, (-2i16).to_be_bytes());
        write_at::<2, 4, 14>(&mut run, 7i32.to_be_bytes());
        write_at::<6, 8, 14>(&mut run, i64::MIN.to_be_bytes());
        assert_eq!(run, [0xff, 0xfe, 0, 0, 0, 7, 0x80, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(i16::from_be_bytes(read_at::<0, 2, 14>(&run)), -2);
        assert_eq!(i32::from_be_bytes(read_at::<2, 4, 14>(&run)), 7);
        assert_eq!(i64::from_be_bytes(read_at::<6, 8, 14>(&run)), i64::MIN);
    }
}
