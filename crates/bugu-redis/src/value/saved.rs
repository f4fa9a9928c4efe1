//! The saved form: what an RDB file, a `DUMP` payload and a digest hold of a value, and the
//! 32-byte header it shares with a dump's first chunk.
//!
//! # The header
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 8 | magic `\x89BUGUCF\n` |
//! | 8 | 2 | version, `1` |
//! | 10 | 2 | `EXPANSION` as reported (0 or a power of two up to 32768) |
//! | 12 | 4 | `MAXITERATIONS` (1..=65535) |
//! | 16 | 8 | items deleted |
//! | 24 | 8 | length of the filter's bytes (bugu's format, kind 2, with its own checksum) |
//!
//! # The saved form (RDB encoding version 1)
//!
//! One RDB string: the header, then `n` bytes of the filter, then a 16-byte trailer.
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 32 | the header |
//! | 32 | n | the filter's bytes: all of them (a filter), or those received so far (a restore) |
//! | 32 + n | 4 | state: 0 a filter (`n` is the header's length), 1 a restore (`n` is less) |
//! | 36 + n | 4 | a restore's dump stamp (0 for a filter) |
//! | 40 + n | 8 | XXH3-64 of every byte before it |
//!
//! All little-endian. A payload is read only if every field agrees: its checksum, its state with
//! its length, and a filter's bytes with bugu's own checks. Encoding version 0 (earlier builds)
//! is the header and the bytes without the trailer; it cannot tell a restore in progress from a
//! cut payload, so only a complete filter is read from it.

use xxhash_rust::xxh3::xxh3_64;

use super::{CfValue, Restoring};
use crate::error::CfError;

/// Length of the header.
pub(crate) const HEADER_BYTES: usize = 32;
const MAGIC: [u8; 8] = *b"\x89BUGUCF\n";
const VERSION: u16 = 1;
/// The longest filter a header may announce (1 TiB): a bound on what a restore may grow to.
pub(super) const MAX_BODY_BYTES: u64 = 1 << 40;
const STATE_FILTER: u32 = 0;
const STATE_RESTORING: u32 = 1;

/// The RDB encoding of a saved value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// Header and bytes, without a trailer: written by earlier builds, read when complete.
    Legacy,
    /// Header, bytes and the trailer.
    Checked,
}

impl Encoding {
    /// The version this build writes.
    pub(crate) const CURRENT: i32 = 1;

    /// The encoding of an RDB encoding version; `None` for a version this build does not know.
    pub(crate) fn of_version(version: i32) -> Option<Self> {
        match version {
            0 => Some(Self::Legacy),
            Self::CURRENT => Some(Self::Checked),
            _ => None,
        }
    }
}

/// The saved form's header (and a dump's first chunk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub(super) expansion: u64,
    pub(super) max_iterations: u64,
    pub(super) deleted: u64,
    pub(super) body_len: u64,
}

impl CfValue {
    /// The saved form (RDB, `DUMP`, digests), in the current encoding.
    pub(crate) fn to_saved(&self) -> Vec<u8> {
        let mut saved = Vec::new();
        let (state, stamp) = match self {
            Self::Ready(ready) => {
                saved.extend_from_slice(&ready.header().encode());
                ready.filter.write_to(&mut saved).expect("writing to a Vec cannot fail");
                (STATE_FILTER, 0)
            }
            Self::Restoring(restoring) => {
                saved.extend_from_slice(&restoring.header.encode());
                saved.extend_from_slice(&restoring.body);
                (STATE_RESTORING, restoring.stamp)
            }
        };
        saved.extend_from_slice(&state.to_le_bytes());
        saved.extend_from_slice(&stamp.to_le_bytes());
        saved.extend_from_slice(&xxh3_64(&saved).to_le_bytes());
        saved
    }

    /// A value from its saved form, every field checked (see the module's docs); `None` if the
    /// bytes are not a whole saved value.
    pub(crate) fn from_saved(saved: &[u8], encoding: Encoding) -> Option<Self> {
        let (content, state, stamp) = match encoding {
            Encoding::Legacy => (saved, STATE_FILTER, 0),
            Encoding::Checked => {
                let (content, checksum) = saved.split_last_chunk::<8>()?;
                if xxh3_64(content) != u64::from_le_bytes(*checksum) {
                    return None;
                }
                let (content, trailer) = content.split_last_chunk::<8>()?;
                let [s0, s1, s2, s3, t0, t1, t2, t3] = *trailer;
                (content, u32::from_le_bytes([s0, s1, s2, s3]), u32::from_le_bytes([t0, t1, t2, t3]))
            }
        };
        let (header, body) = content.split_at_checked(HEADER_BYTES)?;
        let header = Header::decode(header).ok()?;
        let complete = body.len() as u64 == header.body_len;
        match state {
            STATE_FILTER if complete => Restoring::finish(&header, body).map(Self::Ready),
            STATE_RESTORING if !complete && super::dump::valid_stamp(stamp) => {
                let mut received = Vec::new();
                received.try_reserve_exact(body.len()).ok()?;
                received.extend_from_slice(body);
                Some(Self::Restoring(Restoring { header, body: received, stamp }))
            }
            _ => None,
        }
    }
}

impl super::Ready {
    /// The header that describes this filter.
    pub(super) fn header(&self) -> Header {
        Header {
            expansion: self.settings.expansion,
            max_iterations: self.settings.max_iterations,
            deleted: self.deleted,
            body_len: self.filter.serialized_len() as u64,
        }
    }
}

impl Header {
    pub(super) fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut bytes = [0; HEADER_BYTES];
        bytes[..8].copy_from_slice(&MAGIC);
        bytes[8..10].copy_from_slice(&VERSION.to_le_bytes());
        // Both were validated into these ranges.
        bytes[10..12].copy_from_slice(&(self.expansion as u16).to_le_bytes());
        bytes[12..16].copy_from_slice(&(self.max_iterations as u32).to_le_bytes());
        bytes[16..24].copy_from_slice(&self.deleted.to_le_bytes());
        bytes[24..32].copy_from_slice(&self.body_len.to_le_bytes());
        bytes
    }

    pub(super) fn decode(bytes: &[u8]) -> Result<Self, CfError> {
        let bytes: &[u8; HEADER_BYTES] = bytes.try_into().map_err(|_| CfError::InvalidHeader)?;
        let u16_at = |at: usize| u64::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
        let u32_at =
            |at: usize| u64::from(u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")));
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let header = Self {
            expansion: u16_at(10),
            max_iterations: u32_at(12),
            deleted: u64_at(16),
            body_len: u64_at(24),
        };
        let valid = bytes[..8] == MAGIC
            && u16_at(8) == u64::from(VERSION)
            && (header.expansion == 0 || (header.expansion.is_power_of_two() && header.expansion <= 32_768))
            && (1..=65_535).contains(&header.max_iterations)
            && (1..=MAX_BODY_BYTES).contains(&header.body_len);
        if valid { Ok(header) } else { Err(CfError::InvalidHeader) }
    }
}
