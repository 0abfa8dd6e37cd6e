//! The library's read path beside the mapped one: `pipeline::scan` over the same directory
//! in child processes that alternate between the library's default (no SIGBUS handler, so
//! every file is read, never mapped) and an embedder that opted in with
//! `read::segment::enable_guarded_maps` (`--mmap auto`: segments mapped). Each child times
//! its scan alone (discovery included, process start excluded); the files are read once
//! first so that both start page-cached.
//!
//! `cargo run --release --example readpath -- DIR [ROUNDS] [THREADS]`
//! (defaults: 7 rounds, 1 thread). Prints each round, the medians, their ratio and the load
//! average before and after.

use klogscan::partition::scan::ScanOptions;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// The child: one scan, its wall time and bytes on stdout.
fn child(mapped: bool, dir: PathBuf, threads: usize) {
    if mapped {
        // SAFETY: this process installs no other SIGBUS handler.
        unsafe { klogscan::read::segment::enable_guarded_maps() };
    }
    let opts = ScanOptions::default().with_threads(threads);
    let t = Instant::now();
    let r = klogscan::pipeline::scan(&[dir], &opts);
    let secs = t.elapsed().as_secs_f64();
    println!("{secs} {} {}", r.summary.bytes, r.findings.len());
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child") {
        let threads = args[4].parse().expect("threads");
        return child(args[2] == "mapped", PathBuf::from(&args[3]), threads);
    }
    let dir = args.get(1).expect("usage: readpath DIR [ROUNDS] [THREADS]");
    let rounds: usize = args.get(2).map_or(7, |s| s.parse().expect("rounds"));
    let threads: usize = args.get(3).map_or(1, |s| s.parse().expect("threads"));
    // Warm the page cache: every file read once.
    let mut stack = vec![PathBuf::from(dir)];
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else {
            let _ = std::fs::read(&p);
        }
    }
    let exe = std::env::current_exe().unwrap();
    let run = |mode: &str| -> (f64, u64, String) {
        let out = Command::new(&exe)
            .args(["--child", mode, dir, &threads.to_string()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let s = String::from_utf8(out.stdout).unwrap();
        let mut f = s.split_whitespace();
        let secs = f.next().unwrap().parse().unwrap();
        let bytes = f.next().unwrap().parse().unwrap();
        (secs, bytes, f.next().unwrap().to_string())
    };
    println!("load before: {}", loadavg());
    let (mut read, mut mapped) = (Vec::new(), Vec::new());
    let mut bytes = 0;
    for round in 0..rounds {
        // Alternate which goes first, so that neither always follows the other.
        let order = if round % 2 == 0 {
            ["read", "mapped"]
        } else {
            ["mapped", "read"]
        };
        for mode in order {
            let (secs, b, findings) = run(mode);
            bytes = b;
            println!("round {round} {mode:6} {secs:.3} s ({findings} findings)");
            if mode == "read" {
                read.push(secs)
            } else {
                mapped.push(secs)
            }
        }
    }
    let (r, m) = (median(&mut read), median(&mut mapped));
    let gbs = |s: f64| bytes as f64 / s / 1e9;
    println!("load after: {}", loadavg());
    println!(
        "{bytes} bytes, {threads} thread(s), median of {rounds}: read {r:.3} s ({:.2} GB/s), \
         mapped {m:.3} s ({:.2} GB/s), read/mapped = {:.2}",
        gbs(r),
        gbs(m),
        r / m
    );
}
