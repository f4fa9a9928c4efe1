use super::alloc::HUGE_PAGE_THRESHOLD;
use super::ops::ListFingerprints;
use super::probe::{FIXED_PROBES, SEMI_SORTED_13_KIND};
use super::*;
use proptest::prelude::*;

proptest! {
    // `contains_hash` loads without per-load checks; it must answer as the checked lookup
    // does, in every geometry (each probe arm), semi-sorted or not, at every bucket count.
    #[test]
    fn lookups_checked_once_answer_as_checked_ones(
        (slots, semi_sorted) in prop::sample::select(vec![(2usize, false), (4, false), (8, false), (4, true)]),
        bits in 4u32..=32,
        buckets in 1usize..40,
        writes in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<u32>()), 0..100),
        hashes in proptest::collection::vec(any::<u64>(), 1..50),
    ) {
        let mut table = Table::new(Geometry { buckets, slots, bits, semi_sorted }).unwrap();
        let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
        for (b, s, v) in writes {
            table.set(b % buckets, s % slots, v & mask);
        }
        for hash in hashes {
            let located = table.addressing().locate(hash);
            prop_assert_eq!(table.contains_hash(hash), table.contains_located(|| located));
            // Stored where a lookup looks, it is found.
            let (fingerprint, b1, _) = located;
            table.set(b1, 0, fingerprint);
            prop_assert!(table.contains_hash(hash));
        }
    }
}

/// [`ListFingerprints`] (`Matcher::fingerprints`, what the path search reads), checked to
/// list `slots` slots in `get`'s order with zeros after them.
fn listed_as_get(table: &Table, bucket: usize) -> bool {
    let (slots, listed) = table.probe(ListFingerprints(bucket));
    let expected: Vec<u32> =
        (0..MAX_LANES).map(|slot| if slot < slots { table.get(bucket, slot) } else { 0 }).collect();
    slots == table.slots() && listed[..] == expected[..]
}

/// The layouts that writes compiled per geometry run on (plain buckets of 2, 4 or 8 slots,
/// semi-sorted ones), at widths whose slots fall on and across byte and word boundaries, in
/// small tables.
fn small_geometries() -> impl Strategy<Value = Geometry> {
    (
        prop::sample::select(vec![(2usize, false), (4, false), (8, false), (4, true)]),
        prop::sample::select(vec![4u32, 8, 12, 13, 16, 20, 32]),
        1usize..20,
    )
        .prop_map(|((slots, semi_sorted), bits, buckets)| Geometry { buckets, slots, bits, semi_sorted })
}

/// Triples of raw numbers (a bucket, a slot or a second bucket, a fingerprint) that a test
/// reduces into its geometry.
fn triples(count: std::ops::Range<usize>) -> impl Strategy<Value = Vec<(usize, usize, u32)>> {
    proptest::collection::vec((any::<usize>(), any::<usize>(), any::<u32>()), count)
}

/// `raw` as a fingerprint of `geometry`: its low bits, never 0.
fn fingerprint_of(geometry: Geometry, raw: u32) -> u32 {
    (raw & (u32::MAX >> (32 - geometry.bits))).max(1)
}

proptest! {
    // `store_in_emptier` runs each geometry's own code; it must store exactly where the
    // generic probe and `set` would, and leave a table with both buckets full unchanged.
    #[test]
    fn the_insert_first_step_stores_where_the_generic_probe_and_set_would(
        geometry in small_geometries(),
        items in triples(1..120),
    ) {
        let (mut fast, mut generic) = (Table::new(geometry).unwrap(), Table::new(geometry).unwrap());
        let buckets = geometry.buckets;
        for (b1, b2, fingerprint) in items {
            let (b1, b2, fingerprint) = (b1 % buckets, b2 % buckets, fingerprint_of(geometry, fingerprint));
            let free = generic.free_slot_in_emptier(b1, b2);
            if let Some((bucket, slot)) = free {
                generic.set(bucket, slot, fingerprint);
            }
            prop_assert_eq!(fast.store_in_emptier(fingerprint, b1, b2), free.is_some());
            prop_assert!(fast == generic, "{:?} after storing {} in {}/{}", geometry, fingerprint, b1, b2);
        }
    }

    // `store_hash_in_emptier` locates by the table's addressing and, for the default geometry,
    // stores without checking the buckets again: it must store exactly where the checked
    // first step would at the located place, and give that place back when both are full.
    #[test]
    fn an_insert_by_hash_stores_where_the_checked_first_step_would(
        geometry in small_geometries(),
        hashes in proptest::collection::vec(any::<u64>(), 1..120),
    ) {
        let default = Geometry { slots: 4, bits: 12, semi_sorted: false, ..geometry };
        for geometry in [geometry, default] {
            let (mut fast, mut checked) = (Table::new(geometry).unwrap(), Table::new(geometry).unwrap());
            for &hash in &hashes {
                let located @ (fingerprint, b1, b2) = checked.addressing().locate(hash);
                let stored = checked.store_in_emptier(fingerprint, b1, b2);
                prop_assert_eq!(fast.store_hash_in_emptier(hash), if stored { Ok(()) } else { Err(located) });
                prop_assert!(fast == checked, "{:?} after storing hash {:#x}", geometry, hash);
            }
        }
    }

    // `set_if_empty` stores exactly when `get` finds the slot empty, as `set` would.
    #[test]
    fn a_store_into_an_empty_slot_is_get_then_set(
        geometry in small_geometries(),
        writes in triples(1..120),
    ) {
        let (mut fast, mut generic) = (Table::new(geometry).unwrap(), Table::new(geometry).unwrap());
        for (bucket, slot, fingerprint) in writes {
            let (bucket, slot) = (bucket % geometry.buckets, slot % geometry.slots);
            let fingerprint = fingerprint_of(geometry, fingerprint);
            let empty = generic.get(bucket, slot) == 0;
            if empty {
                generic.set(bucket, slot, fingerprint);
            }
            prop_assert_eq!(fast.set_if_empty(bucket, slot, fingerprint), empty);
            prop_assert!(fast == generic, "{:?} after storing {} in {}/{}", geometry, fingerprint, bucket, slot);
        }
    }

    // `remove_from_either` likewise: it empties the slot `find` gives in `b1`, else in `b2`.
    #[test]
    fn a_removal_empties_the_slot_the_generic_find_gives(
        geometry in small_geometries(),
        writes in triples(0..120),
        removals in triples(1..60),
    ) {
        let (buckets, slots) = (geometry.buckets, geometry.slots);
        let mut generic = Table::new(geometry).unwrap();
        // Small fingerprints, so that removals often find one.
        for (b, s, v) in writes {
            generic.set(b % buckets, s % slots, v % 8);
        }
        let mut fast = generic.clone();
        for (b1, b2, fingerprint) in removals {
            let (b1, b2, fingerprint) = (b1 % buckets, b2 % buckets, fingerprint % 8 + 1);
            let found = [b1, b2].into_iter().find_map(|b| generic.find(b, fingerprint).map(|s| (b, s)));
            if let Some((bucket, slot)) = found {
                generic.set(bucket, slot, 0);
            }
            prop_assert_eq!(fast.remove_from_either(fingerprint, b1, b2), found.is_some());
            prop_assert!(fast == generic, "{:?} after removing {} from {}/{}", geometry, fingerprint, b1, b2);
        }
    }
}

#[test]
#[should_panic(expected = "a bucket outside the table")]
fn the_insert_first_step_refuses_a_bucket_outside_the_table() {
    let mut table = Table::new(Geometry { buckets: 4, slots: 4, bits: 12, semi_sorted: false }).unwrap();
    table.store_in_emptier(1, 0, 4);
}

#[test]
fn each_hot_geometry_has_a_kind_of_its_own_and_the_others_share_one() {
    for (i, probe) in FIXED_PROBES.iter().enumerate() {
        assert_eq!(probe.kind(), i as Kind + 1);
    }
    for slots in [2, 4, 8] {
        for bits in 4..=32 {
            for semi_sorted in [false, slots == 4] {
                let kind =
                    Table::<Vec<u8>>::choose_probe(Geometry { buckets: 2, slots, bits, semi_sorted }).kind();
                let hot = if semi_sorted { bits == 13 } else { matches!(bits, 8 | 12 | 16) };
                assert_eq!(kind != ANY_GEOMETRY, hot, "{slots} x {bits} bits, semi-sorted {semi_sorted}");
            }
        }
    }
}

#[test]
fn each_hot_geometry_prefetches_at_the_places_its_table_gives() {
    for slots in [2, 4, 8] {
        for bits in [8, 12, 13, 16] {
            for semi_sorted in [false, slots == 4 && bits == 13] {
                let geometry = Geometry { buckets: 6, slots, bits, semi_sorted };
                let table = Table::new(geometry).unwrap();
                let Some(layout) = table.probe.fixed_layout() else { continue };
                assert_eq!(layout, (table.bucket_bits / 8, table.window_bytes), "{geometry:?}");
            }
        }
    }
    assert!(FIXED_PROBES.iter().all(|probe| probe.fixed_layout().is_some()));
}

/// Storage whose `AsRef` answers with fewer bytes after its first call.
struct Shrinking {
    bytes: Vec<u8>,
    calls: std::cell::Cell<usize>,
}

impl AsRef<[u8]> for Shrinking {
    fn as_ref(&self) -> &[u8] {
        self.calls.set(self.calls.get() + 1);
        if self.calls.get() == 1 { &self.bytes } else { &self.bytes[..1] }
    }
}

#[test]
#[should_panic(expected = "a table's storage shrank")]
fn a_storage_that_shrinks_stops_a_lookup_before_it_reads() {
    let geometry = Geometry { buckets: 1000, slots: 4, bits: 12, semi_sorted: false };
    let bytes = vec![0; Table::len_of(geometry)];
    let table = Table::from_bytes(Shrinking { bytes, calls: 0.into() }, geometry).unwrap();
    table.contains_hash(u64::MAX);
}

proptest! {
    #[test]
    fn every_geometry_behaves_like_an_array(
        slots in prop::sample::select(vec![2usize, 4, 8]),
        bits in 4u32..=32,
        buckets in 1usize..20,
        writes in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<u32>()), 0..200),
    ) {
        let mut table = Table::new(Geometry { buckets, slots, bits, semi_sorted: false }).unwrap();
        let mut model = vec![vec![0u32; slots]; buckets];
        let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
        for (b, s, v) in writes {
            let (b, s) = (b % buckets, s % slots);
            // Small values make repeats and empties common.
            let v = if v % 3 == 0 { v % 5 } else { v & mask };
            table.set(b, s, v);
            model[b][s] = v;
            for (bucket, expected) in model.iter().enumerate() {
                for (slot, &fp) in expected.iter().enumerate() {
                    prop_assert_eq!(table.get(bucket, slot), fp);
                }
                prop_assert!(listed_as_get(&table, bucket));
                let other = (bucket + 1) % buckets;
                // The emptier by the free slots' flags compared as numbers (a later slot
                // weighs more): the emptier by count while each bucket's free slots are
                // its last ones, as they stay until something empties an earlier slot.
                let flags = |b: usize| -> u32 {
                    model[b].iter().enumerate().filter(|&(_, &x)| x == 0).map(|(s, _)| 1 << s).sum()
                };
                let emptier = if flags(other) > flags(bucket) { other } else { bucket };
                let free = |b: usize| model[b].iter().filter(|&&x| x == 0).count();
                let free_slots_last = |b: usize| model[b].iter().skip_while(|&&x| x != 0).all(|&x| x == 0);
                if free_slots_last(bucket) && free_slots_last(other) {
                    prop_assert_eq!(emptier, if free(other) > free(bucket) { other } else { bucket });
                }
                let slot = model[emptier].iter().position(|&x| x == 0);
                prop_assert_eq!(table.free_slot_in_emptier(bucket, other), slot.map(|s| (emptier, s)));
                for probe in [0, 1, 2, 3, 4, v] {
                    prop_assert_eq!(table.find(bucket, probe), expected.iter().position(|&x| x == probe));
                    prop_assert_eq!(table.count(bucket, probe), expected.iter().filter(|&&x| x == probe).count());
                }
            }
        }
        prop_assert_eq!(table.payload().len(), (buckets * slots * bits as usize).div_ceil(8));
    }
}

proptest! {
    #[test]
    fn semi_sorted_buckets_behave_like_multisets(
        bits in 4u32..=32,
        buckets in 1usize..12,
        writes in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<u32>()), 0..200),
    ) {
        let mut table = Table::new(Geometry { buckets, slots: 4, bits, semi_sorted: true }).unwrap();
        let mut model = vec![[0u32; 4]; buckets];
        let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
        for (b, s, v) in writes {
            let (b, s) = (b % buckets, s % 4);
            let v = if v % 3 == 0 { v % 5 } else { v & mask };
            // Slot numbers are positions in the current (sorted) order: replace what is there.
            let replaced = table.get(b, s);
            let position = model[b].iter().position(|&x| x == replaced).unwrap();
            model[b][position] = v;
            table.set(b, s, v);
            for (bucket, expected) in model.iter().enumerate() {
                let mut stored: Vec<u32> = (0..4).map(|slot| table.get(bucket, slot)).collect();
                let mut wanted = expected.to_vec();
                stored.sort_unstable();
                wanted.sort_unstable();
                prop_assert_eq!(&stored, &wanted);
                prop_assert!(listed_as_get(&table, bucket));
                let other = (bucket + 1) % buckets;
                let free = |b: usize| model[b].iter().filter(|&&x| x == 0).count();
                let emptier = if free(other) > free(bucket) { other } else { bucket };
                match table.free_slot_in_emptier(bucket, other) {
                    Some((b, slot)) => prop_assert!(b == emptier && table.get(b, slot) == 0),
                    None => prop_assert_eq!(free(emptier), 0),
                }
                for probe in [0, 1, 2, 3, 4, v] {
                    let count = expected.iter().filter(|&&x| x == probe).count();
                    prop_assert_eq!(table.count(bucket, probe), count);
                    let found = table.find(bucket, probe);
                    prop_assert_eq!(found.is_some(), count > 0);
                    if let Some(slot) = found {
                        prop_assert_eq!(table.get(bucket, slot), probe);
                    }
                }
            }
        }
        prop_assert_eq!(table.payload().len(), (buckets * (4 * bits as usize - 4)).div_ceil(8));
    }
}

#[test]
fn a_borrowed_table_reads_like_the_owned_one() {
    let geometry = Geometry { buckets: 10, slots: 4, bits: 12, semi_sorted: false };
    let mut owned = Table::new(geometry).unwrap();
    owned.set(3, 1, 0xabc);
    let bytes = owned.bytes.clone();
    let view = Table::from_bytes(&bytes[..], geometry).unwrap();
    assert_eq!(view.get(3, 1), 0xabc);
    assert_eq!(view.find(3, 0xabc), Some(1));
    assert!(Table::from_bytes(&bytes[1..], geometry).is_none());
    let huge = Geometry { buckets: usize::MAX, slots: 8, bits: 32, semi_sorted: false };
    assert!(Table::from_bytes(&bytes[..], huge).is_none());
    assert!(huge.payload_len().is_none());
}

#[test]
fn buffers_are_zeroed_and_exact() {
    // Below and above the huge-page threshold (the second is advised before it is read; Miri,
    // which compiles the advice out, would take minutes to read 4 MiB byte by byte).
    let large = if cfg!(miri) { 4096 } else { HUGE_PAGE_THRESHOLD + 12_345 };
    for len in [1, PADDING, 1000, large] {
        let buffer = zeroed_buffer::<u8>(len).unwrap();
        assert_eq!((buffer.len(), buffer.capacity()), (len, len));
        assert!(buffer.iter().all(|&b| b == 0));
        let reserved = reserve_buffer(len).unwrap();
        assert_eq!((reserved.len(), reserved.capacity()), (0, len));
        // Words too (the shared table's), aligned for them.
        let words = zeroed_buffer::<std::sync::atomic::AtomicU64>(len).unwrap();
        assert_eq!((words.len(), words.as_ptr() as usize % 8), (len, 0));
        assert!(words.iter().all(|word| word.load(std::sync::atomic::Ordering::Relaxed) == 0));
    }
    assert!(zeroed_buffer::<u8>(0).unwrap().is_empty());
    assert!(zeroed_buffer::<std::sync::atomic::AtomicU64>(usize::MAX / 4).is_err());
}

#[test]
#[cfg(target_pointer_width = "64")]
#[cfg_attr(miri, ignore = "miri reports an allocation this large as resource exhaustion")]
fn a_table_larger_than_any_address_space_is_an_error_not_an_abort() {
    // 2^58 buckets of 4 x 8 bits: 2^60 bytes, a valid geometry, but no machine maps more than
    // 2^57 bytes for a process, whatever its overcommit policy: the allocator must refuse.
    let geometry = Geometry { buckets: 1 << 58, slots: 4, bits: 8, semi_sorted: false };
    let bytes = (1 << 60) + PADDING;
    assert_eq!(geometry.payload_len(), Some(1 << 60));
    assert_eq!(Table::new(geometry).err(), Some(AllocFailed { bytes }));
    assert_eq!(reserve_buffer(bytes).err(), Some(AllocFailed { bytes }));
    // A table is still built after a refusal.
    assert!(Table::new(Geometry { buckets: 2, slots: 4, bits: 8, semi_sorted: false }).is_ok());
}

fn probe_of(slots: usize, bits: u32) -> Probe {
    Table::new(Geometry { buckets: 2, slots, bits, semi_sorted: false }).unwrap().probe
}

#[test]
fn the_default_kind_is_the_default_geometry() {
    assert_eq!(FIXED_PROBES[DEFAULT_KIND as usize - 1], Probe::Slots4Bits12);
    assert_eq!(FIXED_PROBES[SEMI_SORTED_13_KIND as usize - 1], Probe::SemiSorted13);
    let default = crate::config::Builder::new().capacity(100).config().unwrap();
    let table = Table::new(Geometry {
        buckets: default.buckets,
        slots: default.bucket_size,
        bits: default.fingerprint_bits,
        semi_sorted: default.semi_sorted,
    })
    .unwrap();
    assert_eq!(table.kind(), DEFAULT_KIND);
}

#[test]
fn probes_are_chosen_by_bucket_width() {
    assert_eq!(probe_of(4, 12), Probe::Slots4Bits12);
    assert_eq!(probe_of(8, 16), Probe::Slots8Bits16);
    assert!(matches!(probe_of(4, 13), Probe::Word64(_)));
    assert!(matches!(probe_of(4, 15), Probe::Word64(_)));
    assert!(matches!(probe_of(4, 14), Probe::Bytes64(_, 7)));
    assert!(matches!(probe_of(2, 32), Probe::Bytes64(_, 8)));
    assert!(matches!(probe_of(2, 31), Probe::Word128(_)));
    assert!(matches!(probe_of(8, 15), Probe::Bytes128(_, 15)));
    assert!(matches!(probe_of(4, 17), Probe::Word128(_)));
    assert!(matches!(probe_of(4, 18), Probe::Bytes128(_, 9)));
    assert!(matches!(probe_of(4, 32), Probe::Bytes128(_, 16)));
    assert!(matches!(probe_of(8, 17), Probe::Slotwise));
}
