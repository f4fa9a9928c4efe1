//! The `serde` feature: every filter type serializes as one byte string, exactly the bytes of
//! [`Persist::to_bytes`], so a filter inside any serde format is the persistent format
//! (checksummed, validated on the way back by [`Persist::from_bytes`]). A [`CuckooView`]
//! serializes as the bytes it views, and deserializes zero-copy from formats that lend their
//! input's bytes.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, Serializer};

use crate::filter::{CuckooFilter, CuckooFilterIn};
use crate::{AnyFilter, ConcurrentFilter, ExpandingFilter, GrowableFilter};

use super::persistable::Persist;
use super::view::CuckooView;

/// Elements reserved up front when a format sends bytes as a sequence: whatever length it
/// announces, memory grows only as elements arrive.
const SEQ_RESERVE: usize = 4096;

impl<B: AsRef<[u8]>> Serialize for CuckooFilterIn<B> {
    /// Serializes as the persistent bytes: a view writes the bytes it reads, as they are; any
    /// other filter builds them in memory (serde byte strings are contiguous).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.persisted() {
            Some(bytes) => serializer.serialize_bytes(bytes.as_ref()),
            None => {
                serializer.serialize_bytes(&self.encode(Vec::new()).expect("writing to a Vec cannot fail"))
            }
        }
    }
}

/// `Serialize` (all but the cuckoo filter, whose impl above covers its views too) and
/// `Deserialize` through [`Persist`], for each owned filter type.
macro_rules! serde_through_persist {
    (serialize: $($serialized:ty),*; deserialize: $($deserialized:ty),*) => {
        $(
            impl Serialize for $serialized {
                /// Serializes as the bytes of [`Persist::to_bytes`].
                fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                    serializer.serialize_bytes(&self.to_bytes())
                }
            }
        )*
        $(
            impl<'de> Deserialize<'de> for $deserialized {
                /// Deserializes from the bytes of [`Persist::to_bytes`], validated as by
                /// [`Persist::from_bytes`].
                fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                    deserializer.deserialize_bytes(FilterVisitor(PhantomData))
                }
            }
        )*
    };
}

serde_through_persist!(
    serialize: GrowableFilter, ExpandingFilter, ConcurrentFilter, AnyFilter;
    deserialize: CuckooFilter, GrowableFilter, ExpandingFilter, ConcurrentFilter, AnyFilter
);

/// Reads a filter of type `F` from a byte string, or from a sequence of bytes (JSON's arrays).
struct FilterVisitor<F>(PhantomData<F>);

impl<'de, F: Persist> Visitor<'de> for FilterVisitor<F> {
    type Value = F;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the bytes of a persisted bugu filter")
    }

    fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<F, E> {
        F::from_bytes(bytes).map_err(E::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<F, A::Error> {
        let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(SEQ_RESERVE));
        while let Some(byte) = seq.next_element::<u8>()? {
            bytes.push(byte);
        }
        self.visit_bytes(&bytes)
    }
}

impl<'de> Deserialize<'de> for CuckooView<'de> {
    /// Views the deserializer's own bytes, validated as by [`CuckooView::from_bytes`]; works with
    /// formats that lend borrowed byte strings (bincode, postcard, ...), not with those that
    /// build bytes (JSON: deserialize a [`CuckooFilter`] there).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_bytes(ViewVisitor)
    }
}

struct ViewVisitor;

impl<'de> Visitor<'de> for ViewVisitor {
    type Value = CuckooView<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("borrowed bytes of a persisted bugu cuckoo filter")
    }

    fn visit_borrowed_bytes<E: de::Error>(self, bytes: &'de [u8]) -> Result<CuckooView<'de>, E> {
        CuckooView::from_bytes(bytes).map_err(E::custom)
    }
}

#[cfg(test)]
mod tests {
    use crate::{CuckooFilter, CuckooView, ExpandingFilter, Filter, FilterMut, GrowableFilter, Persist};

    /// Serializes through JSON (bytes as an array of numbers) and back.
    fn through_json<F: Persist + serde::Serialize + serde::de::DeserializeOwned>(filter: &F) -> F {
        let json = serde_json::to_value(filter).unwrap();
        let numbers: Vec<u8> = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(numbers, filter.to_bytes());
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn every_filter_type_serializes_as_its_persistent_bytes() {
        let mut grown = GrowableFilter::new(10).unwrap();
        let mut one_table = ExpandingFilter::new(10).unwrap();
        let shared = crate::ConcurrentFilter::new(100).unwrap();
        for i in 0..200u32 {
            grown.insert(&i).unwrap();
            one_table.insert(&i).unwrap();
        }
        shared.insert("x").unwrap();
        assert_eq!(through_json(&grown).to_bytes(), grown.to_bytes());
        assert_eq!(through_json(&one_table).to_bytes(), one_table.to_bytes());
        assert!(through_json(&shared).contains("x"));
        let any = crate::AnyFilter::from_bytes(&grown.to_bytes()).unwrap();
        assert_eq!(through_json(&any).to_bytes(), grown.to_bytes());
        // A filter of another kind is refused with the reader's error.
        let wrong = serde_json::to_value(&grown).unwrap();
        let err = serde_json::from_value::<ExpandingFilter>(wrong).unwrap_err();
        assert!(err.to_string().contains("growable filter"), "{err}");
    }

    #[test]
    fn a_filter_serializes_as_its_persistent_bytes_and_back() {
        let mut filter = CuckooFilter::builder().capacity(100).fingerprint_bits(9).seed(3).build().unwrap();
        for i in 0..50u32 {
            filter.insert(&i).unwrap();
        }
        // JSON writes a byte string as an array of numbers: exactly to_bytes.
        let json = serde_json::to_value(&filter).unwrap();
        let numbers: Vec<u8> = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(numbers, filter.to_bytes());
        let back: CuckooFilter = serde_json::from_value(json).unwrap();
        assert_eq!(back.to_bytes(), filter.to_bytes());
        assert!((0..50u32).all(|i| back.contains(&i)));

        let bytes = filter.to_bytes();
        let view = CuckooView::from_bytes(&bytes).unwrap();
        assert_eq!(serde_json::to_value(&view).unwrap(), serde_json::to_value(&filter).unwrap());
    }

    #[test]
    fn bad_bytes_are_a_deserialization_error() {
        let mut bytes = CuckooFilter::new(10).unwrap().to_bytes();
        bytes[60] ^= 0x40;
        let err = serde_json::from_value::<CuckooFilter>(serde_json::to_value(&bytes).unwrap()).unwrap_err();
        assert!(err.to_string().contains("checksum mismatch"), "{err}");
        let err = serde_json::from_str::<CuckooFilter>("[1, 2, 3]").unwrap_err();
        assert!(err.to_string().contains("not a bugu filter"), "{err}");
    }

    #[test]
    fn a_view_deserializes_from_borrowed_bytes() {
        use serde::de::IntoDeserializer;
        use serde::de::value::{BorrowedBytesDeserializer, Error};
        let mut filter = CuckooFilter::new(100).unwrap();
        filter.insert("a").unwrap();
        let bytes = filter.to_bytes();
        let view: CuckooView<'_> =
            serde::Deserialize::deserialize(BorrowedBytesDeserializer::<Error>::new(&bytes)).unwrap();
        assert!(view.contains("a"));
        // Owned bytes cannot back a view.
        let owned: Result<CuckooView<'_>, Error> =
            serde::Deserialize::deserialize(bytes.clone().into_deserializer());
        assert!(owned.is_err());
    }
}
