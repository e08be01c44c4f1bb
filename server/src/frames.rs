//! Size-prefixed Kafka frames read off a connection, each into a buffer of its own.
//!
//! A frame that arrives within one read is copied out of it (frames that small cost little
//! to copy); a frame longer than what has arrived gets a buffer of exactly its size (grown
//! at most [`STEP`] ahead of the bytes read, as the size prefix is only a claim), and the
//! rest of it is read straight into that buffer. So a large frame is copied by the kernel
//! only, and a `Bytes` slice of it (a produced record batch the server keeps) holds no
//! memory beyond its own frame. Between frames the reader holds no buffer, as
//! [`read_chunk`] holds none while it waits.

use crate::stream::{read_chunk, CHUNK};
use kafka_codec::bytes::{Buf, BufMut, Bytes};
use std::collections::VecDeque;
use std::io;
use tokio::io::{AsyncRead, AsyncReadExt};

/// The most a frame's buffer is allocated ahead of the bytes that have arrived for it.
pub const STEP: usize = 1024 * 1024;

/// Why a connection's bytes are not a frame.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("read failed: {0}")]
    Io(#[from] io::Error),
    #[error("frame size {0} is negative")]
    NegativeSize(i32),
    #[error("frame size {size} is above the limit of {limit} bytes")]
    TooLarge { size: usize, limit: usize },
}

/// Splits what a connection sends into frames (without their size prefixes).
#[derive(Debug)]
pub struct FrameReader {
    max_frame_size: usize,
    /// Whole frames read and not yet taken, oldest first.
    ready: VecDeque<Bytes>,
    /// The first bytes of a size prefix that has not all arrived.
    prefix: Vec<u8>,
    /// The frame being read: its bytes so far and its size.
    partial: Option<(Vec<u8>, usize)>,
}

impl FrameReader {
    /// A reader refusing frames above `max_frame_size` bytes.
    pub fn new(max_frame_size: usize) -> Self {
        FrameReader {
            max_frame_size,
            ready: VecDeque::new(),
            prefix: Vec::new(),
            partial: None,
        }
    }

    /// The next whole frame, if one has arrived.
    pub fn next_frame(&mut self) -> Option<Bytes> {
        self.ready.pop_front()
    }

    /// Bytes read and not yet taken as frames (what a memory budget should be charged).
    pub fn held(&self) -> usize {
        self.ready.iter().map(Bytes::len).sum::<usize>()
            + self.prefix.len()
            + self.partial.as_ref().map_or(0, |(bytes, _)| bytes.len())
    }

    /// Reads once from `reader`, at most [`CHUNK`] bytes: the number read, 0 at the end of
    /// the stream. Call [`next_frame`](Self::next_frame) after each read.
    pub async fn read<R: AsyncRead + Unpin + ?Sized>(
        &mut self,
        reader: &mut R,
    ) -> Result<usize, FrameError> {
        if let Some((bytes, size)) = &mut self.partial {
            if bytes.len() == bytes.capacity() {
                bytes.reserve_exact((*size - bytes.len()).min(STEP));
            }
            let room = (*size - bytes.len()).min(CHUNK);
            let n = reader.read_buf(&mut (&mut *bytes).limit(room)).await?;
            if n > 0 && bytes.len() == *size {
                let (bytes, _) = self.partial.take().expect("a frame is being read");
                self.ready.push_back(Bytes::from(bytes));
            }
            return Ok(n);
        }
        let chunk = read_chunk(reader).await?;
        let n = chunk.len();
        self.split(chunk)?;
        Ok(n)
    }

    /// Takes the frames of `chunk`, keeping what starts one.
    fn split(&mut self, mut chunk: Bytes) -> Result<(), FrameError> {
        while chunk.has_remaining() {
            if let Some((bytes, size)) = &mut self.partial {
                let take = (*size - bytes.len()).min(chunk.len());
                bytes.extend_from_slice(&chunk[..take]);
                chunk.advance(take);
                if bytes.len() == *size {
                    let (bytes, _) = self.partial.take().expect("a frame is being read");
                    self.ready.push_back(Bytes::from(bytes));
                }
                continue;
            }
            let take = (4 - self.prefix.len()).min(chunk.len());
            self.prefix.extend_from_slice(&chunk[..take]);
            chunk.advance(take);
            let Ok(prefix) = <[u8; 4]>::try_from(&self.prefix[..]) else {
                break;
            };
            self.prefix.clear();
            let claimed = i32::from_be_bytes(prefix);
            let size = usize::try_from(claimed).map_err(|_| FrameError::NegativeSize(claimed))?;
            if size > self.max_frame_size {
                return Err(FrameError::TooLarge {
                    size,
                    limit: self.max_frame_size,
                });
            }
            if chunk.len() >= size {
                self.ready.push_back(Bytes::copy_from_slice(&chunk[..size]));
                chunk.advance(size);
            } else {
                self.partial = Some((Vec::with_capacity(size.min(STEP)), size));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    fn framed(frames: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for frame in frames {
            out.extend_from_slice(&(frame.len() as u32).to_be_bytes());
            out.extend_from_slice(frame);
        }
        out
    }

    /// Reads everything `sent` holds, written in pieces of `piece` bytes, into frames.
    async fn frames_of(sent: Vec<u8>, piece: usize, max: usize) -> Result<Vec<Bytes>, String> {
        let (mut client, mut server) = tokio::io::duplex(4 * CHUNK);
        let writer = tokio::spawn(async move {
            for part in sent.chunks(piece) {
                if client.write_all(part).await.is_err() {
                    return;
                }
            }
        });
        let mut reader = FrameReader::new(max);
        let mut frames = Vec::new();
        loop {
            let n = reader.read(&mut server).await.map_err(|e| e.to_string())?;
            while let Some(frame) = reader.next_frame() {
                frames.push(frame);
            }
            if n == 0 {
                break;
            }
        }
        writer.await.unwrap();
        assert_eq!(reader.held(), 0, "bytes left over");
        Ok(frames)
    }

    #[tokio::test]
    async fn frames_whole_split_and_large_come_out_as_sent() {
        let large: Vec<u8> = (0..3 * STEP + 12345).map(|i| (i % 251) as u8).collect();
        let middle = vec![7u8; CHUNK + 1];
        let sent = framed(&[b"a", b"", &large, b"bc", &middle, b"def"]);
        for piece in [1, 3, 5, 4096, CHUNK, sent.len()] {
            let frames = frames_of(sent.clone(), piece, 16 * STEP).await.unwrap();
            let got: Vec<&[u8]> = frames.iter().map(|f| &f[..]).collect();
            assert_eq!(
                got,
                [&b"a"[..], b"", &large, b"bc", &middle, b"def"],
                "piece {piece}"
            );
        }
    }

    #[tokio::test]
    async fn a_large_frame_gets_a_buffer_of_its_size() {
        let large = vec![1u8; STEP / 2 + 3];
        let mut reader = FrameReader::new(STEP);
        let (mut client, mut server) = tokio::io::duplex(4 * CHUNK);
        let sent = framed(&[&large]);
        tokio::spawn(async move { client.write_all(&sent).await });
        let frame = loop {
            assert!(reader.read(&mut server).await.unwrap() > 0);
            if let Some(frame) = reader.next_frame() {
                break frame;
            }
        };
        assert_eq!(frame.len(), large.len());
        // A `Bytes` made from a full `Vec` is that vector: nothing beyond the frame is held.
        let vec: Vec<u8> = frame.into();
        assert_eq!(vec.capacity(), large.len());
    }

    #[tokio::test]
    async fn sizes_above_the_limit_or_negative_are_refused() {
        let error = frames_of(framed(&[&[0u8; 11]]), 64, 10).await.unwrap_err();
        assert_eq!(error, "frame size 11 is above the limit of 10 bytes");
        let error = frames_of(vec![0xff, 0xff, 0xff, 0xfe], 64, 10)
            .await
            .unwrap_err();
        assert_eq!(error, "frame size -2 is negative");
    }
}
