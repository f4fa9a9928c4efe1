//! The C programs in `tests/c/`, compiled with the system gcc against the static and the shared
//! library and run under AddressSanitizer and UndefinedBehaviorSanitizer; the headers compiled as
//! C++ with g++; a file written from C read by the `bugu` command, and back; `bugu.pc` used by
//! `pkg-config` against a copy of the library and headers installed as its comment says.
//!
//! The library is built by a nested `cargo build` into `target/capi-tests` (the outer `cargo
//! test` holds the lock of the usual target directory). The command is `$BUGU_CLI`, else
//! `target/debug/bugu` (built by `cargo test --workspace`), else built there too.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn workspace_target() -> PathBuf {
    crate_dir().join("../../target")
}

fn cargo_build(package: &str) -> PathBuf {
    let target = workspace_target().join("capi-tests");
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "-p", package])
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .expect("run cargo");
    assert!(status.success(), "cargo build -p {package} failed");
    target.join("debug")
}

/// The directory holding the freshly built `libbugu_capi.a` and `libbugu_capi.so`.
fn library_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| cargo_build("bugu-capi"))
}

fn cli() -> PathBuf {
    if let Some(path) = std::env::var_os("BUGU_CLI") {
        return PathBuf::from(path);
    }
    let built = workspace_target().join("debug/bugu");
    if built.is_file() { built } else { cargo_build("bugu-cli").join("bugu") }
}

#[derive(Clone, Copy, Debug)]
enum Link {
    Static,
    Shared,
}

/// Compiles `sources` with `compiler` against the library; the program's path.
fn compile(compiler: &str, sources: &[&str], link: Link, name: &str) -> PathBuf {
    let lib = library_dir();
    let out = lib.join(format!("{name}-{link:?}"));
    let mut command = Command::new(compiler);
    command
        .args(["-g", "-O1", "-fno-omit-frame-pointer", "-fsanitize=address,undefined"])
        .args(["-fno-sanitize-recover=all", "-Wall", "-Wextra", "-Werror", "-pthread"])
        .arg("-I")
        .arg(crate_dir().join("include"))
        .arg("-I")
        .arg(crate_dir().join("tests/c"));
    for source in sources {
        command.arg(crate_dir().join(source));
    }
    command.arg("-o").arg(&out);
    match link {
        Link::Static => command.arg(lib.join("libbugu_capi.a")).args(["-ldl", "-lm"]),
        Link::Shared => command
            .arg(format!("-L{}", lib.display()))
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-lbugu_capi"),
    };
    let output = command.output().unwrap_or_else(|error| panic!("cannot run {compiler}: {error}"));
    assert!(
        output.status.success(),
        "{compiler} {name} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    out
}

fn run(program: &Path, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .env("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0:halt_on_error=1")
        .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        .output()
        .expect("run the test program")
}

fn passes(program: &Path, expected: &str) {
    let output = run(program, &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains(expected),
        "{} failed ({}):\n{stdout}\n{}",
        program.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

fn both_links(source: &str, expected: &str) {
    for link in [Link::Static, Link::Shared] {
        let name = source.trim_start_matches("tests/c/").trim_end_matches(".c");
        passes(&compile("gcc", &[source], link, name), expected);
    }
}

#[test]
fn api() {
    both_links("tests/c/api.c", "api: ok");
}

#[test]
fn compat_header() {
    both_links("tests/c/compat.c", "compat: ok");
}

#[test]
fn hostile_buffers() {
    both_links("tests/c/hostile.c", "hostile: ok");
}

#[test]
fn batches() {
    both_links("tests/c/batch.c", "batch: ok");
}

#[test]
fn growable_config() {
    both_links("tests/c/growable_config.c", "growable_config: ok");
}

#[test]
fn one_table_filters() {
    both_links("tests/c/expanding.c", "expanding: ok");
}

#[test]
fn one_table_files_cross_between_c_and_the_command() {
    let program = compile("gcc", &["tests/c/expanding.c"], Link::Static, "expanding-files");
    let dir = std::env::temp_dir().join(format!("bugu-capi-one-table-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let from_c = dir.join("from-c.bugu");
    let from_c = from_c.to_str().unwrap();
    assert!(run(&program, &["write", from_c, "alpha", "beta", "καφές"]).status.success());
    assert_eq!(bugu(&["check", from_c, "alpha", "beta", "καφές"]).status.code(), Some(0));
    assert_eq!(bugu(&["check", from_c, "gamma-not-there"]).status.code(), Some(1));
    let from_cli = dir.join("from-cli.bugu");
    let from_cli = from_cli.to_str().unwrap();
    bugu(&["create", from_cli, "-n", "100", "--growable", "--one-table"]);
    assert_eq!(bugu(&["add", from_cli, "one", "two", "ünïcode"]).status.code(), Some(0));
    assert_eq!(run(&program, &["check", from_cli, "one", "two", "ünïcode"]).status.code(), Some(0));
    assert_eq!(run(&program, &["check", from_cli, "three-not-there"]).status.code(), Some(1));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn eight_threads() {
    both_links("tests/c/threads.c", "threads: ok");
}

#[test]
fn headers_compile_as_cpp() {
    for link in [Link::Static, Link::Shared] {
        passes(&compile("g++", &["tests/c/header.cpp"], link, "header-cpp"), "header.cpp: ok");
    }
}

fn bugu(args: &[&str]) -> Output {
    let output = Command::new(cli()).args(args).output().expect("run the bugu command");
    assert!(output.status.code().is_some_and(|code| code < 2), "bugu {args:?}: {output:?}");
    output
}

#[test]
fn files_cross_between_c_and_the_command() {
    let program = compile("gcc", &["tests/c/cli_file.c"], Link::Static, "cli_file");
    let dir = std::env::temp_dir().join(format!("bugu-capi-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (growable, batch) in [(false, false), (true, false), (false, true), (true, true)] {
        let kind = match (growable, batch) {
            (false, false) => "",
            (true, false) => "-growable",
            (false, true) => "-batch",
            (true, true) => "-growable-batch",
        };
        let (write, check) = (format!("write{kind}"), format!("check{kind}"));
        let from_c = dir.join(format!("{write}.bugu"));
        let from_c = from_c.to_str().unwrap();
        assert!(run(&program, &[&write, from_c, "alpha", "beta", "καφές"]).status.success());
        assert_eq!(bugu(&["check", from_c, "alpha", "beta", "καφές"]).status.code(), Some(0));
        assert_eq!(bugu(&["check", from_c, "gamma-not-there"]).status.code(), Some(1));
        if batch {
            // The integers 1, 2, 3 and -1 of the u64 and i64 batches: 8 bytes, little-endian.
            let integers = ["0100000000000000", "0200000000000000", "0300000000000000", "ffffffffffffffff"];
            let mut args = vec!["check", "--hex", from_c];
            args.extend(integers);
            assert_eq!(bugu(&args).status.code(), Some(0));
            assert_eq!(bugu(&["check", "--hex", from_c, "0400000000000000"]).status.code(), Some(1));
        }

        let from_cli = dir.join(format!("cli-{write}.bugu"));
        let from_cli = from_cli.to_str().unwrap();
        let mut create = vec!["create", from_cli, "-n", "1000"];
        if growable {
            create.push("--growable");
        }
        bugu(&create);
        assert_eq!(bugu(&["add", from_cli, "one", "two", "ünïcode"]).status.code(), Some(0));
        assert_eq!(run(&program, &[&check, from_cli, "one", "two", "ünïcode"]).status.code(), Some(0));
        assert_eq!(run(&program, &[&check, from_cli, "three-not-there"]).status.code(), Some(1));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Installs the library and headers under `prefix` as `bugu.pc`'s comment says (`libraries`: the
/// file names to copy), with the `.pc` file's prefix rewritten; `PKG_CONFIG_PATH` for it.
fn install(prefix: &Path, libraries: &[&str]) -> PathBuf {
    let (lib, include, pkgconfig) =
        (prefix.join("lib"), prefix.join("include"), prefix.join("lib/pkgconfig"));
    for dir in [&lib, &include, &pkgconfig] {
        std::fs::create_dir_all(dir).unwrap();
    }
    for library in libraries {
        std::fs::copy(library_dir().join(library), lib.join(library)).unwrap();
    }
    for header in ["bugu.h", "cuckoo_filter.h"] {
        std::fs::copy(crate_dir().join("include").join(header), include.join(header)).unwrap();
    }
    let pc = std::fs::read_to_string(crate_dir().join("bugu.pc")).unwrap();
    let pc: Vec<String> =
        pc.lines()
            .map(|line| {
                if line.starts_with("prefix=") { format!("prefix={}", prefix.display()) } else { line.into() }
            })
            .collect();
    std::fs::write(pkgconfig.join("bugu.pc"), pc.join("\n") + "\n").unwrap();
    pkgconfig
}

/// `pkg-config ARGS bugu`, split into words. Fails (does not skip) when pkg-config is missing.
fn pkg_config(path: &Path, args: &[&str]) -> Vec<String> {
    let output = Command::new("pkg-config")
        .args(args)
        .arg("bugu")
        .env("PKG_CONFIG_PATH", path)
        .output()
        .expect("pkg-config is needed (scripts/test installs it)");
    assert!(output.status.success(), "pkg-config {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap().split_whitespace().map(String::from).collect()
}

#[test]
fn pkg_config_builds_against_an_installed_copy() {
    let root = std::env::temp_dir().join(format!("bugu-capi-pc-{}", std::process::id()));
    // A prefix with both libraries (the linker takes the shared one), and one with only the
    // static library for `--static`: that program must run without the shared library anywhere.
    let cases = [
        ("shared", &["libbugu_capi.so", "libbugu_capi.a"][..], &["--cflags", "--libs"][..]),
        ("static", &["libbugu_capi.a"][..], &["--cflags", "--libs", "--static"][..]),
    ];
    for (name, libraries, args) in cases {
        let prefix = root.join(name);
        let path = install(&prefix, libraries);
        let flags = pkg_config(&path, args);
        assert!(flags.contains(&format!("-I{}", prefix.join("include").display())), "{flags:?}");
        let program = prefix.join("pkg");
        let output = Command::new("gcc")
            .args(["-Wall", "-Wextra", "-Werror"])
            .arg(crate_dir().join("tests/c/pkg.c"))
            .arg("-o")
            .arg(&program)
            .args(&flags)
            .output()
            .expect("run gcc");
        assert!(output.status.success(), "gcc with {flags:?}: {}", String::from_utf8_lossy(&output.stderr));
        let dynamic = Command::new("readelf").arg("-d").arg(&program).output().expect("run readelf");
        let needs_shared = String::from_utf8_lossy(&dynamic.stdout).contains("libbugu_capi.so");
        assert_eq!(needs_shared, name == "shared", "{name}: which library the program links");
        // Only the installed copy: not the directories `cargo test` puts on the library path.
        let mut command = Command::new(&program);
        command.env_remove("LD_LIBRARY_PATH");
        if name == "shared" {
            command.env("LD_LIBRARY_PATH", prefix.join("lib"));
        }
        let output = command.output().expect("run the program");
        assert!(String::from_utf8_lossy(&output.stdout).contains("pkg: ok"), "{name}: {output:?}");
    }
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn example_scenarios_print_their_counts() {
    let program = compile("gcc", &["examples/scenarios.c"], Link::Static, "scenarios");
    let output = run(&program, &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(
        stdout.contains("database front: 400000 lookups") && stdout.contains("cdn cache: 500000 requests"),
        "{stdout}"
    );
}
