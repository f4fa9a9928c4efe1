//! A table the allocator refuses is an error naming its size, never an abort: when a filter is
//! built, read from a file, or copied out of a view.
//!
//! Whether a large allocation succeeds depends on the machine (its memory, its overcommit policy),
//! so each case is made to fail deterministically: either by a size no machine can map (more than
//! 2^57 bytes, beyond every 64-bit address space), or in a child process run under an
//! address-space limit (`ulimit -v`), which the kernel enforces whatever the overcommit policy.

use bugu::Persist;
use bugu::{
    ConfigError, CuckooFilter, CuckooView, Filter, FilterMut, GrowableConfigError, GrowableFilter,
    PersistError,
};

/// A size no 64-bit machine can map: about 2^58 bytes of table, yet a capacity whose table fits
/// `isize::MAX` bytes, so the configuration is valid and only the allocation fails.
#[test]
#[cfg(target_pointer_width = "64")]
fn a_table_beyond_every_address_space_is_an_error() {
    let err = CuckooFilter::builder().capacity(1 << 57).build().unwrap_err();
    let ConfigError::OutOfMemory { bytes } = err else { panic!("expected OutOfMemory, got {err:?}") };
    assert!(bytes > 1 << 57, "{bytes}");
    assert_eq!(err.to_string(), format!("out of memory: could not allocate {bytes} bytes for the table"));

    let err = GrowableFilter::builder().initial_capacity(1 << 57).build().unwrap_err();
    assert!(matches!(err, GrowableConfigError::Level(ConfigError::OutOfMemory { .. })), "{err:?}");

    // The process goes on: a filter that fits is built.
    let mut filter = CuckooFilter::new(1_000).unwrap();
    filter.insert("after").unwrap();
    assert!(filter.contains("after"));
}

/// The address-space limit of the child process, in KiB: room for the test binary, not for the
/// tables below.
#[cfg(target_os = "linux")]
const LIMIT_KIB: u64 = 4 << 20;

/// Set in the child process, which runs the same test under the limit.
#[cfg(target_os = "linux")]
const UNDER_LIMIT: &str = "BUGU_TEST_UNDER_ADDRESS_SPACE_LIMIT";

/// The bytes of a cuckoo filter of `buckets` buckets of 4 x 8 bits, all empty, with a checksum of
/// zeros (for trusted views, which do not read it). Allocated zeroed, so its pages are not touched
/// unless read.
#[cfg(target_os = "linux")]
fn empty_filter_bytes(buckets: u64) -> Vec<u8> {
    let prefix = params_prefix(buckets);
    let payload = buckets as usize * 4;
    let mut bytes = vec![0u8; prefix.len() + payload + 16 + 8];
    bytes[..prefix.len()].copy_from_slice(&prefix);
    bytes
}

/// The header and section parameters of a filter of `buckets` buckets of 4 x 8 bits, empty.
#[cfg(target_os = "linux")]
fn params_prefix(buckets: u64) -> Vec<u8> {
    let template = CuckooFilter::builder().capacity(10).fingerprint_bits(8).bucket_size(4).build().unwrap();
    let mut prefix = template.to_bytes()[..56].to_vec();
    prefix[32..40].copy_from_slice(&buckets.to_le_bytes());
    prefix
}

/// A capacity of 2^35 items (about 1.7 TB of table), and the readers, in a
/// process whose address space is limited to 4 GiB: each allocation that does not fit is an
/// error naming its size. Before, the first one aborted the process.
#[test]
#[cfg(target_os = "linux")]
fn allocations_beyond_a_memory_limit_are_errors() {
    if std::env::var_os(UNDER_LIMIT).is_some() {
        under_the_limit();
        return;
    }
    let name = "allocations_beyond_a_memory_limit_are_errors";
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {LIMIT_KIB} && exec \"$0\" \"$@\""))
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", name, "--test-threads=1", "--nocapture"])
        .env(UNDER_LIMIT, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the child failed ({}):\n{stdout}\n{stderr}", output.status);
    // The child ran the test, not an empty selection.
    assert!(stdout.contains("test result: ok. 1 passed"), "{stdout}");
}

#[cfg(target_os = "linux")]
fn under_the_limit() {
    let limit = (LIMIT_KIB as usize) << 10;

    // Building: a table far past the address space.
    let err = CuckooFilter::builder().capacity(1 << 35).build().unwrap_err();
    assert!(matches!(err, ConfigError::OutOfMemory { bytes } if bytes > 1 << 35), "{err:?}");

    // Loading a file that holds a table of 8 GiB (sparse: it costs no disk), so the reader may
    // allocate it, but not under the limit.
    let dir = std::env::temp_dir().join(format!("bugu-oom-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("large.bugu");
    let buckets = 1u64 << 31;
    let payload = buckets as usize * 4;
    let file = std::fs::File::create(&path).unwrap();
    std::io::Write::write_all(&mut &file, &params_prefix(buckets)).unwrap();
    file.set_len((56 + payload + 16 + 8) as u64).unwrap();
    drop(file);
    let err = CuckooFilter::load(&path).unwrap_err();
    assert!(matches!(err, PersistError::OutOfMemory { bytes } if bytes == payload + 16), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("out of memory: could not allocate {} bytes for a table", payload + 16)
    );
    std::fs::remove_dir_all(&dir).unwrap();

    // Copying a view of 3 GiB: the view fits under the limit, a copy beside it does not.
    let buckets = 3u64 << 28;
    let table = buckets as usize * 4 + 16;
    assert!(table < limit && 2 * table > limit);
    let bytes = empty_filter_bytes(buckets);
    let view = CuckooView::from_trusted_bytes(&bytes).unwrap();
    let err = view.try_to_filter().unwrap_err();
    assert!(matches!(err, PersistError::OutOfMemory { bytes } if bytes == table), "{err:?}");
    drop(bytes);

    // Growing: a growable filter whose first level fits but not at this size.
    let err = GrowableFilter::builder().initial_capacity(1 << 35).build().unwrap_err();
    assert!(matches!(err, GrowableConfigError::Level(ConfigError::OutOfMemory { .. })), "{err:?}");

    // The process goes on: small filters are built, read and copied.
    let mut filter = CuckooFilter::new(1_000).unwrap();
    filter.insert("after").unwrap();
    let bytes = filter.to_bytes();
    assert!(CuckooFilter::from_bytes(&bytes).unwrap().contains("after"));
    assert!(CuckooView::from_bytes(&bytes).unwrap().try_to_filter().unwrap().contains("after"));
}
