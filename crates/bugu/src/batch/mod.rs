//! Software pipelining for batched operations.
//!
//! A lookup in a large table waits on two cache misses. Processed one by one, the CPU overlaps only
//! the few lookups its reorder window can hold; in a batch we know the upcoming items, so we locate
//! them a block ahead and prefetch their buckets, and by the time an item is processed its cache
//! lines are (mostly) there. Results are exactly those of one-by-one calls, in order.
//!
//! - [`in_blocks`] drives lookups and inserts alike: while one block of items is processed, the
//!   next block is already located and its items' buckets are prefetched one per item processed,
//!   so that the prefetches are spread over the work (a whole block's prefetches issued at once
//!   found the CPU's line fill buffers full and waited); an insert can look at the item half a
//!   block ahead, whose buckets have arrived, to fetch what its path search will read. Blocks
//!   are [`LOOKAHEAD`] items, or [`FAR_LOOKAHEAD`] for lookups in large tables.
//! - [`block_locator`] locates a whole block at once, its hashes, fingerprints and buckets computed
//!   lane by lane in vector registers where the CPU has AVX2 (`locate`): hashing and placing an
//!   item one at a time was a large share of a batched lookup's work.
//!
//! The loops are plain loops over arrays: a ring of located items fed by an iterator cost far
//! more work per batched lookup (measured: `docs/performance.md`).

mod locate;

pub(crate) use locate::block_locator;

use crate::hash::LocatedBlock;

/// Items per block: how far ahead items are located and prefetched. Sixteen items are 32 cache
/// lines in flight: enough for inserts, and for lookups in tables the caches mostly hold.
pub(crate) const LOOKAHEAD: usize = 16;

/// Items per block for lookups in tables of [`FAR_LOOKAHEAD_FROM_BYTES`] or more: where most
/// lookups go to the L3 or to memory, more misses in flight hide more of the wait, while in
/// tables the caches mostly hold the longer look-ahead only adds work (`docs/performance.md`).
pub(crate) const FAR_LOOKAHEAD: usize = 32;

/// The table size from which lookups look [`FAR_LOOKAHEAD`] items ahead: between the sizes
/// measured to gain (15 MiB) and to lose (1.5 and 3 MiB).
pub(crate) const FAR_LOOKAHEAD_FROM_BYTES: usize = 8 << 20;

pub(crate) use crate::hash::Located;

/// Sets `outputs[i] = process(state, located)` for each item `i` of `items`, in order, where
/// `located` is the item's place. The items are placed a block of `N` at a time ([`LOOKAHEAD`]
/// or [`FAR_LOOKAHEAD`]), a block ahead, by `locate_block`; while one block is processed, each
/// step calls `prefetch` for one item of the next, so that the prefetches are spread over the
/// work (a whole block's prefetches issued at once found the CPU's line fill buffers full and
/// waited). Just before
/// `process`, if there is an item half a block further on, it calls `ahead(state, its place)`:
/// that item's buckets have arrived by then, and an insert near capacity fetches what its path
/// search would read next. `state` is what all of them read and `process` changes (the filter an
/// insert writes to).
///
/// `ahead` is a closure of its own so that what it does not use costs nothing: lookups pass one
/// that does nothing, and inserts fetch only once the table is three quarters full. Computed for
/// every item and passed to `process`, the look-ahead and the check were a sizeable share of a
/// batched insert's work, even in a half-full table that never needs them.
///
/// # Panics
/// If `outputs` is shorter than `items` (callers size it from `items`).
#[inline(always)]
pub(crate) fn in_blocks<const N: usize, S: ?Sized, T, O>(
    state: &mut S,
    items: &[T],
    outputs: &mut [O],
    locate_block: impl Fn(&S, &[T], &mut LocatedBlock<N>),
    prefetch: impl Fn(&S, Located),
    ahead: impl Fn(&S, Located),
    mut process: impl FnMut(&mut S, Located) -> O,
) {
    let mut outputs = outputs[..items.len()].chunks_mut(N);
    let mut blocks = items.chunks(N);
    let Some(first) = blocks.next() else { return };
    // Two blocks' places, swapped by reference: copying the next block into the current one
    // would add a `memcpy` a block.
    let mut located = (LocatedBlock::default(), LocatedBlock::default());
    let (mut current, mut next) = (&mut located.0, &mut located.1);
    locate_block(state, first, current);
    for i in 0..first.len().min(N) {
        prefetch(state, current.get(i));
    }
    // Each block of outputs is as long as its block of items.
    for current_outputs in outputs.by_ref() {
        let upcoming = blocks.next().unwrap_or(&[]);
        // `next` holds the block before last: only what this pass writes is read below.
        if !upcoming.is_empty() {
            locate_block(state, upcoming, next);
        }
        let current_len = current_outputs.len();
        // Zipped with `0..N`, which tells the compiler `i < N`: `enumerate().take(N)` did too,
        // but compiled to more instructions an item.
        for (output, i) in current_outputs.iter_mut().zip(0..N) {
            if i < upcoming.len() {
                prefetch(state, next.get(i));
            }
            // Past this block, the item half a block on is in the next one, located above.
            let half_ahead = i + N / 2;
            let located_ahead = if half_ahead < current_len {
                current.try_get(half_ahead)
            } else {
                half_ahead.checked_sub(N).filter(|&j| j < upcoming.len()).and_then(|j| next.try_get(j))
            };
            if let Some(located_ahead) = located_ahead {
                ahead(state, located_ahead);
            }
            *output = process(state, current.get(i));
        }
        std::mem::swap(&mut current, &mut next);
    }
}

/// Lookups through [`in_blocks`]: `answers[i] = answer(place of items[i])`, with no state and
/// no look-ahead.
#[inline(always)]
pub(crate) fn answer_in_blocks<const N: usize, T, A>(
    items: &[T],
    answers: &mut [A],
    locate_block: impl Fn(&[T], &mut LocatedBlock<N>),
    prefetch: impl Fn(Located),
    answer: impl Fn(Located) -> A,
) {
    in_blocks(
        &mut (),
        items,
        answers,
        |_, items, block| locate_block(items, block),
        |_, located| prefetch(located),
        |_, _| {},
        |_, located| answer(located),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};

    /// The place a test gives item `x`.
    fn place(x: u64) -> Located {
        (x as u32, 2 * x as usize, 2 * x as usize + 1)
    }

    #[test]
    #[should_panic(expected = "out of range for slice of length 2")]
    fn too_few_outputs_panic_before_anything_is_located() {
        in_blocks::<LOOKAHEAD, _, _, _>(
            &mut (),
            &[1u64, 2, 3],
            &mut [false; 2],
            |_, _, _| panic!("located"),
            |_, _| {},
            |_, _| {},
            |_, _| true,
        );
    }

    #[test]
    fn processes_every_item_in_order_whatever_the_length() {
        processes_every_item_in_order::<LOOKAHEAD>();
        processes_every_item_in_order::<FAR_LOOKAHEAD>();
    }

    fn processes_every_item_in_order<const N: usize>() {
        for len in [0, 1, N / 2, N - 1, N, N + 1, 2 * N, 3 * N + 5] {
            let input: Vec<u64> = (0..len as u64).collect();
            let blocks = RefCell::new(Vec::new());
            let prefetched = RefCell::new(Vec::new());
            let aheads = RefCell::new(Vec::new());
            let mut outputs = vec![None; len];
            let processed = Cell::new(0);
            in_blocks::<N, _, _, _>(
                &mut (),
                &input,
                &mut outputs,
                |_, items, block| {
                    blocks.borrow_mut().push(items.to_vec());
                    for (i, &x) in items.iter().enumerate() {
                        (block.fingerprints[i], block.primaries[i], block.alternates[i]) = place(x);
                    }
                },
                |_, located| prefetched.borrow_mut().push(located),
                |_, located| aheads.borrow_mut().push(located),
                |_, located| {
                    let i = processed.get();
                    // Item `i` was prefetched before it is processed, and at most two blocks ahead.
                    let prefetches = prefetched.borrow().len();
                    assert!(prefetches > i && prefetches <= (i / N + 2) * N, "item {i}: {prefetches}");
                    // Just before, `ahead` saw the item half a block on, if there is one.
                    assert_eq!(aheads.borrow_mut().pop(), input.get(i + N / 2).map(|&x| place(x)));
                    processed.set(i + 1);
                    Some(located)
                },
            );
            let expected: Vec<Located> = input.iter().map(|&x| place(x)).collect();
            assert_eq!(outputs, expected.iter().copied().map(Some).collect::<Vec<_>>());
            assert_eq!(prefetched.into_inner(), expected, "each item prefetched once, in order");
            let chunks: Vec<Vec<u64>> = input.chunks(N).map(<[u64]>::to_vec).collect();
            assert_eq!(blocks.into_inner(), chunks, "each block located once, in order");
        }
    }
}
