//! The insert path of an [`ExpandingFilter`]: placing an entry (in the emptier bucket, by a path
//! of moves, or in the stash), and growing (splitting buckets under the split pointer).

use super::table::SLOTS;
use super::{Entry, ExpandingFilter};

/// A full bucket's entries, each seen from its other side, where it could move (`None` for one
/// that cannot).
type Moves = [Option<Entry>; SLOTS];

/// An entry seen from one side, with the bucket it lives in there and that bucket's level.
pub(super) type Located = (Entry, usize, u32);

/// How many entries an insert moves before it stashes the one it carries.
const MAX_KICKS: usize = 500;

/// Stashed entries past which inserts split more buckets than the load asks for, until the
/// stash drains.
const STASH_TARGET: usize = 8;

/// The most splits one insert makes to bring the entries under the load. One insert adds one
/// entry (two when a split makes twins), and a split makes room for three, so one is nearly
/// always enough; the rest serve a table read from a file written while a higher load was held
/// (earlier builds held 90%), which then comes down to the load over its next inserts rather
/// than in one pause of as many splits as it has buckets too few.
const LOAD_SPLITS: usize = 4;

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
    /// yet, which hold the most. Otherwise gives back its sides that have a bucket, located.
    pub(super) fn store_in_emptier(&mut self, entry: Entry) -> Option<[Option<Located>; 2]> {
        let other = self.other_side(entry);
        let (first, second) = (self.locate(entry), self.locate(other));
        let free_in = |at: Option<(usize, u32)>| {
            at.map_or(0, |(bucket, _)| self.segments.free_lanes(self.segments.read(bucket)))
        };
        let (first_free, second_free) = (free_in(first), free_in(second));
        let (side, at, free) = if second_free.count_ones() > first_free.count_ones() {
            (other, second, second_free)
        } else {
            (entry, first, first_free)
        };
        match at {
            Some((bucket, level)) if free != 0 => {
                let slot = self.segments.first_slot(free);
                let stored = self.encode(side, level);
                self.segments.set(bucket, slot, stored);
                None
            }
            _ => Some([
                first.map(|(bucket, level)| (entry, bucket, level)),
                second.map(|(bucket, level)| (other, bucket, level)),
            ]),
        }
    }

    /// Stores an entry whose buckets are full by moving entries along a path; the entry left
    /// without a place at its end goes to the stash. Both buckets are first searched one move
    /// ahead, so that most such inserts end with one move; only then does a walk start.
    pub(super) fn kick_in(&mut self, entry: Entry, sides: [Option<Located>; 2]) {
        let mut options: [Option<(Entry, usize, u32, Moves)>; 2] = [None; 2];
        for (option, side) in options.iter_mut().zip(sides) {
            let Some((side, bucket, level)) = side else { continue };
            match self.move_one_out(bucket, level) {
                Ok(slot) => return self.segments.set(bucket, slot, self.encode(side, level)),
                Err(moves) => *option = Some((side, bucket, level, moves)),
            }
        }
        let (mut carried, mut bucket, mut level, mut moves) = match options {
            [Some(first), Some(second)] => [first, second][self.next_random() as usize % 2],
            [Some(side), None] | [None, Some(side)] => side,
            // Twins of this round known to neither side's half: give each half its own.
            [None, None] => return self.place_as_twins(entry),
        };
        for _ in 0..MAX_KICKS {
            let start = self.next_random() as usize;
            let victim = (0..SLOTS).map(|i| (start + i) % SLOTS).find_map(|slot| Some((slot, moves[slot]?)));
            let Some((slot, moved)) = victim else { break };
            self.segments.set(bucket, slot, self.encode(carried, level));
            carried = moved;
            (bucket, level) = self.locate(carried).expect("moves are located");
            let free = self.segments.free_lanes(self.segments.read(bucket));
            if free != 0 {
                let slot = self.segments.first_slot(free);
                return self.segments.set(bucket, slot, self.encode(carried, level));
            }
            match self.move_one_out(bucket, level) {
                Ok(slot) => return self.segments.set(bucket, slot, self.encode(carried, level)),
                Err(next) => moves = next,
            }
        }
        self.stash.push(carried);
    }

    /// One move ahead from a full bucket: moves the first of its entries whose other bucket has
    /// room there, and gives back the slot it freed; else each entry seen from its other side
    /// (`None` for one that knows too few bits to go there). The four other buckets are read
    /// independently, so they cost about one random access.
    fn move_one_out(&mut self, bucket: usize, level: u32) -> Result<usize, Moves> {
        let words = self.segments.read(bucket);
        let mut moves: Moves = [None; SLOTS];
        let mut places = [(0usize, 0u32); SLOTS];
        for slot in 0..SLOTS {
            let moved = self.other_side(self.decode(bucket, level, self.segments.entry(words, slot)));
            if let Some(at) = self.locate(moved) {
                moves[slot] = Some(moved);
                places[slot] = at;
            }
        }
        for slot in 0..SLOTS {
            let Some(moved) = moves[slot] else { continue };
            let (to_bucket, to_level) = places[slot];
            let free = self.segments.free_lanes(self.segments.read(to_bucket));
            if free != 0 {
                let to_slot = self.segments.first_slot(free);
                self.segments.set(to_bucket, to_slot, self.encode(moved, to_level));
                return Ok(slot);
            }
        }
        Err(moves)
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
        self.entries += self.segments.split_bucket(low, sibling);
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

    /// Splits buckets until entries are under the load (at most [`LOAD_SPLITS`] at a time), and
    /// more while the stash is long.
    pub(super) fn grow(&mut self) {
        let mut split_any = false;
        for _ in 0..LOAD_SPLITS {
            if !self.over_load(self.entries) || !self.split_one() {
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
