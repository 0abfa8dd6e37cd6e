//! Issue #11, `verify` in bounded memory: the offset and time index checks read only the
//! entries the indexes name from the scan's walk, not a record per log entry. Asserted
//! through an address-space limit (`ulimit -v`) on a child `klogscan` — never timing.
//!
//! Before, `verify` kept every entry's position and offsets (`LogBatch`, 56 bytes, in a
//! growing `Vec` per piece, then concatenated) until its checks ran: for the 2 000 000
//! batches below (one live segment of 150 MB, split into pieces) ≈ 112–224 MB for those
//! alone. Calibrated under `ulimit -v` with `MALLOC_ARENA_MAX=2` and `--mmap never` (the
//! log read in bounded chunks, so the limit measures the heap, not a map of the log): the
//! old release binary (main at 1941496) failed at 256 MiB and passed at 288 MiB, with 1 and
//! with 2 threads; the new debug binary (the one this test runs) passes at 112 MiB (2
//! threads) and 128 MiB (1 thread). A second run under a limit far too small must fail:
//! the limit is really applied. Linux only (`ulimit -v` through `sh`, glibc's
//! `MALLOC_ARENA_MAX`).
#![cfg(target_os = "linux")]

use crate::common::run;
use crate::common::small_batch;

use run::{assert_limit_binds, run_limited_ok};
use std::io::Write;
use std::path::Path;

const BATCHES: i64 = 2_000_000;

/// Address-space limit for the verify (threads, arenas, the binary and two windows of
/// pieces included; the old entry records of the segment alone came close to it).
const LIMIT_MIB: u64 = 160;

/// Seconds a run may take before it counts as a hang (a debug build on a loaded machine).
const SECS: u64 = 1200;

/// `index.interval.bytes`: the broker's default.
const INTERVAL: u64 = 4096;

/// The offset-index slot whose position is moved off its batch, and the time-index slot
/// whose timestamp is changed: one wrong entry each, far into the segment (a later piece).
const BAD_OFFSET_SLOT: usize = 20_000;
const BAD_TIME_SLOT: usize = 25_000;

/// One partition with one live segment of `n` one-record batches of a plain producer,
/// each with its own timestamp, and its `.index` / `.timeindex` as the broker writes them
/// (an entry once more than [`INTERVAL`] bytes were appended since the last), with one
/// wrong entry in each. Returns the number of offset and time index entries.
fn write_indexed_small_batches(dir: &Path, n: i64) -> (usize, usize) {
    let part = dir.join("small-0");
    std::fs::create_dir_all(&part).unwrap();
    let one = small_batch::one_record_batch();
    let size = one.len() as u64;
    let mut log = std::io::BufWriter::new(
        std::fs::File::create(part.join("00000000000000000000.log")).unwrap(),
    );
    let (mut index, mut timeindex) = (Vec::new(), Vec::new());
    let mut batch = one.clone();
    let mut since = 0u64;
    for i in 0..n {
        // baseOffset (outside the CRC), then base and max timestamp (inside it).
        let ts = 1_700_000_000_000 + i;
        batch[..8].copy_from_slice(&i.to_be_bytes());
        batch[27..35].copy_from_slice(&ts.to_be_bytes());
        batch[35..43].copy_from_slice(&ts.to_be_bytes());
        let crc = crc32c::crc32c(&batch[21..]);
        batch[17..21].copy_from_slice(&crc.to_be_bytes());
        if since > INTERVAL {
            index.push((i as i32, (i as u64 * size) as i32));
            timeindex.push((ts, i as i32));
            since = 0;
        }
        since += size;
        log.write_all(&batch).unwrap();
    }
    log.flush().unwrap();
    index[BAD_OFFSET_SLOT].1 += 1;
    timeindex[BAD_TIME_SLOT].0 += 1;
    let bytes: Vec<u8> = index
        .iter()
        .flat_map(|&(o, p)| [o.to_be_bytes(), p.to_be_bytes()].concat())
        .collect();
    std::fs::write(part.join("00000000000000000000.index"), bytes).unwrap();
    let bytes: Vec<u8> = timeindex
        .iter()
        .flat_map(|&(t, o)| [t.to_be_bytes().to_vec(), o.to_be_bytes().to_vec()].concat())
        .collect();
    std::fs::write(part.join("00000000000000000000.timeindex"), bytes).unwrap();
    (index.len(), timeindex.len())
}

#[test]
fn verify_of_millions_of_small_batches_checks_the_indexes_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (index_entries, time_entries) = write_indexed_small_batches(dir.path(), BATCHES);
    let path = dir.path().to_str().unwrap();
    for threads in ["1", "2"] {
        let r = run_limited_ok(
            LIMIT_MIB,
            &[
                "verify",
                path,
                "--threads",
                threads,
                "--format",
                "json",
                "--fail-on",
                "never",
                "--mmap",
                "never",
            ],
            SECS,
        );
        let out = r.out;
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        // The whole segment was walked.
        let prediction = &doc["partitions"][0]["prediction"];
        assert_eq!(prediction["log_end_offset"], BATCHES, "{out}");
        // Every entry was checked against the walk: exactly the one wrong entry of each
        // index is reported, at its slot.
        let of = |kind: &str| -> Vec<&serde_json::Value> {
            doc["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["kind"] == kind)
                .collect()
        };
        let idx = of("index_mismatch");
        assert_eq!(idx.len(), 1, "{threads} thread(s): {idx:#?}");
        assert_eq!(idx[0]["evidence"]["mismatches"], 1);
        assert_eq!(idx[0]["evidence"]["entries"][0]["slot"], BAD_OFFSET_SLOT);
        assert_eq!(
            idx[0]["evidence"]["entries"][0]["check"]["kind"],
            "not_a_batch_start"
        );
        let msg = idx[0]["message"].as_str().unwrap();
        assert!(
            msg.contains(&format!("1 of {index_entries} entries")),
            "{msg}"
        );
        let time = of("timeindex_mismatch");
        assert_eq!(time.len(), 1, "{threads} thread(s): {time:#?}");
        assert_eq!(time[0]["evidence"]["mismatches"], 1);
        assert_eq!(time[0]["evidence"]["entries"][0]["slot"], BAD_TIME_SLOT);
        let msg = time[0]["message"].as_str().unwrap();
        assert!(
            msg.contains(&format!("1 of {time_entries} entries")),
            "{msg}"
        );
    }
    // The limit binds: far below what the binary needs, it fails.
    assert_limit_binds(
        24,
        &["verify", path, "--threads", "2", "--format", "json"],
        SECS,
    );
}
