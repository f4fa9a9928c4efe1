//! The database scenario at full size: `cargo run --release -p bugu-scenarios --example database`.
//! What it shows is in the `bugu_scenarios::database` module docs.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let report = bugu_scenarios::database::run(&bugu_scenarios::database::Config::default())?;
    print!("{report}");
    Ok(())
}
