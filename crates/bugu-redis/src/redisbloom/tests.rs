//! The RedisBloom layout without a server: what it answers, how it grows and compacts, its saved
//! form and its dumps, and hostile input. Agreement with RedisBloom itself is tested against
//! files RedisBloom wrote, by the Redis suite (`tests/test_redisbloom.py`).

use proptest::prelude::*;

use super::dump::HEADER_BYTES;
use super::saved::{FieldSink, FieldSource};
use super::*;
use crate::value::dump::DumpStep;

/// A filter as `CF.RESERVE capacity BUCKETSIZE bucket_size MAXITERATIONS iterations EXPANSION
/// expansion` makes it in RedisBloom.
fn reserve(capacity: u64, bucket_size: u64, max_iterations: u64, expansion: u64) -> RedisBloomFilter {
    let buckets = (capacity / bucket_size).max(1).next_power_of_two();
    let expansion = if expansion == 0 { 0 } else { expansion.next_power_of_two() };
    let shape = Shape { buckets, items: 0, deletes: 0, filters: 1, bucket_size, max_iterations, expansion };
    RedisBloomFilter::empty(shape).expect("a valid shape")
}

fn item(i: u32) -> Vec<u8> {
    format!("item:{i}").into_bytes()
}

/// RDB fields, as a list.
#[derive(Debug, Clone, PartialEq)]
enum Field {
    Unsigned(u64),
    Bytes(Vec<u8>),
}

impl FieldSink for Vec<Field> {
    fn unsigned(&mut self, value: u64) {
        self.push(Field::Unsigned(value));
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.push(Field::Bytes(bytes.to_vec()));
    }
}

impl FieldSource for std::vec::IntoIter<Field> {
    fn unsigned(&mut self) -> Option<u64> {
        match self.next()? {
            Field::Unsigned(value) => Some(value),
            Field::Bytes(_) => None,
        }
    }

    fn bytes(&mut self) -> Option<Vec<u8>> {
        match self.next()? {
            Field::Bytes(bytes) => Some(bytes),
            Field::Unsigned(_) => None,
        }
    }
}

fn saved(filter: &RedisBloomFilter) -> Vec<Field> {
    let mut fields = Vec::new();
    filter.save(&mut fields);
    fields
}

fn load(fields: Vec<Field>, version: i32) -> Option<RedisBloomFilter> {
    RedisBloomFilter::load(&mut fields.into_iter(), version)
}

fn dump(filter: &RedisBloomFilter) -> Vec<(i64, Vec<u8>)> {
    let mut chunks = Vec::new();
    let mut iterator = 0;
    while let DumpStep::Chunk { next, data } = filter.dump_step(iterator).expect("a valid iterator") {
        chunks.push((next, data));
        iterator = next;
    }
    chunks
}

fn restore(chunks: &[(i64, Vec<u8>)]) -> Option<RedisBloomFilter> {
    let (first, rest) = chunks.split_first()?;
    let mut filter = RedisBloomFilter::from_header(first.1.as_slice().try_into().ok()?)?;
    for (iterator, data) in rest {
        filter.load_chunk(*iterator, data).ok()?;
    }
    Some(filter)
}

#[test]
fn grows_by_the_expansion_and_finds_every_item() {
    for (bucket_size, expansion) in [(1, 1), (2, 1), (2, 2), (4, 4), (3, 8)] {
        let mut filter = reserve(1000, bucket_size, 20, expansion);
        for i in 0..8_000 {
            filter.add(&item(i)).expect("room to grow");
        }
        let shape = filter.shape();
        assert!(shape.filters > 1, "{shape:?}");
        assert_eq!(shape.items, 8_000);
        for (index, slots) in filter.filters.iter().enumerate() {
            let buckets = shape.buckets * shape.expansion.pow(index as u32);
            assert_eq!(slots.len() as u64, buckets * bucket_size);
        }
        assert!((0..8_000).all(|i| filter.contains(&item(i))), "{shape:?}");
        assert!((0..8_000).all(|i| filter.count(&item(i)) >= 1));
    }
}

#[test]
fn a_filter_that_may_not_expand_reports_itself_full_and_keeps_its_items() {
    let mut filter = reserve(64, 2, 20, 0);
    let mut added = Vec::new();
    for i in 0..200 {
        match filter.add(&item(i)) {
            Ok(()) => added.push(i),
            Err(error) => assert_eq!(error, CfError::Full),
        }
    }
    assert!(added.len() < 200 && added.len() >= 32, "{}", added.len());
    assert_eq!(filter.shape().filters, 1);
    assert_eq!(filter.shape().items, added.len() as u64);
    assert!(added.iter().all(|&i| filter.contains(&item(i))));
}

#[test]
fn add_unique_adds_only_what_is_absent() {
    let mut filter = reserve(1000, 2, 20, 1);
    assert_eq!(filter.add_unique(b"a"), Ok(true));
    assert_eq!(filter.add_unique(b"a"), Ok(false));
    filter.add(b"a").unwrap();
    assert_eq!(filter.count(b"a"), 2);
    assert_eq!(filter.shape().items, 2);
}

#[test]
fn deletes_remove_one_copy_and_compact_the_chain() {
    let mut filter = reserve(500, 2, 20, 1);
    for i in 0..3_000 {
        filter.add(&item(i)).unwrap();
    }
    let grown = filter.shape().filters;
    assert!(grown >= 3, "{grown}");
    for i in 0..2_000 {
        assert!(filter.delete(&item(i)), "item {i}");
    }
    assert!(filter.shape().filters < grown, "compaction freed the newest sub-filters");
    assert_eq!(filter.shape().items, 1_000);
    assert!((2_000..3_000).all(|i| filter.contains(&item(i))), "no item lost by compaction");
    assert!(!filter.delete(b"never added") || filter.contains(b"never added"));
}

#[test]
fn inserts_stop_at_thirty_two_sub_filters() {
    let shape = Shape {
        buckets: 1,
        items: 0,
        deletes: 0,
        filters: 32,
        bucket_size: 1,
        max_iterations: 1,
        expansion: 1,
    };
    let filter = RedisBloomFilter::empty(shape).unwrap();
    assert_eq!(filter.check_writable(), Err(CfError::MaxExpansions));
    let fewer = RedisBloomFilter::empty(Shape { filters: 31, ..shape }).unwrap();
    assert_eq!(fewer.check_writable(), Ok(()));
}

#[test]
fn a_full_chain_of_the_most_sub_filters_refuses_to_grow() {
    let filters = u64::from(u16::MAX);
    let shape = Shape {
        buckets: 1,
        items: filters,
        deletes: 0,
        filters,
        bucket_size: 1,
        max_iterations: 1,
        expansion: 1,
    };
    let mut filter = RedisBloomFilter::new(shape, vec![vec![7]; filters as usize]).expect("a valid filter");
    let before = filter.clone();
    assert_eq!(filter.add(b"one more"), Err(CfError::OutOfMemory));
    assert_eq!(filter, before);
}

#[test]
fn info_reports_redisblooms_size() {
    // RedisBloom 2.6 reports Size 1080 for CF.RESERVE k 1000: 512 buckets of 2 slots, 40 + 16
    // bytes of structures.
    let info = reserve(1000, 2, 20, 1).info();
    assert_eq!((info.size, info.buckets, info.filters, info.layout), (1080, 512, 1, Info::REDISBLOOM));
}

#[test]
fn the_saved_form_and_dumps_give_back_the_same_filter() {
    let mut filter = reserve(1000, 4, 7, 2);
    for i in 0..10_000 {
        filter.add(&item(i)).unwrap();
    }
    filter.delete(&item(3));
    assert_eq!(load(saved(&filter), ENCODING_VERSION).as_ref(), Some(&filter));
    let chunks = dump(&filter);
    assert_eq!(chunks.len(), 1 + filter.filters.len(), "a sub-filter per chunk");
    assert_eq!(restore(&chunks).as_ref(), Some(&filter));
    let mut rewritten = Vec::new();
    filter.for_each_restore_chunk(|iterator, data| rewritten.push((iterator, data.to_vec())));
    assert_eq!(rewritten, chunks, "the AOF rewrite sends what a dump does");
}

#[test]
fn sub_filters_over_sixteen_mebibytes_go_in_pieces() {
    let mut filter = reserve(1 << 25, 2, 20, 1); // 2^24 buckets of 2 slots: 32 MiB
    filter.add(b"x").unwrap();
    let chunks = dump(&filter);
    let lengths: Vec<usize> = chunks.iter().map(|(_, data)| data.len()).collect();
    assert_eq!(lengths, [HEADER_BYTES, 16 << 20, 16 << 20]);
    assert_eq!(chunks[2].0, 1 + (32 << 20));
    assert_eq!(restore(&chunks).as_ref(), Some(&filter));
}

#[test]
fn encodings_before_four_take_redisblooms_old_defaults() {
    let fields = vec![
        Field::Unsigned(2),
        Field::Unsigned(4),
        Field::Unsigned(1),
        Field::Bytes(vec![0; 8]),
        Field::Bytes(vec![0, 0, 0, 0, 0, 0, 9, 0]),
    ];
    let filter = load(fields.clone(), 3).expect("a version 3 value");
    let shape = filter.shape();
    assert_eq!((shape.bucket_size, shape.max_iterations, shape.expansion, shape.deletes), (2, 20, 1, 0));
    assert_eq!((shape.filters, shape.buckets, shape.items), (2, 4, 1));
    assert_eq!(load(fields, 5), None, "a version from the future");
}

#[test]
fn values_redisbloom_cannot_have_written_are_refused() {
    let good = saved(&reserve(100, 2, 20, 2));
    assert!(load(good.clone(), 4).is_some());
    let header_fields = [
        (0, 0),       // no sub-filters
        (1, 3),       // buckets not a power of two
        (4, 0),       // bucket size 0
        (4, 256),     // bucket size over 255
        (5, 0),       // no iterations
        (5, 65_536),  // too many iterations
        (6, 3),       // expansion not a power of two
        (6, 65_536),  // expansion too large
        (1, 1 << 40), // more than 4 GiB
    ];
    for (at, value) in header_fields {
        let mut fields = good.clone();
        fields[at] = Field::Unsigned(value);
        assert_eq!(load(fields, 4), None, "field {at} = {value}");
    }
    let mut wrong_buckets = good.clone();
    wrong_buckets[7] = Field::Unsigned(63);
    assert_eq!(load(wrong_buckets, 4), None);
    let mut short = good.clone();
    short[8] = Field::Bytes(vec![0; 127]);
    assert_eq!(load(short, 4), None);
    let mut cut = good.clone();
    cut.pop();
    assert_eq!(load(cut, 4), None);
    let mut two_without_expansion = saved(&reserve(100, 2, 20, 1));
    two_without_expansion[0] = Field::Unsigned(2);
    two_without_expansion[6] = Field::Unsigned(0);
    let second = two_without_expansion[7..9].to_vec();
    two_without_expansion.extend(second);
    assert_eq!(load(two_without_expansion, 4), None);
}

#[test]
fn chunks_that_do_not_fit_are_refused_and_change_nothing() {
    let mut filter = reserve(1000, 2, 20, 2);
    let before = filter.clone();
    let size: i64 = 1024;
    for (iterator, len) in [(1, 10), (10, 10), (2 + size, 2), (i64::MAX, 1), (i64::MIN, 1), (0, 1), (3, 0)] {
        assert_eq!(filter.load_chunk(iterator, &vec![7; len]), Err(CfError::BadChunk), "{iterator} {len}");
    }
    assert_eq!(filter, before);
    for iterator in [-1, i64::MIN, 2, 1 + size + 1] {
        assert_eq!(filter.dump_step(iterator), Err(CfError::InvalidPosition), "{iterator}");
    }
    assert_eq!(filter.dump_step(1 + size), Ok(DumpStep::Done));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_fields_are_refused_or_read(
        numbers in proptest::collection::vec(0u64..70_000, 0..12),
        blobs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..4),
        version in 0i32..6,
    ) {
        let mut fields: Vec<Field> = numbers.into_iter().map(Field::Unsigned).collect();
        fields.extend(blobs.into_iter().map(Field::Bytes));
        if let Some(filter) = load(fields, version) {
            let _ = filter.contains(b"x");
            prop_assert_eq!(load(saved(&filter), ENCODING_VERSION), Some(filter));
        }
    }

    #[test]
    fn random_chunks_are_written_where_they_say_or_refused_unchanged(
        chunks in proptest::collection::vec((prop_oneof![0i64..400, any::<i64>()], proptest::collection::vec(any::<u8>(), 0..80)), 1..20),
    ) {
        // Sub-filters of 64, 128 and 256 bytes.
        let mut filter = reserve(64, 2, 20, 2);
        filter.filters.push(vec![0; 128]);
        filter.filters.push(vec![0; 256]);
        for (iterator, data) in chunks {
            let before = filter.clone();
            match filter.load_chunk(iterator, &data) {
                Ok(()) => {
                    let start = (iterator - 1) as usize - data.len();
                    let whole: Vec<u8> = filter.filters.concat();
                    prop_assert_eq!(&whole[start..start + data.len()], &data[..]);
                }
                Err(error) => {
                    prop_assert_eq!(error, CfError::BadChunk);
                    prop_assert_eq!(&filter, &before);
                }
            }
        }
    }

    #[test]
    fn random_headers_are_refused_or_restorable(header in proptest::collection::vec(any::<u8>(), HEADER_BYTES)) {
        let mut header: [u8; HEADER_BYTES] = header.try_into().unwrap();
        // Small sizes, so that valid headers stay cheap to allocate.
        let (buckets, filters) = (u64::from(header[8]) % 64, u64::from(header[24]) % 4);
        header[8..16].copy_from_slice(&buckets.to_le_bytes());
        header[24..32].copy_from_slice(&filters.to_le_bytes());
        if let Some(mut filter) = RedisBloomFilter::from_header(&header) {
            let _ = filter.add(b"x");
            prop_assert_eq!(restore(&dump(&filter)), Some(filter));
        }
    }
}
