//! Software pipelining for batched operations.
//!
//! A lookup in a large table waits on two cache misses. Processed one by one, the CPU overlaps only
//! the few lookups its reorder window can hold; in a batch we know the upcoming items, so we locate
//! each one a block ahead and prefetch its buckets, and by the time it is processed its cache
//! lines are (mostly) there. Results are exactly those of one-by-one calls, in order.
//!
//! [`in_blocks`] takes the items in blocks of [`LOOKAHEAD`]: while one block is processed, in
//! order, the next one is located (hashed, placed, its buckets prefetched), one item of it per item
//! processed. The blocks are plain arrays and the loops plain loops: a ring of located items fed
//! by an iterator, which it replaced, took 160 instructions per batched lookup of a `u64` key
//! against 98 now (`docs/bench/lookup-loads.md`). One located item per processed item spreads the
//! prefetches over the work: a whole block's prefetches issued at once found the CPU's line fill
//! buffers full and waited.

/// Items per block: how far ahead items are located and prefetched. Sixteen items are 32 cache
/// lines in flight: enough to cover memory latency, few enough to stay in L1.
pub(crate) const LOOKAHEAD: usize = 16;

/// Calls `process(state, i, located, half_ahead)` for each item `i` of `items`, in order, where
/// `located` is `locate(state, &items[i])`, computed about a block earlier, and `half_ahead` the
/// located item half a block further on, if there is one (its buckets have arrived by then: an
/// insert fetches what that item's path search would read next). `state` is what both read and
/// `process` changes (the filter an insert writes to).
#[inline(always)]
pub(crate) fn in_blocks<S: ?Sized, T, L: Copy + Default>(
    state: &mut S,
    items: &[T],
    locate: impl Fn(&S, &T) -> L,
    mut process: impl FnMut(&mut S, usize, L, Option<L>),
) {
    let mut blocks = items.chunks(LOOKAHEAD);
    let Some(first) = blocks.next() else { return };
    let mut current = [L::default(); LOOKAHEAD];
    for (slot, item) in current.iter_mut().zip(first) {
        *slot = locate(state, item);
    }
    let (mut current_len, mut start) = (first.len(), 0);
    loop {
        let upcoming = blocks.next().unwrap_or(&[]);
        let mut next = [L::default(); LOOKAHEAD];
        for (i, &located) in current.iter().take(current_len).enumerate() {
            if let (Some(item), Some(slot)) = (upcoming.get(i), next.get_mut(i)) {
                *slot = locate(state, item);
            }
            let ahead = i + LOOKAHEAD / 2;
            // Without indexing that could panic, so that the compiler drops all of this for a
            // `process` that ignores it.
            let half_ahead = if ahead < current_len {
                current.get(ahead).copied()
            } else {
                // In the next block, at a place already located (`ahead - LOOKAHEAD < i`).
                ahead
                    .checked_sub(LOOKAHEAD)
                    .filter(|&j| j < upcoming.len())
                    .and_then(|j| next.get(j).copied())
            };
            process(state, start + i, located, half_ahead);
        }
        if upcoming.is_empty() {
            return;
        }
        (current, current_len, start) = (next, upcoming.len(), start + LOOKAHEAD);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processes_every_item_in_order_whatever_the_length() {
        for len in [0, 1, LOOKAHEAD / 2, LOOKAHEAD - 1, LOOKAHEAD, LOOKAHEAD + 1, 3 * LOOKAHEAD + 5] {
            let input: Vec<u64> = (0..len as u64).collect();
            let located = std::cell::RefCell::new(Vec::new());
            let mut output = Vec::new();
            let calls = std::cell::Cell::new(0);
            in_blocks(
                &mut output,
                &input,
                |_, &x| {
                    calls.set(calls.get() + 1);
                    located.borrow_mut().push(x);
                    x * 2
                },
                |output, i, item, half_ahead| {
                    // Each item was located before it is processed, at most two blocks before.
                    assert!(calls.get() > i && calls.get() <= i + 2 * LOOKAHEAD);
                    assert_eq!(half_ahead, input.get(i + LOOKAHEAD / 2).map(|x| x * 2));
                    output.push((i, item / 2));
                },
            );
            assert_eq!(located.into_inner(), input);
            assert_eq!(output, input.iter().enumerate().map(|(i, &x)| (i, x)).collect::<Vec<_>>());
        }
    }
}
