//! `verify`'s `.txnindex` check where the log no longer holds the start of a transaction
//! (retention deleted the first segment): what is below the first offset held is unknown,
//! not wrong, and only that; an entry whose transaction began there is accepted only when
//! its lastOffset is an ABORT marker of its own producer (`kafka-format.md` §7.5,
//! `ProducerAppendInfo.appendEndTxnMarker`).
#![cfg(feature = "testkit")]

use klogscan::finding::Kind;
use klogscan::testkit::files::encode_txn_index;
use klogscan::testkit::{
    AbortedTxn, Batch, LogDirBuilder, Manifest, PartitionBuilder, PartitionFileOptions, Producer,
};
use klogscan::verify::{PartitionVerification, VerifyOptions, verify_partition};

const IDEM: i64 = 500;
const A: i64 = 700;
const B: i64 = 800;
const C: i64 = 900;
const D: i64 = 950;

/// Segment 0 (deleted by the test): producer B opens a transaction at 3, A one at 5.
/// Segment 1 (from offset 7): A's transaction goes on and is aborted at 12 (its index entry
/// has firstOffset 5 and, B being open, lastStableOffset 3), a one-record data batch at 13,
/// C's transaction 14–15 aborted at 16 (lastStableOffset 3), an empty abort of D at 17 (not
/// indexed), B's commit at 18.
struct Retained {
    _dir: tempfile::TempDir,
    m: Manifest,
}

impl Retained {
    fn new() -> Self {
        let idem = Producer::idempotent(IDEM, 0);
        let (a, b) = (Producer::transactional(A, 2), Producer::transactional(B, 0));
        let (c, d) = (Producer::transactional(C, 0), Producer::transactional(D, 0));
        let mut p = PartitionBuilder::new("kept", 0).broker_files(PartitionFileOptions::default());
        p.append(Batch::new(idem).records(3));
        p.append(Batch::new(b).records(2));
        p.append(Batch::new(a).records(2));
        p.roll();
        p.append(Batch::new(idem).records(3));
        p.append(Batch::new(a).records(2));
        p.abort(a, 9);
        p.append(Batch::new(idem).records(1));
        p.append(Batch::new(c).records(2));
        p.abort(c, 9);
        p.abort(d, 9);
        p.commit(b, 9);
        let dir = tempfile::tempdir().unwrap();
        let m = LogDirBuilder::new(1)
            .partition(p)
            .write(dir.path())
            .unwrap()
            .partitions
            .remove(0);
        assert_eq!(m.segments.len(), 2);
        assert_eq!(m.segments[1].0, 7);
        let at = |o: i64| m.batches.iter().find(|b| b.base_offset == o).unwrap();
        assert_eq!((at(12).producer_id, at(12).control.is_some()), (A, true));
        assert_eq!((at(13).producer_id, at(13).last_offset), (IDEM, 13));
        assert_eq!((at(16).producer_id, at(17).producer_id), (C, D));
        // Retention deleted segment 0.
        for f in std::fs::read_dir(&m.dir).unwrap() {
            let f = f.unwrap().path();
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with(&format!("{:020}.", 0)) {
                std::fs::remove_file(f).unwrap();
            }
        }
        Retained { _dir: dir, m }
    }

    /// Replace segment 1's `.txnindex` with `entries` and verify the partition.
    fn verify_with(&self, entries: &[(i64, i64, i64, i64)]) -> PartitionVerification {
        let entries: Vec<AbortedTxn> = entries
            .iter()
            .map(
                |&(producer_id, first_offset, last_offset, last_stable_offset)| AbortedTxn {
                    producer_id,
                    first_offset,
                    last_offset,
                    last_stable_offset,
                },
            )
            .collect();
        std::fs::write(
            self.m.dir.join(format!("{:020}.txnindex", 7)),
            encode_txn_index(&entries),
        )
        .unwrap();
        let v = verify_partition(&self.m.dir, &VerifyOptions::default()).unwrap();
        assert_eq!(v.scan.first_offset, Some(7));
        v
    }
}

/// The index entries the broker wrote for segment 1.
const TRUE_A: (i64, i64, i64, i64) = (A, 5, 12, 3);
const TRUE_C: (i64, i64, i64, i64) = (C, 14, 16, 3);

fn txnindex_findings(v: &PartitionVerification) -> Vec<&klogscan::Finding> {
    v.findings
        .iter()
        .filter(|f| f.kind == Kind::TxnindexMismatch)
        .collect()
}

/// The `(producer_id, last_offset)` of the entries a finding whose message contains `what`
/// lists.
fn listed(v: &PartitionVerification, what: &str) -> Vec<(i64, i64)> {
    txnindex_findings(v)
        .into_iter()
        .filter(|f| f.message.contains(what))
        .flat_map(|f| f.evidence["entries"].as_array().unwrap().clone())
        .map(|e| {
            (
                e["producer_id"].as_i64().unwrap(),
                e["last_offset"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn entries_whose_transaction_began_before_the_first_offset_held_are_unknown_not_wrong() {
    let r = Retained::new();
    let v = r.verify_with(&[TRUE_A, TRUE_C]);
    assert!(txnindex_findings(&v).is_empty(), "{:#?}", v.findings);
}

#[test]
fn an_entry_before_the_log_start_must_point_at_an_abort_marker_of_its_producer() {
    let r = Retained::new();
    // lastOffset 13 is a one-record data batch; lastOffset 17 is an ABORT marker, but of
    // producer D, not of producer 999.
    let v = r.verify_with(&[TRUE_A, (IDEM, 2, 13, 3), TRUE_C, (999, 2, 17, 3)]);
    let extra = listed(&v, "no matching ABORT");
    assert_eq!(extra, vec![(IDEM, 13), (999, 17)], "{:#?}", v.findings);
    assert_eq!(txnindex_findings(&v).len(), 1);
}

#[test]
fn only_the_field_below_the_first_offset_held_goes_unchecked() {
    let r = Retained::new();
    // C's transaction lies wholly in the log: a wrong firstOffset is wrong even though the
    // lastStableOffset (3) is below the first offset held.
    let v = r.verify_with(&[TRUE_A, (C, 15, 16, 3)]);
    assert_eq!(
        listed(&v, "wrong firstOffset or lastStableOffset"),
        vec![(C, 16)],
        "{:#?}",
        v.findings
    );
    // D's abort at 17 closed no transaction the log holds data of (firstOffset 8 is held):
    // an entry for it is extra even with a lastStableOffset below the first offset held.
    let v = r.verify_with(&[TRUE_A, TRUE_C, (D, 8, 17, 3)]);
    assert_eq!(
        listed(&v, "no matching ABORT"),
        vec![(D, 17)],
        "{:#?}",
        v.findings
    );
    assert_eq!(txnindex_findings(&v).len(), 1);
}
