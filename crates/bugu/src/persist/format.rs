//! The byte layout: the file header, one filter section's parameters, and the checks every reader
//! shares. `docs/format.md` describes the same layout byte by byte; the golden files under
//! `tests/data/` pin it.
//!
//! ```text
//! file     = header(16) body checksum(8)
//! header   = magic(8) version:u16 kind:u16 flags:u32
//! body     = (kind 1, cuckoo) one section
//!          | (kind 2, growable) fields(56) one section per level   (see growable.rs)
//! section  = params(40) payload(P) zeros(T)      P = ceil(buckets * bucket_size * bits / 8)
//!                                                T = round_up8(P + 16) - P, so 16..=23 bytes
//! checksum = XXH3-64 (seed 0) of every byte before it
//! ```

use crate::config::{self, Config};
use crate::filter::CuckooFilterIn;
use crate::hash::HashFunction;
use crate::key::KeyEncoding;
use crate::table::{PADDING, Table};

use super::error::{InvalidParameter, PersistError};
use super::kind::FilterKind;

/// The first 8 bytes of every persisted filter. As in PNG's signature, the non-ASCII first byte
/// and the `\r\n` and `^Z` bytes detect transfers that mangle line endings or stop at end-of-file
/// characters.
///
/// ```
/// use bugu::Persist;
/// let bytes = bugu::CuckooFilter::new(10)?.to_bytes();
/// assert_eq!(bytes[..8], bugu::persist::MAGIC);
/// # Ok::<(), bugu::ConfigError>(())
/// ```
pub const MAGIC: [u8; 8] = *b"\x89BUGU\r\n\x1a";

/// The format version this build writes, and the only one it reads.
///
/// ```
/// use bugu::Persist;
/// let bytes = bugu::CuckooFilter::new(10)?.to_bytes();
/// assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), bugu::persist::FORMAT_VERSION);
/// # Ok::<(), bugu::ConfigError>(())
/// ```
pub const FORMAT_VERSION: u16 = 1;

/// Bytes of the file header: magic, version, kind, flags.
pub(crate) const HEADER_LEN: usize = 16;
/// Bytes of one section's parameter block.
pub(crate) const SECTION_PARAMS_LEN: usize = 40;
/// The section's table layout: buckets of `bucket_size` slots of `bits` bits, bit-packed
/// little-endian. Other codes are reserved for other layouts (semi-sorted buckets).
pub(crate) const LAYOUT_PACKED: u8 = 0;
/// The section's table layout: semi-sorted buckets of 4 slots (see `docs/format.md`).
pub(crate) const LAYOUT_SEMI_SORTED: u8 = 1;
/// Bytes of the trailing checksum.
pub(crate) const CHECKSUM_LEN: usize = 8;

impl FilterKind {
    /// Reads the kind from the first 16 bytes of a persisted filter (checking the magic, version
    /// and flags), to choose which type to load it as.
    ///
    /// ```
    /// use bugu::{PersistError, persist::FilterKind};
    /// assert!(matches!(FilterKind::detect(b"GIF89a"), Err(PersistError::BadMagic)));
    /// ```
    pub fn detect(bytes: &[u8]) -> Result<Self, PersistError> {
        parse_header(bytes).map(|header| header.kind)
    }
}

/// Header flag bit: typed keys follow the canonical key encoding ([`KeyEncoding::Canonical`]).
/// Files without it were written before that encoding existed; their typed keys were hashed
/// through `std::hash::Hash` ([`KeyEncoding::StdHash`]).
pub(crate) const FLAG_CANONICAL_KEYS: u32 = 1 << 0;
/// Header flag bit: an add-if-absent insert skipped an item because a matching fingerprint was
/// present, so removals may cause false negatives
/// ([`CuckooFilterIn::has_skipped_inserts`](crate::CuckooFilterIn::has_skipped_inserts)).
pub(crate) const FLAG_SKIPPED_INSERTS: u32 = 1 << 1;
/// Every flag bit this version knows; readers reject the others.
const KNOWN_FLAGS: u32 = FLAG_CANONICAL_KEYS | FLAG_SKIPPED_INSERTS;

/// The header's flags: what holds for every section of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Flags {
    pub(crate) key_encoding: KeyEncoding,
    pub(crate) skipped_inserts: bool,
}

impl Flags {
    /// The flags of a file holding `filter` alone.
    pub(crate) fn of<S: AsRef<[u8]>>(filter: &CuckooFilterIn<S>) -> Self {
        Flags { key_encoding: filter.config().key_encoding, skipped_inserts: filter.has_skipped_inserts() }
    }

    fn bits(self) -> u32 {
        let keys = match self.key_encoding {
            KeyEncoding::Canonical => FLAG_CANONICAL_KEYS,
            KeyEncoding::StdHash => 0,
        };
        keys | if self.skipped_inserts { FLAG_SKIPPED_INSERTS } else { 0 }
    }

    fn from_bits(bits: u32) -> Result<Self, PersistError> {
        if bits & !KNOWN_FLAGS != 0 {
            return Err(InvalidParameter::Reserved { offset: 12, value: bits.into() }.into());
        }
        let key_encoding =
            if bits & FLAG_CANONICAL_KEYS != 0 { KeyEncoding::Canonical } else { KeyEncoding::StdHash };
        Ok(Flags { key_encoding, skipped_inserts: bits & FLAG_SKIPPED_INSERTS != 0 })
    }
}

/// A parsed file header: the kind of filter that follows, and the flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) kind: FilterKind,
    pub(crate) flags: Flags,
}

/// The 16-byte file header of a filter of `kind`.
pub(crate) fn encode_header(kind: FilterKind, flags: Flags) -> [u8; HEADER_LEN] {
    let mut header = [0; HEADER_LEN];
    header[..8].copy_from_slice(&MAGIC);
    header[8..10].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    header[10..12].copy_from_slice(&kind.code().to_le_bytes());
    header[12..16].copy_from_slice(&flags.bits().to_le_bytes());
    header
}

/// Parses a file header (the first [`HEADER_LEN`] bytes of `bytes`; shorter input is truncated,
/// unless what there is already contradicts the magic).
pub(crate) fn parse_header(bytes: &[u8]) -> Result<Header, PersistError> {
    let magic_seen = bytes.len().min(MAGIC.len());
    if bytes[..magic_seen] != MAGIC[..magic_seen] {
        return Err(PersistError::BadMagic);
    }
    if bytes.len() < HEADER_LEN {
        return Err(PersistError::Truncated { offset: bytes.len() as u64, part: "header" });
    }
    let version = u16::from_le_bytes([bytes[8], bytes[9]]);
    if version != FORMAT_VERSION {
        return Err(PersistError::UnsupportedVersion { found: version, supported: FORMAT_VERSION });
    }
    let code = u16::from_le_bytes([bytes[10], bytes[11]]);
    let kind = FilterKind::from_code(code).ok_or(PersistError::UnknownKind(code))?;
    let flags = Flags::from_bits(u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]))?;
    Ok(Header { kind, flags })
}

/// Checks that a header announced the kind the caller reads.
pub(crate) fn expect_kind(found: FilterKind, expected: FilterKind) -> Result<(), PersistError> {
    if found == expected { Ok(()) } else { Err(PersistError::WrongKind { expected, found }) }
}

/// One cuckoo filter section's parameters, validated: its configuration, item count and layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Section {
    pub(crate) config: Config,
    pub(crate) len: usize,
    /// From the file's header flags: whether the filter has skipped add-if-absent inserts.
    pub(crate) skipped_inserts: bool,
    /// Bytes of packed buckets.
    pub(crate) payload_len: usize,
    /// Zero bytes after the payload: the table's padding, then alignment to 8.
    pub(crate) tail_len: usize,
}

impl Section {
    /// The section describing `filter`.
    pub(crate) fn of<S: AsRef<[u8]>>(filter: &CuckooFilterIn<S>) -> Self {
        let config = *filter.config();
        let payload_len = filter.table().payload().len();
        let skipped_inserts = filter.has_skipped_inserts();
        Section { config, len: filter.len(), skipped_inserts, payload_len, tail_len: tail_len(payload_len) }
    }

    /// The filter this section describes, over `table`; `len_checked` as in
    /// [`CuckooFilterIn::from_parts`].
    pub(crate) fn filter<S: AsRef<[u8]>>(&self, table: Table<S>, len_checked: bool) -> CuckooFilterIn<S> {
        CuckooFilterIn::from_parts(self.config, table, self.len, len_checked)
            .with_skipped_inserts(self.skipped_inserts)
    }

    /// The section's table over `bytes` (its payload plus padding).
    pub(crate) fn table<S: AsRef<[u8]>>(&self, bytes: S) -> Result<Table<S>, PersistError> {
        // `bytes` is the payload and padding `parse` sized, so this only fails if it is not.
        let c = &self.config;
        let too_large = config::table_too_large(c.buckets as u64, c.bucket_size, c.fingerprint_bits);
        Table::from_bytes(bytes, c.geometry()).ok_or(InvalidParameter::from(too_large).into())
    }

    /// The parameter block.
    pub(crate) fn encode(&self) -> [u8; SECTION_PARAMS_LEN] {
        let c = &self.config;
        let mut raw = [0; SECTION_PARAMS_LEN];
        raw[0] = c.fingerprint_bits as u8;
        raw[1] = c.bucket_size as u8;
        raw[2] = c.hash_function.id();
        raw[3] = if c.semi_sorted { LAYOUT_SEMI_SORTED } else { LAYOUT_PACKED };
        raw[4..8].copy_from_slice(&(c.eviction_limit as u32).to_le_bytes());
        raw[8..16].copy_from_slice(&c.seed.to_le_bytes());
        raw[16..24].copy_from_slice(&(c.buckets as u64).to_le_bytes());
        raw[24..32].copy_from_slice(&(c.capacity as u64).to_le_bytes());
        raw[32..40].copy_from_slice(&(self.len as u64).to_le_bytes());
        raw
    }

    /// Parses and validates a parameter block. Every value is checked before anything is sized
    /// from it: by the configuration's rules (`crate::config`), which the builder applies too,
    /// then by the format's own (known hash and layout codes, an even bucket count, a capacity and
    /// an item count the table's slots can hold). The builder's sizing is not applied: a table
    /// sized by an earlier release is as usable as today's.
    /// The header's `flags` supply what a section does not store: the key encoding and the
    /// record of skipped inserts.
    pub(crate) fn parse(raw: &[u8; SECTION_PARAMS_LEN], flags: Flags) -> Result<Self, PersistError> {
        let u64_at = |at: usize| u64::from_le_bytes(raw[at..at + 8].try_into().expect("8 bytes"));
        let fingerprint_bits = u32::from(raw[0]);
        config::check_fingerprint_bits(fingerprint_bits).map_err(InvalidParameter::from)?;
        let bucket_size = usize::from(raw[1]);
        config::check_bucket_size(bucket_size).map_err(InvalidParameter::from)?;
        let hash_function = HashFunction::from_id(raw[2]).ok_or(InvalidParameter::HashId(raw[2]))?;
        let semi_sorted = match raw[3] {
            LAYOUT_PACKED => false,
            LAYOUT_SEMI_SORTED => true,
            layout => return Err(InvalidParameter::Layout(layout).into()),
        };
        if semi_sorted {
            config::check_semi_sorted_bucket_size(bucket_size).map_err(InvalidParameter::from)?;
        }
        let eviction_limit = u32::from_le_bytes(raw[4..8].try_into().expect("4 bytes"));
        // A u32 that is not a usize is above the limit anyway.
        let eviction_limit = usize::try_from(eviction_limit).unwrap_or(usize::MAX);
        config::check_eviction_limit(eviction_limit).map_err(InvalidParameter::from)?;
        let seed = u64_at(8);
        let buckets = u64_at(16);
        if !config::is_valid_bucket_count(buckets) {
            return Err(InvalidParameter::BucketCount(buckets).into());
        }
        let (buckets, payload_len) = config::table_len(buckets, bucket_size, fingerprint_bits, semi_sorted)
            .map_err(InvalidParameter::from)?;
        // The payload's bits, at least one per slot, fit a usize: so does the slot count.
        let slots = (buckets * bucket_size) as u64;
        let capacity = u64_at(24);
        if !(1..=slots).contains(&capacity) {
            return Err(InvalidParameter::Capacity { capacity, slots }.into());
        }
        let len = u64_at(32);
        if len > slots {
            return Err(InvalidParameter::Len { len, slots }.into());
        }
        let config = Config {
            capacity: capacity as usize,
            buckets,
            bucket_size,
            fingerprint_bits,
            eviction_limit,
            seed,
            hash_function,
            key_encoding: flags.key_encoding,
            semi_sorted,
        };
        let (len, skipped_inserts) = (len as usize, flags.skipped_inserts);
        Ok(Section { config, len, skipped_inserts, payload_len, tail_len: tail_len(payload_len) })
    }
}

/// Zero bytes after a payload of `payload_len` bytes: at least the table's [`PADDING`], so that a
/// view can wrap payload and padding without copying, then up to the next multiple of 8, so that
/// the next section's payload stays 8-byte aligned.
pub(crate) fn tail_len(payload_len: usize) -> usize {
    (payload_len + PADDING).next_multiple_of(8) - payload_len
}

/// Bytes of a whole file holding one section whose table `config` describes.
pub(crate) fn cuckoo_file_len_for(config: &Config) -> usize {
    let payload_len = config.geometry().payload_len().expect("a built filter's table has a length");
    HEADER_LEN + SECTION_PARAMS_LEN + payload_len + tail_len(payload_len) + CHECKSUM_LEN
}

/// Checks that the bytes after a payload are zero; `offset` is where they start in the input.
pub(crate) fn check_zeros(bytes: &[u8], offset: u64) -> Result<(), PersistError> {
    match bytes.iter().position(|&b| b != 0) {
        None => Ok(()),
        Some(at) => Err(PersistError::NonZeroPadding { offset: offset + at as u64 }),
    }
}

/// Checks that the bits after the last bucket, in the payload's last byte, are zero.
pub(crate) fn check_stray_bits<S: AsRef<[u8]>>(
    table: &Table<S>,
    payload_offset: u64,
) -> Result<(), PersistError> {
    let payload = table.payload();
    let used_bits = table.used_bits();
    if !used_bits.is_multiple_of(8) {
        let last = payload.len() - 1;
        if payload[last] >> (used_bits % 8) != 0 {
            return Err(PersistError::NonZeroPadding { offset: payload_offset + last as u64 });
        }
    }
    Ok(())
}

/// The checks of a section's content: the bits after the last bucket are zero and the stored
/// item count is the number of occupied slots (a pass over the table). With them, bytes
/// that pass (even a corrupt file with a recomputed checksum) make a filter that behaves.
/// `payload_offset` is where the payload starts in the input.
pub(crate) fn check_content<S: AsRef<[u8]>>(
    table: &Table<S>,
    len: usize,
    payload_offset: u64,
) -> Result<(), PersistError> {
    check_stray_bits(table, payload_offset)?;
    if let Some(bucket) = table.first_invalid_bucket() {
        return Err(PersistError::InvalidBucket { bucket: bucket as u64 });
    }
    let counted = table.occupied_slots();
    if counted != len {
        return Err(PersistError::LenMismatch { stored: len as u64, counted: counted as u64 });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Builder;
    use crate::error::ConfigError;
    use crate::hash::HASH_ID_XXH3_64;

    fn params(bits: u8, bucket_size: u8, buckets: u64, capacity: u64, len: u64) -> [u8; SECTION_PARAMS_LEN] {
        let mut raw = [0; SECTION_PARAMS_LEN];
        raw[0] = bits;
        raw[1] = bucket_size;
        raw[2] = HASH_ID_XXH3_64;
        raw[4..8].copy_from_slice(&500u32.to_le_bytes());
        raw[16..24].copy_from_slice(&buckets.to_le_bytes());
        raw[24..32].copy_from_slice(&capacity.to_le_bytes());
        raw[32..40].copy_from_slice(&len.to_le_bytes());
        raw
    }

    const CANONICAL: Flags = Flags { key_encoding: KeyEncoding::Canonical, skipped_inserts: false };

    impl Section {
        fn parse_canonical(raw: &[u8; SECTION_PARAMS_LEN]) -> Result<Self, PersistError> {
            Section::parse(raw, CANONICAL)
        }
    }

    #[test]
    fn each_known_hash_id_parses_to_its_function_and_back() {
        for function in HashFunction::ALL {
            let mut raw = params(12, 4, 10, 1, 0);
            raw[2] = function.id();
            let section = Section::parse(&raw, CANONICAL).expect("valid parameters");
            assert_eq!(section.config.hash_function, function);
            assert_eq!(section.encode()[2], function.id());
        }
        let mut raw = params(12, 4, 10, 1, 0);
        raw[2] = 3;
        assert_eq!(invalid(raw), InvalidParameter::HashId(3));
    }

    fn invalid(raw: [u8; SECTION_PARAMS_LEN]) -> InvalidParameter {
        match Section::parse(&raw, CANONICAL) {
            Err(PersistError::InvalidParameter(which)) => which,
            other => panic!("expected an invalid parameter, got {other:?}"),
        }
    }

    #[test]
    fn every_parameter_is_validated() {
        assert!(Section::parse_canonical(&params(12, 4, 10, 1, 0)).is_ok());
        for bits in [0, 3, 33, 255] {
            assert_eq!(
                invalid(params(bits, 4, 10, 1, 0)),
                ConfigError::InvalidFingerprintBits(bits.into()).into()
            );
        }
        for size in [0, 1, 3, 5, 16] {
            assert_eq!(
                invalid(params(12, size, 10, 1, 0)),
                ConfigError::InvalidBucketSize(size.into()).into()
            );
        }
        for buckets in [0, 1, 3, 11] {
            assert_eq!(invalid(params(12, 4, buckets, 1, 0)), InvalidParameter::BucketCount(buckets));
        }
        assert_eq!(invalid(params(12, 4, 10, 0, 0)), InvalidParameter::Capacity { capacity: 0, slots: 40 });
        assert_eq!(invalid(params(12, 4, 10, 41, 0)), InvalidParameter::Capacity { capacity: 41, slots: 40 });
        assert_eq!(invalid(params(12, 4, 10, 1, 41)), InvalidParameter::Len { len: 41, slots: 40 });
        assert!(matches!(
            invalid(params(32, 8, u64::MAX - 1, 1, 0)),
            InvalidParameter::Config(ConfigError::TableTooLarge {
                buckets: _,
                bucket_size: 8,
                fingerprint_bits: 32
            })
        ));
        let mut raw = params(12, 4, 10, 1, 0);
        raw[2] = 7;
        assert_eq!(invalid(raw), InvalidParameter::HashId(7));
        let mut raw = params(12, 4, 10, 1, 0);
        raw[3] = 2;
        assert_eq!(invalid(raw), InvalidParameter::Layout(2));
        let mut raw = params(12, 8, 10, 1, 0);
        raw[3] = LAYOUT_SEMI_SORTED;
        assert_eq!(
            invalid(raw),
            ConfigError::SemiSortedBucketSize(8).into(),
            "semi-sorted needs buckets of 4, the builder's rule"
        );
        for limit in [0u32, 65_536, u32::MAX] {
            let mut raw = params(12, 4, 10, 1, 0);
            raw[4..8].copy_from_slice(&limit.to_le_bytes());
            assert_eq!(invalid(raw), ConfigError::InvalidEvictionLimit(limit as usize).into());
        }
    }

    #[test]
    fn the_reader_refuses_with_the_builders_errors() {
        let built = |builder: Builder| InvalidParameter::Config(builder.capacity(10).config().unwrap_err());
        for bits in [3, 33] {
            let builder = Builder::new().fingerprint_bits(bits.into());
            assert_eq!(invalid(params(bits, 4, 10, 1, 0)), built(builder));
        }
        assert_eq!(invalid(params(12, 3, 10, 1, 0)), built(Builder::new().bucket_size(3)));
        let mut raw = params(12, 2, 10, 1, 0);
        raw[3] = LAYOUT_SEMI_SORTED;
        assert_eq!(invalid(raw), built(Builder::new().bucket_size(2).semi_sorted(true)));
        let mut raw = params(12, 4, 10, 1, 0);
        raw[4..8].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(invalid(raw), built(Builder::new().eviction_limit(0)));
    }

    #[test]
    fn the_builders_sizing_is_not_a_reading_rule() {
        // A table the builder would size larger, or refuse as too narrow (`ConfigError::TooNarrow`),
        // still reads: earlier releases sized otherwise.
        let sized = Builder::new().capacity(40).fingerprint_bits(4).config().map(|c| c.buckets);
        assert!(sized.is_err() || sized.unwrap() > 10, "the builder never packs 40 items in 10 buckets of 4");
        let section = Section::parse_canonical(&params(4, 4, 10, 40, 40)).unwrap();
        assert_eq!((section.config.capacity, section.len, section.config.buckets), (40, 40, 10));
        assert_eq!(section.payload_len, 20);
    }

    #[test]
    fn a_huge_but_addressable_geometry_parses_and_is_sized_from_the_claim_only_later() {
        // 2^60 buckets of 2 x 4 bits: 2^60 payload bytes. The geometry is valid on 64-bit
        // targets; the readers then refuse it because the input does not hold that many bytes.
        let section = Section::parse_canonical(&params(4, 2, 1 << 60, 1, 0));
        if usize::BITS == 64 {
            assert_eq!(section.unwrap().payload_len, 1 << 60);
        } else {
            assert!(section.is_err());
        }
    }

    #[test]
    fn the_tail_pads_to_16_bytes_then_to_8_alignment() {
        for payload in 0..64 {
            let tail = tail_len(payload);
            assert!((16..=23).contains(&tail));
            assert_eq!((payload + tail) % 8, 0);
        }
    }

    #[test]
    fn headers_round_trip_and_reject_garbage() {
        for kind in [FilterKind::Cuckoo, FilterKind::Growable] {
            for key_encoding in [KeyEncoding::Canonical, KeyEncoding::StdHash] {
                for skipped_inserts in [false, true] {
                    let flags = Flags { key_encoding, skipped_inserts };
                    assert_eq!(parse_header(&encode_header(kind, flags)).unwrap(), Header { kind, flags });
                }
            }
            assert_eq!(FilterKind::from_code(kind.code()), Some(kind));
        }
        let header = encode_header(FilterKind::Cuckoo, CANONICAL);
        // The flags as the format documents them; none set is a file of the older key rule.
        assert_eq!(header[12..16], [1, 0, 0, 0]);
        let skipped = Flags { key_encoding: KeyEncoding::StdHash, skipped_inserts: true };
        assert_eq!(encode_header(FilterKind::Cuckoo, skipped)[12..16], [2, 0, 0, 0]);
        let mut old = header;
        old[12] = 0;
        assert_eq!(parse_header(&old).unwrap().flags.key_encoding, KeyEncoding::StdHash);
        assert!(matches!(parse_header(&header[..5]), Err(PersistError::Truncated { offset: 5, .. })));
        assert!(matches!(parse_header(b"\x89BUGX"), Err(PersistError::BadMagic)));
        assert!(matches!(parse_header(b""), Err(PersistError::Truncated { offset: 0, .. })));
        let mut bad = header;
        bad[8] = 2;
        assert!(matches!(
            parse_header(&bad),
            Err(PersistError::UnsupportedVersion { found: 2, supported: 1 })
        ));
        for code in [0, 4, 9] {
            let mut bad = header;
            bad[10] = code;
            assert!(matches!(parse_header(&bad), Err(PersistError::UnknownKind(c)) if c == u16::from(code)));
        }
        for (byte, value) in [(12, 4), (12, 0x80), (15, 1)] {
            let mut bad = header;
            bad[byte] |= value;
            assert!(matches!(
                parse_header(&bad),
                Err(PersistError::InvalidParameter(InvalidParameter::Reserved { offset: 12, .. }))
            ));
        }
    }
}
