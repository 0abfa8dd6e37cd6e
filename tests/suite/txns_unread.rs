//! The cluster transaction join knows which records of the coordinator's log it did not read
//! (issue 15: a `__transaction_state` batch over 64 MiB is never held whole, so its records
//! are not read). A verdict resting on the absence of a coordinator record — no Complete
//! after a Prepare (`transaction_stuck_in_prepare`), no record listing a partition
//! (`transaction_partition_unlisted`), no Complete after a Prepare at epoch 32767, no value
//! between two values of an id — is confirmed only when no unread batch could hold that
//! record; otherwise it says `unconfirmed:`, an error becomes a warning and the evidence
//! carries `confirmed: false` and `records_not_read` (`src/txns/unread.rs`).
#![cfg(all(feature = "testkit", unix))]

use crate::common::huge;
use crate::common::run;

use crate::common::findings_of as of_kind;
use klogscan::Kind;
use klogscan::cluster::txns::{self, CoordinatorLog, TxnInputs, TxnOptions, UnreadBatch};
use klogscan::finding::{Finding, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::testkit::Producer;
use klogscan::testkit::txnlog::{TxnValue, state};
use klogscan::testkit::txns::{Cluster, Tp, Txn};
use serde_json::Value;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

const A: Tp = ("orders", 0);
const B: Tp = ("orders", 1);
const C: Tp = ("payments", 0);
/// The `__transaction_state` partition every id's records go to.
const COORD: i32 = 4;
/// 320 MiB: above `segment::BIG_ENTRY` and above the address-space limit below.
const SIZE: u64 = 320 << 20;
/// A reader that held the huge batch whole cannot run under this.
const AS_LIMIT: u64 = 256 << 20;
/// Seconds a run may take (a debug build's streaming CRC of 320 MiB, on a loaded machine).
const SECS: u64 = 300;

/// Offsets in `__transaction_state-4`: 0 `app` Ongoing, 1 `app` PrepareCommit (no Complete:
/// its marker never reached orders-1), 2 `other` Ongoing listing orders-0 only, 3 `other`
/// PrepareCommit, 4 `other` CompleteCommit — while `other` also wrote to payments-0.
fn cluster() -> Cluster {
    let mut c = Cluster::new(Some("c1")).coordinator(COORD);
    c.run(
        &Txn::new("app", Producer::transactional(7, 1), &[A, B])
            .skip_marker_on(B)
            .no_complete(),
    );
    c.run(&Txn::new("other", Producer::transactional(8, 1), &[A, C]).unlisted(C));
    c.advance(40 * 60_000);
    c.plain(A, 1);
    c
}

/// The coordinator partition's only segment under the log dir `dir`.
fn coordinator_segment(dir: &Path) -> PathBuf {
    dir.join(format!("__transaction_state-{COORD}"))
        .join("00000000000000000000.log")
}

fn scan_json(dir: &Path, limit: Option<u64>) -> Value {
    let r = run::klogscan(
        &[
            OsStr::new("scan"),
            OsStr::new("--format"),
            OsStr::new("json"),
            dir.as_os_str(),
        ],
        limit,
        SECS,
    );
    assert!(r.code() <= 1, "{r:?}");
    serde_json::from_str(&r.out).unwrap_or_else(|e| panic!("{e}: {}", r.out))
}

fn one<'a>(rep: &'a Value, kind: &str) -> &'a Value {
    let v = of_kind(rep, kind);
    assert_eq!(v.len(), 1, "{kind}: {v:#?}");
    v[0]
}

#[test]
fn a_huge_coordinator_batch_makes_the_join_verdicts_unconfirmed() {
    let t = tempfile::tempdir().unwrap();
    // Negative: the same scenario, every coordinator record in normal batches: confirmed.
    let plain = t.path().join("plain");
    cluster().write(&plain, 1).unwrap();
    let rep = scan_json(&plain, None);
    let s = one(&rep, "transaction_stuck_in_prepare");
    assert_eq!(s["severity"], "error", "{s}");
    assert_eq!(s["evidence"]["confirmed"], true, "{s}");
    assert!(s["evidence"]["records_not_read"].is_null(), "{s}");
    assert!(
        !s["message"].as_str().unwrap().contains("unconfirmed"),
        "{s}"
    );
    let u = one(&rep, "transaction_partition_unlisted");
    assert_eq!(
        (&u["topic"], &u["partition"]),
        (&Value::from("payments"), &Value::from(0))
    );
    assert_eq!(u["evidence"]["confirmed"], true, "{u}");
    assert!(u["evidence"]["records_not_read"].is_null(), "{u}");

    // Negative: the record the verdict says is missing, in a normal batch: no verdict.
    let complete = t.path().join("complete");
    let mut c = cluster();
    let now = c.now();
    c.coordinator_record(
        "app",
        Some(
            TxnValue::new(7, 1, state::COMPLETE_COMMIT)
                .timeout(60_000)
                .times(now, now),
        ),
    );
    c.write(&complete, 1).unwrap();
    let rep = scan_json(&complete, None);
    assert!(
        of_kind(&rep, "transaction_stuck_in_prepare").is_empty(),
        "{rep:#}"
    );

    // Positive: a sparse 320 MiB batch with a valid CRC after offset 4, which may hold
    // app's Complete record or another record of other's transaction; read streaming under
    // an address space smaller than the batch.
    let huge = t.path().join("huge");
    cluster().write(&huge, 1).unwrap();
    huge::append_huge(&coordinator_segment(&huge), 5, SIZE, -1);
    let rep = scan_json(&huge, Some(AS_LIMIT));
    let nd = one(&rep, "batch_not_decoded");
    assert_eq!(
        (&nd["topic"], &nd["offset"]),
        (&Value::from("__transaction_state"), &Value::from(5))
    );
    let check = |f: &Value, severity: &str, what: &str| {
        let e = &f["evidence"];
        assert_eq!(f["severity"], severity, "{f}");
        assert_eq!(e["confirmed"], false, "{f}");
        assert_eq!(e["records_not_read"]["batches"], 1, "{f}");
        assert_eq!(
            e["records_not_read"]["partitions"],
            serde_json::json!([COORD]),
            "{f}"
        );
        let first = &e["records_not_read"]["first"];
        assert_eq!(
            (&first["first_offset"], &first["last_offset"]),
            (&Value::from(5), &Value::from(5))
        );
        assert_eq!(first["segment"], "00000000000000000000.log");
        assert!(
            first["reason"]
                .as_str()
                .unwrap()
                .contains(&format!("is {SIZE} bytes, more than the 64 MiB")),
            "{f}"
        );
        let why = e["unconfirmed_reason"].as_str().unwrap();
        assert!(why.contains(what), "{why}");
        assert!(
            f["message"].as_str().unwrap().contains(&format!(
                "(unconfirmed: 1 batch(es) of __transaction_state-{COORD} not read"
            )),
            "{f}"
        );
    };
    // An error resting on an assumption becomes a warning.
    check(
        one(&rep, "transaction_stuck_in_prepare"),
        "warning",
        "its Complete record",
    );
    check(
        one(&rep, "transaction_partition_unlisted"),
        "warning",
        "a later record of this transaction listing the partition",
    );
}

// ----- the join's inputs, in the library -------------------------------------------------

/// The join's inputs of a testkit cluster written under `dir` (the scan, then the inputs
/// the cluster check builds from it).
fn inputs_of(c: &Cluster, dir: &Path) -> TxnInputs {
    c.write(dir, 1).unwrap();
    let inv = klogscan::discover::layout::discover(&[dir.to_path_buf()]);
    let opts = ScanOptions::default();
    let mut report = klogscan::pipeline::scan_partitions(&inv, &opts);
    klogscan::cluster::coordinator::cluster::inputs(&mut report, &inv, &opts)
}

fn findings(inputs: &TxnInputs, kind: Kind) -> Vec<Finding> {
    txns::analyse(inputs, &TxnOptions::default())
        .findings
        .into_iter()
        .map(|p| p.finding)
        .filter(|f| f.kind == kind)
        .collect()
}

/// The one `transaction_outcome_mismatch` of `inputs`.
fn mismatch(inputs: &TxnInputs) -> Finding {
    let mut m = findings(inputs, Kind::TransactionOutcomeMismatch);
    assert_eq!(m.len(), 1, "{m:#?}");
    m.remove(0)
}

fn with_unread(inputs: &TxnInputs, offsets: Option<(i64, i64)>) -> TxnInputs {
    let mut i = inputs.clone();
    for log in &mut i.coordinator {
        log.records_not_read = vec![UnreadBatch {
            segment: "00000000000000000000.log".into(),
            reason: "not read".into(),
            offsets,
        }];
    }
    i
}

/// `confirmed` of the single finding of `kind`.
fn confirmed(inputs: &TxnInputs, kind: Kind) -> (bool, Severity) {
    let f = findings(inputs, kind);
    assert_eq!(f.len(), 1, "{kind:?}: {f:#?}");
    let c = f[0].evidence["confirmed"].as_bool().expect("confirmed");
    assert_eq!(
        c,
        f[0].evidence.get("records_not_read").is_none(),
        "{:#?}",
        f[0]
    );
    (c, f[0].severity)
}

/// Only an unread batch that may hold a record after the ones the verdict rests on (or one
/// whose offsets are unknown: a segment that could not be read) unconfirms it.
#[test]
fn unread_batches_unconfirm_only_the_verdicts_they_may_change() {
    let t = tempfile::tempdir().unwrap();
    let base = inputs_of(&cluster(), t.path());
    assert!(
        base.coordinator
            .iter()
            .all(|l| l.records_not_read.is_empty())
    );
    let stuck = Kind::TransactionStuckInPrepare;
    let unlisted = Kind::TransactionPartitionUnlisted;
    assert_eq!(confirmed(&base, stuck), (true, Severity::Error));
    assert_eq!(confirmed(&base, unlisted), (true, Severity::Warning));
    // before app's Prepare (offset 1) and other's first record (2): nothing changes
    let before = with_unread(&base, Some((0, 0)));
    assert_eq!(confirmed(&before, stuck), (true, Severity::Error));
    assert_eq!(confirmed(&before, unlisted), (true, Severity::Warning));
    // between other's records: it may hold a record of other's transaction listing
    // payments-0, and one of app after its Prepare
    let between = with_unread(&base, Some((3, 3)));
    assert_eq!(confirmed(&between, stuck), (false, Severity::Warning));
    assert_eq!(confirmed(&between, unlisted), (false, Severity::Warning));
    // offsets unknown: anywhere
    let anywhere = with_unread(&base, None);
    assert_eq!(confirmed(&anywhere, stuck), (false, Severity::Warning));
    assert_eq!(confirmed(&anywhere, unlisted), (false, Severity::Warning));
    // a verdict that does not rest on the coordinator's log is unchanged: the mismatch
    // of a transaction whose markers disagree
    let mut c = Cluster::new(Some("c1")).coordinator(COORD);
    c.run(&Txn::new("app", Producer::transactional(7, 1), &[A, B]).flip_marker_on(B));
    let t = tempfile::tempdir().unwrap();
    let mixed = inputs_of(&c, t.path());
    let m = mismatch(&with_unread(&mixed, None));
    assert_eq!(m.severity, Severity::Error);
    assert!(m.evidence.get("records_not_read").is_none(), "{m:#?}");
    assert!(m.evidence.get("confirmed").is_none(), "{m:#?}");
}

/// Without the coordinator's record a TV0/1 transaction is grouped by marker order (an
/// assumption, already a warning): with batches of the coordinator's log not read, the
/// finding also says its record may be among them.
#[test]
fn marker_order_grouping_names_the_unread_coordinator_batches() {
    // The coordinator's log holds only another id's records.
    let mut c = Cluster::new(Some("c1"));
    c.run(&Txn::new("app", Producer::transactional(7, 1), &[A, B]).flip_marker_on(B));
    let mut k = Cluster::new(Some("c1")).coordinator(COORD);
    k.run(&Txn::new("else", Producer::transactional(9, 1), &[C]));
    let t = tempfile::tempdir().unwrap();
    k.write(t.path(), 1).unwrap();
    let base = inputs_of(&c, t.path());
    assert_eq!(base.coordinator.len(), 1);
    let m = mismatch(&base);
    assert_eq!(m.severity, Severity::Warning);
    assert!(m.evidence.get("records_not_read").is_none(), "{m:#?}");
    let m = mismatch(&with_unread(&base, Some((0, 0))));
    assert_eq!(m.severity, Severity::Warning);
    assert_eq!(m.evidence["confirmed"], false);
    assert_eq!(m.evidence["records_not_read"]["batches"], 1);
    assert!(
        m.message
            .contains("the coordinator's record of this transaction may be among them"),
        "{}",
        m.message
    );
}

fn exhaustion_log(records: &[(&str, TxnValue)]) -> (tempfile::TempDir, TxnInputs) {
    let mut c = Cluster::new(Some("c1")).coordinator(COORD);
    for (id, v) in records {
        let t = c.now();
        c.coordinator_record(id, Some(v.clone().times(t, t)));
    }
    let dir = tempfile::tempdir().unwrap();
    let inputs = inputs_of(&c, dir.path());
    (dir, inputs)
}

fn tv2(pid: i64, epoch: i16, st: u8, prev: i64, next: i64) -> TxnValue {
    TxnValue::new(pid, epoch, st).v1(prev, next, 2)
}

/// Epoch exhaustion: "no Complete yet" after a Prepare at 32767, and a rotation read from
/// two consecutive values of an id, rest on records not being there.
#[test]
fn exhaustion_verdicts_resting_on_absent_records_are_unconfirmed() {
    // x: Prepare at 32767 without NextProducerId (offset 0), no Complete: at risk
    let (_d, risk) = exhaustion_log(&[(
        "x",
        tv2(50, 32767, state::PREPARE_ABORT, -1, -1).partitions(&[("orders", &[0])]),
    )]);
    // y: rotated 60 → 61 without PreviousProducerId (offsets 0 and 2; z at 1)
    let (_d, fenced) = exhaustion_log(&[
        ("y", tv2(60, 32766, state::EMPTY, -1, -1)),
        ("z", tv2(70, 3, state::EMPTY, -1, -1)),
        ("y", tv2(61, 0, state::EMPTY, -1, -1)),
    ]);
    // w: Complete at 32767 of the same producer (offset 1): stuck while it is the id's
    // latest value, which a later unread record may change
    let (_d, complete) = exhaustion_log(&[
        (
            "w",
            tv2(40, 32767, state::PREPARE_COMMIT, -1, -1).partitions(&[("orders", &[0])]),
        ),
        ("w", tv2(40, 32767, state::COMPLETE_COMMIT, -1, -1)),
    ]);
    let stuck = Kind::ProducerStuckAtExhaustedEpoch;
    let rotation = Kind::ProducerFencedOnRetryAfterFailover;
    // (inputs, kind, unread batch offsets, confirmed, severity: an unconfirmed error is a
    // warning, the at-risk and rotation verdicts are warnings anyway)
    let cases = [
        (&complete, stuck, None, true, Severity::Error),
        (&complete, stuck, Some(Some((0, 1))), true, Severity::Error),
        (
            &complete,
            stuck,
            Some(Some((2, 5))),
            false,
            Severity::Warning,
        ),
        (&complete, stuck, Some(None), false, Severity::Warning),
        (&risk, stuck, None, true, Severity::Warning),
        // at or before the Prepare: it cannot hold a later record
        (&risk, stuck, Some(Some((0, 0))), true, Severity::Warning),
        (&risk, stuck, Some(Some((1, 7))), false, Severity::Warning),
        (&fenced, rotation, None, true, Severity::Warning),
        // after the second value: it cannot sit between them
        (
            &fenced,
            rotation,
            Some(Some((3, 9))),
            true,
            Severity::Warning,
        ),
        (
            &fenced,
            rotation,
            Some(Some((1, 1))),
            false,
            Severity::Warning,
        ),
    ];
    for (inputs, kind, unread, want, severity) in cases {
        let i = match unread {
            Some(offsets) => with_unread(inputs, offsets),
            None => inputs.clone(),
        };
        assert_eq!(confirmed(&i, kind), (want, severity), "{kind:?} {unread:?}");
    }
}

/// `CoordinatorLog` is a versioned, serialisable input: the new field round-trips, and
/// inputs written before it existed still read (as nothing unread).
#[test]
fn coordinator_log_serde_with_and_without_records_not_read() {
    let t = tempfile::tempdir().unwrap();
    let base = inputs_of(&cluster(), t.path());
    let log: &CoordinatorLog = &base.coordinator[0];
    assert!(!log.records.is_empty());
    let back: CoordinatorLog = serde_json::from_str(&serde_json::to_string(log).unwrap()).unwrap();
    assert_eq!(&back, log);
    let unread = with_unread(&base, Some((5, 9)));
    let log = &unread.coordinator[0];
    let json = serde_json::to_value(log).unwrap();
    assert_eq!(
        json["records_not_read"][0]["offsets"],
        serde_json::json!([5, 9])
    );
    let back: CoordinatorLog = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(&back, log);
    // an input written before the field existed
    let mut old = json;
    old.as_object_mut().unwrap().remove("records_not_read");
    let back: CoordinatorLog = serde_json::from_value(old).unwrap();
    assert!(back.records_not_read.is_empty());
    assert_eq!(back.records, log.records);
    // and the whole inputs
    let all: TxnInputs = serde_json::from_str(&serde_json::to_string(&unread).unwrap()).unwrap();
    assert_eq!(all, unread);
}
