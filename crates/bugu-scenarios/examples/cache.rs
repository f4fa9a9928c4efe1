//! The cache scenario at full size: `cargo run --release -p bugu-scenarios --example cache`.
//! What it shows is in the `bugu_scenarios::cache` module docs.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let report = bugu_scenarios::cache::run(&bugu_scenarios::cache::Config::default())?;
    print!("{report}");
    Ok(())
}
