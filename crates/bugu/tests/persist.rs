//! Persistence: round trips over every geometry, hostile and broken input, golden files.

use bugu::Persist;
use std::io::{self, Read};

use bugu::hash::HashFunction;
use bugu::key::KeyEncoding;
use bugu::persist::{FORMAT_VERSION, FilterKind, InvalidParameter, MAGIC};
use bugu::sizing::capacity_limit;
use bugu::{
    BUCKET_SIZES, ConfigError, CuckooFilter, CuckooView, FINGERPRINT_BITS, Filter, FilterMut, Hashed,
    PersistError,
};
use proptest::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

/// A filter of this geometry with `items` keys inserted (and a few removed).
fn filled(bits: u32, bucket_size: usize, capacity: usize, items: u64, seed: u64) -> CuckooFilter {
    // Narrow fingerprints in small buckets accept fewer items: stay within what the builder takes.
    let capacity = capacity.min(capacity_limit(bucket_size, bits));
    filled_with(
        CuckooFilter::builder().fingerprint_bits(bits).bucket_size(bucket_size),
        capacity,
        items,
        seed,
    )
}

fn filled_with(builder: bugu::Builder, capacity: usize, items: u64, seed: u64) -> CuckooFilter {
    let mut filter = builder.capacity(capacity).seed(seed).build().unwrap();
    for key in 0..items {
        if filter.insert(&key).is_err() {
            break;
        }
    }
    for key in (0..items).step_by(7) {
        filter.remove(&key);
    }
    filter
}

/// Every way of reading `bytes` back must agree with `original`.
fn assert_round_trip(original: &CuckooFilter, probes: u64) {
    let bytes = original.to_bytes();
    assert_eq!(bytes.len(), original.serialized_len());
    let mut streamed = Vec::new();
    original.write_to(&mut streamed).unwrap();
    assert_eq!(streamed, bytes);

    let from_bytes = CuckooFilter::from_bytes(&bytes).unwrap();
    let from_stream = CuckooFilter::read_from(&bytes[..]).unwrap();
    let view = CuckooView::from_bytes(&bytes).unwrap();
    let trusted = CuckooView::from_trusted_bytes(&bytes).unwrap();
    for copy in [&from_bytes, &from_stream] {
        assert_eq!(copy.to_bytes(), bytes);
        assert_eq!(
            (copy.len(), copy.capacity(), copy.bucket_count(), copy.bucket_size()),
            (original.len(), original.capacity(), original.bucket_count(), original.bucket_size())
        );
        assert_eq!(
            (copy.fingerprint_bits(), copy.eviction_limit(), copy.seed()),
            (original.fingerprint_bits(), original.eviction_limit(), original.seed())
        );
    }
    for v in [&view, &trusted] {
        assert_eq!(
            (v.len(), v.capacity(), v.bucket_count(), v.bucket_size(), v.fingerprint_bits()),
            (
                original.len(),
                original.capacity(),
                original.bucket_count(),
                original.bucket_size(),
                original.fingerprint_bits()
            )
        );
        assert_eq!((v.eviction_limit(), v.seed()), (original.eviction_limit(), original.seed()));
        assert_eq!(v.to_filter().to_bytes(), bytes);
    }
    let keys: Vec<u64> = (0..probes).collect();
    let batch = original.contains_batch(&keys);
    assert_eq!(view.contains_batch(&keys), batch);
    assert_eq!(from_bytes.contains_batch(&keys), batch);
    let hashes: Vec<u64> = keys.iter().map(|k| view.hash_of(k)).collect();
    assert_eq!(view.contains_hash_batch(&hashes), batch);
    for key in 0..probes {
        let expected = (original.contains(&key), original.count(&key));
        assert_eq!((from_bytes.contains(&key), from_bytes.count(&key)), expected);
        assert_eq!((from_stream.contains(&key), from_stream.count(&key)), expected);
        assert_eq!((view.contains(&key), view.count(&key)), expected);
        assert_eq!((trusted.contains(&key), trusted.count(&key)), expected);
    }
}

#[test]
fn every_width_and_bucket_size_round_trips() {
    for bucket_size in BUCKET_SIZES {
        for bits in FINGERPRINT_BITS {
            let filter = filled(bits, bucket_size, 300, 250, u64::from(bits));
            assert!(!filter.is_empty());
            assert_round_trip(&filter, 600);
        }
    }
    for bits in FINGERPRINT_BITS {
        let semi_sorted = CuckooFilter::builder().fingerprint_bits(bits).semi_sorted(true);
        let filter = filled_with(semi_sorted, 300, 250, u64::from(bits));
        assert!(!filter.is_empty());
        assert_round_trip(&filter, 600);
        assert_eq!(CuckooFilter::from_bytes(&filter.to_bytes()).unwrap().to_bytes(), filter.to_bytes());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn any_filter_round_trips(
        bits in 4u32..=32,
        bucket_size in prop::sample::select(BUCKET_SIZES.to_vec()),
        capacity in 1usize..400,
        fill in 0.0f64..1.2,
        seed in any::<u64>(),
        eviction_limit in 1usize..2000,
        semi_sorted in any::<bool>(),
    ) {
        let capacity = capacity.min(capacity_limit(bucket_size, bits));
        let mut filter = CuckooFilter::builder()
            .capacity(capacity).fingerprint_bits(bits).bucket_size(bucket_size).seed(seed)
            .semi_sorted(semi_sorted && bucket_size == 4)
            .eviction_limit(eviction_limit).build().unwrap();
        for key in 0..(capacity as f64 * fill) as u64 {
            let _ = filter.insert(&key);
        }
        assert_round_trip(&filter, capacity as u64 * 2);
    }

    /// Whatever the table holds, a view that skips the content checks answers without panicking.
    #[test]
    fn a_trusted_view_over_any_table_answers(
        bits in 4u32..=32,
        bucket_size in prop::sample::select(BUCKET_SIZES.to_vec()),
        capacity in 1usize..200,
        noise in prop::collection::vec(any::<u8>(), 1..2000),
        semi_sorted in any::<bool>(),
    ) {
        let capacity = capacity.min(capacity_limit(bucket_size, bits));
        let filter = CuckooFilter::builder()
            .capacity(capacity).fingerprint_bits(bits).bucket_size(bucket_size)
            .semi_sorted(semi_sorted && bucket_size == 4).build().unwrap();
        let mut bytes = filter.to_bytes();
        let payload = 56..56 + filter.memory_bytes() - 16;
        for (byte, n) in bytes[payload].iter_mut().zip(noise.iter().cycle()) {
            *byte = *n;
        }
        match CuckooView::from_trusted_bytes(&bytes) {
            Ok(view) => {
                for key in 0..500u32 {
                    let _ = (view.contains(&key), view.count(&key));
                }
            }
            // Noise in the bits after the last bucket is refused even without the full checks.
            Err(e) => prop_assert!(matches!(e, PersistError::NonZeroPadding { .. }), "{e}"),
        }
        // The full checks refuse it (the checksum no longer matches).
        prop_assert!(CuckooView::from_bytes(&bytes).is_err() || bytes == filter.to_bytes());
    }
}

/// A reader that hands out one to three bytes per call and fails every other call with
/// `Interrupted`, as a slow socket can.
struct Trickle<'a> {
    bytes: &'a [u8],
    calls: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.calls += 1;
        if self.calls.is_multiple_of(2) {
            return Err(io::Error::from(io::ErrorKind::Interrupted));
        }
        let n = buf.len().min(self.calls % 3 + 1).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

#[test]
fn views_and_errors_cross_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<CuckooView<'static>>();
    assert_send_sync::<PersistError>();
    let bytes = filled(10, 4, 100, 80, 2).to_bytes();
    let view = &CuckooView::from_bytes(&bytes).unwrap();
    let counts: Vec<usize> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2u64)
            .map(|t| scope.spawn(move || (0..100u64).filter(|k| view.contains(&(k + t))).count()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(counts.iter().all(|&c| c >= 60), "{counts:?}");
}

#[test]
fn streams_may_trickle_and_may_fail() {
    let filter = filled(12, 4, 1000, 900, 1);
    let bytes = filter.to_bytes();
    let copy = CuckooFilter::read_from(Trickle { bytes: &bytes, calls: 0 }).unwrap();
    assert_eq!(copy.to_bytes(), bytes);

    struct Broken;
    impl Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::other("connection reset"))
        }
    }
    let err = CuckooFilter::read_from(Broken).unwrap_err();
    assert!(matches!(&err, PersistError::Io(e) if e.to_string() == "connection reset"));
    assert_eq!(err.to_string(), "I/O error: connection reset");
}

#[test]
fn a_stream_stops_after_one_filter_and_bytes_must_end_there() {
    let a = filled(8, 2, 50, 40, 0);
    let b = filled(20, 8, 70, 60, 1);
    let mut stream = a.to_bytes();
    stream.extend(b.to_bytes());
    let mut reader = &stream[..];
    assert_eq!(CuckooFilter::read_from(&mut reader).unwrap().to_bytes(), a.to_bytes());
    assert_eq!(CuckooFilter::read_from(&mut reader).unwrap().to_bytes(), b.to_bytes());
    assert!(reader.is_empty());

    let extra = stream.len() - a.serialized_len();
    for result in [CuckooFilter::from_bytes(&stream).map(drop), CuckooView::from_bytes(&stream).map(drop)] {
        assert!(matches!(result, Err(PersistError::TrailingBytes(n)) if n == extra as u64));
    }
    assert!(matches!(CuckooView::from_trusted_bytes(&stream), Err(PersistError::TrailingBytes(_))));
}

/// Every reader of complete bytes; `Err` if any accepts them.
fn readers_all_refuse(bytes: &[u8]) -> Result<(), String> {
    if let Ok(f) = CuckooFilter::from_bytes(bytes) {
        return Err(format!("from_bytes accepted {f:?}"));
    }
    if let Ok(v) = CuckooView::from_bytes(bytes) {
        return Err(format!("the view accepted {v:?}"));
    }
    match CuckooFilter::read_from(bytes) {
        Ok(f) => Err(format!("read_from accepted {f:?}")),
        Err(_) => Ok(()),
    }
}

#[test]
fn flipping_any_byte_is_detected_exhaustively() {
    for filter in [filled(12, 4, 10, 8, 3), filled(5, 2, 7, 5, 9)] {
        let bytes = filter.to_bytes();
        assert!(bytes.len() < 200, "keep the exhaustive test small: {} bytes", bytes.len());
        for at in 0..bytes.len() {
            for flip in 1..=255u8 {
                let mut corrupt = bytes.clone();
                corrupt[at] ^= flip;
                readers_all_refuse(&corrupt).unwrap_or_else(|e| panic!("byte {at} ^ {flip:#04x}: {e}"));
            }
        }
    }
}

#[test]
fn truncation_at_every_length_is_detected() {
    let dir = std::env::temp_dir().join(format!("bugu-truncate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("f.bugu");
    let bytes = filled(12, 4, 10, 8, 3).to_bytes();
    for len in 0..bytes.len() {
        let short = &bytes[..len];
        readers_all_refuse(short).unwrap_or_else(|e| panic!("length {len}: {e}"));
        assert!(CuckooView::from_trusted_bytes(short).is_err(), "length {len}");
        let err = CuckooFilter::from_bytes(short).unwrap_err();
        // A prefix is never mistaken for anything but a truncated filter.
        assert!(matches!(err, PersistError::Truncated { .. }), "length {len}: {err}");
        std::fs::write(&path, short).unwrap();
        assert!(matches!(CuckooFilter::load(&path), Err(PersistError::Truncated { .. })), "length {len}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The bytes after a change, with the checksum recomputed: what an attacker or a buggy writer
/// could produce. Only the content checks stand in the way.
fn resealed(mut bytes: Vec<u8>, change: impl FnOnce(&mut [u8])) -> Vec<u8> {
    change(&mut bytes);
    let end = bytes.len() - 8;
    let checksum = xxh3_64(&bytes[..end]);
    bytes[end..].copy_from_slice(&checksum.to_le_bytes());
    bytes
}

fn refusal(bytes: &[u8]) -> PersistError {
    let err = CuckooFilter::from_bytes(bytes).unwrap_err();
    let view_err = CuckooView::from_bytes(bytes).unwrap_err();
    let stream_err = CuckooFilter::read_from(bytes).unwrap_err();
    assert_eq!(err.to_string(), view_err.to_string());
    assert_eq!(err.to_string(), stream_err.to_string());
    err
}

#[test]
fn corrupt_but_checksummed_content_is_refused() {
    let filter = filled(12, 4, 100, 60, 5);
    let bytes = filter.to_bytes();
    let payload_end = 56 + filter.memory_bytes() - 16;

    // The item count disagrees with the table.
    let wrong_len = resealed(bytes.clone(), |b| b[48] ^= 1);
    assert!(
        matches!(refusal(&wrong_len), PersistError::LenMismatch { stored, counted } if stored != counted)
    );

    // A fingerprint appears in an empty slot.
    let empty_slot = filter.buckets(..).find(|b| b.slots.contains(&0)).unwrap();
    let slot = empty_slot.slots.iter().position(|&fp| fp == 0).unwrap();
    let bit = (empty_slot.index * 4 + slot) * 12;
    let extra = resealed(bytes.clone(), |b| b[56 + bit / 8] |= 1 << (bit % 8));
    assert!(matches!(refusal(&extra), PersistError::LenMismatch { .. }));

    // Non-zero padding.
    let padding = resealed(bytes.clone(), |b| b[payload_end + 3] = 1);
    assert!(
        matches!(refusal(&padding), PersistError::NonZeroPadding { offset } if offset == payload_end as u64 + 3)
    );

    // Reserved fields: an unknown flag bit beside the canonical-keys bit (bit 0) that every
    // file written now carries.
    let flags = resealed(bytes.clone(), |b| b[13] = 1);
    assert!(matches!(
        refusal(&flags),
        PersistError::InvalidParameter(InvalidParameter::Reserved { offset: 12, value: 257 })
    ));
    let layout = resealed(bytes.clone(), |b| b[19] = 2);
    assert!(matches!(refusal(&layout), PersistError::InvalidParameter(InvalidParameter::Layout(2))));

    // Moving a fingerprint to another value is a valid filter: accepted, and consistent.
    let occupied = filter.buckets(..).find(|b| b.slots[0] != 0).unwrap();
    let bit = occupied.index * 4 * 12;
    let moved = resealed(bytes.clone(), |b| {
        let value = u16::from_le_bytes([b[56 + bit / 8], b[57 + bit / 8]]);
        let fp = (value >> (bit % 8)) & 0xfff;
        let other = if fp == 0xfff { 1 } else { fp + 1 };
        let value = (value & !(0xfff << (bit % 8))) | (other << (bit % 8));
        b[56 + bit / 8..58 + bit / 8].copy_from_slice(&value.to_le_bytes());
    });
    assert_eq!(CuckooFilter::from_bytes(&moved).unwrap().len(), filter.len());
}

#[test]
fn bits_after_the_last_bucket_must_be_zero() {
    // 2 slots x 5 bits: an odd number of bucket pairs leaves 4 unused bits in the last byte.
    let filter = (1..100)
        .map(|capacity| {
            CuckooFilter::builder().capacity(capacity).fingerprint_bits(5).bucket_size(2).build().unwrap()
        })
        .find(|f| (f.bucket_count() * 10) % 8 != 0)
        .unwrap();
    let bytes = filter.to_bytes();
    let last = 56 + filter.memory_bytes() - 16 - 1;
    let stray = resealed(bytes, |b| b[last] |= 0x80);
    assert!(matches!(refusal(&stray), PersistError::NonZeroPadding { offset } if offset == last as u64));
    assert!(matches!(CuckooView::from_trusted_bytes(&stray), Err(PersistError::NonZeroPadding { .. })));
}

/// A header claiming a geometry, followed by `fill` bytes, sealed.
fn claiming(bits: u8, bucket_size: u8, buckets: u64, fill: usize) -> Vec<u8> {
    let mut bytes = Vec::new();
    bytes.extend(MAGIC);
    bytes.extend(FORMAT_VERSION.to_le_bytes());
    bytes.extend(FilterKind::Cuckoo.code().to_le_bytes());
    bytes.extend([0; 4]);
    bytes.extend([bits, bucket_size, bugu::hash::HASH_ID_XXH3_64, 0]);
    bytes.extend(500u32.to_le_bytes());
    bytes.extend(0u64.to_le_bytes());
    bytes.extend(buckets.to_le_bytes());
    bytes.extend(1u64.to_le_bytes());
    bytes.extend(0u64.to_le_bytes());
    bytes.resize(bytes.len() + fill, 0);
    let checksum = xxh3_64(&bytes);
    bytes.extend(checksum.to_le_bytes());
    bytes
}

#[test]
fn absurd_claims_fail_without_allocating() {
    // (The allocation bound itself is measured in tests/persist_alloc.rs.)
    let huge = claiming(4, 2, 1 << 60, 36);
    assert_eq!(huge.len(), 100);
    let err = refusal(&huge);
    assert!(matches!(err, PersistError::Truncated { offset: 100, part: "payload" }), "{err}");
    let too_large = claiming(32, 8, u64::MAX - 1, 36);
    assert!(matches!(
        refusal(&too_large),
        PersistError::InvalidParameter(InvalidParameter::Config(ConfigError::TableTooLarge {
            bucket_size: 8,
            fingerprint_bits: 32,
            ..
        }))
    ));
}

#[test]
fn every_header_field_is_checked() {
    let bytes = filled(12, 4, 10, 3, 0).to_bytes();
    let changed = |at: usize, value: &[u8]| {
        let mut b = bytes.clone();
        b[at..at + value.len()].copy_from_slice(value);
        refusal(&b)
    };
    assert!(matches!(changed(0, b"PK"), PersistError::BadMagic));
    assert!(matches!(changed(8, &[2, 0]), PersistError::UnsupportedVersion { found: 2, supported: 1 }));
    assert!(matches!(changed(10, &[0, 1]), PersistError::UnknownKind(256)));
    assert!(matches!(changed(10, &[2, 0]), PersistError::WrongKind { found: FilterKind::Growable, .. }));
    assert!(matches!(changed(10, &[3, 0]), PersistError::WrongKind { found: FilterKind::Expanding, .. }));
    // No kind 4; a concurrent filter has no kind of its own (it saves a cuckoo filter's bytes).
    assert!(matches!(changed(10, &[4, 0]), PersistError::UnknownKind(4)));
    let invalid = |at, value: &[u8]| match changed(at, value) {
        PersistError::InvalidParameter(which) => which,
        other => panic!("{other}"),
    };
    assert_eq!(invalid(16, &[33]), InvalidParameter::Config(ConfigError::InvalidFingerprintBits(33)));
    assert_eq!(invalid(17, &[3]), InvalidParameter::Config(ConfigError::InvalidBucketSize(3)));
    assert_eq!(invalid(18, &[3]), InvalidParameter::HashId(3));
    assert_eq!(invalid(20, &[0, 0, 0, 0]), InvalidParameter::Config(ConfigError::InvalidEvictionLimit(0)));
    assert_eq!(invalid(32, &[7]), InvalidParameter::BucketCount(7));
    assert!(matches!(invalid(40, &[0]), InvalidParameter::Capacity { capacity: 0, .. }));
    assert!(matches!(invalid(48, &[0xff; 8]), InvalidParameter::Len { len: u64::MAX, .. }));
    // A parameter that changes the layout but stays valid is caught by the length (a stream,
    // whose end is unknown, reads a checksum at the wrong place instead).
    let mut fewer_buckets = bytes.clone();
    fewer_buckets[32] = 4;
    assert!(matches!(CuckooFilter::from_bytes(&fewer_buckets), Err(PersistError::TrailingBytes(_))));
    assert!(matches!(
        CuckooFilter::read_from(&fewer_buckets[..]),
        Err(PersistError::ChecksumMismatch { .. })
    ));
    assert!(matches!(changed(32, &[100]), PersistError::Truncated { .. }));
}

// ---------------------------------------------------------------------------------------------
// Golden files: written once by this version (`BUGU_BLESS=1 cargo test -p bugu --test persist
// golden`), read back and re-written byte-identical by every later version. They pin the format:
// never regenerate them for an existing format version.

struct Golden {
    file: &'static str,
    semi_sorted: bool,
    bits: u32,
    bucket_size: usize,
    capacity: usize,
    eviction_limit: usize,
    seed: u64,
    /// The files written before hash id 2 existed hash with id 1.
    hash_function: HashFunction,
    /// Written since the key encoding: header flag bit 0 set, text keys hashed as their bytes.
    /// The older files hashed them through `std::hash::Hash` and are read by that rule.
    canonical_keys: bool,
    items: &'static [&'static str],
}

const GOLDEN: &[Golden] = &[
    Golden {
        semi_sorted: true,
        file: "cuckoo_f13_b4_semi_sorted.bugu",
        bits: 13,
        bucket_size: 4,
        capacity: 30,
        eviction_limit: 500,
        seed: 3,
        hash_function: HashFunction::Xxh3,
        canonical_keys: false,
        items: &["apple", "banana", "cherry", "damson", "elder", "fig", "grape", "apple", "kiwi"],
    },
    Golden {
        semi_sorted: false,
        file: "cuckoo_f12_b4.bugu",
        bits: 12,
        bucket_size: 4,
        capacity: 40,
        eviction_limit: 500,
        seed: 0,
        hash_function: HashFunction::Xxh3,
        canonical_keys: false,
        items: &["apple", "banana", "cherry", "damson", "elder", "fig", "grape", "apple"],
    },
    Golden {
        semi_sorted: false,
        file: "cuckoo_f4_b2.bugu",
        bits: 4,
        bucket_size: 2,
        capacity: 8,
        eviction_limit: 100,
        seed: 7,
        hash_function: HashFunction::Xxh3,
        canonical_keys: false,
        items: &["a", "b", "c"],
    },
    Golden {
        semi_sorted: false,
        file: "cuckoo_f32_b8.bugu",
        bits: 32,
        bucket_size: 8,
        capacity: 20,
        eviction_limit: 65_535,
        seed: u64::MAX,
        hash_function: HashFunction::Xxh3,
        canonical_keys: false,
        items: &["x", "y", "z", "w", "v", "u", "t", "s", "r", "q", "p"],
    },
    Golden {
        semi_sorted: false,
        file: "cuckoo_f13_b2_empty.bugu",
        bits: 13,
        bucket_size: 2,
        capacity: 5,
        eviction_limit: 1,
        seed: 42,
        hash_function: HashFunction::Xxh3,
        canonical_keys: false,
        items: &[],
    },
    // Hash id 2: "item_NN" with `str`'s terminator is 8 bytes, which the mixer hashes.
    Golden {
        semi_sorted: false,
        file: "cuckoo_f12_b4_mix8.bugu",
        bits: 12,
        bucket_size: 4,
        capacity: 40,
        eviction_limit: 500,
        seed: 5,
        hash_function: HashFunction::Xxh3Mix8,
        canonical_keys: false,
        items: &[
            "item_10", "item_11", "item_12", "item_13", "item_14", "item_15", "item_16", "apple", "item_10",
        ],
    },
    // The key encoding: "item_100" is 8 bytes of text, which the mixer hashes.
    Golden {
        semi_sorted: false,
        file: "cuckoo_f12_b4_canonical_keys.bugu",
        bits: 12,
        bucket_size: 4,
        capacity: 40,
        eviction_limit: 500,
        seed: 11,
        hash_function: HashFunction::Xxh3Mix8,
        canonical_keys: true,
        items: &[
            "item_100",
            "item_101",
            "用户_1",
            "",
            "apple",
            "item_100",
            "a much longer key than sixty-four bytes, to take XXH3's long path",
        ],
    },
];

fn golden_path(file: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(file)
}

fn build_golden(g: &Golden) -> CuckooFilter {
    let mut filter = CuckooFilter::builder()
        .capacity(g.capacity)
        .fingerprint_bits(g.bits)
        .bucket_size(g.bucket_size)
        .eviction_limit(g.eviction_limit)
        .seed(g.seed)
        .hash_function(g.hash_function)
        .semi_sorted(g.semi_sorted)
        .build()
        .unwrap();
    for item in g.items {
        if g.canonical_keys {
            filter.insert(*item).unwrap();
        } else {
            // What the older rule hashed: the `str` through `Hash`, terminator included.
            filter.insert(&Hashed(*item)).unwrap();
        }
    }
    filter
}

#[test]
fn golden_files_read_back_and_rewrite_identically() {
    for g in GOLDEN {
        let path = golden_path(g.file);
        if std::env::var_os("BUGU_BLESS").is_some() && !path.exists() {
            build_golden(g).save(&path).unwrap();
        }
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));

        // Decoded by hand from docs/format.md, independently of the library's readers.
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        assert_eq!(bytes[0..8], *b"\x89BUGU\r\n\x1a", "{}", g.file);
        let flags = u8::from(g.canonical_keys);
        assert_eq!(bytes[8..16], [1, 0, 1, 0, flags, 0, 0, 0], "{}: version 1, kind 1, flags", g.file);
        assert_eq!(
            (u32::from(bytes[16]), usize::from(bytes[17]), bytes[18], bytes[19]),
            (g.bits, g.bucket_size, g.hash_function.id(), u8::from(g.semi_sorted)),
            "{}: its hash id, layout 0 (packed) or 1 (semi-sorted)",
            g.file
        );
        assert_eq!(u32::from_le_bytes(bytes[20..24].try_into().unwrap()) as usize, g.eviction_limit);
        assert_eq!(u64_at(24), g.seed);
        let buckets = u64_at(32) as usize;
        assert_eq!(u64_at(40) as usize, g.capacity);
        assert_eq!(u64_at(48) as usize, g.items.len());
        let bucket_bits =
            if g.semi_sorted { 4 * g.bits as usize - 4 } else { g.bucket_size * g.bits as usize };
        let payload = (buckets * bucket_bits).div_ceil(8);
        let tail = (payload + 16).next_multiple_of(8) - payload;
        assert_eq!(bytes.len(), 56 + payload + tail + 8, "{}", g.file);
        assert!(bytes[56 + payload..56 + payload + tail].iter().all(|&b| b == 0));
        let end = bytes.len() - 8;
        assert_eq!(u64_at(end), xxh3_64(&bytes[..end]), "{}: checksum", g.file);

        // Read by the library: same answers, same bytes written back.
        let filter = CuckooFilter::from_bytes(&bytes).unwrap();
        let view = CuckooView::from_bytes(&bytes).unwrap();
        let loaded = CuckooFilter::load(&path).unwrap();
        assert_eq!(filter.to_bytes(), bytes, "{}: re-written bytes differ", g.file);
        assert_eq!(loaded.to_bytes(), bytes);
        assert_eq!(filter.bucket_count(), buckets);
        // Typed keys answer by the file's rule: a file of the older rule keeps finding its text.
        let encoding = if g.canonical_keys { KeyEncoding::Canonical } else { KeyEncoding::StdHash };
        assert_eq!((filter.key_encoding(), view.key_encoding()), (encoding, encoding), "{}", g.file);
        for item in g.items {
            let copies = g.items.iter().filter(|i| *i == item).count();
            assert!(filter.count(*item) >= copies && view.count(*item) >= copies, "{}: {item}", g.file);
            assert!(view.contains(*item) && loaded.contains(*item));
            assert!(filter.contains(&item.to_string()), "{}: {item} as a String", g.file);
            if g.canonical_keys {
                assert!(filter.contains_bytes(item.as_bytes()), "{}: text is its bytes", g.file);
            } else {
                assert!(filter.contains(&Hashed(*item)), "{}: the older rule is std's Hash", g.file);
            }
        }
        // The hash is pinned too: an item hashes to the same fingerprint and buckets forever,
        // so the file holds exactly the fingerprints a fresh filter computes for these items.
        let fresh = build_golden(g);
        let mut stored: Vec<u32> = filter.buckets(..).flat_map(|b| b.slots).filter(|&f| f != 0).collect();
        let mut expected: Vec<u32> = fresh.buckets(..).flat_map(|b| b.slots).filter(|&f| f != 0).collect();
        stored.sort_unstable();
        expected.sort_unstable();
        assert_eq!(stored, expected, "{}", g.file);
    }
}

#[test]
fn an_impossible_semi_sorted_bucket_is_refused_and_harmless_in_a_trusted_view() {
    let mut filter =
        CuckooFilter::builder().capacity(50).fingerprint_bits(9).semi_sorted(true).build().unwrap();
    filter.insert("a").unwrap();
    let mut bytes = filter.to_bytes();
    // Bucket 0's code is the low 12 bits of the payload: 0xFFF is beyond the 3876 codes. The
    // checksum is recomputed, so only the content check can catch it.
    bytes[56] = 0xFF;
    bytes[57] |= 0x0F;
    let end = bytes.len() - 8;
    let checksum = xxh3_64(&bytes[..end]);
    bytes[end..].copy_from_slice(&checksum.to_le_bytes());
    assert!(matches!(CuckooFilter::from_bytes(&bytes), Err(PersistError::InvalidBucket { bucket: 0 })));
    assert!(matches!(CuckooView::from_bytes(&bytes), Err(PersistError::InvalidBucket { bucket: 0 })));
    let trusted = CuckooView::from_trusted_bytes(&bytes).unwrap();
    for key in 0..1000u32 {
        let _ = (trusted.contains(&key), trusted.count(&key));
    }
}

/// `bytes` (of `to_bytes`) with the stored item count replaced; the checksum is left stale, as
/// trusted views do not read it.
fn with_stored_len(mut bytes: Vec<u8>, len: u64) -> Vec<u8> {
    bytes[48..56].copy_from_slice(&len.to_le_bytes());
    bytes
}

/// The owned filter's count agrees with its table: what `remove` and `len` rely on.
fn assert_len_is_occupancy(filter: &CuckooFilter) {
    assert_eq!(filter.len(), filter.stats().items);
}

#[test]
fn trusted_bytes_with_a_low_count_make_a_filter_that_removes_everything() {
    let mut filter = CuckooFilter::new(100).unwrap();
    for key in 0..100u32 {
        filter.insert(&key).unwrap();
    }
    // The header says 0 items; the table holds 100.
    let bytes = with_stored_len(filter.to_bytes(), 0);
    assert!(matches!(CuckooView::from_bytes(&bytes), Err(PersistError::ChecksumMismatch { .. })));
    let view = CuckooView::from_trusted_bytes(&bytes).unwrap();
    // The view reports what the header says (trusted bytes are not counted at open)...
    assert_eq!(view.len(), 0);
    // ... but the owned filter counts its table.
    for mut copy in [view.to_filter(), view.try_to_filter().unwrap()] {
        assert_eq!(copy.len(), 100);
        for key in 0..100u32 {
            assert!(copy.remove(&key));
        }
        assert_eq!(copy.len(), 0);
        assert!(copy.is_empty());
    }
}

proptest! {
    /// Whatever trusted bytes say (a count above or below the table's occupancy, arbitrary table
    /// bytes), the owned filter made from them keeps `len` equal to its occupied slots through any
    /// inserts and removes: nothing panics and nothing wraps.
    #[test]
    fn trusted_bytes_that_lie_make_a_consistent_owned_filter(
        bits in prop::sample::select(vec![4u32, 5, 8, 9, 12, 16, 17, 32]),
        bucket_size in prop::sample::select(BUCKET_SIZES.to_vec()),
        semi_sorted in any::<bool>(),
        capacity in 1usize..200,
        items in 0u64..250,
        lie in any::<u64>(),
        garbage in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..20),
    ) {
        let capacity = capacity.min(capacity_limit(bucket_size, bits));
        let semi_sorted = semi_sorted && bucket_size == 4;
        let builder = CuckooFilter::builder().fingerprint_bits(bits).bucket_size(bucket_size).semi_sorted(semi_sorted);
        let mut filter = builder.capacity(capacity).build().unwrap();
        for key in 0..items {
            let _ = filter.insert(&key);
        }
        let slots = (filter.bucket_count() * filter.bucket_size()) as u64;
        let mut bytes = with_stored_len(filter.to_bytes(), lie % (slots + 1));
        // Overwrite table bytes, except the last one, whose bits after the last bucket a
        // trusted view still checks.
        let payload = filter.memory_bytes() - 16; // the table without its padding
        for (at, byte) in garbage {
            if payload > 1 {
                bytes[56 + at % (payload - 1)] = byte;
            }
        }
        let view = CuckooView::from_trusted_bytes(&bytes).unwrap();
        for mut copy in [view.to_filter(), view.try_to_filter().unwrap()] {
            assert_len_is_occupancy(&copy);
            prop_assert!(copy.load_factor() <= 1.0);
            for key in 0..items + 50 {
                copy.remove(&key);
                assert_len_is_occupancy(&copy);
                if key % 3 == 0 {
                    let _ = copy.insert(&(key + 1_000_000));
                    assert_len_is_occupancy(&copy);
                }
            }
            // Removing until nothing matches keeps it so.
            for key in 0..items + 50 {
                while copy.remove(&(key + 1_000_000)) {}
            }
            assert_len_is_occupancy(&copy);
        }
    }
}
