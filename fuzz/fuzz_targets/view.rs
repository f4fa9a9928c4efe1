//! `CuckooView` on arbitrary bytes: no panic, no out-of-bounds read, in both the validating and
//! the trusted constructor; a validated view answers exactly as the owned filter. The trusted
//! view skips the checksum, so it is fed unsealed bytes as they come; the first byte selects
//! sealing as in the `from_bytes` target.

#![no_main]

use bugu::{CuckooFilter, CuckooView, Filter, Persist};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(bytes) = bugu_fuzz::file_bytes(data) else { return };
    let bytes = &bytes[..];
    let hashes: Vec<u64> = bytes
        .chunks(8)
        .map(|c| c.iter().fold(0u64, |h, &b| h << 8 | u64::from(b)))
        .chain([0, u64::MAX])
        .collect();

    // Trusted: whatever the table holds, queries must stay in bounds.
    if let Ok(view) = CuckooView::from_trusted_bytes(bytes) {
        for &hash in &hashes {
            let present = view.contains_hash(hash);
            assert!(view.count_hash(hash) > 0 || !present);
        }
    }
    match (CuckooView::from_bytes(bytes), CuckooFilter::from_bytes(bytes)) {
        (Ok(view), Ok(filter)) => {
            assert_eq!(view.as_bytes(), bytes);
            assert_eq!(view.len(), filter.len());
            assert!(CuckooView::from_trusted_bytes(bytes).is_ok());
            for &hash in &hashes {
                assert_eq!(view.contains_hash(hash), filter.contains_hash(hash));
                assert_eq!(view.count_hash(hash), filter.count_hash(hash));
            }
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!("the view and the owned reader disagree: {:?} vs {:?}", a.err(), b.err()),
    }
});
