//! Inspection: occupancy statistics and bucket listings, for people debugging a filter.

use std::fmt;

use crate::table::{Storage, Table};

/// Occupancy of a filter's table, from [`CuckooFilter::stats`](crate::CuckooFilter::stats).
///
/// ```
/// use bugu::{CuckooFilter, FilterMut};
///
/// let mut filter = CuckooFilter::new(100)?;
/// for i in 0..50 {
///     filter.insert(&i)?;
/// }
/// let stats = filter.stats();
/// assert_eq!(stats.items, 50);
/// assert_eq!(stats.fill_histogram.iter().sum::<usize>(), stats.buckets);
/// println!("{stats}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Stats {
    /// Number of buckets.
    pub buckets: usize,
    /// Slots per bucket.
    pub bucket_size: usize,
    /// Fingerprint width in bits.
    pub fingerprint_bits: u32,
    /// Stored fingerprints.
    pub items: usize,
    /// `items / (buckets * bucket_size)`.
    pub load_factor: f64,
    /// Share of buckets with no fingerprint.
    pub empty_bucket_share: f64,
    /// Share of buckets with every slot taken.
    pub full_bucket_share: f64,
    /// `fill_histogram[k]`: how many buckets hold exactly `k` fingerprints (`k` in `0..=bucket_size`).
    pub fill_histogram: Vec<usize>,
    /// The first of the fullest buckets and how many fingerprints it holds (`None` if empty).
    pub fullest_bucket: Option<(usize, usize)>,
    /// Bytes of memory the table occupies.
    pub memory_bytes: usize,
}

impl Stats {
    pub(crate) fn collect<S: Storage>(table: &Table<S>) -> Self {
        let mut fill_histogram = vec![0; table.slots() + 1];
        let mut fullest: Option<(usize, usize)> = None;
        let mut items = 0;
        for bucket in 0..table.buckets() {
            let occupied = table.occupied(bucket);
            fill_histogram[occupied] += 1;
            items += occupied;
            if occupied > 0 && fullest.is_none_or(|(_, most)| occupied > most) {
                fullest = Some((bucket, occupied));
            }
        }
        let buckets = table.buckets();
        let share = |count: usize| count as f64 / buckets as f64;
        Stats {
            buckets,
            bucket_size: table.slots(),
            fingerprint_bits: table.bits(),
            items,
            load_factor: items as f64 / (buckets * table.slots()) as f64,
            empty_bucket_share: share(fill_histogram[0]),
            full_bucket_share: share(fill_histogram[table.slots()]),
            fullest_bucket: fullest,
            fill_histogram,
            memory_bytes: table.memory_bytes(),
        }
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "buckets:        {} x {} slots of {} bits",
            self.buckets, self.bucket_size, self.fingerprint_bits
        )?;
        writeln!(f, "items:          {}", self.items)?;
        writeln!(f, "load factor:    {:.2}%", self.load_factor * 100.0)?;
        writeln!(f, "empty buckets:  {:.2}%", self.empty_bucket_share * 100.0)?;
        writeln!(f, "full buckets:   {:.2}%", self.full_bucket_share * 100.0)?;
        writeln!(f, "memory:         {} bytes", self.memory_bytes)?;
        match self.fullest_bucket {
            Some((index, count)) => writeln!(f, "fullest bucket: #{index} ({count} items)")?,
            None => writeln!(f, "fullest bucket: none (empty filter)")?,
        }
        writeln!(f, "bucket fill:")?;
        let widest = self.fill_histogram.iter().copied().max().unwrap_or(0).max(1);
        for (fill, &count) in self.fill_histogram.iter().enumerate() {
            let bar = "#".repeat((count * 40).div_ceil(widest));
            writeln!(f, "  {fill} items: {count:>10}  {bar}")?;
        }
        Ok(())
    }
}

/// One bucket's contents, from [`CuckooFilter::buckets`](crate::CuckooFilter::buckets).
///
/// ```
/// use bugu::{CuckooFilter, FilterMut};
///
/// let mut filter = CuckooFilter::new(10)?;
/// filter.insert("a")?;
/// let occupied: usize = filter.buckets(..).map(|b| b.len()).sum();
/// assert_eq!(occupied, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bucket {
    /// The bucket's index in the table.
    pub index: usize,
    /// Every slot's fingerprint in slot order; 0 is an empty slot.
    pub slots: Vec<u32>,
}

impl Bucket {
    pub(crate) fn read<S: Storage>(table: &Table<S>, index: usize) -> Self {
        Bucket { index, slots: table.fingerprints(index).collect() }
    }

    /// The number of occupied slots.
    ///
    /// ```
    /// let bucket = bugu::Bucket { index: 0, slots: vec![0, 5, 0, 9] };
    /// assert_eq!(bucket.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|&&fp| fp != 0).count()
    }

    /// Whether every slot is empty.
    ///
    /// ```
    /// let bucket = bugu::Bucket { index: 3, slots: vec![0, 0] };
    /// assert!(bucket.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Display for Bucket {
    /// `#index: fp fp - fp` in hexadecimal, `-` for an empty slot.
    ///
    /// ```
    /// let bucket = bugu::Bucket { index: 7, slots: vec![0x1a, 0, 0xff, 0] };
    /// assert_eq!(bucket.to_string(), "#7: 0x1a - 0xff -");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}:", self.index)?;
        for &fp in &self.slots {
            if fp == 0 { write!(f, " -")? } else { write!(f, " {fp:#x}")? }
        }
        Ok(())
    }
}
