//! The 32-byte header that a saved value and a dump's first chunk share, and the range of the dump
//! stamp that both carry (a dump in its iterators, a saved restore in its trailer). Both the
//! saved form and the dump read these; neither needs the other.
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
//! All little-endian.

use crate::error::CfError;

/// Length of the header.
pub(super) const HEADER_BYTES: usize = 32;
const MAGIC: [u8; 8] = *b"\x89BUGUCF\n";
const VERSION: u16 = 1;
/// The longest filter a header may announce (1 TiB): a bound on what a restore may grow to.
pub(super) const MAX_BODY_BYTES: u64 = 1 << 40;
/// Bits of a dump's stamp: an iterator holds it above the position in the filter's bytes, which
/// takes the rest of its 63 bits.
pub(super) const STAMP_BITS: u32 = 22;
/// The largest stamp a dump gives (its stamps are 1..=`MAX_STAMP`).
pub(super) const MAX_STAMP: u32 = (1 << STAMP_BITS) - 1;

/// Whether a restore may carry this stamp (0: one begun by chunks without a stamp).
pub(super) fn valid_stamp(stamp: u32) -> bool {
    stamp <= MAX_STAMP
}

/// The saved form's header (and a dump's first chunk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Header {
    pub(super) expansion: u64,
    pub(super) max_iterations: u64,
    pub(super) deleted: u64,
    pub(super) body_len: u64,
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
