//! Build a store from a dump and time it, then check it, evict it and probe its device:
//!
//! ```sh
//! cargo run --release -p gigagas-state --example build_store -- dumps/mainnet.gigagas /path/store 8GiB
//! ```
//!
//! (Until `gigagas state build` exists; it measures what that command will do.)

use gigagas_state::{
    BuildOptions, EvictOptions, build_store, evict, open_store, probe_random_reads, residency,
};
use std::{path::PathBuf, time::Duration, time::Instant};

fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = [
        ("GiB", 1u64 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
        ("", 1),
    ]
    .into_iter()
    .find_map(|(suffix, mult)| s.strip_suffix(suffix).map(|n| (n, mult)))?;
    num.trim()
        .parse::<f64>()
        .ok()
        .map(|n| (n * mult as f64) as u64)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(dump), Some(out)) = (args.next(), args.next()) else {
        eprintln!("usage: build_store DUMP OUT [PAD_SIZE, e.g. 8GiB]");
        std::process::exit(2);
    };
    let pad_to = args.next().and_then(|s| parse_size(&s));
    let out = PathBuf::from(out);

    let start = Instant::now();
    let (dump, info) = gigagas_dump::read_dump(std::path::Path::new(&dump))?;
    println!("read dump in {:.1} s", start.elapsed().as_secs_f64());

    let mut last = Instant::now();
    let summary = build_store(&dump, &info, &out, &BuildOptions { pad_to }, &mut |p| {
        if last.elapsed() > Duration::from_secs(10) {
            println!("  {:?} {} / {}", p.stage, p.done, p.total);
            last = Instant::now();
        }
    })?;
    println!(
        "built {} in {:.1} s (final sync {:.1} s): file {:.2} GiB, used {:.2} GiB, {:.0} MB/s",
        summary.path.display(),
        summary.elapsed.as_secs_f64(),
        summary.sync.as_secs_f64(),
        summary.file_bytes as f64 / (1u64 << 30) as f64,
        summary.used_bytes as f64 / (1u64 << 30) as f64,
        summary.used_bytes as f64 / 1e6 / summary.elapsed.as_secs_f64(),
    );
    println!("{:?}", summary.meta);
    for t in &summary.tables {
        println!("  {t:?}");
    }
    println!(
        "pad bytes per account: {:.0}",
        summary.used_bytes as f64 / summary.meta.pad_accounts.max(1) as f64
    );

    let report = evict(&out, &EvictOptions::default())?;
    println!(
        "after evict: {:?} ({:.4})",
        report.after,
        report.after.fraction()
    );
    assert!(report.after.is_cold());
    {
        let store = open_store(&out, info.checksum)?;
        let mut reader = store.reader()?;
        reader.meter().set_timing(gigagas_state::Timing::Every);
        let t = Instant::now();
        for (segment, s) in dump.segments.iter().enumerate() {
            for a in &s.pre_state.accounts {
                reader.account(segment, a.address)?;
            }
            for slot in &s.pre_state.storage {
                reader.storage(segment, slot.address, slot.slot)?;
            }
        }
        let mut lat = reader.meter().take_latencies();
        let stats = reader.meter().stats();
        println!(
            "cold read of every account and slot: {} reads in {:.3} s, p50 {} µs, p99 {} µs",
            stats.reads(),
            t.elapsed().as_secs_f64(),
            gigagas_state::quantile(&mut lat, 0.5) / 1000,
            gigagas_state::quantile(&mut lat, 0.99) / 1000,
        );
    }
    println!(
        "residency after the cold read: {:.4}",
        residency(&out)?.fraction()
    );
    evict(&out, &EvictOptions::default())?;
    for depth in [1, 2, 8] {
        let r = probe_random_reads(
            &out.join(gigagas_state::DATA_FILE),
            Duration::from_millis(200),
            depth,
        )?;
        println!(
            "probe qd {depth}: {:.0} reads/s, p50 {:?}, p99 {:?}, direct {}",
            r.reads_per_s, r.p50, r.p99, r.direct
        );
    }
    Ok(())
}
