//! `CuckooFilter::from_bytes` and `read_from` on arbitrary bytes: no panic, no runaway
//! allocation, and the two readers agree. Whatever is accepted re-serializes to the same bytes.
//!
//! Random bytes almost never carry a valid checksum, which would stop the fuzzer at the checksum
//! check; so when the first byte is odd, the rest is taken as a file without its checksum and
//! the correct checksum is appended, letting mutations reach the parameter and content checks.

#![no_main]

use bugu::{CuckooFilter, Filter, Persist};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(bytes) = bugu_fuzz::file_bytes(data) else { return };
    let bytes = &bytes[..];
    let from_bytes = CuckooFilter::from_bytes(bytes);
    let mut reader = bytes;
    let streamed = CuckooFilter::read_from(&mut reader);
    match (&from_bytes, &streamed) {
        (Ok(filter), Ok(copy)) => {
            assert!(reader.is_empty());
            assert_eq!(filter.to_bytes(), bytes);
            assert_eq!(copy.to_bytes(), bytes);
            assert_eq!(filter.stats().items, filter.len());
            for hash in bytes.chunks(8).map(|c| c.iter().fold(0u64, |h, &b| h << 8 | u64::from(b))) {
                assert_eq!(filter.contains_hash(hash), copy.contains_hash(hash));
                assert_eq!(filter.count_hash(hash), copy.count_hash(hash));
            }
        }
        // A stream stops after one filter: bytes after it are for the next reader.
        (Err(bugu::PersistError::TrailingBytes(n)), Ok(copy)) => {
            assert_eq!(*n as usize, reader.len());
            assert_eq!(copy.serialized_len() + reader.len(), bytes.len());
        }
        (Ok(_), Err(e)) => panic!("from_bytes accepted what read_from refused: {e}"),
        (Err(e), Ok(_)) => panic!("read_from accepted what from_bytes refused: {e}"),
        (Err(_), Err(_)) => {}
    }
});
