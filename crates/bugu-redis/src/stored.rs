//! A key's value of either type the module registers: bugu's own ([`CfValue`], type
//! `bugu-cf01`) or a filter in RedisBloom's layout ([`RedisBloomFilter`], type `MBbloomCF`).
//! The commands reach both through [`KeyFilter`]; what differs is which type a new value is
//! stored under and how a `CF.LOADCHUNK` is applied.
//!
//! Nothing here touches Redis.

use crate::error::CfError;
use crate::redisbloom::{self, RedisBloomFilter};
use crate::value::{CfValue, KeyFilter};

/// The value under a key, borrowed from the server.
pub(crate) enum KeyValue<'a> {
    Bugu(&'a mut CfValue),
    RedisBloom(&'a mut RedisBloomFilter),
}

/// A value to store under a key: its variant names its type.
pub(crate) enum NewValue {
    Bugu(CfValue),
    RedisBloom(RedisBloomFilter),
}

impl KeyValue<'_> {
    /// The filter, unless a restore is in progress.
    pub(crate) fn ready(&self) -> Result<&dyn KeyFilter, CfError> {
        match self {
            Self::Bugu(value) => Ok(value.ready()?),
            Self::RedisBloom(filter) => Ok(&**filter),
        }
    }

    /// The filter for a change, unless a restore is in progress.
    pub(crate) fn ready_mut(&mut self) -> Result<&mut dyn KeyFilter, CfError> {
        match self {
            Self::Bugu(value) => Ok(value.ready_mut()?),
            Self::RedisBloom(filter) => Ok(&mut **filter),
        }
    }
}

/// Applies one `CF.LOADCHUNK` to the key's value (`None` if the key is empty). A header
/// chunk returns the value it starts, for the caller to store; other chunks change the value in
/// place. RedisBloom's 38-byte header starts a filter in its layout (unless the takeover is off,
/// when it is refused as a header); any other header is bugu's. On error nothing changed.
pub(crate) fn load_chunk(
    current: Option<KeyValue>,
    iterator: i64,
    data: &[u8],
) -> Result<Option<NewValue>, CfError> {
    let redisbloom_header = iterator == 1 && redisbloom::takeover_enabled();
    match (current, <&[u8; redisbloom::dump::HEADER_BYTES]>::try_from(data)) {
        (Some(KeyValue::RedisBloom(_)), _) if iterator == 1 => Err(CfError::Exists),
        (Some(KeyValue::RedisBloom(filter)), _) => filter.load_chunk(iterator, data).map(|()| None),
        (current, Ok(header)) if redisbloom_header => {
            if let Some(KeyValue::Bugu(CfValue::Ready(_))) = current {
                return Err(CfError::Exists);
            }
            let filter = RedisBloomFilter::from_header(header).ok_or(CfError::InvalidHeader)?;
            Ok(Some(NewValue::RedisBloom(filter)))
        }
        (Some(KeyValue::Bugu(value)), _) => {
            Ok(CfValue::load_chunk(Some(value), iterator, data)?.map(NewValue::Bugu))
        }
        (None, _) => Ok(CfValue::load_chunk(None, iterator, data)?.map(NewValue::Bugu)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redisbloom::set_takeover;
    use crate::settings::Settings;
    use crate::value::dump::DumpStep;

    fn redisbloom_dump() -> Vec<(i64, Vec<u8>)> {
        // A RedisBloom header (items 1, 4 buckets, 1 sub-filter of bucket size 2, 20
        // iterations, expansion 1) and its 8 slots.
        let mut header = Vec::new();
        for field in [1u64, 4, 0, 1] {
            header.extend_from_slice(&field.to_le_bytes());
        }
        for field in [2u16, 20, 1] {
            header.extend_from_slice(&field.to_le_bytes());
        }
        vec![(1, header), (9, vec![0, 0, 0, 0, 0, 0, 42, 0])]
    }

    /// `CF.LOADCHUNK` of a whole dump into an empty key.
    fn load_all(chunks: &[(i64, Vec<u8>)]) -> Result<NewValue, CfError> {
        let (first, rest) = chunks.split_first().expect("a header");
        let mut value = load_chunk(None, first.0, &first.1)?.expect("a header starts a value");
        for (iterator, data) in rest {
            let current = match &mut value {
                NewValue::Bugu(value) => KeyValue::Bugu(value),
                NewValue::RedisBloom(filter) => KeyValue::RedisBloom(filter),
            };
            assert!(load_chunk(Some(current), *iterator, data)?.is_none());
        }
        Ok(value)
    }

    #[test]
    fn a_redisbloom_header_starts_a_key_in_its_layout_unless_the_takeover_is_off() {
        let chunks = redisbloom_dump();
        let Ok(NewValue::RedisBloom(mut filter)) = load_all(&chunks) else {
            panic!("RedisBloom's dump makes a RedisBloom filter");
        };
        assert!(filter.heap_bytes() >= 8);
        let key = KeyValue::RedisBloom(&mut filter);
        assert_eq!(key.ready().unwrap().check_writable(), Ok(()));
        assert_eq!(key.ready().unwrap().info().layout, crate::value::Info::REDISBLOOM);
        assert_eq!(
            key.ready().unwrap().dump_step(1),
            Ok(DumpStep::Chunk { next: 9, data: chunks[1].1.clone() })
        );
        assert_eq!(load_chunk(Some(key), 1, &chunks[0].1).err(), Some(CfError::Exists));

        set_takeover(false);
        let refused = load_chunk(None, 1, &chunks[0].1).err();
        set_takeover(true);
        assert_eq!(refused, Some(CfError::InvalidHeader));
    }

    #[test]
    fn answers_for_many_items_are_the_answers_for_each() {
        let mut value = CfValue::reserve(Settings::default()).unwrap();
        let Ok(NewValue::RedisBloom(mut redisbloom)) = load_all(&redisbloom_dump()) else {
            panic!("RedisBloom's dump makes a RedisBloom filter");
        };
        for i in 0..100 {
            value.ready_mut().unwrap().add(format!("{i}").as_bytes()).unwrap();
            redisbloom.add(format!("{i}").as_bytes()).unwrap();
        }
        for key in [KeyValue::Bugu(&mut value), KeyValue::RedisBloom(&mut redisbloom)] {
            let filter = key.ready().unwrap();
            // Up to 32 items are hashed on the stack; more, on the heap.
            for count in [0, 1, 32, 33, 200] {
                let items: Vec<Vec<u8>> = (0..count).map(|i| format!("{i}").into_bytes()).collect();
                let each = filter.contains_each(&mut items.iter().map(Vec::as_slice));
                let one_by_one: Vec<bool> = items.iter().map(|item| filter.contains(item)).collect();
                assert_eq!(each, one_by_one);
                assert!(each.iter().take(100).all(|&found| found));
            }
        }
    }

    #[test]
    fn a_bugu_dump_still_makes_a_bugu_key_and_a_redisbloom_header_does_not_replace_it() {
        let mut value = CfValue::reserve(Settings::default()).unwrap();
        value.ready_mut().unwrap().add(b"a").unwrap();
        let mut chunks = Vec::new();
        value.for_each_restore_chunk(|iterator, data| chunks.push((iterator, data.to_vec())));
        let Ok(NewValue::Bugu(mut restored)) = load_all(&chunks) else {
            panic!("bugu's dump makes a bugu filter");
        };
        let mut key = KeyValue::Bugu(&mut restored);
        assert!(key.ready_mut().unwrap().contains(b"a"));
        assert_eq!(load_chunk(Some(key), 1, &redisbloom_dump()[0].1).err(), Some(CfError::Exists));
    }
}
