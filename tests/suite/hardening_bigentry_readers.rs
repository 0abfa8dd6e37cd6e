//! Issue 15's row "one ~2 GiB batch (sparse, valid CRC) per partition", in every reader
//! besides the scan's main walk (which `hardening_bigbatch.rs` covers): the reference time
//! of unselected partitions, the compaction knowledge's read of the KRaft metadata log, the
//! coordinator's walk of `__transaction_state` (selected and not), the replica
//! comparison's batch keys, the HTML report's timelines, `producers`/`txns`/`verify`, and
//! `dump`. Each runs the binary under an address-space limit (`RLIMIT_AS`, set in the
//! child) smaller than the batch: any reader that holds the batch whole fails (or, where
//! it used to swallow the error, gives a different answer than the one asserted), and the
//! readers that take it streaming, as a header and a CRC, pass. What a reader could not
//! read (the records of the batch) is asserted to be said, never skipped.
//!
//! Size: 320 MiB, above `segment::BIG_ENTRY` (64 MiB) and above the 256 MiB limit, so that
//! buffering it cannot fit; the smallest size that proves the bound keeps the CRC
//! streaming of a debug build short. The files are sparse: the batch body is a hole.
#![cfg(all(feature = "testkit", unix))]

use crate::common::huge;
use crate::common::run;

use crate::common::findings_of as findings;
use huge::{append_huge, huge_header};
use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};
use run::klogscan;
use serde_json::Value;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The address space a run may use: far above what a streaming reader needs (a
/// testkit-sized run fits in 128 MiB), below the batch.
const AS_LIMIT: u64 = 256 << 20;
/// The huge batch's length (header + body).
const SIZE: u64 = 320 << 20;
/// Seconds a run may take (the CRC of 320 MiB of a debug build, on a loaded machine).
const SECS: u64 = 300;

/// A partition `topic-p` under `root`: `values` small batches, then a huge batch.
fn huge_partition(root: &Path, topic: &str, p: i32, values: usize, timestamp: i64) -> PathBuf {
    let mut b = PartitionBuilder::new(topic, p);
    for i in 0..values {
        b.append(Batch::new(Producer::PLAIN).values([format!("v{i}")]));
    }
    let m = b.write(root).unwrap();
    let log = m.segments.last().unwrap().1.clone();
    append_huge(&log, values as i64, SIZE, timestamp);
    log.parent().unwrap().to_path_buf()
}

fn run(args: &[&OsStr]) -> run::Run {
    klogscan(args, Some(AS_LIMIT), SECS)
}

fn os<'a>(v: &[&'a str]) -> Vec<&'a OsStr> {
    v.iter().map(|s| OsStr::new(*s)).collect()
}

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn one_broker(root: &Path) {
    std::fs::create_dir_all(root).unwrap();
    std::fs::write(root.join("meta.properties"), "version=0\nbroker.id=1\n").unwrap();
}

// ----- library readers, run in a child process under the limit -------------------------

/// Run this test binary's [`child_process_entry`] as a child under `RLIMIT_AS` =
/// [`AS_LIMIT`], doing `what` over `dir`; returns its `RESULT` line.
fn in_child(what: &str, dir: &Path) -> String {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "hardening_bigentry_readers::child_process_entry",
        "--exact",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("KLOGSCAN_BIGENTRY_CHILD", what)
    .env("KLOGSCAN_BIGENTRY_DIR", dir);
    // SAFETY: only setrlimit (async-signal-safe) between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let r = libc::rlimit {
                rlim_cur: AS_LIMIT,
                rlim_max: AS_LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{what}: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .find_map(|l| l.split_once("RESULT ").map(|(_, r)| r))
        .unwrap_or_else(|| panic!("{what}: no result\n{stdout}"))
        .to_string()
}

/// The child side of [`in_child`]: does nothing unless started by it (then it reads the
/// library's way, under the parent's address-space limit, and prints one `RESULT` line).
#[test]
fn child_process_entry() {
    let Ok(what) = std::env::var("KLOGSCAN_BIGENTRY_CHILD") else {
        return;
    };
    let dir = PathBuf::from(std::env::var("KLOGSCAN_BIGENTRY_DIR").unwrap());
    let inv = klogscan::discover::layout::discover(&[dir]);
    match what.as_str() {
        "reference_time" => {
            // Only `orders` is scanned; `big-0` gives the log dir's reference time from
            // its newest segment's headers.
            let opts = klogscan::partition::scan::ScanOptions::default().with_topic("orders");
            let r = klogscan::pipeline::scan_partitions(&inv, &opts);
            let p: Vec<_> = r
                .partitions
                .iter()
                .map(|p| (&p.topic, p.ref_time))
                .collect();
            println!("RESULT {p:?}");
        }
        "read_copy" => {
            let c = klogscan::cluster::replicas::read_copy(&inv.partitions[0], None);
            let keys: Vec<_> = c
                .batches
                .iter()
                .map(|k| (k.base_offset, k.last_offset, k.size, k.crc))
                .collect();
            println!("RESULT {keys:?}");
        }
        "coordinator_unscanned" => {
            // Only `orders` is scanned: the coordinator reads __transaction_state-1 itself
            // (`coordinator::replay_logs`, streaming through `walked::stream_records`).
            let opts = klogscan::partition::scan::ScanOptions::default().with_topic("orders");
            let mut r = klogscan::pipeline::scan_partitions(&inv, &opts);
            klogscan::cluster::coordinator::annotate(&mut r, &inv, &opts);
            let c: Vec<String> = r
                .findings
                .iter()
                .filter(|f| f.topic == "orders")
                .map(|f| {
                    let c = &f.evidence["coordinator"];
                    format!(
                        "{} confirmed={} not_read={} why={}",
                        f.kind.id(),
                        c["confirmed"],
                        c["records_not_read"]["batches"],
                        c["unconfirmed_reason"]
                    )
                })
                .collect();
            println!("RESULT {c:?}");
        }
        other => panic!("unknown child job {other}"),
    }
}

#[test]
fn an_unselected_partition_gives_the_reference_time_from_its_huge_batch_header() {
    // One broker log dir: `orders-0` selected (`ScanOptions::topic`), `big-0` not; the
    // newest timestamp of the log dir is the huge batch's, read from its header. A reader
    // that buffered it fails under the limit and leaves the reference time at orders'
    // newest batch.
    let t = tempfile::tempdir().unwrap();
    one_broker(t.path());
    let mut o = PartitionBuilder::new("orders", 0);
    o.append(Batch::new(Producer::PLAIN).values(["a"]));
    o.write(t.path()).unwrap();
    let future = 4_000_000_000_000i64;
    huge_partition(t.path(), "big", 0, 1, future);
    assert_eq!(
        in_child("reference_time", t.path()),
        format!("[(\"orders\", {future})]")
    );
    // Near miss: without the huge batch's partition, orders' own newest batch.
    std::fs::remove_dir_all(t.path().join("big-0")).unwrap();
    let r = in_child("reference_time", t.path());
    assert!(!r.contains(&future.to_string()), "{r}");
}

// ----- __transaction_state: the coordinator's view ----------------------------------------

/// `__transaction_state` key of `id`.
fn txn_key(id: &str) -> Vec<u8> {
    let mut k = 0i16.to_be_bytes().to_vec();
    k.extend_from_slice(&(id.len() as i16).to_be_bytes());
    k.extend_from_slice(id.as_bytes());
    k
}

/// A v0 `__transaction_state` value: CompleteCommit of producer `pid` epoch 1 listing
/// `orders-4` only (kafka-semantics §6.1).
fn txn_value_complete_elsewhere(pid: i64, at: i64) -> Vec<u8> {
    let mut v = 0i16.to_be_bytes().to_vec();
    v.extend_from_slice(&pid.to_be_bytes());
    v.extend_from_slice(&1i16.to_be_bytes());
    v.extend_from_slice(&60_000i32.to_be_bytes());
    v.push(4); // CompleteCommit
    v.extend_from_slice(&1i32.to_be_bytes());
    v.extend_from_slice(&6i16.to_be_bytes());
    v.extend_from_slice(b"orders");
    v.extend_from_slice(&1i32.to_be_bytes());
    v.extend_from_slice(&4i32.to_be_bytes());
    v.extend_from_slice(&at.to_be_bytes());
    v.extend_from_slice(&at.to_be_bytes());
    v
}

/// A broker log dir with `orders-0` (producer 900's transaction open for 20 minutes) and
/// `__transaction_state-1` (which owns id `app` among 50) whose record says `app` has no
/// transaction on orders-0, then (`huge`) a huge batch.
fn coordinator_dir(root: &Path, huge: bool) {
    one_broker(root);
    let mut p = PartitionBuilder::new("orders", 0);
    p.append(Batch::new(Producer::PLAIN).values(["a"]));
    p.append(Batch::new(Producer::transactional(900, 1)).records(2));
    p.advance_time(20 * 60_000);
    p.append(Batch::new(Producer::PLAIN).values(["b"]));
    p.write(root).unwrap();
    let mut t = PartitionBuilder::new("__transaction_state", 1);
    t.append(Batch::new(Producer::PLAIN).record(Rec::kv(
        txn_key("app"),
        txn_value_complete_elsewhere(900, 1_000),
    )));
    let m = t.write(root).unwrap();
    if huge {
        // No timestamp (-1): the reference time stays the data's.
        append_huge(&m.segments[0].1, 1, SIZE, -1);
    }
}

fn hanging(rep: &Value) -> &Value {
    let v: Vec<&Value> = rep["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["topic"] == "orders" && f["kind"] == "hanging_transaction")
        .collect();
    assert_eq!(v.len(), 1, "{rep}");
    v[0]
}

#[test]
fn a_huge_transaction_state_batch_makes_the_coordinator_verdict_unconfirmed() {
    let t = tempfile::tempdir().unwrap();
    // Near miss: without the huge batch the verdict is confirmed.
    let plain = t.path().join("plain");
    coordinator_dir(&plain, false);
    let r = run(&[
        OsStr::new("scan"),
        OsStr::new("--format"),
        OsStr::new("json"),
        plain.as_os_str(),
    ]);
    assert_eq!(r.code(), 1, "{r:?}");
    let rep = json(&r.out);
    let c = &hanging(&rep)["evidence"]["coordinator"];
    assert_eq!(c["verdict"], "no_transaction_in_progress", "{c}");
    assert_eq!(c["confirmed"], true, "{c}");
    assert!(c["records_not_read"].is_null(), "{c}");

    let dir = t.path().join("huge");
    coordinator_dir(&dir, true);
    // Selected: the scan's walk says the batch's records were not read, and the verdict
    // resting on the coordinator's records is not confirmed.
    let r = run(&[
        OsStr::new("scan"),
        OsStr::new("--format"),
        OsStr::new("json"),
        dir.as_os_str(),
    ]);
    assert_eq!(r.code(), 1, "{r:?}");
    let rep = json(&r.out);
    let nd = findings(&rep, "batch_not_decoded");
    assert_eq!(nd.len(), 1, "{rep}");
    assert_eq!(nd[0]["topic"], "__transaction_state");
    assert_eq!(nd[0]["offset"], 1);
    assert_eq!(nd[0]["evidence"]["size"], SIZE);
    let check = |rep: &Value| {
        let f = hanging(rep);
        let c = &f["evidence"]["coordinator"];
        assert_eq!(c["confirmed"], false, "{c}");
        assert_eq!(c["records_not_read"]["batches"], 1, "{c}");
        let why = c["unconfirmed_reason"].as_str().unwrap();
        assert!(
            why.contains("not read")
                && why.contains(&format!("is {SIZE} bytes, more than the 64 MiB")),
            "{why}"
        );
        assert!(
            f["message"].as_str().unwrap().contains("unconfirmed: "),
            "{f}"
        );
    };
    check(&rep);
    // Not selected (the library's `ScanOptions::topic`): the coordinator walks
    // __transaction_state-1 itself, streaming, and says the same.
    let c = in_child("coordinator_unscanned", &dir);
    assert!(
        c.contains("hanging_transaction confirmed=false not_read=1")
            && c.contains(&format!("is {SIZE} bytes, more than the 64 MiB")),
        "{c}"
    );
    // Filtered out (`--topic orders`): the walk's finding is not shown, the verdict still
    // says why it is unconfirmed.
    let r = run(&[
        OsStr::new("scan"),
        OsStr::new("--topic"),
        OsStr::new("orders"),
        OsStr::new("--format"),
        OsStr::new("json"),
        dir.as_os_str(),
    ]);
    assert_eq!(r.code(), 1, "{r:?}");
    let rep = json(&r.out);
    check(&rep);
    assert!(
        findings(&rep, "batch_not_decoded").is_empty(),
        "filtered out by --topic"
    );
    // --transactional-id resolves through the coordinator's own walk
    // (`CoordinatorView::load`), streaming.
    let r = run(&[
        OsStr::new("scan"),
        OsStr::new("--transactional-id"),
        OsStr::new("app"),
        OsStr::new("--format"),
        OsStr::new("json"),
        dir.as_os_str(),
    ]);
    assert_eq!(r.code(), 1, "{r:?}");
    check(&json(&r.out));
    // producers and txns (per partition and cluster-wide) read the same walks.
    for cmd in [
        &["producers", "--format", "json"][..],
        &["txns", "--format", "json"],
        &["txns", "--cluster", "--format", "json"],
        &["verify", "--format", "json"],
    ] {
        let mut a = os(cmd);
        a.push(dir.as_os_str());
        let r = run(&a);
        assert!(r.code() <= 1, "{cmd:?}: {r:?}");
        json(&r.out);
        assert!(!r.err.contains("memory"), "{cmd:?}: {}", r.err);
    }
}

// ----- __consumer_offsets: `groups` ----------------------------------------------------

#[test]
fn groups_says_which_batch_its_replay_did_not_get() {
    // `groups` replays __consumer_offsets through its own walk: a huge batch is taken
    // streaming, and that its records were not replayed is said on stderr, exit 2 (the
    // groups listed may miss them).
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("__consumer_offsets-0");
    std::fs::create_dir(&dir).unwrap();
    let log = dir.join("00000000000000000000.log");
    std::fs::File::create(&log).unwrap();
    let groups = || {
        run(&[
            OsStr::new("groups"),
            OsStr::new("--format"),
            OsStr::new("json"),
            t.path().as_os_str(),
        ])
    };
    // Near miss: an empty segment, nothing to say.
    let r = groups();
    assert_eq!((r.code(), r.err.as_str()), (0, ""), "{r:?}");
    json(&r.out);
    append_huge(&log, 0, SIZE, 1_000);
    let r = groups();
    assert_eq!(r.code(), 2, "{r:?}");
    json(&r.out);
    assert!(
        r.err.contains(&format!(
            "__consumer_offsets-0: 00000000000000000000.log: batch at offset 0 (byte 0) is {SIZE} bytes, more than the 64 MiB klogscan holds in memory: its records were not read"
        )),
        "{}",
        r.err
    );
}

// ----- __cluster_metadata: the compaction knowledge ---------------------------------------

#[test]
fn a_huge_metadata_snapshot_batch_is_reported_not_skipped() {
    // A KRaft snapshot the scan does not walk (only the compaction knowledge reads it):
    // its huge batch is a batch_not_decoded finding of __cluster_metadata-0 naming it.
    let t = tempfile::tempdir().unwrap();
    one_broker(t.path());
    let mut o = PartitionBuilder::new("orders", 0);
    o.append(Batch::new(Producer::PLAIN).values(["a"]));
    o.write(t.path()).unwrap();
    let mut md = PartitionBuilder::new("__cluster_metadata", 0);
    md.append(Batch::new(Producer::PLAIN).values(["x"]));
    let m = md.write(t.path()).unwrap();
    let snap = m.segments[0]
        .1
        .with_file_name("00000000000000000001-0000000001.checkpoint");
    std::fs::File::create(&snap).unwrap();
    append_huge(&snap, 0, SIZE, 1_000);
    let r = run(&[
        OsStr::new("scan"),
        OsStr::new("--format"),
        OsStr::new("json"),
        t.path().as_os_str(),
    ]);
    assert!(r.code() <= 1, "{r:?}");
    let rep = json(&r.out);
    let nd = findings(&rep, "batch_not_decoded");
    assert_eq!(nd.len(), 1, "{rep}");
    let f = nd[0];
    assert_eq!(f["topic"], "__cluster_metadata");
    assert_eq!(f["partition"], 0);
    assert_eq!(f["segment"], "00000000000000000001-0000000001.checkpoint");
    assert_eq!(f["offset"], 0);
    assert_eq!(f["evidence"]["size"], SIZE);
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("cleanup policies and partition counts"),
        "{f}"
    );
    // Near miss: the same tree without the snapshot has no such finding.
    std::fs::remove_file(&snap).unwrap();
    let r = run(&[
        OsStr::new("scan"),
        OsStr::new("--format"),
        OsStr::new("json"),
        t.path().as_os_str(),
    ]);
    assert!(
        findings(&json(&r.out), "batch_not_decoded").is_empty(),
        "{r:?}"
    );
}

#[test]
fn a_huge_metadata_segment_batch_is_reported_once() {
    // Selected, the scan's walk reports it (its records feed the compaction knowledge);
    // the knowledge's own read does not report it a second time. The share coordinator's
    // log is read record by record too (rule 32): a batch whose records were not read is
    // said there as well.
    for topic in ["__cluster_metadata", "__share_group_state"] {
        let t = tempfile::tempdir().unwrap();
        one_broker(t.path());
        huge_partition(t.path(), topic, 0, 1, 1_000);
        let r = run(&[
            OsStr::new("scan"),
            OsStr::new("--format"),
            OsStr::new("json"),
            t.path().as_os_str(),
        ]);
        assert!(r.code() <= 1, "{topic}: {r:?}");
        let rep = json(&r.out);
        let nd = findings(&rep, "batch_not_decoded");
        assert_eq!(nd.len(), 1, "{topic}: {rep}");
        assert_eq!(nd[0]["offset"], 1);
        assert_eq!(nd[0]["segment"], "00000000000000000000.log");
    }
}

// ----- replicas ---------------------------------------------------------------------------

#[test]
fn replicas_compare_huge_batches_by_their_headers() {
    // Two broker copies of t-0 with a huge batch at offset 1: the same batch agrees; a
    // different one (another size) is a divergence at offset 1. Without the huge batches'
    // keys both copies would look alike.
    let t = tempfile::tempdir().unwrap();
    for (b, size) in [("broker1", SIZE), ("broker2", SIZE)] {
        let root = t.path().join("same").join(b);
        let mut p = PartitionBuilder::new("t", 0);
        p.append(Batch::new(Producer::PLAIN).values(["a"]));
        let m = p.write(&root).unwrap();
        append_huge(&m.segments[0].1, 1, size, 1_000);
    }
    for (b, size) in [("broker1", SIZE), ("broker2", SIZE - 4096)] {
        let root = t.path().join("diff").join(b);
        let mut p = PartitionBuilder::new("t", 0);
        p.append(Batch::new(Producer::PLAIN).values(["a"]));
        let m = p.write(&root).unwrap();
        append_huge(&m.segments[0].1, 1, size, 1_000);
    }
    let scan = |which: &str| {
        let dir = t.path().join(which);
        let r = run(&[
            OsStr::new("scan"),
            OsStr::new("--format"),
            OsStr::new("json"),
            dir.as_os_str(),
        ]);
        assert!(r.code() <= 1, "{r:?}");
        json(&r.out)
    };
    let rep = scan("same");
    assert_eq!(rep["partitions"].as_array().unwrap().len(), 2);
    assert!(findings(&rep, "replica_divergence").is_empty(), "{rep}");
    let rep = scan("diff");
    let d = findings(&rep, "replica_divergence");
    assert_eq!(d.len(), 1, "{rep}");
    assert_eq!(d[0]["offset"], 1);
    let sizes: Vec<&Value> = d[0]["evidence"]["first_difference"]["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| &b["size"])
        .collect();
    assert!(sizes.contains(&&Value::from(SIZE)), "{d:?}");
}

#[test]
fn read_copy_keys_a_huge_batch_from_its_header() {
    // The fallback read of a copy (results made without the walk's keys), under the
    // limit: the huge batch is keyed with its real size and stored CRC.
    let t = tempfile::tempdir().unwrap();
    let dir = huge_partition(t.path(), "t", 0, 1, 1_000);
    let keys = in_child("read_copy", &dir);
    let h = huge_header(1, SIZE, 1_000, 0);
    let crc = u32::from_be_bytes(h[17..21].try_into().unwrap());
    assert!(
        keys.ends_with(&format!(", (1, 1, {SIZE}, {crc})]")),
        "{keys}"
    );
    assert_eq!(keys.matches("), (").count(), 1, "two batches: {keys}");
}

// ----- HTML report (timelines) ------------------------------------------------------------

#[test]
fn the_html_report_draws_the_timeline_of_a_partition_with_a_huge_batch() {
    // --deep makes the huge batch a finding (its records not decoded), so its partition's
    // timeline is drawn: from the batches' headers, the huge one's included.
    let t = tempfile::tempdir().unwrap();
    let dir = huge_partition(t.path(), "t", 0, 2, 1_000);
    let r = run(&[
        OsStr::new("scan"),
        OsStr::new("--deep"),
        OsStr::new("--format"),
        OsStr::new("html"),
        dir.as_os_str(),
    ]);
    // A warning: below the default --fail-on.
    assert_eq!(r.code(), 0, "{r:?}");
    assert!(
        r.out.contains("data-kind=\"batch_not_decoded\""),
        "{}",
        r.out
    );
    // The data span runs over the three batches, the huge one (offset 2) included.
    assert!(
        r.out.contains("<svg") && r.out.contains("data-first=\"0\" data-last=\"2\""),
        "no timeline drawn, or without the huge batch"
    );
}

// ----- verify: a `.log.swap` leftover ----------------------------------------------------

#[test]
fn verify_reads_the_range_of_a_swap_file_holding_a_huge_batch() {
    // The startup prediction names the offsets a `.log.swap` replaces, from its last
    // entry's header: read in chunks, the huge batch streaming, under `--mmap never`
    // (whose whole-file read budget a 320 MiB file exceeds) and the limit.
    let t = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("t", 0);
    p.append(Batch::new(Producer::PLAIN).values(["a"]));
    let m = p.write(t.path()).unwrap();
    let swap = m.segments[0]
        .1
        .with_file_name("00000000000000000001.log.swap");
    std::fs::File::create(&swap).unwrap();
    append_huge(&swap, 1, SIZE, 1_000);
    let r = run(&[
        OsStr::new("verify"),
        OsStr::new("--mmap"),
        OsStr::new("never"),
        OsStr::new("--format"),
        OsStr::new("json"),
        t.path().as_os_str(),
    ]);
    assert!(r.code() <= 1, "{r:?}");
    assert!(
        r.out.contains("swap completed at startup: range [1, 2) replaces no segment then 00000000000000000001.log.swap is renamed to 00000000000000000001.log"),
        "{}",
        r.out
    );
}

// ----- dump -------------------------------------------------------------------------------

#[test]
fn dump_prints_a_huge_batch_from_its_header_and_says_its_records_were_not_printed() {
    let t = tempfile::tempdir().unwrap();
    let dir = huge_partition(t.path(), "t", 0, 1, 1_000);
    let log = dir.join("00000000000000000000.log");
    let pos = std::fs::metadata(&log).unwrap().len() - SIZE;
    let line = format!("position: {pos} CreateTime: 1000 size: {SIZE} magic: 2");
    for threads in ["1", "2"] {
        let r = run(&[
            OsStr::new("dump"),
            OsStr::new("--threads"),
            OsStr::new(threads),
            log.as_os_str(),
        ]);
        assert_eq!(r.code(), 0, "{r:?}");
        assert!(r.out.contains(&line), "{}", r.out);
        assert!(r.out.contains("isvalid: true"), "{}", r.out);
        assert_eq!(r.out.matches("baseOffset:").count(), 2, "{}", r.out);
    }
    // With records: the batch line, then the records it could not print, said on stderr.
    let r = run(&[
        OsStr::new("dump"),
        OsStr::new("--deep-iteration"),
        log.as_os_str(),
    ]);
    assert_ne!(r.code(), 2, "{r:?}");
    assert!(r.out.contains(&line), "{}", r.out);
    assert!(
        r.err.contains(&format!(
            "Error in batch at position {pos} of {}: the batch is {SIZE} bytes, more than the 64 MiB",
            log.display()
        )) && r.err.contains("records were not printed"),
        "{}",
        r.err
    );
    // JSON: the batch object carries the real size, the verdict and the error.
    let r = run(&[
        OsStr::new("dump"),
        OsStr::new("--deep-iteration"),
        OsStr::new("--format"),
        OsStr::new("json"),
        log.as_os_str(),
    ]);
    assert_ne!(r.code(), 2, "{r:?}");
    let big: Vec<Value> = r
        .out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["size"] == SIZE)
        .collect();
    assert_eq!(big.len(), 1, "{}", r.out);
    assert_eq!(big[0]["isvalid"], true, "{}", big[0]);
    assert!(
        big[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("records were not printed")),
        "{}",
        big[0]
    );
}
