//! The errors of reading a persisted filter: each names what was wrong and where.

use std::io;

use thiserror::Error;

use crate::error::ConfigError;

use super::kind::FilterKind;

/// Why bytes could not be read as a filter. Reading never panics and never allocates more than
/// the input proves necessary, whatever the bytes.
///
/// ```
/// use bugu::{CuckooFilter, Persist, PersistError};
///
/// let err = CuckooFilter::from_bytes(b"not a filter").unwrap_err();
/// assert!(matches!(err, PersistError::BadMagic));
///
/// let bytes = CuckooFilter::new(100)?.to_bytes();
/// let err = CuckooFilter::from_bytes(&bytes[..bytes.len() - 1]).unwrap_err();
/// assert!(matches!(err, PersistError::Truncated { .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum PersistError {
    /// The input does not start with the format's magic bytes: it is not a bugu filter (or was
    /// mangled by a text-mode transfer).
    #[error("not a bugu filter: the magic bytes do not match")]
    BadMagic,
    /// The format version is not one this build reads.
    #[error("unsupported format version {found} (this build reads version {supported})")]
    UnsupportedVersion {
        /// The version in the input.
        found: u16,
        /// The version this build reads and writes.
        supported: u16,
    },
    /// The filter kind code is not one this build knows.
    #[error("unknown filter kind {0}")]
    UnknownKind(u16),
    /// The input holds another kind of filter than the one asked for.
    #[error("the input holds a {found} filter, not a {expected} filter")]
    WrongKind {
        /// The kind the reader was asked to read.
        expected: FilterKind,
        /// The kind in the input.
        found: FilterKind,
    },
    /// The input ends before the filter does.
    #[error("truncated input: it ends at byte {offset}, inside the {part}")]
    Truncated {
        /// Bytes available (or read from the stream) before the end.
        offset: u64,
        /// The part of the format that was being read.
        part: &'static str,
    },
    /// The stored checksum does not match the bytes: they were corrupted.
    #[error("checksum mismatch: stored {stored:#018x}, computed {computed:#018x} (the bytes are corrupted)")]
    ChecksumMismatch {
        /// The checksum in the input.
        stored: u64,
        /// The checksum of the bytes read.
        computed: u64,
    },
    /// A parameter in the header is out of range or inconsistent.
    #[error("invalid parameter: {0}")]
    InvalidParameter(#[from] InvalidParameter),
    /// A semi-sorted bucket holds a code for its sorted nibbles that does not exist.
    #[error("corrupt filter: bucket {bucket} is not a valid semi-sorted bucket")]
    InvalidBucket {
        /// The index of the first invalid bucket.
        bucket: u64,
    },
    /// The stored item count differs from the number of occupied slots in the table.
    #[error("corrupt filter: the header says {stored} items but the table holds {counted}")]
    LenMismatch {
        /// The count in the header.
        stored: u64,
        /// Occupied slots counted in the table.
        counted: u64,
    },
    /// Bits that must be zero (after the last bucket, or in the padding) are not.
    #[error("corrupt filter: non-zero bits in the padding at byte {offset}")]
    NonZeroPadding {
        /// Offset of the first offending byte in the input.
        offset: u64,
    },
    /// Bytes follow the end of the filter where the input should end.
    #[error("{0} unexpected bytes after the end of the filter")]
    TrailingBytes(u64),
    /// The input is valid so far, but the memory for its table (`bytes` bytes) could not be
    /// allocated; the process is not aborted. Readers only ask for what the input proves it
    /// holds, so this happens for large filters on a machine short of memory.
    ///
    /// ```
    /// let err = bugu::PersistError::OutOfMemory { bytes: 1 << 40 };
    /// assert_eq!(err.to_string(), "out of memory: could not allocate 1099511627776 bytes for a table");
    /// ```
    #[error("out of memory: could not allocate {bytes} bytes for a table")]
    OutOfMemory {
        /// The size of the allocation that failed.
        bytes: usize,
    },
    /// Reading from the stream or file failed.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
}

/// A header parameter that a valid filter cannot have, with the offending value.
///
/// The rules a filter's geometry obeys however it was made (fingerprint width, bucket size,
/// semi-sorted buckets of 4, eviction limit, a table that fits in memory) are the builder's, and
/// break with the builder's error, inside [`Config`](Self::Config); the other variants are the
/// format's own.
///
/// ```
/// use bugu::ConfigError;
/// use bugu::persist::InvalidParameter;
///
/// let err = InvalidParameter::Config(ConfigError::InvalidFingerprintBits(40));
/// assert_eq!(err.to_string(), "fingerprint width must be between 4 and 32 bits, got 40");
/// assert_eq!(InvalidParameter::HashId(7).to_string(), "unknown hash function id 7");
/// ```
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum InvalidParameter {
    /// A parameter breaks a rule every filter configuration obeys, built or read: the same error
    /// [`Builder::build`](crate::Builder::build) returns for it
    /// ([`InvalidFingerprintBits`](ConfigError::InvalidFingerprintBits),
    /// [`InvalidBucketSize`](ConfigError::InvalidBucketSize),
    /// [`SemiSortedBucketSize`](ConfigError::SemiSortedBucketSize),
    /// [`InvalidEvictionLimit`](ConfigError::InvalidEvictionLimit) or
    /// [`TableTooLarge`](ConfigError::TableTooLarge)).
    ///
    /// ```
    /// use bugu::{ConfigError, CuckooFilter, Persist, PersistError};
    /// use bugu::persist::InvalidParameter;
    ///
    /// let mut bytes = CuckooFilter::new(10)?.to_bytes();
    /// bytes[17] = 3; // the bucket size, first byte after the header's 16 and the width's 1
    /// let err = CuckooFilter::from_bytes(&bytes).unwrap_err();
    /// assert!(matches!(
    ///     err,
    ///     PersistError::InvalidParameter(InvalidParameter::Config(ConfigError::InvalidBucketSize(3)))
    /// ));
    /// assert_eq!(err.to_string(), "invalid parameter: bucket size must be 2, 4 or 8 slots, got 3");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The hash function id is not one this build implements.
    #[error("unknown hash function id {0}")]
    HashId(u8),
    /// The table layout code is not one this build implements (0: bit-packed buckets, 1:
    /// semi-sorted buckets).
    #[error("unknown table layout {0}")]
    Layout(u8),
    /// The bucket count is odd or below 2.
    #[error("bucket count must be even and at least 2, got {0}")]
    BucketCount(u64),
    /// The capacity is 0 or larger than the table's slot count.
    #[error("capacity must be between 1 and the table's {slots} slots, got {capacity}")]
    Capacity {
        /// The stored capacity.
        capacity: u64,
        /// Slots in the table.
        slots: u64,
    },
    /// The item count exceeds the table's slot count.
    #[error("item count {len} exceeds the table's {slots} slots")]
    Len {
        /// The stored item count.
        len: u64,
        /// Slots in the table.
        slots: u64,
    },
    /// A growable filter's field (kind 2) is out of range, or inconsistent with its levels.
    #[error("invalid growable filter field ({field}): {value}")]
    Growable {
        /// Which field, or which consistency rule.
        field: &'static str,
        /// The offending value (an `f64`'s bits for rates).
        value: u64,
    },
    /// An expanding filter's field (kind 3) is out of range, or its content breaks a rule every
    /// expanding filter keeps.
    #[error("invalid expanding filter field ({field}): {value}")]
    Expanding {
        /// Which field, or which rule.
        field: &'static str,
        /// The offending value (an `f64`'s bits for rates, a bucket's index for its content).
        value: u64,
    },
    /// A reserved field is not zero.
    #[error("reserved field at byte {offset} must be zero, got {value}")]
    Reserved {
        /// Offset of the field in the input.
        offset: u64,
        /// Its value.
        value: u64,
    },
}
