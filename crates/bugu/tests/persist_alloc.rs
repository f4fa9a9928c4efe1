//! Readers allocate from what the input proves, never from what it claims. Measured as the
//! process's peak virtual memory (Linux), in a test binary of its own so that nothing else runs
//! meanwhile: allocating a table the size of a claim would show up however lazily it is touched.

#![cfg(target_os = "linux")]

use std::io::Read;

use bugu::persist::{FORMAT_VERSION, FilterKind, MAGIC};
use bugu::{CuckooFilter, CuckooView, Persist, PersistError};
use xxhash_rust::xxh3::xxh3_64;

/// A `/proc/self/status` field in KiB: `VmPeak` (peak virtual memory) or `VmSize` (current).
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn vm_peak_kib() -> u64 {
    status_kib("VmPeak:")
}

/// A cuckoo filter header claiming `buckets` buckets of 2 x `bits`, then `fill` zero bytes,
/// sealed with a valid checksum.
fn claiming(bits: u8, buckets: u64, fill: usize) -> Vec<u8> {
    let mut bytes = Vec::new();
    bytes.extend(MAGIC);
    bytes.extend(FORMAT_VERSION.to_le_bytes());
    bytes.extend(FilterKind::Cuckoo.code().to_le_bytes());
    bytes.extend([0; 4]);
    bytes.extend([bits, 2, bugu::hash::HASH_ID_XXH3_64, 0]);
    bytes.extend(500u32.to_le_bytes());
    bytes.extend(0u64.to_le_bytes()); // seed
    bytes.extend(buckets.to_le_bytes());
    bytes.extend(1u64.to_le_bytes()); // capacity
    bytes.extend(0u64.to_le_bytes()); // len
    bytes.resize(bytes.len() + fill, 0);
    let checksum = xxh3_64(&bytes);
    bytes.extend(checksum.to_le_bytes());
    bytes
}

/// A stream that yields `prefix`, then `zeros` zero bytes, then ends.
struct ThenZeros<'a> {
    prefix: &'a [u8],
    zeros: usize,
}

impl Read for ThenZeros<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.prefix.is_empty() {
            let n = buf.len().min(self.prefix.len());
            buf[..n].copy_from_slice(&self.prefix[..n]);
            self.prefix = &self.prefix[n..];
            return Ok(n);
        }
        let n = buf.len().min(self.zeros);
        buf[..n].fill(0);
        self.zeros -= n;
        Ok(n)
    }
}

const MIB: u64 = 1024;

#[test]
fn claimed_lengths_never_drive_allocation() {
    let dir = std::env::temp_dir().join(format!("bugu-alloc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("claim.bugu");
    let start = vm_peak_kib();
    let size = status_kib("VmSize:");
    // An allocation of X raises the peak to at least size + X, so by at least X - slack.
    let slack = start - size;
    assert!(slack < 128 * MIB, "peak {start} KiB is far above the current size {size} KiB");

    // 100 bytes claiming 2^60 buckets (2^60 payload bytes), and 100 bytes claiming 1 GiB: a size
    // the allocator would grant.
    let huge = claiming(4, 1 << 60, 36);
    let gib = claiming(8, 1 << 28, 36);
    assert_eq!((huge.len(), gib.len()), (100, 100));
    for bytes in [&huge, &gib] {
        let truncated =
            |r: Result<(), PersistError>| matches!(r, Err(PersistError::Truncated { offset: 100, .. }));
        assert!(truncated(CuckooFilter::from_bytes(bytes).map(drop)));
        assert!(truncated(CuckooView::from_bytes(bytes).map(drop)));
        assert!(truncated(CuckooView::from_trusted_bytes(bytes).map(drop)));
        std::fs::write(&path, bytes).unwrap();
        assert!(truncated(CuckooFilter::load(&path).map(drop)));
        // A stream's length is unknown: it ends inside the payload.
        assert!(matches!(CuckooFilter::read_from(&bytes[..]), Err(PersistError::Truncated { .. })));
    }
    // A stream that claims 1 GiB and delivers 1 MiB: the table grows with the bytes that arrive.
    let header = &gib[..56];
    let stream = ThenZeros { prefix: header, zeros: 1 << 20 };
    let err = CuckooFilter::read_from(stream).unwrap_err();
    assert!(
        matches!(err, PersistError::Truncated { offset, part: "payload" } if offset == 56 + (1 << 20)),
        "{err}"
    );

    // A 1 GiB table would have raised the peak by at least 1 GiB - slack > 896 MiB.
    let grown = vm_peak_kib() - start;
    assert!(grown < 16 * MIB, "reading hostile claims raised peak virtual memory by {grown} KiB");

    // The measure sees allocations of this size: a 256 MiB buffer raises the peak. The buffer
    // goes through `black_box` so that the optimiser cannot drop an allocation nothing reads
    // (it does in release builds), and is kept alive until after the measure.
    let control: Vec<u8> = std::hint::black_box(Vec::with_capacity(256 << 20));
    let grown = vm_peak_kib() - size;
    assert!(grown >= 256 * MIB, "the control allocation was not seen ({grown} KiB)");
    std::hint::black_box(&control);
    drop(control);
    std::fs::remove_dir_all(&dir).unwrap();
}
