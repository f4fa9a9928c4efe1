//! `CF.SCANDUMP`, `CF.LOADCHUNK` and the AOF rewrite's chunks.

use super::*;
use crate::value::dump::{CHUNK_BYTES, Cursor, MAX_DATA_CHUNKS, chunk_len};
use crate::value::header::MAX_STAMP;

/// A filter of several chunks: 12-bit fingerprints in buckets of 2, over 1 MiB at 800,000 items.
fn large(items: u32) -> CfValue {
    filled(Settings::default().with_capacity(800_000).unwrap(), items)
}

fn cursor(iterator: i64) -> Cursor {
    Cursor::decode(iterator).expect("a dump's iterator")
}

/// The chunks with every iterator's stamp replaced: what two dumps that drew the same stamp give.
fn restamped(chunks: &[(i64, Vec<u8>)], stamp: u32) -> Vec<(i64, Vec<u8>)> {
    let restamp = |iterator| Cursor { stamp, ..cursor(iterator) }.encode();
    chunks.iter().map(|(iterator, data)| (restamp(*iterator), data.clone())).collect()
}

/// Loads every chunk into an empty key; the key's value, or the first error.
fn restore(chunks: &[(i64, Vec<u8>)]) -> Result<CfValue, CfError> {
    let mut key = None;
    chunks.iter().try_for_each(|(iterator, data)| load(&mut key, *iterator, data))?;
    Ok(key.expect("a header was loaded"))
}

/// The next iterator of a dump step that gives a chunk.
fn next(value: &CfValue, iterator: i64) -> i64 {
    match value.ready().unwrap().dump_step(iterator) {
        Ok(DumpStep::Chunk { next, .. }) => next,
        other => panic!("not a chunk: {other:?}"),
    }
}

#[test]
fn a_dump_spans_chunks_and_restores_exactly() {
    let value = large(800_000);
    let chunks = scandump(&value);
    assert!(chunks.len() > 2, "{} chunks", chunks.len());
    assert!(chunks.iter().all(|(_, data)| data.len() <= CHUNK_BYTES));
    // The AOF rewrite replays the same bytes at the same places, without a dump's stamp.
    let mut replayed = Vec::new();
    value.for_each_restore_chunk(|iterator, data| replayed.push((iterator, data.to_vec())));
    assert_eq!(replayed, restamped(&chunks, 0));

    let mut key = None;
    for (i, (iterator, data)) in chunks.iter().enumerate() {
        load(&mut key, *iterator, data).unwrap();
        let restored = key.as_ref().unwrap();
        let done = i + 1 == chunks.len();
        assert_eq!(restored.ready().is_ok(), done);
        if !done {
            // A restore in progress answers nothing but survives a save and an AOF rewrite, after
            // which its client's next chunks still fit.
            assert_eq!(restored.ready().err(), Some(CfError::RestoreInProgress));
            let saved = restored.to_saved();
            assert_eq!(CfValue::from_saved(&saved, Encoding::Checked).unwrap().to_saved(), saved);
            let mut rewritten = Vec::new();
            restored.for_each_restore_chunk(|iterator, data| rewritten.push((iterator, data.to_vec())));
            rewritten.extend_from_slice(&chunks[i + 1..]);
            assert_eq!(restore(&rewritten).unwrap().to_saved(), value.to_saved());
        }
    }
    assert_eq!(key.unwrap().to_saved(), value.to_saved());
}

#[test]
fn a_large_filter_is_cut_into_a_bounded_number_of_chunks() {
    for len in [1, CHUNK_BYTES, 5 * CHUNK_BYTES + 3, 32 * CHUNK_BYTES, 32 * CHUNK_BYTES + 1, 1 << 40] {
        let chunk = chunk_len(len);
        assert!(len.div_ceil(chunk) <= MAX_DATA_CHUNKS, "{len}");
        assert_eq!(chunk == CHUNK_BYTES, len <= MAX_DATA_CHUNKS * CHUNK_BYTES, "{len}");
    }
}

#[test]
fn iterators_name_a_position_and_a_stamp() {
    for stamp in [0, 1, MAX_STAMP] {
        for position in [0, 1, 2, 1 << 40, (1 << 40) + 1] {
            let iterator = Cursor { stamp, position }.encode();
            assert!(iterator >= 0);
            assert_eq!(Cursor::decode(iterator), Some(Cursor { stamp, position }));
        }
    }
    assert_eq!(Cursor::decode(-1), None);
    // A dump's stamp is never 0, whatever the write count.
    let mut value = reserved(Settings::default());
    for writes in [0, 1, MAX_STAMP - 1, MAX_STAMP, u32::MAX] {
        ready(&mut value).writes = writes;
        let stamp = cursor(next(&value, 0)).stamp;
        assert!((1..=MAX_STAMP).contains(&stamp), "{writes}: {stamp}");
    }
}

#[test]
fn a_dump_keeps_nothing_between_calls() {
    let value = large(100_000);
    let before = value.memory_usage();
    let mut iterator = next(&value, 0);
    for _ in 0..2 {
        iterator = next(&value, iterator);
        assert_eq!(value.memory_usage(), before);
    }
}

#[test]
fn a_write_ends_the_dump_in_progress() {
    let mut value = large(100_000);
    let after_header = next(&value, 0);
    let after_first = next(&value, after_header);
    ready(&mut value).add(b"written during the dump").unwrap();
    for iterator in [after_header, after_first] {
        assert_eq!(value.ready().unwrap().dump_step(iterator), Err(CfError::DumpOutdated));
    }
    // A write that changes nothing ends it too: the command does not know.
    let after_header = next(&value, 0);
    assert!(!ready(&mut value).delete(b"never added"));
    assert_eq!(value.ready().unwrap().dump_step(after_header), Err(CfError::DumpOutdated));
    // A new dump gives the filter as it is now.
    assert_eq!(restore(&scandump(&value)).unwrap().to_saved(), value.to_saved());
}

#[test]
fn a_restore_of_two_dumps_mixed_is_refused() {
    let mut value = large(300_000);
    let before = (scandump(&value), value.to_saved());
    ready(&mut value).add(b"one more").unwrap();
    let after = (scandump(&value), value.to_saved());
    assert_eq!(before.0.len(), after.0.len());
    for split in 1..before.0.len() {
        let mixed = [&before.0[..split], &after.0[split..]].concat();
        assert_eq!(restore(&mixed).err(), Some(CfError::OtherDump), "split at {split}");
        // Two dumps that drew the same stamp: bugu's checksum refuses the mixture, unless it is
        // one of the two filters.
        let mixed = [restamped(&before.0[..split], 7), restamped(&after.0[split..], 7)].concat();
        match restore(&mixed) {
            Ok(restored) => {
                let saved = restored.to_saved();
                assert!(saved == before.1 || saved == after.1, "split at {split}: a third filter");
            }
            Err(error) => assert_eq!(error, CfError::BadChunk, "split at {split}"),
        }
    }
}

#[test]
fn a_header_never_replaces_a_filter() {
    let source = filled(Settings::default(), 500);
    let chunks = scandump(&source);
    let (header_iterator, header) = &chunks[0];
    let mut key = Some(filled(Settings::default().with_bucket_size(4).unwrap(), 100));
    let before = key.as_ref().unwrap().to_saved();
    for (iterator, data) in [(*header_iterator, &header[..]), (1, &header[..]), (1, &b"not a header"[..])] {
        assert_eq!(load(&mut key, iterator, data), Err(CfError::Exists));
    }
    assert_eq!(key.unwrap().to_saved(), before);
    // A restore in progress may start over, even from another dump.
    let mut key = None;
    load(&mut key, 1, header).unwrap();
    for (iterator, data) in &chunks {
        load(&mut key, *iterator, data).unwrap();
    }
    assert_eq!(key.unwrap().to_saved(), source.to_saved());
}

#[test]
fn bad_chunks_are_refused_and_change_nothing() {
    let value = filled(Settings::default(), 500);
    let chunks = scandump(&value);
    assert_eq!(chunks.len(), 2);
    let ((first, header), (iterator, body)) = (&chunks[0], &chunks[1]);

    let mut key = None;
    assert_eq!(load(&mut key, *iterator, body), Err(CfError::InvalidPosition), "no restore started");
    assert_eq!(load(&mut key, *first, &header[1..]), Err(CfError::InvalidHeader));
    let mut bad_magic = header.clone();
    bad_magic[0] ^= 1;
    assert_eq!(load(&mut key, *first, &bad_magic), Err(CfError::InvalidHeader));
    assert!(key.is_none());

    load(&mut key, *first, header).unwrap();
    let started = key.as_ref().unwrap().to_saved();
    assert_eq!(load(&mut key, iterator + 1, body), Err(CfError::InvalidPosition));
    assert_eq!(load(&mut key, 0, body), Err(CfError::InvalidPosition));
    assert_eq!(load(&mut key, -5, body), Err(CfError::InvalidPosition));
    assert_eq!(load(&mut key, i64::MIN, body), Err(CfError::InvalidPosition));
    let other_dump = Cursor { stamp: cursor(*iterator).stamp % MAX_STAMP + 1, ..cursor(*iterator) };
    assert_eq!(load(&mut key, other_dump.encode(), body), Err(CfError::OtherDump));
    let mut corrupt = body.clone();
    corrupt[body.len() / 2] ^= 0x40;
    assert_eq!(load(&mut key, *iterator, &corrupt), Err(CfError::BadChunk));
    assert_eq!(key.as_ref().unwrap().to_saved(), started);
    // The right chunk still completes the restore.
    load(&mut key, *iterator, body).unwrap();
    assert_eq!(key.as_ref().unwrap().to_saved(), value.to_saved());
    // A chunk after the end, or one that continues a finished filter, is refused.
    assert_eq!(load(&mut key, *iterator, body), Err(CfError::InvalidPosition));
}

#[test]
fn a_header_must_match_the_filter() {
    let value = filled(Settings::default(), 10);
    let chunks = scandump(&value);
    let ((first, header), (iterator, body)) = (&chunks[0], &chunks[1]);
    // The header claims another MAXITERATIONS than the filter was built with.
    let mut other = header.clone();
    other[12..16].copy_from_slice(&21u32.to_le_bytes());
    let mut key = None;
    load(&mut key, *first, &other).unwrap();
    assert_eq!(load(&mut key, *iterator, body), Err(CfError::BadChunk));
}

#[test]
fn dump_iterators_out_of_range_are_refused() {
    let value = filled(Settings::default(), 10);
    let filter = value.ready().unwrap();
    let stamp = cursor(next(&value, 0)).stamp;
    let at = |position: i64| Cursor { stamp, position: position as u64 }.encode();
    let len = filter.filter.serialized_len() as i64;
    assert_eq!(filter.dump_step(at(1 + len)), Ok(DumpStep::Done));
    for bad in [-1, 1, 2, at(0), at(2), at(len), at(len + 2), i64::MIN] {
        assert_eq!(filter.dump_step(bad), Err(CfError::InvalidPosition), "{bad}");
    }
    // Another dump's iterators, at a position this one has.
    let other = Cursor { stamp: stamp % MAX_STAMP + 1, position: 1 }.encode();
    assert_eq!(filter.dump_step(other), Err(CfError::DumpOutdated));
}
