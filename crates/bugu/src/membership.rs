//! The membership API every filter type offers, written once.
//!
//! A filter type implements the few `*_hash` methods; the traits provide the variants for any
//! [`Key`] (text, bytes, integers, or [`Hashed`](crate::Hashed) values, by the encoding of
//! [`crate::key`]) and for raw bytes, so the ways of naming an item mean the same thing in every
//! filter type.

use crate::error::InsertError;
use crate::hash::HashFunction;
use crate::key::{Key, KeyEncoding};

/// The updates named by item or by bytes, written once for [`FilterMut`] (`&mut self`) and the
/// [`ConcurrentFilter`](crate::ConcurrentFilter) (`&self`): each hashes its item with the filter's
/// seed and calls the `*_hash` method of the same name. `setup` starts every doc example.
macro_rules! item_updates {
    (vis: ($($vis:tt)*), receiver: (&$($mutability:tt)*), setup: $setup:literal) => {
        #[doc = "Stores one copy of `item`. On error the filter is unchanged."]
        #[doc = ""]
        #[doc = concat!("```\n", $setup, "\nfilter.insert(\"user_1\")?;\nassert!(filter.contains(\"user_1\"));\n# Ok::<(), Box<dyn std::error::Error>>(())\n```")]
        #[inline]
        $($vis)* fn insert<K: Key + ?Sized>(&$($mutability)* self, item: &K) -> Result<(), InsertError> {
            let hash = self.hash_of(item);
            self.insert_hash(hash)
        }

        #[doc = "[`insert`](Self::insert) for raw bytes."]
        #[doc = ""]
        #[doc = concat!("```\n", $setup, "\nfilter.insert_bytes(b\"user_1\")?;\nassert!(filter.contains_bytes(b\"user_1\"));\n# Ok::<(), Box<dyn std::error::Error>>(())\n```")]
        #[inline]
        $($vis)* fn insert_bytes(&$($mutability)* self, bytes: &[u8]) -> Result<(), InsertError> {
            let hash = self.hash_of_bytes(bytes);
            self.insert_hash(hash)
        }

        #[doc = "[`insert`](Self::insert) for a slice of items, in order; one result per item, exactly"]
        #[doc = "what one-by-one calls return."]
        #[doc = ""]
        #[doc = concat!("```\n", $setup, "\nassert!(filter.insert_batch(&[\"a\", \"b\"]).iter().all(Result::is_ok));\nassert!(filter.contains(\"b\"));\n# Ok::<(), Box<dyn std::error::Error>>(())\n```")]
        $($vis)* fn insert_batch<K: Key>(&$($mutability)* self, items: &[K]) -> Vec<Result<(), InsertError>> {
            let hashes: Vec<u64> = items.iter().map(|item| self.hash_of(item)).collect();
            self.insert_hash_batch(&hashes)
        }

        #[doc = "Stores `item` unless it is already present; says which."]
        #[doc = ""]
        #[doc = concat!("```\n", $setup, "\nassert_eq!(filter.insert_unique(\"a\"), Ok(true));\nassert_eq!(filter.insert_unique(\"a\"), Ok(false));\nassert_eq!(filter.count(\"a\"), 1);\n# Ok::<(), Box<dyn std::error::Error>>(())\n```")]
        #[inline]
        $($vis)* fn insert_unique<K: Key + ?Sized>(&$($mutability)* self, item: &K) -> Result<bool, InsertError> {
            let hash = self.hash_of(item);
            self.insert_unique_hash(hash)
        }

        #[doc = "[`insert_unique`](Self::insert_unique) for raw bytes."]
        #[doc = ""]
        #[doc = concat!("```\n", $setup, "\nassert_eq!(filter.insert_unique_bytes(b\"a\"), Ok(true));\nassert_eq!(filter.insert_unique_bytes(b\"a\"), Ok(false));\n# Ok::<(), Box<dyn std::error::Error>>(())\n```")]
        #[inline]
        $($vis)* fn insert_unique_bytes(&$($mutability)* self, bytes: &[u8]) -> Result<bool, InsertError> {
            let hash = self.hash_of_bytes(bytes);
            self.insert_unique_hash(hash)
        }

        #[doc = "Removes one copy of `item`; `false` if it was not found."]
        #[doc = ""]
        #[doc = concat!("```\n", $setup, "\nfilter.insert(\"a\")?;\nassert!(filter.remove(\"a\"));\nassert!(!filter.contains(\"a\"));\nassert!(!filter.remove(\"a\"));\n# Ok::<(), Box<dyn std::error::Error>>(())\n```")]
        #[inline]
        $($vis)* fn remove<K: Key + ?Sized>(&$($mutability)* self, item: &K) -> bool {
            let hash = self.hash_of(item);
            self.remove_hash(hash)
        }

        #[doc = "[`remove`](Self::remove) for raw bytes."]
        #[doc = ""]
        #[doc = concat!("```\n", $setup, "\nfilter.insert_bytes(b\"a\")?;\nassert!(filter.remove_bytes(b\"a\"));\n# Ok::<(), Box<dyn std::error::Error>>(())\n```")]
        #[inline]
        $($vis)* fn remove_bytes(&$($mutability)* self, bytes: &[u8]) -> bool {
            let hash = self.hash_of_bytes(bytes);
            self.remove_hash(hash)
        }
    };
}
pub(crate) use item_updates;

/// Queries: is an item present, how many copies.
///
/// ```
/// use bugu::{CuckooFilter, Filter, FilterMut};
///
/// let mut filter = CuckooFilter::new(1000)?;
/// filter.insert("apple")?;
/// assert!(filter.contains("apple"));
/// assert!(!filter.contains("pear")); // could be a false positive, at the configured rate
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Filter {
    /// The seed items are hashed with.
    fn seed(&self) -> u64;

    /// The function items are hashed with: the one the filter was built with, kept through
    /// persistence and growth.
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, hash::HashFunction};
    /// let filter = CuckooFilter::new(10)?;
    /// assert_eq!(filter.hash_function(), HashFunction::default());
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    fn hash_function(&self) -> HashFunction;

    /// How typed keys become hashes: [`KeyEncoding::Canonical`] for every filter built by this
    /// version; [`KeyEncoding::StdHash`] for one read from a file written before the key encoding
    /// existed, which keeps answering by the rule its keys were inserted with.
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, key::KeyEncoding};
    /// assert_eq!(CuckooFilter::new(10)?.key_encoding(), KeyEncoding::Canonical);
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    fn key_encoding(&self) -> KeyEncoding;

    /// Whether an item with this (pre-computed) hash may be present.
    fn contains_hash(&self, hash: u64) -> bool;

    /// How many stored fingerprints match this hash: an upper bound on the item's copies.
    fn count_hash(&self, hash: u64) -> usize;

    /// The hash this filter uses for an item: its [`hash_function`](Self::hash_function) with its
    /// seed. What to pass to the `*_hash` methods for an item hashed ahead of time.
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, FilterMut};
    /// let mut filter = CuckooFilter::new(10)?;
    /// let h = filter.hash_of(&7u64);
    /// filter.insert_hash(h)?;
    /// assert!(filter.contains(&7u64));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    fn hash_of<K: Key + ?Sized>(&self, item: &K) -> u64 {
        self.key_encoding().hash(item, self.hash_function(), self.seed())
    }

    /// The hash this filter uses for raw bytes: its [`hash_function`](Self::hash_function) with
    /// its seed.
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, FilterMut};
    /// let mut filter = CuckooFilter::new(10)?;
    /// filter.insert_hash(filter.hash_of_bytes(b"k"))?;
    /// assert!(filter.contains_bytes(b"k"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    fn hash_of_bytes(&self, bytes: &[u8]) -> u64 {
        self.hash_function().hash_bytes(bytes, self.seed())
    }

    /// Whether `item` may be present: `false` is certain, `true` is wrong at most at the
    /// false-positive rate.
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, FilterMut};
    /// let mut filter = CuckooFilter::new(10)?;
    /// filter.insert(&42u32)?;
    /// assert!(filter.contains(&42u32));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    fn contains<K: Key + ?Sized>(&self, item: &K) -> bool {
        self.contains_hash(self.hash_of(item))
    }

    /// [`contains`](Self::contains) for raw bytes.
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, FilterMut};
    /// let mut filter = CuckooFilter::new(10)?;
    /// filter.insert_bytes(b"\x00\x01")?;
    /// assert!(filter.contains_bytes(b"\x00\x01"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    fn contains_bytes(&self, bytes: &[u8]) -> bool {
        self.contains_hash(self.hash_of_bytes(bytes))
    }

    /// [`contains_hash`](Self::contains_hash) for many hashes at once, in order. Filters override
    /// it to overlap the memory accesses of neighbouring lookups; the answers are exactly those of
    /// one-by-one calls.
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, FilterMut};
    /// let mut filter = CuckooFilter::new(10)?;
    /// filter.insert_hash(1)?;
    /// assert_eq!(filter.contains_hash_batch(&[1, 1]), vec![true, true]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn contains_hash_batch(&self, hashes: &[u64]) -> Vec<bool> {
        hashes.iter().map(|&hash| self.contains_hash(hash)).collect()
    }

    /// [`contains`](Self::contains) for a slice of items, in order (see
    /// [`contains_hash_batch`](Self::contains_hash_batch)).
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, FilterMut};
    /// let mut filter = CuckooFilter::new(10)?;
    /// filter.insert("a")?;
    /// assert_eq!(filter.contains_batch(&["a", "a"]), vec![true, true]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn contains_batch<K: Key>(&self, items: &[K]) -> Vec<bool> {
        let hashes: Vec<u64> = items.iter().map(|item| self.hash_of(item)).collect();
        self.contains_hash_batch(&hashes)
    }

    /// How many copies of `item` may be stored (an upper bound: other items can share its
    /// fingerprint and buckets).
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, FilterMut};
    /// let mut filter = CuckooFilter::new(10)?;
    /// filter.insert("a")?;
    /// filter.insert("a")?;
    /// assert_eq!(filter.count("a"), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    fn count<K: Key + ?Sized>(&self, item: &K) -> usize {
        self.count_hash(self.hash_of(item))
    }

    /// [`count`](Self::count) for raw bytes.
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, FilterMut};
    /// let mut filter = CuckooFilter::new(10)?;
    /// filter.insert_bytes(b"a")?;
    /// assert_eq!(filter.count_bytes(b"a"), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    fn count_bytes(&self, bytes: &[u8]) -> usize {
        self.count_hash(self.hash_of_bytes(bytes))
    }
}

/// Updates: insert (a multiset: every insert stores a copy), insert if absent, remove one copy.
///
/// Removing an item that was never inserted may remove the fingerprint of another item that shares
/// it, which that item then loses: remove only what you inserted.
pub trait FilterMut: Filter {
    /// Stores one copy of an item with this hash. On error the filter is unchanged.
    fn insert_hash(&mut self, hash: u64) -> Result<(), InsertError>;

    /// Removes one copy of an item with this hash; `false` if nothing was removed: none was found,
    /// or (in a [`GrowableFilter`](crate::GrowableFilter)) matches in several levels made the
    /// removal ambiguous ([`GrowableFilter::remove_checked`](crate::GrowableFilter::remove_checked)).
    fn remove_hash(&mut self, hash: u64) -> bool;

    /// Stores an item with this hash unless it is already present: `Ok(true)` if it was added,
    /// `Ok(false)` if it was present (or a false positive said so). A skip is recorded (see
    /// [`CuckooFilterIn::has_skipped_inserts`](crate::CuckooFilterIn::has_skipped_inserts)):
    /// the matching fingerprint may be another item's, so removing that item later would make
    /// this one read absent.
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, FilterMut};
    /// let mut filter = CuckooFilter::new(10)?;
    /// let h = filter.hash_of("x");
    /// assert_eq!(filter.insert_unique_hash(h), Ok(true));
    /// assert_eq!(filter.insert_unique_hash(h), Ok(false));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn insert_unique_hash(&mut self, hash: u64) -> Result<bool, InsertError>;

    /// [`insert_hash`](Self::insert_hash) for many hashes, in order; one result per hash,
    /// exactly what one-by-one calls return.
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, FilterMut};
    /// let mut filter = CuckooFilter::new(10)?;
    /// assert!(filter.insert_hash_batch(&[1, 2, 3]).iter().all(Result::is_ok));
    /// assert!(filter.contains_hash(2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn insert_hash_batch(&mut self, hashes: &[u64]) -> Vec<Result<(), InsertError>> {
        hashes.iter().map(|&hash| self.insert_hash(hash)).collect()
    }

    item_updates!(
        vis: (),
        receiver: (&mut),
        setup: "use bugu::{CuckooFilter, Filter, FilterMut};\nlet mut filter = CuckooFilter::new(10)?;"
    );
}
