//! The blocklist scenario at full size: `cargo run --release -p bugu-scenarios --example blocklist`.
//! What it shows is in the `bugu_scenarios::blocklist` module docs.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let report = bugu_scenarios::blocklist::run(&bugu_scenarios::blocklist::Config::default())?;
    print!("{report}");
    Ok(())
}
