//! `AnyFilter` and `AnyView` on arbitrary bytes of any kind: no panic; the whole-input reader,
//! the stream reader and the view accept the same inputs (the stream reader stops after one
//! filter, so it also accepts what trailing bytes follow), and what they accept answers alike and
//! writes back the bytes it was read from. The first byte selects sealing as in the `from_bytes`
//! target, so most inputs reach the content checks of every kind.

#![no_main]

use bugu::{AnyFilter, AnyView, Filter, Persist};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(bytes) = bugu_fuzz::file_bytes(data) else { return };
    let bytes = &bytes[..];
    let whole = AnyFilter::from_bytes(bytes);
    let view = AnyView::from_bytes(bytes);
    let mut reader = bytes;
    let streamed = AnyFilter::read_from(&mut reader);
    match (&whole, &view) {
        (Ok(filter), Ok(view)) => {
            assert_eq!(filter.kind(), view.kind());
            assert_eq!(filter.to_bytes(), bytes);
            for chunk in bytes.chunks(8) {
                let hash = chunk.iter().fold(0u64, |h, &b| h << 8 | u64::from(b));
                assert_eq!(filter.contains_hash(hash), view.contains_hash(hash));
                assert_eq!(filter.count_hash(hash), view.count_hash(hash));
            }
        }
        (Err(_), Err(_)) => {}
        (a, b) => panic!("the reader and the view disagree: {:?} vs {:?}", a.as_ref().err(), b.as_ref().err()),
    }
    match (whole, streamed) {
        (Ok(filter), Ok(copy)) => assert_eq!(copy.to_bytes(), filter.to_bytes()),
        (Ok(_), Err(e)) => panic!("from_bytes accepted what read_from refused: {e}"),
        (Err(_), _) => {}
    }
});
