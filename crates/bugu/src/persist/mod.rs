//! Persistence: one versioned, checksummed, little-endian byte format for every filter type, with
//! readers that trust nothing.
//!
//! Every filter type implements one trait, [`Persist`]: the format in memory
//! (`to_bytes` / `from_bytes`), streamed in one pass with no second copy of a table and the
//! checksum computed on the way (`write_to` / `read_from`), and files saved atomically
//! (`save` / `load`). With the `serde` feature every filter type (de)serializes as the same
//! bytes. Views query the bytes in place (a memory-mapped file), with no copy:
//! [`CuckooView`], [`ExpandingView`] and [`AnyView`](crate::AnyView), which opens any kind.
//!
//! A file's header names its kind ([`FilterKind`]):
//! 1. a fixed [`CuckooFilter`](crate::CuckooFilter) (and a [`ConcurrentFilter`](crate::ConcurrentFilter),
//!    which saves the same bytes): one section;
//! 2. a [`GrowableFilter`](crate::GrowableFilter), a chain of tables: its growth settings and one
//!    section per level, through the same writer and reader;
//! 3. an [`ExpandingFilter`](crate::ExpandingFilter), one table: its fields, its stash and its
//!    buckets.
//!
//! Where things live: `persistable.rs` [`Persist`], `kind.rs` [`FilterKind`], `format.rs` the
//! layout and the checks every reader shares, `writer.rs` the `Encoder` and the cuckoo filter's
//! kind, `reader.rs` the `Decoder`, `view.rs` [`CuckooView`] and the zero-copy section cursor,
//! `file/` atomic saves and loads, `growable.rs`, `expanding.rs` and `expanding_view.rs` the other
//! kinds, `concurrent.rs` the concurrent filter's bytes, `error.rs` [`PersistError`],
//! `serde_impl.rs` the `serde` feature.
//!
//! The layouts are documented byte by byte in `docs/format.md`; a fixed filter's file:
//!
//! ```text
//! offset  size  field
//!      0     8  magic  89 42 55 47 55 0d 0a 1a  ("\x89BUGU\r\n\x1a")
//!      8     2  format version (1)
//!     10     2  filter kind (1 cuckoo, 2 growable, 3 expanding)
//!     12     4  flags: bit 0 canonical keys, bit 1 skipped add-if-absent inserts
//!     16    40  section parameters: fingerprint bits, bucket size, hash id, reserved,
//!               eviction limit, seed, bucket count, capacity, item count
//!     56     P  payload: the packed buckets, P = ceil(buckets x bucket size x bits / 8)
//!   56+P     T  zeros: the table's 16 bytes of padding, then alignment to 8 (T in 16..=23)
//! 56+P+T     8  checksum: XXH3-64 (seed 0) of bytes 0 .. 56+P+T
//! ```
//!
//! **Hostile input.** Every reader validates every field before sizing anything from it, bounds
//! every length by the input (a 100-byte input claiming 2^60 buckets fails before allocating),
//! verifies the checksum, checks that the stored item count equals the occupied slots and that
//! padding is zero, and reports a typed [`PersistError`]; no input makes it panic.
//!
//! **Checksum.** XXH3-64, already the crate's item hash: streaming, about as fast as memory
//! (tens of GB/s), 64 bits so accidental corruption goes undetected with probability 2^-64. A
//! CRC would detect short bursts with certainty but would add a dependency for no practical gain
//! at these sizes; the checksum guards against accidents, not attackers (who can recompute it —
//! the content checks make such a file harmless rather than rejected).

mod concurrent;
mod error;
mod expanding;
mod expanding_view;
mod file;
mod format;
mod growable;
mod kind;
mod persistable;
mod reader;
#[cfg(feature = "serde")]
mod serde_impl;
mod view;
mod writer;

pub use error::{InvalidParameter, PersistError};
pub use expanding_view::ExpandingView;
pub(crate) use format::HEADER_LEN;
pub use format::{FORMAT_VERSION, MAGIC};
pub use kind::FilterKind;
pub use persistable::Persist;
pub use view::CuckooView;

#[cfg(test)]
mod tests {
    //! The section API other filter types persist through, exercised as the growable filter uses
    //! it: a header of its own kind, its own fields, several sections, one checksum.

    use super::format::{HEADER_LEN, expect_kind};
    use super::reader::Decoder;
    use super::view::ViewCursor;
    use super::writer::Encoder;
    use super::*;
    use crate::{CuckooFilter, Filter, FilterMut};

    fn levels() -> Vec<CuckooFilter> {
        (0..3u64)
            .map(|level| {
                let mut filter = CuckooFilter::builder()
                    .capacity(50 << level)
                    .fingerprint_bits(9 + level as u32)
                    .seed(level)
                    .build()
                    .unwrap();
                for i in 0..(40u64 << level) {
                    filter.insert(&crate::Hashed((level, i))).unwrap();
                }
                filter
            })
            .collect()
    }

    fn encode(levels: &[CuckooFilter]) -> Vec<u8> {
        let flags = format::Flags::of(&levels[0]);
        let mut encoder = Encoder::new(Vec::new(), FilterKind::Growable, flags).unwrap();
        encoder.write_u64(levels.len() as u64).unwrap();
        for level in levels {
            encoder.section(level).unwrap();
        }
        encoder.finish().unwrap()
    }

    #[test]
    fn several_sections_round_trip_through_the_stream_and_view_apis() {
        let levels = levels();
        let bytes = encode(&levels);
        let mut expected_len = HEADER_LEN + 8 + 8;
        for level in &levels {
            // Each section is what a lone filter holds between its header and checksum.
            expected_len += level.serialized_len() - HEADER_LEN - 8;
        }
        assert_eq!(bytes.len(), expected_len);

        let mut decoder = Decoder::new(&bytes[..], None);
        expect_kind(decoder.header().unwrap(), FilterKind::Growable).unwrap();
        let count = decoder.read_u64("level count").unwrap();
        let read: Vec<CuckooFilter> = (0..count).map(|_| decoder.section().unwrap()).collect();
        decoder.finish().unwrap();
        assert_eq!(decoder.offset(), bytes.len() as u64);

        let mut cursor = ViewCursor::new(&bytes, FilterKind::Growable).unwrap();
        assert_eq!(cursor.read_u64("level count").unwrap(), 3);
        let views: Vec<CuckooView<'_>> = (0..3).map(|_| cursor.section().unwrap()).collect();
        cursor.finish().unwrap();

        for (level, ((original, owned), view)) in levels.iter().zip(&read).zip(&views).enumerate() {
            assert_eq!(owned.to_bytes(), original.to_bytes());
            assert_eq!(view.try_to_filter().unwrap().to_bytes(), original.to_bytes());
            for i in 0..(40u64 << level) {
                let hash = original.hash_of(&crate::Hashed((level as u64, i)));
                assert!(owned.contains_hash(hash) && view.contains_hash(hash));
            }
        }
        // Sections stay 8-byte aligned.
        let base = bytes.as_ptr() as usize;
        for view in &views {
            assert_eq!((view.table().payload().as_ptr() as usize - base) % 8, 0);
        }
    }

    #[test]
    fn a_corrupt_section_is_reported_after_the_checksum() {
        let levels = levels();
        let mut bytes = encode(&levels);
        // Corrupt the first section's item count and recompute the checksum: only the content
        // check can tell.
        let len_at = HEADER_LEN + 8 + 32;
        bytes[len_at] ^= 1;
        let end = bytes.len() - 8;
        let checksum = xxhash_rust::xxh3::xxh3_64(&bytes[..end]);
        bytes[end..].copy_from_slice(&checksum.to_le_bytes());

        let mut decoder = Decoder::new(&bytes[..], Some(bytes.len() as u64));
        decoder.header().unwrap();
        decoder.read_u64("level count").unwrap();
        for _ in 0..3 {
            decoder.section().unwrap();
        }
        assert!(matches!(decoder.finish(), Err(PersistError::LenMismatch { .. })));

        let mut cursor = ViewCursor::new(&bytes, FilterKind::Growable).unwrap();
        cursor.read_u64("level count").unwrap();
        for _ in 0..3 {
            cursor.section().unwrap();
        }
        assert!(matches!(cursor.finish(), Err(PersistError::LenMismatch { .. })));

        // Without the recomputed checksum, the checksum is what fails.
        let mut bytes = encode(&levels);
        bytes[len_at] ^= 1;
        let mut decoder = Decoder::new(&bytes[..], None);
        decoder.header().unwrap();
        decoder.read_u64("level count").unwrap();
        for _ in 0..3 {
            decoder.section().unwrap();
        }
        assert!(matches!(decoder.finish(), Err(PersistError::ChecksumMismatch { .. })));
    }

    #[test]
    fn a_reader_of_one_kind_refuses_another() {
        let bytes = encode(&levels());
        assert!(matches!(
            CuckooFilter::from_bytes(&bytes),
            Err(PersistError::WrongKind { expected: FilterKind::Cuckoo, found: FilterKind::Growable })
        ));
        assert!(matches!(CuckooFilter::read_from(&bytes[..]), Err(PersistError::WrongKind { .. })));
        assert_eq!(FilterKind::detect(&bytes).unwrap(), FilterKind::Growable);
        let message = PersistError::WrongKind { expected: FilterKind::Cuckoo, found: FilterKind::Growable };
        assert_eq!(message.to_string(), "the input holds a growable filter, not a cuckoo filter");
    }
}
