//! The reference time of the hanging-transaction rule bounded by the broker's clock
//! (`partition::scan::reference::References::of`, docs/findings.md "Reference time"): when
//! the newest batch timestamp of a broker log dir is more than a minute past the newest
//! modification time of its checkpoint files and every broker-stamped batch lies within that
//! minute, the reference becomes that file time plus one minute.
//!
//! Kafka: `ReplicaManager.checkpointHighWatermarks` rewrites `replication-offset-checkpoint`
//! of every log dir holding an online partition every 5 s, so its modification time follows
//! the broker's clock while the broker appends; `LogValidator.validateTimestamp` keeps a
//! client's CreateTime as sent; the coordinator times transactions out from its own clock
//! (`TransactionStateManager.timedOutTransactions`), never from record timestamps.
//!
//! Each log dir: `payments-0` holds producer 9000's committed transaction and an open one
//! after it; the test sets which clocks stamped what and when the checkpoints were written.

use crate::common::quiet::set_broker_file_times;
use klogscan::finding::{Finding, Kind};
use klogscan::partition::scan::ScanOptions;
use klogscan::request::{self, Request};
use klogscan::results::ScanReport;
use klogscan::testkit::encode::end_txn_marker;
use klogscan::testkit::scenario::DEFAULT_START_MS as T0;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};
use std::path::{Path, PathBuf};

const MINUTE: i64 = 60_000;

/// `scan` of `paths` (no `--now`); no input error.
fn scan(paths: &[&Path]) -> ScanReport {
    let r = request::run(&Request::new(paths.iter().copied()).with_options(ScanOptions::default()))
        .unwrap()
        .report;
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    r
}

fn of(r: &ScanReport, kind: Kind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == kind).collect()
}

/// `payments-0`: producer 9000 commits a transaction (data at `t0 + skew`, its COMMIT marker
/// stamped by the leader at `t0 + 30 s`), then opens another at `t0 + 1 min + skew` and never
/// writes again: by the broker's clock the transaction is idle from `t0 + 1 min`.
fn payments(skew: i64) -> PartitionBuilder {
    let txn = Producer::transactional(9000, 0);
    let mut p = PartitionBuilder::new("payments", 0);
    p.append(Batch::new(txn).records(2).at(T0 + skew));
    let o = p.next_offset();
    p.append_spec(end_txn_marker(o, 9000, 0, true, 0, T0 + 30_000, 0));
    p.append(Batch::new(txn).records(3).at(T0 + MINUTE + skew));
    p
}

/// `topic-0`: a plain producer writing once a minute from `t0` to `t0 + until`, its clock
/// `skew` ms ahead of the broker's.
fn plain(topic: &str, until: i64, skew: i64) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(topic, 0);
    for i in 0..=until / MINUTE {
        p.append(
            Batch::new(Producer::PLAIN)
                .records(1)
                .at(T0 + i * MINUTE + skew),
        );
    }
    p
}

/// The hanging transaction's own producer runs its clock 30 minutes ahead of the broker's,
/// and so does another producer on its host writing to `reminders-0` until the stop at
/// `t0 + 21 min` (the copy kept the times: the checkpoints last written at the stop). By the
/// broker's clock, which `TransactionStateManager.timedOutTransactions` uses, the transaction
/// was idle 20 minutes at the stop, past `--hanging-after` (15 min): a hanging transaction,
/// as klogscan said before `e7b0e61` (newest batch `t0 + 51 min`, the transaction's last
/// `t0 + 31 min`: both on the client's clock, 20 minutes apart).
///
/// klogscan now bounds the reference by the checkpoint (`t0 + 22 min`), which lies before
/// the transaction's own CreateTime (`t0 + 31 min`): idle nine minutes *negative*, no
/// `hanging_transaction`. The bound mixes clocks: the reference is the broker's, the
/// transaction's last time the client's.
#[test]
fn a_hanging_transaction_of_an_ahead_clock_still_hangs() {
    let d = tempfile::tempdir().unwrap();
    let skew = 30 * MINUTE;
    LogDirBuilder::new(1)
        .partition(payments(skew))
        .partition(plain("reminders", 21 * MINUTE, skew))
        .write(d.path())
        .unwrap();
    // The copy's own times (later than every batch): no bound, the newest batch as the
    // reference, as before the commit — the hang is found.
    let r = scan(&[d.path()]);
    assert_eq!(of(&r, Kind::HangingTransaction).len(), 1);
    // The broker's times kept.
    set_broker_file_times(d.path(), T0 + 21 * MINUTE);
    let r = scan(&[d.path()]);
    let hanging = of(&r, Kind::HangingTransaction);
    assert_eq!(
        hanging.len(),
        1,
        "{:#?}",
        crate::common::quiet::lines(&r.findings)
    );
}

/// The same transaction with every clock right (no skew): the checkpoints' bound is not
/// taken (the newest batch, `t0 + 21 min`, is within a minute of them) and the transaction
/// idle 20 minutes is a `hanging_transaction` — the rule leaves a real hang alone when the
/// times are the broker's.
#[test]
fn a_real_hang_with_the_brokers_times_stays_hanging() {
    let d = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1)
        .partition(payments(0))
        .partition(plain("orders", 21 * MINUTE, 0))
        .write(d.path())
        .unwrap();
    set_broker_file_times(d.path(), T0 + 21 * MINUTE);
    let r = scan(&[d.path()]);
    let hanging = of(&r, Kind::HangingTransaction);
    assert_eq!(
        hanging.len(),
        1,
        "{:#?}",
        crate::common::quiet::lines(&r.findings)
    );
    let src = hanging[0].evidence["reference_time"]["source"]
        .as_str()
        .unwrap();
    assert!(src.starts_with("newest batch timestamp"), "{src}");
}

/// One checkpoint touched later than the others (an operator's edit after the copy, a tool
/// rewriting `cleaner-offset-checkpoint`): the newest file time is taken, later than the
/// newest batch, so the bound never moves the reference below the newest batch — with a
/// client clock 20 minutes ahead the verdict is what it was before the rule (the newest
/// batch as reference). Safe direction: later file times only weaken the bound.
#[test]
fn one_checkpoint_touched_later_leaves_the_newest_batch_as_reference() {
    let d = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1)
        .partition(payments(0))
        .partition(plain("orders", 10 * MINUTE, 0))
        .partition(plain("reminders", 0, 30 * MINUTE))
        .write(d.path())
        .unwrap();
    set_broker_file_times(d.path(), T0 + 10 * MINUTE);
    let late = std::time::UNIX_EPOCH + std::time::Duration::from_millis((T0 + 90 * MINUTE) as u64);
    let f = std::fs::File::options()
        .write(true)
        .open(d.path().join("recovery-point-offset-checkpoint"))
        .unwrap();
    f.set_modified(late).unwrap();
    let r = scan(&[d.path()]);
    let f = (r.findings.iter())
        .find(|f| matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction))
        .expect("the open transaction");
    assert_eq!(f.evidence["reference_time"]["ms"], T0 + 30 * MINUTE);
}

/// The log dir of the clock-ahead case the commit fixed (`reminders-0` stamped 20 minutes
/// ahead; the open transaction a minute old at the stop), kept times.
fn ahead_dir(dir: &Path) {
    LogDirBuilder::new(1)
        .partition(payments(0))
        .partition(plain("orders", 2 * MINUTE, 0))
        .partition(plain("reminders", 0, 22 * MINUTE))
        .write(dir)
        .unwrap();
    set_broker_file_times(dir, T0 + 2 * MINUTE);
}

/// The same bytes and times handed over as a `.tar` (the tar crate's `append_dir_all`, as
/// `tar -c` does, stores each member's modification time in its header, and `tar -x`
/// restores it). Scanning the extracted directory takes the checkpoint bound (the open
/// transaction: `open_transaction`); scanning the archive itself gives a
/// `hanging_transaction` error: klogscan's extraction (`discover::archive`, in place or to
/// its temporary directory) writes the small files at the time of the scan and drops the
/// headers' times, so the bound is never taken for an archive input — one input, two
/// verdicts.
#[test]
fn a_tar_of_the_log_dir_keeps_the_brokers_times() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("kafka-logs");
    std::fs::create_dir(&dir).unwrap();
    ahead_dir(&dir);
    let unpacked = scan(&[&dir]);
    assert!(of(&unpacked, Kind::HangingTransaction).is_empty());
    assert_eq!(of(&unpacked, Kind::OpenTransaction).len(), 1);
    let tar: PathBuf = d.path().join("broker1.tar");
    let mut b = tar::Builder::new(std::fs::File::create(&tar).unwrap());
    b.append_dir_all("kafka-logs", &dir).unwrap();
    b.into_inner().unwrap();
    let archived = scan(&[&tar]);
    let lines = crate::common::quiet::lines(&archived.findings);
    assert!(
        of(&archived, Kind::HangingTransaction).is_empty(),
        "{lines:#?}"
    );
    assert_eq!(of(&archived, Kind::OpenTransaction).len(), 1, "{lines:#?}");
}

/// `collect` on the broker's machine then `merge` elsewhere: the per-partition stage (and
/// the reference time with it) runs at `collect`, where the files are, so the merged report
/// keeps the bound the scan takes.
#[test]
fn collect_then_merge_keeps_the_checkpoint_bound() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("kafka-logs");
    std::fs::create_dir(&dir).unwrap();
    ahead_dir(&dir);
    let scanned = klogscan::pipeline::scan(std::slice::from_ref(&dir), &ScanOptions::default());
    let out = tempfile::tempdir().unwrap();
    let f = out.path().join("1.klb");
    let w = std::io::BufWriter::new(std::fs::File::create(&f).unwrap());
    klogscan::bundle::collect(&[dir], &ScanOptions::default(), w).unwrap();
    d.close().unwrap();
    let merged = klogscan::bundle::merge(&[f], &ScanOptions::default())
        .unwrap()
        .report;
    for r in [&scanned, &merged] {
        let open = of(r, Kind::OpenTransaction);
        assert_eq!(
            open.len(),
            1,
            "{:#?}",
            crate::common::quiet::lines(&r.findings)
        );
        assert_eq!(open[0].evidence["reference_time"]["ms"], T0 + 3 * MINUTE);
    }
}

/// A copy taken while the broker ran (`rsync -a`, `cp -p`, `tar -c` of the live log dir),
/// keeping the times: the checkpoints were copied at `t0 + 5 min`, holding that write time,
/// the partitions later, up to `t0 + 21 min`, with every clock right. Producer 9000's
/// transaction, idle from `t0 + 1 min`, is 20 minutes idle at the end of the copy: hanging.
/// Kafka kept appending after the copied checkpoint was written (it rewrites the file every
/// 5 s, `ReplicaManager.checkpointHighWatermarks`, but the copy holds one version), so the
/// file time is no bound on the batches copied after it.
///
/// klogscan takes `t0 + 6 min` as the reference (the newest batch, `orders-0` at
/// `t0 + 21 min`, is past it and the only broker stamp, the COMMIT marker at `t0 + 30 s`,
/// within it): the transaction is five minutes idle, an `open_transaction` — the hang is
/// hidden. Nothing in the copy tells a live copy from a client clock ahead; a bound
/// that needs the broker stopped could ask for `.kafka_cleanshutdown` or for the newest
/// batch to come from a partition no other producer of the same clock wrote.
#[test]
fn a_live_copy_with_kept_times_does_not_hide_a_hang() {
    let d = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1)
        .clean_shutdown(false)
        .partition(payments(0))
        .partition(plain("orders", 21 * MINUTE, 0))
        .write(d.path())
        .unwrap();
    set_broker_file_times(d.path(), T0 + 5 * MINUTE);
    let r = scan(&[d.path()]);
    let hanging = of(&r, Kind::HangingTransaction);
    assert_eq!(
        hanging.len(),
        1,
        "{:#?}",
        crate::common::quiet::lines(&r.findings)
    );
}

/// The same bytes as a `.zip`: with each entry's extended timestamp (the `UT` extra field,
/// 0x5455, UTC seconds — what `zip` on Unix writes) the extracted checkpoints keep the
/// broker's times and the bound is taken (`open_transaction`); with the DOS time alone (the
/// archiver's local time, of an unknown zone) they do not, and the newest batch is the
/// reference as for any copy without the times (`hanging_transaction`).
#[test]
fn a_zip_keeps_the_brokers_times_only_in_its_extended_timestamps() {
    use std::io::Write as _;
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("kafka-logs");
    std::fs::create_dir(&dir).unwrap();
    ahead_dir(&dir);
    for extended in [true, false] {
        let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for e in walk(&dir) {
            let name = e
                .strip_prefix(d.path())
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let secs = std::fs::metadata(&e)
                .unwrap()
                .modified()
                .unwrap()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs() as u32;
            let mut o = zip::write::FullFileOptions::default();
            if extended {
                let mut ut = vec![1u8];
                ut.extend_from_slice(&secs.to_le_bytes());
                o.add_extra_field(0x5455, ut, false).unwrap();
            }
            z.start_file(name, o).unwrap();
            z.write_all(&std::fs::read(&e).unwrap()).unwrap();
        }
        let path = d.path().join(format!("broker1-{extended}.zip"));
        std::fs::write(&path, z.finish().unwrap().into_inner()).unwrap();
        let r = scan(&[&path]);
        let lines = crate::common::quiet::lines(&r.findings);
        let (open, hanging) = (
            of(&r, Kind::OpenTransaction).len(),
            of(&r, Kind::HangingTransaction).len(),
        );
        if extended {
            assert_eq!((open, hanging), (1, 0), "{lines:#?}");
        } else {
            assert_eq!((open, hanging), (0, 1), "{lines:#?}");
        }
    }
}

/// Every file under `dir`, sorted.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}
