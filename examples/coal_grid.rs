//! Make `data/coal_grid811.csv` from `data/coal_dates.csv`: the 191 coal-mining disasters
//! (decimal years) binned as Murray, Adams & MacKay (2010) do, 811 bins of 50 days from the first
//! disaster. `cargo run --release --example coal_grid` rewrites the file; a test checks that the
//! shipped file is exactly what this gives.

use fieldmc::study::events::{coal_bins, coal_csv, read_column};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = env!("CARGO_MANIFEST_DIR");
    let dates = std::fs::read_to_string(format!("{root}/data/coal_dates.csv"))?;
    let years = read_column(&dates, "date")?;
    let (binning, counts) = coal_bins(&years)?;
    let out = format!("{root}/data/coal_grid811.csv");
    std::fs::write(&out, coal_csv(&years, binning, &counts))?;
    println!(
        "{out}: {} events in {} bins of {} days",
        counts.iter().sum::<u64>(),
        binning.bins,
        binning.width
    );
    Ok(())
}
