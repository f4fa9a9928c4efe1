//! Persistence of the growable filter (kind 2 of `docs/format.md`): round trips, golden files,
//! hostile input.

use bugu::hash::HashFunction;
use bugu::key::KeyEncoding;
use bugu::persist::InvalidParameter;
use bugu::{CuckooFilter, Filter, FilterMut, GrowableFilter, Hashed, Persist, PersistError, Tightening};
use xxhash_rust::xxh3::xxh3_64;

fn grown(initial: usize, items: u32) -> GrowableFilter {
    let mut filter =
        GrowableFilter::builder().initial_capacity(initial).false_positive_rate(0.01).build().unwrap();
    for i in 0..items {
        filter.insert(&i).unwrap();
    }
    filter
}

fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("bugu-growth-persist-{}-{name}", std::process::id()))
}

#[test]
fn every_way_round_trips_and_the_copy_grows_like_the_original() {
    let mut filter = grown(50, 2_000);
    assert!(filter.level_count() >= 5);
    let bytes = filter.to_bytes();
    assert_eq!(bytes.len(), filter.serialized_len());

    let mut streamed = Vec::new();
    filter.write_to(&mut streamed).unwrap();
    assert_eq!(streamed, bytes);
    let path = temp_path("round-trip");
    filter.save(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);

    let copies = [
        GrowableFilter::from_bytes(&bytes).unwrap(),
        GrowableFilter::read_from(&bytes[..]).unwrap(),
        GrowableFilter::load(&path).unwrap(),
    ];
    std::fs::remove_file(&path).unwrap();
    for mut copy in copies {
        assert_eq!(copy.to_bytes(), bytes);
        assert_eq!(
            (copy.len(), copy.level_count(), copy.capacity(), copy.false_positive_rate()),
            (filter.len(), filter.level_count(), filter.capacity(), filter.false_positive_rate())
        );
        assert!((0..2_000u32).all(|i| copy.contains(&i)));
        let absent: Vec<u64> = (0..20_000u64).map(|k| copy.hash_of(&(k + (1 << 40)))).collect();
        assert_eq!(copy.contains_hash_batch(&absent), filter.contains_hash_batch(&absent));
        // Growth continues exactly as in the original: same levels, same bytes.
        let mut original = filter.clone();
        for i in 2_000..10_000u32 {
            copy.insert(&i).unwrap();
            original.insert(&i).unwrap();
        }
        assert!(copy.level_count() > filter.level_count());
        assert_eq!(copy.to_bytes(), original.to_bytes());
    }

    // Streams hold filters back to back: reading stops after the checksum.
    let mut two = bytes.clone();
    filter.insert("one more").unwrap();
    two.extend(filter.to_bytes());
    let mut reader = &two[..];
    assert_eq!(GrowableFilter::read_from(&mut reader).unwrap().len(), 2_000);
    assert_eq!(GrowableFilter::read_from(&mut reader).unwrap().len(), 2_001);
    assert!(reader.is_empty());
}

#[test]
fn settings_survive_the_round_trip() {
    let mut filter = GrowableFilter::builder()
        .initial_capacity(10)
        .false_positive_rate(0.05)
        .growth_factor(3)
        .tightening(Tightening::PSeries)
        .max_capacity(500)
        .max_levels(5)
        .bucket_size(2)
        .eviction_limit(77)
        .seed(9)
        .build()
        .unwrap();
    let mut key = 0u32;
    while filter.insert(&key).is_ok() {
        key += 1;
    }
    let copy = GrowableFilter::from_bytes(&filter.to_bytes()).unwrap();
    assert_eq!(copy.target_false_positive_rate(), 0.05);
    assert_eq!(copy.growth_factor(), 3);
    assert_eq!(copy.tightening(), Tightening::PSeries);
    assert_eq!((copy.max_capacity(), copy.max_levels()), (Some(500), Some(5)));
    assert_eq!((copy.bucket_size(), copy.eviction_limit(), copy.seed()), (2, 77, 9));
    assert_eq!(copy.capacity(), filter.capacity());
    // The maximum bounds the items held, in the copy too.
    assert_eq!((filter.len(), copy.len(), key), (500, 500, 500));
    let mut copy = copy;
    assert!(copy.insert(&key).is_err(), "the copy is at its maximum too");
    assert!(copy.remove(&0u32));
    copy.insert(&key).unwrap();
    assert_eq!(copy.insert(&(key + 1)), Err(bugu::InsertError::Full));
    assert_eq!(copy.len(), 500);
}

// Golden files: written once by this version (`BUGU_BLESS=1 cargo test -p bugu --test
// growth_persist golden`), read back and re-written byte-identical by every later version.
// Every one predates the key encoding: its text was hashed through `std::hash::Hash` (what
// `Hashed` does), and its header has no flags, which readers take as that rule.

struct Golden {
    file: &'static str,
    build: fn() -> GrowableFilter,
    items: fn() -> Vec<String>,
    /// The file predates a sizing change: a fresh build has the same first level (width,
    /// capacity) in more buckets. Tiny tables gained buckets when the builder began to keep the
    /// chance of a failed fill below `FIT_FAILURE_BOUND` (20 items in 10 buckets of 4 put 9 items
    /// in one bucket pair about once in a million fills).
    resized_since: bool,
}

fn golden_default() -> GrowableFilter {
    golden_default_with(HashFunction::Xxh3)
}

/// The default settings but hash id 2: most of the items are 8 bytes with `str`'s terminator.
fn golden_mix8() -> GrowableFilter {
    golden_default_with(HashFunction::Xxh3Mix8)
}

fn golden_default_with(function: HashFunction) -> GrowableFilter {
    let mut filter = GrowableFilter::builder()
        .initial_capacity(20)
        .false_positive_rate(0.01)
        .hash_function(function)
        .build()
        .unwrap();
    for item in golden_default_items() {
        filter.insert(&Hashed(&item)).unwrap();
    }
    filter
}

fn golden_default_items() -> Vec<String> {
    (0..100).map(|i| format!("item_{i}")).collect()
}

fn golden_custom() -> GrowableFilter {
    let mut filter = GrowableFilter::builder()
        .initial_capacity(8)
        .false_positive_rate(0.2)
        .growth_factor(3)
        .tightening(Tightening::PSeries)
        .max_capacity(40)
        .max_levels(4)
        .bucket_size(2)
        .eviction_limit(50)
        .seed(u64::MAX)
        .hash_function(HashFunction::Xxh3)
        .build()
        .unwrap();
    for item in golden_custom_items() {
        filter.insert(&Hashed(&item)).unwrap();
    }
    filter
}

fn golden_custom_items() -> Vec<String> {
    let mut items: Vec<String> = ('a'..='z').map(String::from).collect();
    items.extend(["a", "b"].map(String::from)); // copies of an item
    items
}

const GOLDEN: &[Golden] = &[
    Golden {
        file: "growable_default.bugu",
        build: golden_default,
        items: golden_default_items,
        resized_since: true,
    },
    // The default again, written after the sizing change: pins today's sizing byte for byte.
    Golden {
        file: "growable_default_fit_sizing.bugu",
        build: golden_default,
        items: golden_default_items,
        resized_since: false,
    },
    Golden {
        file: "growable_pseries_b2.bugu",
        build: golden_custom,
        items: golden_custom_items,
        resized_since: true,
    },
    Golden {
        file: "growable_mix8.bugu",
        build: golden_mix8,
        items: golden_default_items,
        resized_since: false,
    },
];

/// A level's stored fingerprints, sorted.
fn fingerprints(level: &CuckooFilter) -> Vec<u32> {
    let mut stored: Vec<u32> = level.buckets(..).flat_map(|b| b.slots).filter(|&f| f != 0).collect();
    stored.sort_unstable();
    stored
}

fn golden_path(file: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(file)
}

#[test]
fn golden_files_read_back_and_rewrite_identically() {
    for g in GOLDEN {
        let path = golden_path(g.file);
        if std::env::var_os("BUGU_BLESS").is_some() && !path.exists() {
            (g.build)().save(&path).unwrap();
        }
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // The file's own filter, as the library reads it; decoded by hand below.
        let filter = GrowableFilter::from_bytes(&bytes).unwrap();
        assert!(filter.level_count() >= 2, "{}: the golden filter has grown", g.file);

        // Decoded by hand from docs/format.md.
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        assert_eq!(bytes[0..8], *b"\x89BUGU\r\n\x1a");
        assert_eq!(bytes[8..16], [1, 0, 2, 0, 0, 0, 0, 0], "{}: version 1, kind 2, no flags", g.file);
        assert_eq!(filter.key_encoding(), KeyEncoding::StdHash, "{}", g.file);
        assert!(
            (g.items)().iter().all(|item| filter.contains(item)),
            "{}: typed keys by the file's rule",
            g.file
        );
        assert_eq!(f64::from_bits(u64_at(16)), filter.target_false_positive_rate());
        assert_eq!(u64_at(24) as usize, filter.growth_factor());
        let (code, ratio) = match filter.tightening() {
            Tightening::Geometric { ratio } => (1, ratio.to_bits()),
            _ => (2, 0),
        };
        assert_eq!((u64_at(32), u64_at(40)), (code, ratio), "{}", g.file);
        assert_eq!(u64_at(48) as usize, filter.max_capacity().unwrap_or(0));
        assert_eq!(u64_at(56) as usize, filter.max_levels().unwrap_or(0));
        assert_eq!(u64_at(64) as usize, filter.level_count());
        let mut at = 72;
        for level in filter.levels() {
            assert_eq!(u32::from(bytes[at]), level.fingerprint_bits(), "{}", g.file);
            assert_eq!(usize::from(bytes[at + 1]), level.bucket_size());
            assert_eq!(u64_at(at + 16) as usize, level.bucket_count());
            assert_eq!(u64_at(at + 24) as usize, level.capacity());
            assert_eq!(u64_at(at + 32) as usize, level.len());
            let payload =
                (level.bucket_count() * level.bucket_size() * level.fingerprint_bits() as usize).div_ceil(8);
            at += 40 + (payload + 16).next_multiple_of(8);
        }
        assert_eq!(bytes.len(), at + 8, "{}", g.file);
        assert_eq!(u64_at(at), xxh3_64(&bytes[..at]), "{}: checksum", g.file);

        // Written back byte for byte.
        assert_eq!(filter.to_bytes(), bytes, "{}: re-written bytes differ", g.file);
        assert_eq!(GrowableFilter::load(&path).unwrap().to_bytes(), bytes);
        // A fresh build: the same bytes, or for a file that predates a sizing change, the same
        // first level in a larger table (which then holds more before the filter grows).
        let fresh = (g.build)();
        if g.resized_since {
            let first = |f: &GrowableFilter| {
                let level = &f.levels()[0];
                (level.fingerprint_bits(), level.bucket_size(), level.capacity(), level.bucket_count())
            };
            let (fresh_first, file_first) = (first(&fresh), first(&filter));
            let settings = |(bits, slots, capacity, _): (u32, usize, usize, usize)| (bits, slots, capacity);
            assert_eq!(settings(fresh_first), settings(file_first), "{}: hash or growth changed", g.file);
            assert!(fresh_first.3 > file_first.3, "{}: no longer resized: drop the mark", g.file);
            assert!((g.items)().iter().all(|item| fresh.contains(&Hashed(item))), "{}", g.file);
        } else {
            // The same levels holding the same fingerprints. Where in its two buckets each one
            // sits is the insertion policy's choice, which may change (it did: emptier bucket
            // first); what is stored may not.
            assert_eq!(fresh.level_count(), filter.level_count(), "{}: growth changed", g.file);
            for (fresh_level, file_level) in fresh.levels().iter().zip(filter.levels()) {
                let shape =
                    |l: &CuckooFilter| (l.fingerprint_bits(), l.bucket_size(), l.bucket_count(), l.len());
                assert_eq!(shape(fresh_level), shape(file_level), "{}: sizing changed", g.file);
                assert_eq!(fingerprints(fresh_level), fingerprints(file_level), "{}: hash changed", g.file);
            }
        }
        for item in (g.items)() {
            assert!(filter.contains(&item), "{}: {item}", g.file);
        }
    }
}

// Hostile input.

fn with_checksum(mut bytes: Vec<u8>) -> Vec<u8> {
    let end = bytes.len() - 8;
    let sum = xxh3_64(&bytes[..end]);
    bytes[end..].copy_from_slice(&sum.to_le_bytes());
    bytes
}

fn patched(bytes: &[u8], at: usize, value: u64) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
    with_checksum(bytes)
}

fn growable_error(bytes: &[u8]) -> (&'static str, u64) {
    match GrowableFilter::from_bytes(bytes) {
        Err(PersistError::InvalidParameter(InvalidParameter::Growable { field, value })) => (field, value),
        other => panic!("expected an invalid growable field, got {other:?}"),
    }
}

#[test]
fn invalid_fields_are_typed_errors() {
    let bytes = grown(20, 200).to_bytes();
    let field = |at: usize, value: u64| growable_error(&patched(&bytes, at, value)).0;
    assert_eq!(field(16, 0f64.to_bits()), "target rate, f64 bits");
    assert_eq!(field(16, f64::NAN.to_bits()), "target rate, f64 bits");
    assert_eq!(field(16, 1f64.to_bits()), "target rate, f64 bits");
    assert_eq!(field(24, 1), "growth factor");
    assert_eq!(field(24, 17), "growth factor");
    assert_eq!(field(24, u64::MAX), "growth factor");
    assert_eq!(field(32, 3), "tightening policy");
    assert_eq!(field(40, 1f64.to_bits()), "tightening ratio, f64 bits");
    assert_eq!(field(64, 0), "level count");
    assert_eq!(field(64, 65), "level count");
    assert_eq!(field(56, 1), "level count"); // more levels than the stored maximum
    assert_eq!(field(48, 1), "maximum capacity"); // below the levels' capacity
    // A target below the levels' bound: they could not have been built for it.
    assert_eq!(field(16, 1e-6f64.to_bits()), "levels' bound not below the target, f64 bits");
    // Levels that do not hash alike: level 1's seed differs from level 0's.
    let filter = grown(20, 200);
    let first = &filter.levels()[0];
    let payload =
        (first.bucket_count() * first.bucket_size() * first.fingerprint_bits() as usize).div_ceil(8);
    let second = 72 + 40 + (payload + 16).next_multiple_of(8);
    assert_eq!(field(second + 8, 12345), "levels with different seeds");
    // A level count larger than the input: refused before anything is allocated for it.
    let long = patched(&bytes, 64, 64);
    assert!(matches!(GrowableFilter::from_bytes(&long), Err(PersistError::Truncated { .. })));
}

#[test]
fn truncated_or_corrupted_input_never_panics() {
    let bytes = grown(10, 100).to_bytes();
    for len in 0..bytes.len() {
        assert!(GrowableFilter::from_bytes(&bytes[..len]).is_err(), "{len} bytes accepted");
        assert!(GrowableFilter::read_from(&bytes[..len]).is_err(), "{len} bytes accepted as a stream");
    }
    let mut state = 0x1234_5678_9abc_def0u64;
    for _ in 0..2_000 {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut corrupt = bytes.clone();
        let at = (state >> 33) as usize % corrupt.len();
        corrupt[at] ^= 1 << ((state >> 20) % 8);
        assert!(GrowableFilter::from_bytes(&corrupt).is_err(), "flip at {at} accepted");
        // With the checksum recomputed, the content checks still hold the line: either refused,
        // or a filter that behaves (never panics on use).
        if at < bytes.len() - 8
            && let Ok(mut forged) = GrowableFilter::from_bytes(&with_checksum(corrupt))
        {
            assert!(forged.false_positive_rate() < forged.target_false_positive_rate());
            let _ = forged.insert("x");
            let _ = forged.contains_batch(&[1u32, 2, 3]);
            let _ = forged.remove("x");
        }
    }
}

#[test]
fn a_filter_read_from_bytes_keeps_its_hash_function_as_it_grows() {
    // Written before hash id 2 existed: every level, old and new, hashes with id 1.
    let mut filter = GrowableFilter::load(golden_path("growable_default.bugu")).unwrap();
    assert_eq!(filter.hash_function(), HashFunction::Xxh3);
    let levels = filter.level_count();
    let more: Vec<u64> = (0..2_000).collect();
    for item in &more {
        filter.insert(item).unwrap();
    }
    assert!(filter.level_count() > levels);
    assert!(filter.levels().iter().all(|level| level.hash_function() == HashFunction::Xxh3));
    // And its rule for typed keys: the older one, in the new levels too.
    assert!(filter.levels().iter().all(|level| level.key_encoding() == KeyEncoding::StdHash));
    assert!(more.iter().all(|item| filter.contains(item)));
    assert!(golden_default_items().iter().all(|item| filter.contains(item)));
    assert_eq!(filter.hash_of(&7u64), bugu::hash::hash_item(&7u64, filter.seed()));
    let copy = GrowableFilter::from_bytes(&filter.to_bytes()).unwrap();
    assert_eq!(copy.hash_function(), HashFunction::Xxh3);
    assert_eq!(copy.key_encoding(), KeyEncoding::StdHash);
    assert!(more.iter().all(|item| copy.contains(item)));
    assert!(golden_default_items().iter().all(|item| copy.contains(item)));
}
