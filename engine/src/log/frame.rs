//! Byte layout of store files (see docs/format.md): a 24-byte header, then
//! frames of `len: u32 LE | checksum(payload): u32 LE | payload`, the
//! checksum the file's format version names ([`Checksum`]).

use crate::error::{Error, Result};

/// Written by this build. Version 2 added embeddings (a second snapshot
/// frame, `Mutation::Embed` records), version 3 callers' triples (a third
/// frame, `Mutation::Relate`), version 4 the derived indexes (a fourth
/// snapshot frame), version 5 checksums frames with XXH3 instead of CRC-32,
/// version 6 stores embeddings as int8 rows (`Mutation::EmbedRow`, and the
/// vectors frame's rows); older files are read as they are.
pub const FORMAT_VERSION: u32 = 6;
/// The first version whose vectors frame holds int8 rows (before: f16).
pub const INT8_ROWS_FROM: u32 = 6;
pub const OLDEST_READABLE: u32 = 1;
pub const HEADER_LEN: u64 = 24;
pub const FRAME_OVERHEAD: usize = 8;
/// No single record may exceed this (a snapshot of ~1 GiB is the practical cap).
pub const MAX_FRAME: u32 = 1 << 30;

pub const LOG_MAGIC: &[u8; 8] = b"HMG-LOG\0";
pub const SNAP_MAGIC: &[u8; 8] = b"HMG-SNP\0";

/// How a file's frames are checksummed, by its format version: CRC-32 up to
/// version 4; from version 5 the low half of XXH3-64 folded with the high
/// half. Inside the component CRC-32 has no SIMD path (about 1 GB/s: 80–100
/// ms for the vectors frame of 100k atoms); XXH3 runs about 5× faster there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checksum {
    Crc32,
    Xxh3,
}

impl Checksum {
    /// What this build writes into new files.
    pub const CURRENT: Checksum = Checksum::of_version(FORMAT_VERSION);

    pub const fn of_version(version: u32) -> Checksum {
        if version >= 5 {
            Checksum::Xxh3
        } else {
            Checksum::Crc32
        }
    }

    pub fn of(self, payload: &[u8]) -> u32 {
        match self {
            Checksum::Crc32 => crc32fast::hash(payload),
            Checksum::Xxh3 => {
                let h = xxhash_rust::xxh3::xxh3_64(payload);
                (h ^ (h >> 32)) as u32
            }
        }
    }
}

/// `magic(8) | format version u32 | generation u64 | crc32 of the first 20 bytes`.
pub fn header(magic: &[u8; 8], generation: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN as usize);
    out.extend_from_slice(magic);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&generation.to_le_bytes());
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Checks a header; returns its generation and how its frames are
/// checksummed.
pub fn parse_header(magic: &[u8; 8], bytes: &[u8]) -> Result<(u64, Checksum)> {
    if bytes.len() < HEADER_LEN as usize {
        return Err(Error::Corrupt("file header is truncated".into()));
    }
    let crc = u32::from_le_bytes(bytes[20..24].try_into().expect("4 bytes"));
    if &bytes[..8] != magic || crc32fast::hash(&bytes[..20]) != crc {
        return Err(Error::Corrupt("file header is not an HMG header".into()));
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if !(OLDEST_READABLE..=FORMAT_VERSION).contains(&version) {
        return Err(Error::Corrupt(format!(
            "format version {version} is not supported (this build reads {OLDEST_READABLE} to {FORMAT_VERSION})"
        )));
    }
    let generation = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
    Ok((generation, Checksum::of_version(version)))
}

/// The format version of a header [`parse_header`] accepted.
pub fn version(header: &[u8]) -> u32 {
    u32::from_le_bytes(header[8..12].try_into().expect("4 bytes"))
}

/// A frame's head (payload length and checksum) for `payload` in a file
/// this build writes, to write before it without copying it into one
/// buffer.
pub fn head(payload: &[u8]) -> [u8; FRAME_OVERHEAD] {
    head_with(Checksum::CURRENT, payload)
}

fn head_with(checksum: Checksum, payload: &[u8]) -> [u8; FRAME_OVERHEAD] {
    let mut out = [0; FRAME_OVERHEAD];
    out[..4].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    out[4..].copy_from_slice(&checksum.of(payload).to_le_bytes());
    out
}

/// A frame for a file whose frames use `checksum` (appending to an older
/// log keeps its kind).
pub fn frame_with(checksum: Checksum, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + FRAME_OVERHEAD);
    out.extend_from_slice(&head_with(checksum, payload));
    out.extend_from_slice(payload);
    out
}

/// A frame's head: payload length and checksum.
pub fn parse_head(head: &[u8; FRAME_OVERHEAD]) -> (u32, u32) {
    let len = u32::from_le_bytes(head[..4].try_into().expect("4 bytes"));
    let crc = u32::from_le_bytes(head[4..].try_into().expect("4 bytes"));
    (len, crc)
}

/// What is at an offset of a byte buffer.
#[derive(Debug, PartialEq)]
pub enum Next<'a> {
    /// A whole, checksummed frame and the offset after it.
    Frame(&'a [u8], usize),
    /// Clean end of data.
    End,
    /// Not a valid frame (short, or checksum mismatch): a torn tail or rot.
    Bad,
}

pub fn next(bytes: &[u8], at: usize, checksum: Checksum) -> Next<'_> {
    let rest = &bytes[at.min(bytes.len())..];
    if rest.is_empty() {
        return Next::End;
    }
    if rest.len() < FRAME_OVERHEAD {
        return Next::Bad;
    }
    let (len, crc) = parse_head(rest[..FRAME_OVERHEAD].try_into().expect("8 bytes"));
    let end = FRAME_OVERHEAD + len as usize;
    if len > MAX_FRAME || rest.len() < end {
        return Next::Bad;
    }
    let payload = &rest[FRAME_OVERHEAD..end];
    if checksum.of(payload) != crc {
        return Next::Bad;
    }
    Next::Frame(payload, at + end)
}

/// Whether every byte is zero (a file a crash extended without its data).
pub fn all_zero(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| b == 0)
}

/// Whether bytes that do not make a valid frame are what a crash leaves: a
/// prefix of a frame (shorter than its length field says) or zeros. A
/// frame of full length whose checksum fails was damaged after the fact.
pub fn is_torn(rest: &[u8]) -> bool {
    if rest.len() < FRAME_OVERHEAD || all_zero(rest) {
        return true;
    }
    let len = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes"));
    len <= MAX_FRAME && rest.len() < FRAME_OVERHEAD + len as usize
}

/// Whether any valid frame starts anywhere after `at` — if so, a bad frame
/// at `at` is damage in the middle of the log, not a torn tail.
pub fn valid_frame_after(bytes: &[u8], at: usize, checksum: Checksum) -> bool {
    (at + 1..bytes.len().saturating_sub(FRAME_OVERHEAD)).any(|i| {
        let len = u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
        len > 0 && matches!(next(bytes, i, checksum), Next::Frame(..))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_rejection() {
        let h = header(LOG_MAGIC, 7);
        assert_eq!(h.len() as u64, HEADER_LEN);
        assert_eq!(parse_header(LOG_MAGIC, &h).unwrap(), (7, Checksum::CURRENT));
        assert!(parse_header(SNAP_MAGIC, &h).is_err());
        let mut bad = h.clone();
        bad[13] ^= 1;
        assert!(parse_header(LOG_MAGIC, &bad).is_err());
    }

    #[test]
    fn frames_detect_tears_and_rot() {
        for checksum in [Checksum::Crc32, Checksum::Xxh3] {
            let mut bytes = frame_with(checksum, b"first");
            bytes.extend(frame_with(checksum, b"second"));
            let Next::Frame(p, at) = next(&bytes, 0, checksum) else {
                panic!()
            };
            assert_eq!(p, b"first");
            let Next::Frame(p, end) = next(&bytes, at, checksum) else {
                panic!()
            };
            assert_eq!(p, b"second");
            assert_eq!(next(&bytes, end, checksum), Next::End);
            assert_eq!(next(&bytes[..end - 1], at, checksum), Next::Bad);
            let mut rotten = bytes.clone();
            rotten[9] ^= 1;
            assert_eq!(next(&rotten, 0, checksum), Next::Bad);
            assert!(valid_frame_after(&rotten, 0, checksum));
            assert!(!valid_frame_after(&bytes[..end - 1], at, checksum));
        }
    }

    /// A frame checked by the other kind fails: a file's version decides.
    #[test]
    fn a_frame_is_read_with_its_files_checksum() {
        let payload = b"a record of some length, long enough to matter";
        assert_eq!(Checksum::of_version(4), Checksum::Crc32);
        assert_eq!(Checksum::of_version(FORMAT_VERSION), Checksum::CURRENT);
        let old = frame_with(Checksum::Crc32, payload);
        assert!(matches!(next(&old, 0, Checksum::Crc32), Next::Frame(..)));
        assert_eq!(next(&old, 0, Checksum::Xxh3), Next::Bad);
        let new = frame_with(Checksum::CURRENT, payload);
        assert_eq!(next(&new, 0, Checksum::Crc32), Next::Bad);
        assert!(matches!(next(&new, 0, Checksum::CURRENT), Next::Frame(..)));
    }
}
