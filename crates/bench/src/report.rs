//! Medians, ratios and the printed table.

/// The median of `values` (upper median for an even count).
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// One line of the result table.
pub struct Line {
    pub case: String,
    pub figure: String,
    pub note: String,
}

/// Prints the table in Markdown, ready for BENCHMARKS.md.
pub fn print(title: &str, lines: &[Line]) {
    println!("\n### {title}\n");
    println!("| case | figure (median) | ratio / bar |");
    println!("|---|---|---|");
    for l in lines {
        println!("| {} | {} | {} |", l.case, l.figure, l.note);
    }
}

/// The peak RSS of a child, from its `peak_rss_kib=` output.
pub fn field(output: &str, name: &str) -> Option<f64> {
    output
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
        .and_then(|v| v.parse().ok())
}
