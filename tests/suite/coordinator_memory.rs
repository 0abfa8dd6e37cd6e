//! Memory bound of the coordinator's log (issue #24 item 5, "1M transactions in one
//! coordinator partition in bounded memory"), asserted through an address-space limit
//! (`ulimit -v`) on a child `klogscan` — never through timing.
//!
//! 200 000 committed transactions of 1 000 transactional ids in `__transaction_state-0`
//! (Ongoing → PrepareCommit → CompleteCommit, one record per batch: 600 000 records, the
//! `coordinator-txns` shape of `examples/synth`, scaled down), in 8 MiB segments. Before,
//! the walk kept every record's key and value (≈ 300 bytes each, ≈ 180 MB) until the
//! cluster stage replayed them; it now keeps at most `keep_coordinator_bytes` (16 MiB)
//! and the cluster stage reads the segments again, streaming, into a model holding the
//! 1 000 ids. Measured by hand with one malloc arena (`MALLOC_ARENA_MAX=1`: the same
//! address space in every run): the old code (`b451a23`, release build) aborted under
//! 192 MiB and passed under 208 MiB; the new code passes under 128 MiB (debug build; 96 MiB
//! release), so the limit below leaves room on both sides. A second run under a limit far
//! too small must fail: the limit is really applied. Linux only (`ulimit -v` through `sh`,
//! glibc's `MALLOC_ARENA_MAX`).
#![cfg(all(target_os = "linux", feature = "testkit"))]

use crate::common::run;

use klogscan::testkit::BatchSpec;
use klogscan::testkit::encode::RecordSpec;
use klogscan::testkit::txnlog::{TxnValue, key, state};
use run::{assert_limit_binds, run_limited_arenas};
use std::io::Write;
use std::path::Path;

const TRANSACTIONS: u64 = 200_000;
const IDS: u64 = 1_000;

/// Address-space limit for the scan, with one malloc arena (threads, the binary and the
/// segment buffers included).
const LIMIT_MIB: u64 = 160;

/// Seconds a run may take before it counts as a hang (a debug build on a loaded machine).
const SECS: u64 = 1200;

/// `__transaction_state-0` holding `n` committed transactions of [`IDS`] ids, rolled into
/// 8 MiB segments as a broker rolls them.
fn write_coordinator_log(dir: &Path, n: u64) {
    let part = dir.join("__transaction_state-0");
    std::fs::create_dir_all(&part).unwrap();
    let t0 = 1_700_000_000_000i64;
    let (mut offset, mut in_segment) = (0i64, 0u64);
    let mut w: Option<std::io::BufWriter<std::fs::File>> = None;
    for i in 0..n {
        let id = format!("app-{:04}", i % IDS);
        let pid = 10_000 + (i % IDS) as i64;
        let start = t0 + 10 * i as i64;
        let parts: [(&str, &[i32]); 2] = [("orders", &[(i % 8) as i32]), ("payments", &[0])];
        for (status, at) in [
            (state::ONGOING, start),
            (state::PREPARE_COMMIT, start + 5),
            (state::COMPLETE_COMMIT, start + 9),
        ] {
            let mut v = TxnValue::new(pid, 0, status).times(at, start);
            if status != state::COMPLETE_COMMIT {
                v = v.partitions(&parts);
            }
            let bytes = BatchSpec {
                base_offset: offset,
                partition_leader_epoch: 3,
                base_timestamp: at,
                records: vec![RecordSpec {
                    key: Some(key(&id)),
                    value: Some(v.encode()),
                    ..RecordSpec::default()
                }],
                ..BatchSpec::default()
            }
            .encode();
            if w.is_none() || in_segment + bytes.len() as u64 > 8 << 20 {
                if let Some(mut old) = w.take() {
                    old.flush().unwrap();
                }
                let file = std::fs::File::create(part.join(format!("{offset:020}.log"))).unwrap();
                w = Some(std::io::BufWriter::new(file));
                in_segment = 0;
            }
            w.as_mut().unwrap().write_all(&bytes).unwrap();
            in_segment += bytes.len() as u64;
            offset += 1;
        }
    }
    w.unwrap().flush().unwrap();
}

#[test]
fn a_long_coordinator_log_replays_within_a_bounded_address_space() {
    let dir = tempfile::tempdir().unwrap();
    write_coordinator_log(dir.path(), TRANSACTIONS);
    let path = dir.path().to_str().unwrap();
    let args = ["scan", path, "--threads", "2", "--format", "json"];
    let r = run_limited_arenas(LIMIT_MIB, 1, &args, SECS);
    assert_eq!(
        r.status.code(),
        Some(0),
        "klogscan under {LIMIT_MIB} MiB of address space failed: {}",
        r.err
    );
    // Every record was read and replayed: no finding about the log, the partition whole.
    let report: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(report["summary"]["partitions"], 1, "{}", r.out);
    assert_eq!(report["summary"]["records"], 3 * TRANSACTIONS, "{}", r.out);
    assert_eq!(
        report["findings"].as_array().map(Vec::len),
        Some(0),
        "{}",
        r.out
    );
    // The limit binds: far below what the binary and the segments need, it fails.
    assert_limit_binds(24, &args, SECS);
}
