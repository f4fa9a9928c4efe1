//! Crash safety of `save`: a child process saves two filters alternately, over and over, and is
//! killed (SIGKILL) at random moments; the destination must always be one of the two complete
//! filters, never a mix or a prefix — while the child runs and after each kill.
//!
//! The child is this same test binary, re-run with an environment variable that turns this test
//! into the saving loop. (A kill tests process crashes; power loss is what the fsyncs are for,
//! which no test here can simulate.)

#![cfg(unix)]

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bugu::{CuckooFilter, FilterMut, Hashed, Persist};

const CHILD: &str = "BUGU_CRASH_TEST_SAVER";
const TEST_NAME: &str = "saves_survive_being_killed";

/// The two filters the child alternates between (about 300 KB each, so that a save takes long
/// enough for kills to land inside it).
fn filters() -> [CuckooFilter; 2] {
    [0u64, 1].map(|which| {
        let mut filter = CuckooFilter::builder().capacity(200_000).seed(which).build().unwrap();
        for key in 0..150_000u64 {
            filter.insert(&Hashed((which, key))).unwrap();
        }
        filter
    })
}

/// The child: saves the two filters alternately until killed. It also stops by itself if the
/// test that started it is gone (then it has been re-parented) or after a minute, so that a
/// failed or interrupted test never leaves it running.
fn saver(path: &Path) -> ! {
    let filters = filters();
    let parent = std::os::unix::process::parent_id();
    let started = std::time::Instant::now();
    loop {
        for filter in &filters {
            filter.save(path).unwrap();
        }
        if std::os::unix::process::parent_id() != parent || started.elapsed().as_secs() > 60 {
            std::process::exit(0);
        }
    }
}

/// xorshift64: randomness for the kill times, reproducible from the printed seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn inode(path: &Path) -> Option<u64> {
    std::fs::metadata(path).ok().map(|m| m.ino())
}

#[test]
fn saves_survive_being_killed() {
    if let Some(path) = std::env::var_os(CHILD) {
        saver(Path::new(&path));
    }
    let dir: PathBuf = std::env::temp_dir().join(format!("bugu-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("filter.bugu");
    let expected = filters().map(|f| f.to_bytes());
    let seed = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    let mut rng = Rng(seed);
    let mut seen = [0usize; 2];

    let mut check = |when: &str| {
        let bytes = std::fs::read(&path).unwrap();
        let which = expected.iter().position(|e| *e == bytes);
        let which = which.unwrap_or_else(|| {
            panic!("{when}: the destination ({} bytes) is neither filter (seed {seed})", bytes.len())
        });
        seen[which] += 1;
        CuckooFilter::load(&path).unwrap();
    };

    for round in 0..8 {
        let before = inode(&path);
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", TEST_NAME, "--test-threads=1"])
            .env(CHILD, &path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Wait for the child's first save of this round: a rename gives the name a new inode.
        let deadline = Instant::now() + Duration::from_secs(60);
        while inode(&path) == before {
            assert!(Instant::now() < deadline, "round {round}: the child never saved");
            assert!(child.try_wait().unwrap().is_none(), "round {round}: the child exited");
            std::thread::sleep(Duration::from_millis(1));
        }
        // Read while it saves, then kill it at a random moment.
        for _ in 0..rng.below(5) {
            check("while saving");
            std::thread::sleep(Duration::from_micros(rng.below(3000)));
        }
        std::thread::sleep(Duration::from_micros(rng.below(20_000)));
        child.kill().unwrap();
        child.wait().unwrap();
        check("after the kill");
    }
    assert!(seen[0] > 0 && seen[1] > 0, "only one filter was ever seen: {seen:?} (seed {seed})");
    // Whatever a kill left behind is a temporary file, never the destination's name...
    let names = || -> Vec<String> {
        let entries = std::fs::read_dir(&dir).unwrap();
        entries.map(|entry| entry.unwrap().file_name().into_string().unwrap()).collect()
    };
    for name in names() {
        assert!(name == "filter.bugu" || name.starts_with(".filter.bugu.bugu-tmp-"), "{name}");
    }
    // ...and the next save of the same file removes it.
    filters()[0].save(&path).unwrap();
    assert_eq!(names(), ["filter.bugu"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
