//! The insert path of an [`ExpandingFilter`]: placing an entry (in the emptier bucket, by a path
//! of moves, or in the stash), and growing (splitting buckets under the split pointer).

use super::table::SLOTS;
use super::{Entry, ExpandingFilter};

/// How many entries an insert moves before it stashes the one it carries.
const MAX_KICKS: usize = 500;

/// Stashed entries past which inserts split more buckets than the load asks for, until the
/// stash drains.
const STASH_TARGET: usize = 8;

/// The most extra splits one insert makes to drain the stash: splits cannot separate copies of
/// one item, so a stash of those must not make an insert split without end.
const STASH_SPLITS: usize = 16;

impl ExpandingFilter {
    fn next_random(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    /// Stores an entry in a free slot of either of its buckets; else moves entries to make room;
    /// the entry left without a place then goes to the stash.
    fn place(&mut self, entry: Entry) {
        if entry.depth < self.level {
            // Stashed while its bucket's round ran, it misses the bits the table now uses.
            return self.place_as_twins(entry);
        }
        if let Some(sides) = self.store_in_emptier(entry) {
            self.kick_in(entry, sides);
        }
    }

    /// Stores an entry in the emptier of its buckets when either has room: keeping the two
    /// sides balanced keeps later kicks short, above all in the buckets a round has not split
    /// yet, which hold the most. Otherwise gives back its sides that have a bucket.
    pub(super) fn store_in_emptier(&mut self, entry: Entry) -> Option<[Option<Entry>; 2]> {
        let sides = [entry, self.other_side(entry)];
        let located = sides.map(|side| self.locate(side).map(|at| (side, at)));
        let free = located
            .map(|at| at.map_or(0, |(_, (bucket, _))| self.segments.free_lanes(self.segments.read(bucket))));
        let emptier = usize::from(free[1].count_ones() > free[0].count_ones());
        match located[emptier] {
            Some((side, (bucket, level))) if free[emptier] != 0 => {
                let slot = self.segments.first_slot(free[emptier]);
                let stored = self.encode(side, level);
                self.segments.set(bucket, slot, stored);
                None
            }
            _ => Some(located.map(|at| at.map(|(side, _)| side))),
        }
    }

    /// Stores an entry whose buckets are full by moving entries along a path; the entry left
    /// without a place at its end goes to the stash.
    pub(super) fn kick_in(&mut self, entry: Entry, sides: [Option<Entry>; 2]) {
        let mut carried = match sides {
            [Some(first), Some(second)] => [first, second][self.next_random() as usize % 2],
            [Some(side), None] | [None, Some(side)] => side,
            // Twins of this round known to neither side's half: give each half its own.
            [None, None] => return self.place_as_twins(entry),
        };
        for _ in 0..MAX_KICKS {
            let (bucket, level) = self.locate(carried).expect("carried entries are located");
            let words = self.segments.read(bucket);
            let free = self.segments.free_lanes(words);
            if free != 0 {
                let slot = self.segments.first_slot(free);
                self.segments.set(bucket, slot, self.encode(carried, level));
                return;
            }
            // Each entry here seen from its other bucket, where it could go. (Filled in place: an
            // array built by `from_fn` was copied out with a call to `memcpy` at every step.)
            let mut moves: [Option<(Entry, (usize, u32))>; SLOTS] = [None; SLOTS];
            for (slot, place) in moves.iter_mut().enumerate() {
                let moved = self.other_side(self.decode(bucket, level, self.segments.entry(words, slot)));
                *place = self.locate(moved).map(|at| (moved, at));
            }
            // One step ahead: an entry whose other bucket has room ends the path now. The four
            // reads are independent, so they cost about one random access, and paths get short.
            let room = moves.iter().enumerate().find_map(|(slot, &candidate)| {
                let (moved, (to_bucket, to_level)) = candidate?;
                let free = self.segments.free_lanes(self.segments.read(to_bucket));
                (free != 0).then(|| (slot, moved, to_bucket, to_level, self.segments.first_slot(free)))
            });
            if let Some((slot, moved, to_bucket, to_level, free_slot)) = room {
                self.segments.set(to_bucket, free_slot, self.encode(moved, to_level));
                self.segments.set(bucket, slot, self.encode(carried, level));
                return;
            }
            let start = self.next_random() as usize;
            let victim =
                (0..SLOTS).map(|i| (start + i) % SLOTS).find_map(|slot| Some((slot, moves[slot]?.0)));
            let Some((slot, moved)) = victim else { break };
            self.segments.set(bucket, slot, self.encode(carried, level));
            carried = moved;
        }
        self.stash.push(carried);
    }

    /// Stores an entry that knows one bit too few for either of its buckets as two entries, one
    /// per value of that bit.
    fn place_as_twins(&mut self, entry: Entry) {
        let depth = entry.depth + 1;
        self.entries += 1;
        self.place(Entry { depth, ..entry });
        self.place(Entry { depth, address: entry.address | 1 << (self.base_bits + entry.depth), ..entry });
    }

    /// The bucket the next split fills.
    pub(super) fn next_sibling(&self) -> usize {
        (1 << (self.base_bits + self.level)) + self.split
    }

    /// Splits the bucket under the split pointer; `false` if the memory for its sibling could
    /// not be had, or if the round it ends would take the table past the level its address
    /// bits allow (nothing changed).
    fn split_one(&mut self) -> bool {
        let round = 1 << (self.base_bits + self.level);
        let (low, sibling) = (self.split, self.next_sibling());
        if (self.split + 1 == round && !self.level_fits(self.level + 1))
            || self.segments.reserve(sibling).is_err()
        {
            return false;
        }
        let (mut stay, mut go) = ([0u32; SLOTS], [0u32; SLOTS]);
        let (mut kept, mut moved) = (0, 0);
        for stored in self.segments.bucket(low) {
            let (fingerprint, field) = self.widths.unpack(stored);
            if field == 0 {
                continue;
            }
            if field == 1 {
                // The tail is used up: twins, one per half.
                stay[kept] = stored;
                go[moved] = stored;
                (kept, moved) = (kept + 1, moved + 1);
                self.entries += 1;
            } else if field & 1 == 0 {
                stay[kept] = self.widths.pack(fingerprint, field >> 1);
                kept += 1;
            } else {
                go[moved] = self.widths.pack(fingerprint, field >> 1);
                moved += 1;
            }
        }
        self.segments.set_bucket(low, stay);
        self.segments.set_bucket(sibling, go);
        self.split += 1;
        if self.split == round {
            self.level += 1;
            self.split = 0;
        }
        true
    }

    /// Places the stash's entries again, after splits made room.
    fn drain_stash(&mut self) {
        for entry in std::mem::take(&mut self.stash) {
            self.place(entry);
        }
    }

    /// Whether `entries` entries pass the load the table is held at.
    pub(super) fn over_load(&self, entries: usize) -> bool {
        entries > self.capacity()
    }

    /// Splits buckets until entries are under the load, and more while the stash is long.
    pub(super) fn grow(&mut self) {
        let mut split_any = false;
        while self.over_load(self.entries) {
            if !self.split_one() {
                break;
            }
            split_any = true;
        }
        for _ in 0..STASH_SPLITS {
            if self.stash.len() <= STASH_TARGET || !self.split_one() {
                break;
            }
            self.drain_stash();
        }
        if split_any && !self.stash.is_empty() {
            self.drain_stash();
        }
    }
}
