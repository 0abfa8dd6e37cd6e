//! Merge at scale: N bundles of P partitions each, generated, for `klogscan merge`.
//!
//! ```text
//! cargo run --release --features testkit --example merge_scale -- OUT N P
//! /usr/bin/time -v target/release/klogscan merge OUT/bundles --format json > /dev/null
//! ```
//!
//! What the bundles hold: `klogscan::testkit::bundles`.

use std::path::{Path, PathBuf};

/// `klogscan collect` of one log dir into `file`.
fn collect(dir: &Path, file: std::fs::File) -> std::io::Result<()> {
    let opts = klogscan::partition::scan::ScanOptions::default();
    klogscan::bundle::collect(&[dir.to_path_buf()], &opts, std::io::BufWriter::new(file))?;
    Ok(())
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [out, n, p] = args.as_slice() else {
        eprintln!("usage: merge_scale OUT BUNDLES PARTITIONS");
        std::process::exit(2);
    };
    let (n, p): (usize, i32) = (n.parse().unwrap_or(100), p.parse().unwrap_or(1000));
    let w = klogscan::testkit::bundles::write_bundles(&PathBuf::from(out), n, p, collect)?;
    println!(
        "{n} bundles x {p} partitions in {} ({} bytes, template {} bytes)",
        w.dir.display(),
        w.bytes,
        w.template_bytes
    );
    Ok(())
}
