//! Software pipelining for batched operations.
//!
//! A lookup in a large table waits on two cache misses. Processed one by one, the CPU overlaps only
//! the few lookups its reorder window can hold; in a batch we know the upcoming items, so we locate
//! each one a block ahead and prefetch its buckets, and by the time it is processed its cache
//! lines are (mostly) there. Results are exactly those of one-by-one calls, in order.
//!
//! Both helpers locate one item (hash it, place it, prefetch its buckets) per item processed, so
//! that the prefetches are spread over the work: a whole block's prefetches issued at once found
//! the CPU's line fill buffers full and waited.
//! - [`located_ahead`], for lookups, keeps the places in a ring of [`LOOKAHEAD`] slots: item `i`
//!   is answered from its slot while item `i + LOOKAHEAD` is located into it. One plain loop, no
//!   block boundaries, no bounds checks: a batched lookup of a `u64` key took 98 instructions
//!   in blocks (below), 73 with the ring and the default geometry's prefetches compiled for it
//!   (`Table::contains_pipelined`).
//! - [`in_blocks`], for inserts, takes the items in blocks of [`LOOKAHEAD`]: while one block is
//!   processed, the next is located, and an insert can look at the item half a block ahead,
//!   whose buckets have arrived, to fetch what its path search will read.
//!
//! Both loops are plain loops over arrays: a ring of located items fed by an iterator took 160
//! instructions per batched lookup (`docs/bench/lookup-loads.md`).

/// Items per block: how far ahead items are located and prefetched. Sixteen items are 32 cache
/// lines in flight: enough to cover memory latency, few enough to stay in L1.
pub(crate) const LOOKAHEAD: usize = 16;

/// Calls `process(state, i, located)` for each item `i` of `items`, in order, where `located` is
/// `locate(state, &items[i])`, computed about a block earlier. Just before, if there is an item
/// half a block further on, it calls `ahead(state, its located value)`: that item's buckets have
/// arrived by then, and an insert near capacity fetches what its path search would read next.
/// `state` is what all three read and `process` changes (the filter an insert writes to).
///
/// `ahead` is a closure of its own so that what it does not use costs nothing: inserts fetch
/// only once the table is three quarters full. Computed for every item and passed to
/// `process`, the look-ahead and the check took about 45 of the 242 instructions of a batched
/// insert of a `u64` key into a half-full table (now 193, `docs/bench/README.md`).
#[inline(always)]
pub(crate) fn in_blocks<S: ?Sized, T, L: Copy + Default>(
    state: &mut S,
    items: &[T],
    locate: impl Fn(&S, &T) -> L,
    ahead: impl Fn(&S, L),
    mut process: impl FnMut(&mut S, usize, L),
) {
    let mut blocks = items.chunks(LOOKAHEAD);
    let Some(first) = blocks.next() else { return };
    // Two blocks' places, swapped by reference: copying the next block into the current one
    // and zeroing the next (a `memcpy` and a `memset` a block) cost 3 of the 190 instructions of a
    // batched insert into a half-full table.
    let mut blocks_located = ([L::default(); LOOKAHEAD], [L::default(); LOOKAHEAD]);
    let (mut current, mut next) = (&mut blocks_located.0, &mut blocks_located.1);
    for (slot, item) in current.iter_mut().zip(first) {
        *slot = locate(state, item);
    }
    let (mut current_len, mut start) = (first.len(), 0);
    loop {
        let upcoming = blocks.next().unwrap_or(&[]);
        // `next` holds the block before last: only what this pass writes is read below.
        for (i, &located) in current.iter().take(current_len).enumerate() {
            if let (Some(item), Some(slot)) = (upcoming.get(i), next.get_mut(i)) {
                *slot = locate(state, item);
            }
            let half_ahead = i + LOOKAHEAD / 2;
            // Without indexing that could panic, so that the compiler drops all of this for an
            // `ahead` that does nothing. Past this block, the place is in the next one, already
            // located (`half_ahead - LOOKAHEAD < i`).
            let located_ahead = if half_ahead < current_len {
                current.get(half_ahead)
            } else {
                half_ahead.checked_sub(LOOKAHEAD).filter(|&j| j < upcoming.len()).and_then(|j| next.get(j))
            };
            if let Some(&located_ahead) = located_ahead {
                ahead(state, located_ahead);
            }
            process(state, start + i, located);
        }
        if upcoming.is_empty() {
            return;
        }
        std::mem::swap(&mut current, &mut next);
        (current_len, start) = (upcoming.len(), start + LOOKAHEAD);
    }
}

/// Sets `answers[i] = answer(located)` for each item `i`, in order, where `located` is
/// `locate(&items[i])`, computed [`LOOKAHEAD`] items earlier (or first, for the first
/// `LOOKAHEAD` items): a lookup's pipeline, which only reads. The places wait in a ring, item
/// `i`'s in slot `i % LOOKAHEAD`, which item `i + LOOKAHEAD`'s takes over as it is read.
///
/// # Panics
/// If `answers` is shorter than `items` (callers size it from `items`).
#[inline(always)]
pub(crate) fn located_ahead<T, L: Copy + Default, A>(
    items: &[T],
    answers: &mut [A],
    locate: impl Fn(&T) -> L,
    answer: impl Fn(L) -> A,
) {
    let answers = &mut answers[..items.len()];
    let mut ring = [L::default(); LOOKAHEAD];
    let (first, later) = items.split_at(items.len().min(LOOKAHEAD));
    for (slot, item) in ring.iter_mut().zip(first) {
        *slot = locate(item);
    }
    // Item `i` is answered while item `i + LOOKAHEAD` is located into its slot.
    let (steady, last) = answers.split_at_mut(later.len());
    for (i, (out, item)) in steady.iter_mut().zip(later).enumerate() {
        let located = std::mem::replace(&mut ring[i % LOOKAHEAD], locate(item));
        *out = answer(located);
    }
    for (i, out) in last.iter_mut().enumerate() {
        *out = answer(ring[(later.len() + i) % LOOKAHEAD]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_every_item_in_order_from_a_place_located_at_most_a_ring_earlier() {
        for len in [0, 1, LOOKAHEAD - 1, LOOKAHEAD, LOOKAHEAD + 1, 2 * LOOKAHEAD, 3 * LOOKAHEAD + 5] {
            let input: Vec<u64> = (0..len as u64).collect();
            let located = std::cell::RefCell::new(Vec::new());
            let answered = std::cell::Cell::new(0);
            let mut answers = vec![u64::MAX; len];
            located_ahead(
                &input,
                &mut answers,
                |&x| {
                    located.borrow_mut().push(x);
                    x * 2
                },
                |place| {
                    let i = answered.get();
                    answered.set(i + 1);
                    // Item `i` (its place is `2i`) was located, and no more than a ring ahead.
                    assert_eq!(place, 2 * i as u64);
                    let calls = located.borrow().len();
                    assert!(calls > i && calls <= i + 1 + LOOKAHEAD, "item {i} after {calls} locates");
                    place + 1
                },
            );
            assert_eq!(located.into_inner(), input, "each item located once, in order");
            assert_eq!(answers, input.iter().map(|x| 2 * x + 1).collect::<Vec<_>>());
        }
    }

    #[test]
    #[should_panic(expected = "out of range for slice of length 2")]
    fn too_few_answers_panic_before_anything_is_located() {
        located_ahead(&[1u64, 2, 3], &mut [false; 2], |_| panic!("located"), |_: ()| true);
    }

    #[test]
    fn processes_every_item_in_order_whatever_the_length() {
        for len in [0, 1, LOOKAHEAD / 2, LOOKAHEAD - 1, LOOKAHEAD, LOOKAHEAD + 1, 3 * LOOKAHEAD + 5] {
            let input: Vec<u64> = (0..len as u64).collect();
            let located = std::cell::RefCell::new(Vec::new());
            let mut output = Vec::new();
            let calls = std::cell::Cell::new(0);
            let aheads = std::cell::RefCell::new(Vec::new());
            in_blocks(
                &mut output,
                &input,
                |_, &x| {
                    calls.set(calls.get() + 1);
                    located.borrow_mut().push(x);
                    x * 2
                },
                |_, x| aheads.borrow_mut().push(x),
                |output, i, item| {
                    // Each item was located before it is processed, at most two blocks before.
                    assert!(calls.get() > i && calls.get() <= i + 2 * LOOKAHEAD);
                    // Just before, `ahead` saw the item half a block on, if there is one.
                    let expected_ahead = input.get(i + LOOKAHEAD / 2).map(|x| x * 2);
                    assert_eq!(aheads.borrow_mut().pop(), expected_ahead);
                    output.push((i, item / 2));
                },
            );
            assert_eq!(located.into_inner(), input);
            assert_eq!(output, input.iter().enumerate().map(|(i, &x)| (i, x)).collect::<Vec<_>>());
        }
    }
}
