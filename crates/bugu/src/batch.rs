//! Software pipelining for batched operations.
//!
//! A lookup in a large table waits on two cache misses. Processed one by one, the CPU overlaps only
//! the few lookups its reorder window can hold; in a batch we know the upcoming items, so we locate
//! each one [`LOOKAHEAD`] items early and prefetch its buckets, and by the time it is processed its
//! cache lines are (mostly) there. Results are exactly those of one-by-one calls, in order.

/// How many items ahead of the one being processed are located and prefetched. Sixteen items are
/// 32 cache lines in flight: enough to cover memory latency, few enough to stay in L1.
pub(crate) const LOOKAHEAD: usize = 16;

/// A ring of located items running [`LOOKAHEAD`] positions ahead of the consumer. Plain slots
/// and two counters (no `Option` per slot): the ring is on the hot path of every batched call.
pub(crate) struct Lookahead<L, I> {
    ring: [L; LOOKAHEAD],
    /// Items handed out so far.
    next: usize,
    /// Items located so far (at most `next + LOOKAHEAD`).
    located: usize,
    hashes: I,
}

impl<L: Copy + Default, I: Iterator<Item = u64>> Lookahead<L, I> {
    /// Locates (and prefetches, via `locate`) the first [`LOOKAHEAD`] items.
    pub(crate) fn new(hashes: impl IntoIterator<IntoIter = I>, mut locate: impl FnMut(u64) -> L) -> Self {
        let mut hashes = hashes.into_iter();
        let mut ring = [L::default(); LOOKAHEAD];
        let mut located = 0;
        for (slot, hash) in ring.iter_mut().zip(&mut hashes) {
            *slot = locate(hash);
            located += 1;
        }
        Lookahead { ring, next: 0, located, hashes }
    }

    /// The located item `distance` (< [`LOOKAHEAD`]) positions after the one [`next`](Self::next)
    /// will return, if there is one.
    #[inline(always)]
    pub(crate) fn peek(&self, distance: usize) -> Option<&L> {
        debug_assert!(distance < LOOKAHEAD);
        (self.next + distance < self.located).then(|| &self.ring[(self.next + distance) % LOOKAHEAD])
    }

    /// The next located item, in input order; locates the item [`LOOKAHEAD`] further on.
    #[inline(always)]
    pub(crate) fn next(&mut self, locate: impl FnOnce(u64) -> L) -> Option<L> {
        if self.next == self.located {
            return None;
        }
        let slot = &mut self.ring[self.next % LOOKAHEAD];
        let current = *slot;
        if let Some(hash) = self.hashes.next() {
            *slot = locate(hash);
            self.located += 1;
        }
        self.next += 1;
        Some(current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yields_every_item_in_order_whatever_the_length() {
        for len in [0, 1, LOOKAHEAD - 1, LOOKAHEAD, LOOKAHEAD + 1, 3 * LOOKAHEAD + 5] {
            let input: Vec<u64> = (0..len as u64).collect();
            let mut ahead = Lookahead::new(input.iter().copied(), |h| h * 2);
            let mut output = Vec::new();
            loop {
                let peeked = ahead.peek(3).copied();
                let Some(located) = ahead.next(|h| h * 2) else { break };
                assert_eq!(peeked, input.get(output.len() + 3).map(|h| h * 2));
                output.push(located / 2);
            }
            assert_eq!(output, input);
        }
    }
}
