//! The bugu demo: what a cuckoo filter does, on an embedded default workload.
//!
//! Inserts 5,000 items, checks that every one is found, measures the false-positive rate on 5,000
//! items that were never inserted, deletes 1,000 and checks what remains, then prints the stats.
//!
//! Run with `cargo run --release -p bugu-demo`.

use bugu::{CuckooFilter, Filter, FilterMut};

const ITEMS: usize = 5_000;
const DELETED: usize = 1_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut filter = CuckooFilter::builder().capacity(ITEMS).false_positive_rate(0.01).build()?;
    println!("built {filter:?}");
    println!("  configured false-positive bound: {:.3}%\n", filter.false_positive_rate() * 100.0);

    let items: Vec<String> = (0..ITEMS).map(|i| format!("item_{i}")).collect();
    for item in &items {
        filter.insert(item)?;
    }
    let false_negatives = items.iter().filter(|item| !filter.contains(*item)).count();
    println!("inserted {} items; false negatives: {false_negatives}", filter.len());

    let absent: Vec<String> = (0..ITEMS).map(|i| format!("absent_{i}")).collect();
    let false_positives = absent.iter().filter(|item| filter.contains(*item)).count();
    println!(
        "false positives on {} absent items: {false_positives} ({:.3}%; expected at this load {:.3}%)",
        absent.len(),
        false_positives as f64 / absent.len() as f64 * 100.0,
        filter.expected_false_positive_rate() * 100.0
    );

    let deleted_not_found = items[..DELETED].iter().filter(|item| !filter.remove(*item)).count();
    let deleted_still_seen = items[..DELETED].iter().filter(|item| filter.contains(*item)).count();
    let kept_lost = items[DELETED..].iter().filter(|item| !filter.contains(*item)).count();
    println!("\ndeleted {DELETED} items ({deleted_not_found} not found)");
    println!("  deleted items still reported (false positives): {deleted_still_seen}");
    println!("  remaining items lost (false negatives):         {kept_lost}");
    println!("  items left: {}\n", filter.len());

    println!("{}", filter.stats());
    println!("first buckets:");
    for bucket in filter.buckets(0..4) {
        println!("  {bucket}");
    }
    if false_negatives + kept_lost > 0 {
        return Err("false negatives: this is a bug".into());
    }
    Ok(())
}
