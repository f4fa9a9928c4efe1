//! The checked-in `include/bugu.h` is what cbindgen generates from the crate now, with the key
//! operations `build.rs` generates (`$OUT_DIR/keys.rs`, which cbindgen does not find by following
//! the crate's modules): a stale header fails here. `BUGU_BLESS=1 cargo test -p bugu-capi --test header` rewrites it.

use std::path::Path;

#[test]
fn checked_in_header_is_current() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_src(Path::new(env!("OUT_DIR")).join("keys.rs"))
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("UTF-8 header");
    let path = crate_dir.join("include/bugu.h");
    if std::env::var_os("BUGU_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write the header");
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "include/bugu.h is stale: regenerate it with `BUGU_BLESS=1 cargo test -p bugu-capi --test header`"
    );
}
