//! The saved form: what an RDB file, a `DUMP` payload and a digest hold of a value.
//!
//! # RDB encoding version 1
//!
//! One RDB string: the header (the one a dump's first chunk holds, described in `header`), then
//! `n` bytes of the filter, then a 16-byte trailer.
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

use bugu::Persist;
use xxhash_rust::xxh3::xxh3_64;

use super::header::{HEADER_BYTES, Header, valid_stamp};
use super::{CfValue, Restoring};

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
            STATE_RESTORING if !complete && valid_stamp(stamp) => {
                let mut received = Vec::new();
                received.try_reserve_exact(body.len()).ok()?;
                received.extend_from_slice(body);
                Some(Self::Restoring(Restoring { header, body: received, stamp }))
            }
            _ => None,
        }
    }
}
