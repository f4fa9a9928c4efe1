//! `GrowableFilter::from_bytes` and `read_from` on arbitrary bytes: no panic, no runaway
//! allocation, and the two readers agree. Whatever is accepted re-serializes to the same bytes,
//! and then takes queries, inserts and removes without panicking: an item inserted and not
//! removed is never absent, and the changed filter is read back as written.
//!
//! Random bytes almost never carry a valid checksum, which would stop the fuzzer at the checksum
//! check; so when the first byte is odd, the rest is taken as a file without its checksum and
//! the correct checksum is appended, letting mutations reach the growth settings, the levels and
//! the checks across levels.
//!
//! The operations are driven by the bytes after the filter when `read_from` stops before the end
//! (a stream: unsealed inputs only), else by the filter's own bytes.

#![no_main]

use bugu::{Filter, FilterMut, GrowableFilter, Persist, Removal};
use libfuzzer_sys::fuzz_target;

/// Operations applied to one accepted filter at most: enough to fill the golden files' small
/// levels and grow a new one, few enough to keep every execution fast.
const MAX_OPS: usize = 64;

fuzz_target!(|data: &[u8]| {
    let Some(bytes) = bugu_fuzz::file_bytes(data) else { return };
    let bytes = &bytes[..];
    let from_bytes = GrowableFilter::from_bytes(bytes);
    let mut reader = bytes;
    let streamed = GrowableFilter::read_from(&mut reader);
    match (from_bytes, streamed) {
        (Ok(filter), Ok(copy)) => {
            assert!(reader.is_empty());
            assert_eq!(filter.to_bytes(), bytes);
            assert_eq!(copy.to_bytes(), bytes);
            assert_eq!(filter.serialized_len(), bytes.len());
            for hash in hashes(bytes) {
                assert_eq!(filter.contains_hash(hash), copy.contains_hash(hash));
                assert_eq!(filter.count_hash(hash), copy.count_hash(hash));
            }
            exercise(filter, bytes);
        }
        // A stream stops after one filter: bytes after it are for the next reader.
        (Err(bugu::PersistError::TrailingBytes(n)), Ok(copy)) => {
            assert_eq!(n as usize, reader.len());
            assert_eq!(copy.serialized_len() + reader.len(), bytes.len());
            assert_eq!(copy.to_bytes(), &bytes[..copy.serialized_len()]);
            exercise(copy, reader);
        }
        (Ok(_), Err(e)) => panic!("from_bytes accepted what read_from refused: {e}"),
        (Err(e), Ok(_)) => panic!("read_from accepted what from_bytes refused: {e}"),
        (Err(_), Err(_)) => {}
    }
});

/// Big-endian 64-bit words of `bytes` (the last one shorter).
fn hashes(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes.chunks(8).map(|c| c.iter().fold(0u64, |h, &b| h << 8 | u64::from(b)))
}

/// Runs up to [`MAX_OPS`] operations read from `ops` (an opcode byte, then a 64-bit hash) on
/// `filter`, checking each answer against what was inserted and removed here. The checked
/// removals take only copies inserted here and not removed yet ("remove only what you
/// inserted"); a removal of an arbitrary hash that takes a copy ends the no-false-negative
/// checks, since the copy it took may have been one inserted here.
fn exercise(mut filter: GrowableFilter, ops: &[u8]) {
    let levels_len =
        |filter: &GrowableFilter| filter.levels().iter().map(bugu::CuckooFilter::len).sum::<usize>();
    assert_eq!(filter.len(), levels_len(&filter));
    assert_eq!(filter.stats().iter().map(|s| s.items).sum::<usize>(), filter.len());
    // One entry per copy inserted here and not removed.
    let mut live: Vec<u64> = Vec::new();
    let mut tracking = true;
    for op in ops.chunks_exact(9).take(MAX_OPS) {
        let hash = hashes(&op[1..]).next().unwrap_or(0);
        let len = filter.len();
        let present = filter.contains_hash(hash);
        assert_eq!(present, filter.count_hash(hash) > 0);
        match op[0] % 8 {
            0..=2 => match filter.insert_hash(hash) {
                Ok(()) => {
                    assert_eq!(filter.len(), len + 1);
                    live.push(hash);
                }
                Err(_) => assert_eq!(filter.len(), len, "a refused insert changed the count"),
            },
            3 => match filter.insert_unique_hash(hash) {
                Ok(added) => {
                    assert_eq!(added, !present);
                    assert_eq!(filter.len(), len + usize::from(added));
                    if added {
                        live.push(hash);
                    }
                }
                Err(_) => assert_eq!(filter.len(), len, "a refused insert changed the count"),
            },
            // Removes a copy inserted here (the hash picks which).
            4 | 5 if !live.is_empty() => {
                let at = (hash % live.len() as u64) as usize;
                if remove(&mut filter, live[at], len) {
                    live.swap_remove(at);
                }
            }
            // Removes any hash: may take another item's lookalike copy.
            4 | 5 => tracking &= !remove(&mut filter, hash, len),
            6 => {
                let batch: Vec<u64> = [hash].into_iter().chain(live.iter().copied()).collect();
                let answers = filter.contains_hash_batch(&batch);
                assert_eq!(answers.len(), batch.len());
                for (&h, &found) in batch.iter().zip(&answers) {
                    assert_eq!(found, filter.contains_hash(h), "the batched and the single lookup disagree");
                }
            }
            _ if op[1] == 0 => {
                filter.clear();
                assert!(filter.is_empty() && filter.level_count() == 1);
                live.clear();
                tracking = true;
            }
            _ => assert!(filter.count_hash(hash) >= usize::from(present)),
        }
        assert_eq!(filter.len(), levels_len(&filter));
        if tracking {
            for &hash in &live {
                assert!(filter.contains_hash(hash), "a hash inserted and not removed reads absent");
            }
        }
    }
    // The changed filter is written as the readers read it.
    let bytes = filter.to_bytes();
    assert_eq!(bytes.len(), filter.serialized_len());
    let read =
        GrowableFilter::from_bytes(&bytes).unwrap_or_else(|e| panic!("a changed filter reads back as {e}"));
    assert_eq!(read.to_bytes(), bytes);
    assert_eq!(read.len(), filter.len());
}

/// Removes one copy of `hash` with [`GrowableFilter::remove_hash_checked`], checking the answer
/// against the lookup before it; whether a copy was removed.
fn remove(filter: &mut GrowableFilter, hash: u64, len: usize) -> bool {
    let present = filter.contains_hash(hash);
    match filter.remove_hash_checked(hash) {
        Removal::Removed { level } => {
            assert!(present && level < filter.level_count());
            assert_eq!(filter.len(), len - 1);
            true
        }
        Removal::NotFound => {
            assert!(!present);
            assert_eq!(filter.len(), len);
            false
        }
        Removal::Ambiguous { levels } => {
            assert!(present && (2..=filter.level_count()).contains(&levels));
            assert_eq!(filter.len(), len);
            false
        }
    }
}
