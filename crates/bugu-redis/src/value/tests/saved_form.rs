//! The saved form: RDB files and `DUMP` payloads load only when every field agrees.

use xxhash_rust::xxh3::xxh3_64;

use super::*;
use crate::value::header::HEADER_BYTES;

/// The saved form without its trailer: what encoding version 0 holds.
fn content(saved: &[u8]) -> &[u8] {
    &saved[..saved.len() - 16]
}

/// `content` with a trailer of this state and stamp and a valid checksum: what a forger writes.
fn forged(content: &[u8], state: u32, stamp: u32) -> Vec<u8> {
    let mut saved = [content, &state.to_le_bytes(), &stamp.to_le_bytes()].concat();
    saved.extend_from_slice(&xxh3_64(&saved).to_le_bytes());
    saved
}

fn loads(saved: &[u8], encoding: Encoding) -> bool {
    CfValue::from_saved(saved, encoding).is_some()
}

#[test]
fn the_saved_form_round_trips() {
    let settings = Settings::default().with_expansion(4).unwrap().with_max_iterations(7).unwrap();
    let mut value = filled(settings, 5_000);
    ready(&mut value).delete(&3u32.to_le_bytes());
    let saved = value.to_saved();
    assert_eq!(forged(content(&saved), 0, 0), saved);
    let back = CfValue::from_saved(&saved, Encoding::Checked).expect("valid");
    assert_eq!(back.to_saved(), saved);
    assert_eq!(back.ready().unwrap().info(), value.ready().unwrap().info());
    assert_eq!(back.ready().unwrap().settings, settings);
    // A copy is equal too.
    assert_eq!(value.clone().to_saved(), saved);
    // So is a restore in progress, with its dump's stamp.
    let mut key = None;
    let chunks = scandump(&value);
    load(&mut key, chunks[0].0, &chunks[0].1).unwrap();
    let restoring = key.unwrap();
    let saved = restoring.to_saved();
    assert_eq!(CfValue::from_saved(&saved, Encoding::Checked).unwrap().to_saved(), saved);
    assert_eq!(restoring.clone().to_saved(), saved);
}

#[test]
fn a_forged_length_never_loads() {
    let saved = filled(Settings::default(), 5_000).to_saved();
    let whole = content(&saved);
    let cut = &whole[..HEADER_BYTES + 100];
    // A filter whose bytes are cut short, with a checksum made to fit or not.
    assert!(!loads(&forged(cut, 0, 0), Encoding::Checked));
    assert!(!loads(&[cut, &saved[saved.len() - 16..]].concat(), Encoding::Checked));
    // Bytes beyond the header's length.
    assert!(!loads(&forged(&[whole, b"x"].concat(), 0, 0), Encoding::Checked));
    // A restore that says it is one but holds all the bytes, or a stamp no iterator holds.
    assert!(!loads(&forged(whole, 1, 0), Encoding::Checked));
    assert!(!loads(&forged(cut, 1, u32::MAX), Encoding::Checked));
    assert!(!loads(&forged(cut, 2, 0), Encoding::Checked));
    // Any byte changed, or the trailer cut.
    for at in [0, 20, HEADER_BYTES + 7, saved.len() - 12, saved.len() - 1] {
        let mut changed = saved.clone();
        changed[at] ^= 1;
        assert!(!loads(&changed, Encoding::Checked), "byte {at}");
    }
    for len in [0, 7, 8, 15, HEADER_BYTES + 16, saved.len() - 1] {
        assert!(!loads(&saved[..len], Encoding::Checked), "{len} bytes");
    }
    // An earlier build's encoding, cut the same way: it cannot say whether a restore was in
    // progress, so only a complete filter loads from it.
    assert!(!loads(cut, Encoding::Legacy));
    assert!(!loads(&whole[..HEADER_BYTES], Encoding::Legacy));
    // What the forger may do: a restore in progress, which answers nothing until its last chunk.
    let restoring = CfValue::from_saved(&forged(cut, 1, 0), Encoding::Checked).unwrap();
    assert_eq!(restoring.ready().err(), Some(CfError::RestoreInProgress));
}

#[test]
fn an_earlier_builds_filter_loads() {
    let value = filled(Settings::default().with_bucket_size(4).unwrap(), 1_000);
    let saved = value.to_saved();
    let back = CfValue::from_saved(content(&saved), Encoding::Legacy).expect("a complete filter");
    assert_eq!(back.to_saved(), saved);
}

#[test]
fn a_fixed_filter_never_loads() {
    let mut fixed = bugu::CuckooFilter::new(1_000).unwrap();
    fixed.insert_bytes(b"a").unwrap();
    let body = fixed.to_bytes();
    let refused = |bytes: &[u8]| {
        matches!(
            filter_from_bytes(bytes),
            Err(PersistError::WrongKind { expected: FilterKind::Growable, found: FilterKind::Cuckoo })
        )
    };
    assert!(refused(&body));
    // Refused by its header, before its bytes are checked.
    let mut corrupt = body.clone();
    *corrupt.last_mut().unwrap() ^= 1;
    assert!(refused(&corrupt));
    // Nor does it load as a saved value, with a header that fits it.
    let header = Header { expansion: 2, max_iterations: 20, deleted: 0, body_len: body.len() as u64 };
    let saved = forged(&[&header.encode()[..], &body].concat(), 0, 0);
    assert!(!loads(&saved, Encoding::Checked));
    // Whereas the same items in a growing filter do.
    let grown = AnyFilter::from(bugu::GrowableFilter::new(1_000).unwrap());
    assert!(filter_from_bytes(&grown.to_bytes()).is_ok());
}

#[test]
fn encoding_versions() {
    assert_eq!(Encoding::of_version(0), Some(Encoding::Legacy));
    assert_eq!(Encoding::of_version(Encoding::CURRENT), Some(Encoding::Checked));
    for unknown in [-1, 2, 1023] {
        assert_eq!(Encoding::of_version(unknown), None);
    }
}
