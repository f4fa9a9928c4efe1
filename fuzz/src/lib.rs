//! What the fuzz targets share: turning libFuzzer's input into the bytes to read.

use std::borrow::Cow;

/// Random bytes almost never carry a valid checksum, which would stop the fuzzer at the checksum
/// check; so when the first byte is odd, the rest is taken as a file without its checksum and the
/// correct checksum is appended, letting mutations reach the parameter and content checks. When
/// it is even, the rest is used as it is. `None` for an empty input.
pub fn file_bytes(data: &[u8]) -> Option<Cow<'_, [u8]>> {
    let (&mode, rest) = data.split_first()?;
    Some(if mode & 1 == 1 {
        let mut sealed = rest.to_vec();
        sealed.extend(xxhash_rust::xxh3::xxh3_64(rest).to_le_bytes());
        Cow::Owned(sealed)
    } else {
        Cow::Borrowed(rest)
    })
}
