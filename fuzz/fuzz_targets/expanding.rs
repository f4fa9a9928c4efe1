//! `ExpandingFilter::from_bytes` and `read_from` on arbitrary bytes: no panic, no runaway
//! allocation, and the two readers agree. Whatever is accepted re-serializes to the same bytes,
//! then takes inserts and removals without panicking, and an item inserted and not removed is
//! never absent. `ExpandingView::from_bytes` accepts what `from_bytes` accepts (unless its
//! entries are too narrow to read in place) and answers as the filter does.
//!
//! As in the other targets, an odd first byte seals the rest with its checksum, so mutations
//! reach the field and bucket checks.

#![no_main]

use bugu::{ExpandingFilter, ExpandingView, Filter, FilterMut, Persist, PersistError};
use libfuzzer_sys::fuzz_target;

/// Operations applied to one accepted filter at most.
const MAX_OPS: u64 = 64;

fuzz_target!(|data: &[u8]| {
    let Some(bytes) = bugu_fuzz::file_bytes(data) else { return };
    let bytes = &bytes[..];
    let from_bytes = ExpandingFilter::from_bytes(bytes);
    let mut reader = bytes;
    let streamed = ExpandingFilter::read_from(&mut reader);
    let view = ExpandingView::from_bytes(bytes);
    match (&from_bytes, &view) {
        (Ok(filter), Ok(view)) => {
            let keys: Vec<u64> = (0..MAX_OPS).collect();
            assert_eq!(view.contains_batch(&keys), filter.contains_batch(&keys));
        }
        (Ok(_), Err(PersistError::InvalidParameter(_))) | (Err(_), Err(_)) => {}
        (Ok(_), Err(e)) => panic!("the view refused what from_bytes accepted: {e}"),
        (Err(e), Ok(_)) => panic!("the view accepted what from_bytes refused: {e}"),
    }
    match (from_bytes, streamed) {
        (Ok(mut filter), Ok(copy)) => {
            assert!(reader.is_empty());
            assert_eq!(filter.to_bytes(), bytes);
            assert_eq!(copy.to_bytes(), bytes);
            let mut inserted = Vec::new();
            for key in 0..MAX_OPS {
                if filter.insert(&key).is_ok() {
                    inserted.push(key);
                }
            }
            for &key in &inserted {
                assert!(filter.contains(&key), "an inserted key reads absent");
            }
            for &key in inserted.iter().step_by(2) {
                assert!(filter.remove(&key));
            }
            for &key in inserted.iter().skip(1).step_by(2) {
                assert!(filter.contains(&key), "a kept key reads absent after removals");
            }
            let again = ExpandingFilter::from_bytes(&filter.to_bytes()).expect("a written filter reads back");
            assert_eq!(again.to_bytes(), filter.to_bytes());
        }
        (Err(bugu::PersistError::TrailingBytes(n)), Ok(copy)) => {
            assert_eq!(n as usize, reader.len());
            assert_eq!(copy.serialized_len() + reader.len(), bytes.len());
        }
        (Ok(_), Err(e)) => panic!("from_bytes accepted what read_from refused: {e}"),
        (Err(e), Ok(_)) => panic!("read_from accepted what from_bytes refused: {e}"),
        (Err(_), Err(_)) => {}
    }
});
