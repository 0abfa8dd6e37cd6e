//! `TransactionsWithTieredStoreTest`: `TransactionsTest` with one batch a segment, the
//! segments below the last stable offset copied and removed locally.

use super::{object, uploaded_txn_indexes};
use crate::kafka_quiet_tiered_cases::{Checked, check};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::files::{AbortedTxn, encode_txn_index};
use klogscan::testkit::remote_log::TieredLog;
use klogscan::testkit::{Batch, PartitionBuilder, Producer};

/// "transactional-producer".
fn p1() -> Producer {
    Producer::transactional(7, 0)
}

/// "other".
fn p2() -> Producer {
    Producer::transactional(8, 0)
}

/// One batch a segment (`segment.bytes` of one batch: `maxBatchCountPerSegment = 1`).
fn one_a_segment(steps: &[&dyn Fn(&mut PartitionBuilder)]) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0)
        .leader_epoch(0)
        .time_step(1000);
    for (i, step) in steps.iter().enumerate() {
        if i > 0 {
            p.roll();
        }
        step(&mut p);
    }
    p
}

/// `history` tiered: its first `copied` segments copied (with their transaction indexes),
/// the local log from there, the log start 0; the four runs, `extra` run after the upload.
fn tiered(
    history: impl Fn() -> PartitionBuilder,
    copied: usize,
    uploaded: usize,
    extra: impl FnOnce(&std::path::Path),
) -> Checked {
    let mut t = TieredLog::new(history());
    for i in 0..copied {
        t.copy(i);
    }
    t.local_from(copied);
    t.log_start(0);
    check(vec![t], |d| {
        assert_eq!(uploaded_txn_indexes(d, history(), copied), uploaded);
        extra(d);
    })
}

/// `(committed, aborted, open)` of `orders-0` (`remote`: with `--remote-storage`).
fn txns(c: &Checked, remote: bool) -> (u64, u64, u64) {
    let t = &c.part(0, remote).transactions;
    (t.committed, t.aborted, t.open)
}

/// `testBasicTransactions` on `topic1`-1: "4" aborted at 0, its ABORT at 1, "1" committed
/// at 2, its COMMIT at 3.
fn basic(commit: bool) -> PartitionBuilder {
    let a = |p: &mut PartitionBuilder| {
        p.append(Batch::new(p1()).records(1));
    };
    let abort = |p: &mut PartitionBuilder| {
        p.abort(p1(), 0);
    };
    let c = |p: &mut PartitionBuilder| {
        p.commit(p1(), 0);
    };
    if commit {
        one_a_segment(&[&a, &abort, &a, &c])
    } else {
        one_a_segment(&[&a, &abort, &a])
    }
}

/// `TransactionsWithTieredStoreTest.testBasicTransactions` (`TransactionsTest.
/// testBasicTransactions` with remote storage): after the COMMIT the leader copied the three
/// segments below the last stable offset 4 and local retention removed them — the local log
/// starts at 3, the log start stays 0 (`maybeVerifyLocalLogStartOffsets(3)`,
/// `verifyLogStartOffsets(0)`). The ABORT's segment [1,1] is uploaded with its transaction
/// index, `(7, 0, 1, 2)` (nothing else open: the last stable offset after the marker): a
/// read_committed consumer from 0 is served "1" alone
/// (`RemoteLogManager.read` → `collectAbortedTransactions`).
///
/// klogscan: `scan --remote-storage` replays the three remote segments, then the local log:
/// one committed, one aborted, nothing open, the last stable offset 4 = the log end; the
/// local-only scan (from the producer snapshot at 3) the same last stable offset; all quiet.
/// Near miss: the state the test checks between the sends and the COMMIT ("these records
/// won't be offloaded"): [0,0] and [1,1] copied, "1" at 2 undecided — the last stable offset
/// stays 2 in both scans, one transaction open, hanging two days later.
#[test]
fn basic_transactions_moved_to_remote_one_batch_a_segment() {
    let c = tiered(
        || basic(true),
        3,
        1,
        |d| {
            let want = encode_txn_index(&[AbortedTxn {
                producer_id: 7,
                first_offset: 0,
                last_offset: 1,
                last_stable_offset: 2,
            }]);
            assert_eq!(std::fs::read(object(d, 1, 2, "txnindex")).unwrap(), want);
        },
    );
    c.assert_quiet();
    assert_eq!(txns(&c, true), (1, 1, 0));
    let p = c.part(0, true);
    assert_eq!((p.last_stable_offset, p.log_end_offset), (Some(4), Some(4)));
    let t = p.tiered.as_ref().unwrap();
    assert_eq!(t.remote, vec![(0, 0), (1, 1), (2, 2)]);
    assert_eq!(
        (t.log_start_offset, t.local_log_start_offset),
        (Some(0), Some(3))
    );
    let r = t.replayed.as_ref().unwrap();
    assert_eq!(
        (r.segments, r.first_offset, r.last_offset),
        (3, Some(0), Some(2))
    );
    assert_eq!(c.part(0, false).last_stable_offset, Some(4));
    assert_eq!(c.part(0, false).transactions.open, 0);

    // near miss: before the COMMIT
    let c = tiered(|| basic(false), 2, 1, |_| {});
    assert_eq!(txns(&c, true), (0, 1, 1));
    for remote in [false, true] {
        assert_eq!(c.part(0, remote).last_stable_offset, Some(2), "{remote}");
    }
    let (plain, remote) = c.of(Kind::HangingTransaction);
    for v in [&plain, &remote] {
        assert_eq!(v.len(), 1, "{v:#?}");
        assert_eq!((v[0].offset, v[0].producer_id), (Some(2), Some(7)));
    }
}

/// `testDelayedFetchIncludesAbortedTransaction` on `topic1`-0: "other" x1 at 0,
/// "transactional-producer" y1 at 1 and y2 at 2, "other" x2 at 3, the ABORT of the second at
/// 4 (when `abort`), the COMMIT of the first at 5.
fn delayed(abort: bool) -> PartitionBuilder {
    let x = |p: &mut PartitionBuilder| {
        p.append(Batch::new(p2()).records(1));
    };
    let y = |p: &mut PartitionBuilder| {
        p.append(Batch::new(p1()).records(1));
    };
    let ab = |p: &mut PartitionBuilder| {
        p.abort(p1(), 0);
    };
    let c = |p: &mut PartitionBuilder| {
        p.commit(p2(), 0);
    };
    if abort {
        one_a_segment(&[&x, &y, &y, &x, &ab, &c])
    } else {
        one_a_segment(&[&x, &y, &y, &x, &c])
    }
}

/// The ABORT's index entry: y1..y2 aborted while "other" was open from 0.
fn aborted_y() -> Vec<u8> {
    encode_txn_index(&[AbortedTxn {
        producer_id: 7,
        first_offset: 1,
        last_offset: 4,
        last_stable_offset: 0,
    }])
}

/// `TransactionsWithTieredStoreTest.testDelayedFetchIncludesAbortedTransaction`: the five
/// segments below the COMMIT copied, the local log from 5 (`maybeVerifyLocalLogStartOffsets(5)`),
/// the log start 0. The aborted transaction is wholly below the local log start: a
/// read_committed fetch from 0 is served x1 at 0 and x2 at 3 only, the ABORT's index entry
/// `(7, 1, 4, 0)` read from the remote `.txnindex` of [4,4] (through the broker's
/// `remote-log-index-cache`).
///
/// klogscan: the replay of the five remote segments and the local COMMIT: one committed, one
/// aborted, the last stable offset 6 = the log end, quiet. Near miss: the ABORT never written
/// ("transactional-producer" still open at the COMMIT of the other): the last stable offset
/// stays 1 — below it no copy but [0,0] is a candidate (`RemoteLogManager.
/// candidateLogSegments`) — and the transaction hangs from 1.
#[test]
fn aborted_transaction_wholly_below_the_local_log_start() {
    let c = tiered(
        || delayed(true),
        5,
        1,
        |d| {
            assert_eq!(
                std::fs::read(object(d, 4, 5, "txnindex")).unwrap(),
                aborted_y()
            )
        },
    );
    c.assert_quiet();
    assert_eq!(txns(&c, true), (1, 1, 0));
    let p = c.part(0, true);
    assert_eq!((p.last_stable_offset, p.log_end_offset), (Some(6), Some(6)));
    assert_eq!(p.tiered.as_ref().unwrap().local_log_start_offset, Some(5));

    // near miss: the ABORT missing; only [0,0] below the last stable offset 1 is copied
    let c = tiered(|| delayed(false), 1, 0, |_| {});
    assert_eq!(txns(&c, true), (1, 0, 1));
    assert_eq!(c.part(0, true).last_stable_offset, Some(1));
    let (_, remote) = c.of(Kind::HangingTransaction);
    assert_eq!(remote.len(), 1, "{remote:#?}");
    assert_eq!(
        (remote[0].offset, remote[0].producer_id),
        (Some(1), Some(7))
    );
}

/// The state `testDelayedFetchIncludesAbortedTransaction` passes through under tiered
/// storage before its last wait: [0,0] to [3,3] copied and removed locally, the ABORT at 4 and
/// the COMMIT at 5 still local (the local log from 4). The aborted transaction begins in
/// remote storage and ends in the local log: `RemoteLogManager.collectAbortedTransactions`
/// finds nothing in the remote indexes and goes on to the local segments
/// (`collectAbortedTransactionInLocalSegments`), where `00000000000000000004.txnindex` holds
/// `(7, 1, 4, 0)`: y1 and y2 are filtered.
///
/// klogscan: one committed, one aborted, the last stable offset 6, with and without
/// `--remote-storage` (the local scan from the producer snapshot at 4, which holds both
/// transactions open); quiet; `verify` finds the local index as the markers make it. Near
/// miss: that local `.txnindex` empty — a read_committed fetch from remote storage is given
/// no aborted transaction and serves y1 and y2 as committed: `verify` reports
/// `txnindex_mismatch` on the segment at 4 (with and without `--remote-storage`).
#[test]
fn aborted_transaction_begun_in_remote_storage_ends_in_the_local_index() {
    let c = tiered(|| delayed(true), 4, 0, |_| {});
    c.assert_quiet();
    for remote in [false, true] {
        assert_eq!(txns(&c, remote), (1, 1, 0), "{remote}");
        assert_eq!(c.part(0, remote).last_stable_offset, Some(6));
    }
    let local = c._dir.path().join("broker-0/orders-0");
    assert_eq!(
        std::fs::read(local.join("00000000000000000004.txnindex")).unwrap(),
        aborted_y()
    );

    // near miss: the local index lost its entry
    let c = tiered(
        || delayed(true),
        4,
        0,
        |d| {
            let f = d.join("broker-0/orders-0/00000000000000000004.txnindex");
            std::fs::write(f, b"").unwrap();
        },
    );
    for r in [&c.verify, &c.verify_remote] {
        let v: Vec<_> = (r.findings())
            .filter(|f| f.kind == Kind::TxnindexMismatch)
            .collect();
        assert_eq!(v.len(), 1, "{v:#?}");
        assert!(v[0].severity >= Severity::Warning);
        assert_eq!(
            v[0].segment.as_deref(),
            Some("00000000000000000004.txnindex"),
            "{:#?}",
            v[0]
        );
    }
}

/// `testDelayedFetchIncludesAbortedTransaction` with a remote storage that keeps no
/// transaction index for the ABORT's segment [4,4] (a plugin that does not upload
/// `LogSegmentData.transactionIndex`, or an object lost): `RemoteIndexCache.createCacheEntry`
/// answers the fetch's `RemoteResourceNotFoundException` with an empty index, the local log
/// (from 5) holds none either, and a read_committed consumer from 0 is served y1 and y2 as
/// committed. klogscan's replay of the remote history reads the ABORT marker at 4 ending
/// producer 7's transaction from 1: `remote_txn_index_incomplete` (error) on the segment,
/// at the marker. The same for an emptied object, and for one whose entry names another
/// producer. Near miss: the object as the copy uploads it (`(7, 1, 4, 0)`) is quiet
/// (`aborted_transaction_wholly_below_the_local_log_start`); the finding needs
/// `--remote-storage` (the metadata alone names no marker).
#[test]
fn abort_marker_in_a_remote_segment_without_its_transaction_index() {
    let other = encode_txn_index(&[AbortedTxn {
        producer_id: 8,
        first_offset: 1,
        last_offset: 4,
        last_stable_offset: 0,
    }]);
    for (what, object_bytes) in [
        ("absent", None),
        ("empty", Some(Vec::new())),
        ("other", Some(other)),
    ] {
        let c = tiered(
            || delayed(true),
            5,
            1,
            |d| match &object_bytes {
                None => std::fs::remove_file(object(d, 4, 5, "txnindex")).unwrap(),
                Some(b) => std::fs::write(object(d, 4, 5, "txnindex"), b).unwrap(),
            },
        );
        assert_eq!(txns(&c, true), (1, 1, 0), "{what}");
        let mut v: Vec<_> = (c.remote.findings.iter())
            .filter(|f| f.kind.id().starts_with("remote_") && f.severity >= Severity::Warning)
            .collect();
        if what == "other" {
            // The entry of producer 8 at 4, where 8 has no marker, hides 8's committed
            // transaction from 0 (x at 3): `remote_txn_index_extra`.
            assert_eq!(v.len(), 2, "{what}: {v:#?}");
            let extra = v.pop().unwrap();
            assert_eq!(extra.kind, Kind::RemoteTxnIndexExtra);
            assert_eq!(extra.severity, Severity::Error);
            assert_eq!(extra.evidence["committed_transactions_hidden"], 1);
            assert_eq!(
                extra.evidence["entries"][0]["marker_at_last_offset"],
                "none"
            );
        }
        assert_eq!(v.len(), 1, "{what}: {v:#?}");
        assert_eq!(v[0].kind, Kind::RemoteTxnIndexIncomplete, "{what}");
        assert_eq!(v[0].offset, Some(4), "{what}");
        assert_eq!(v[0].evidence["missing_count"], 1, "{what}");
        assert_eq!(v[0].evidence["missing"][0]["producer_id"], 7, "{what}");
        assert_eq!(v[0].evidence["missing"][0]["first_offset"], 1, "{what}");
        assert!(
            !c.scan
                .findings
                .iter()
                .any(|f| f.kind == Kind::RemoteTxnIndexIncomplete),
            "{what}: without --remote-storage"
        );
    }
}

/// The same segments in the Aiven plugin's layout, whose `.rsm-manifest` states the
/// transaction index's size (`segmentIndexes.transaction`, `null` when the copy was given
/// none): the ABORT's segment [4,4] copied without its index is
/// `remote_txn_index_incomplete` counted from the manifest ("at least 1", no producer
/// named). Near miss: the index uploaded (34 bytes stated): quiet.
#[test]
fn abort_marker_in_an_aiven_segment_without_its_transaction_index() {
    use crate::kafka_quiet_tiered_cases::check_written;
    use klogscan::testkit::aiven::{AivenLayout, replace_local_tiered};
    for lost in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut t = TieredLog::new(delayed(true));
        for i in 0..5 {
            t.copy(i);
        }
        t.local_from(5);
        t.log_start(0);
        let m = t.write(dir.path()).unwrap();
        assert_eq!(uploaded_txn_indexes(dir.path(), delayed(true), 5), 1);
        if lost {
            std::fs::remove_file(object(dir.path(), 4, 5, "txnindex")).unwrap();
        }
        replace_local_tiered(&m, &AivenLayout::default()).unwrap();
        let c = check_written(dir, vec![m]);
        let v: Vec<_> = (c.remote.findings.iter())
            .filter(|f| f.kind.id().starts_with("remote_") && f.severity >= Severity::Warning)
            .collect();
        if !lost {
            assert!(v.is_empty(), "{v:#?}");
            continue;
        }
        assert_eq!(v.len(), 1, "{v:#?}");
        assert_eq!(v[0].kind, Kind::RemoteTxnIndexIncomplete);
        assert_eq!(v[0].offset, Some(4));
        assert_eq!(v[0].evidence["index_entries"], 0);
        assert_eq!(v[0].evidence["missing_count"], 1);
        assert!(v[0].message.contains("at least 1"), "{}", v[0].message);
        assert!(v[0].segment.as_deref().unwrap().ends_with(".rsm-manifest"));
    }
}

/// [`basic`] with its COMMIT, then a plain batch in a segment of its own (the local log
/// once the four transactional segments are copied).
fn basic_then_plain() -> PartitionBuilder {
    let mut p = basic(true);
    p.roll();
    p.append(Batch::new(Producer::PLAIN).values(["z"]));
    p
}

/// `testBasicTransactions`'s partition (an aborted transaction of producer 7 from 0, its
/// ABORT at 1, a committed one from 2, its COMMIT at 3), then a plain batch; the four
/// transactional segments copied. The COMMIT's segment [3,3] is given a transaction index
/// entry `(7, 2, 3, 4)`, as if the commit had aborted: `RemoteLogManager.
/// collectAbortedTransactions` hands it to a read_committed fetch from remote storage, the
/// consumer (`CompletedFetch.nextFetchedRecord`) counts producer 7 aborted from 2 and skips
/// its committed batch at 2 (the COMMIT marker does not end that). klogscan:
/// `remote_txn_index_extra`, an error at 3, the COMMIT named, one committed transaction
/// hidden. Near misses: an entry of producer 9, which wrote nothing, at 3 — wrong but hiding
/// no committed transaction the replay read: a warning; an entry ending at 1 (another
/// segment's ABORT) in [3,3]'s index — not judged there; the index as uploaded (none for
/// [3,3]) — quiet; and nothing without `--remote-storage`.
#[test]
fn a_remote_index_entry_at_a_commit_marker_hides_the_committed_transaction() {
    let entry = |producer_id, first_offset, last_offset| AbortedTxn {
        producer_id,
        first_offset,
        last_offset,
        last_stable_offset: last_offset + 1,
    };
    let cases = [
        ("commit", Some(entry(7, 2, 3)), Some(Severity::Error)),
        (
            "unknown producer",
            Some(entry(9, 2, 3)),
            Some(Severity::Warning),
        ),
        ("another segment's", Some(entry(7, 0, 1)), None),
        ("as uploaded", None, None),
    ];
    for (what, e, want) in cases {
        let c = tiered(basic_then_plain, 4, 1, |d| {
            if let Some(e) = e {
                std::fs::write(object(d, 3, 4, "txnindex"), encode_txn_index(&[e])).unwrap();
            }
        });
        assert_eq!(txns(&c, true), (1, 1, 0), "{what}");
        assert!(
            !c.scan
                .findings
                .iter()
                .any(|f| f.kind.id().starts_with("remote_txn")),
            "{what}: without --remote-storage"
        );
        let v: Vec<_> = (c.remote.findings.iter())
            .filter(|f| f.kind.id().starts_with("remote_") && f.severity >= Severity::Warning)
            .collect();
        let Some(severity) = want else {
            assert!(v.is_empty(), "{what}: {v:#?}");
            continue;
        };
        assert_eq!(v.len(), 1, "{what}: {v:#?}");
        assert_eq!(v[0].kind, Kind::RemoteTxnIndexExtra, "{what}");
        assert_eq!(v[0].severity, severity, "{what}");
        assert_eq!(v[0].offset, Some(3), "{what}");
        assert_eq!(v[0].evidence["extra_count"], 1, "{what}");
        let first = &v[0].evidence["entries"][0];
        let (marker, hidden) = match severity {
            Severity::Error => ("commit", 1),
            _ => ("none", 0),
        };
        assert_eq!(first["marker_at_last_offset"], marker, "{what}");
        assert_eq!(first["committed_transactions_hidden"], hidden, "{what}");
        assert_eq!(
            v[0].evidence["committed_transactions_hidden"], hidden,
            "{what}"
        );
    }
}

/// The same in the Aiven plugin's layout: the plugin stores each index of an unencrypted
/// segment untransformed in the `.indexes` object, where its manifest says
/// (`RemoteStorageManager.transformIndex`, `fetchIndex`), so the COMMIT segment's entry
/// `(7, 2, 3, 4)` is read from there: `remote_txn_index_extra` (error) on the `.indexes`
/// object. Near misses: the index as uploaded (quiet); the segment encrypted — its indexes
/// are ciphertext, the entries unknown: not judged.
#[test]
fn an_aiven_index_entry_at_a_commit_marker_hides_the_committed_transaction() {
    use crate::kafka_quiet_tiered_cases::check_written;
    use klogscan::testkit::aiven::{AivenLayout, replace_local_tiered};
    for (wrong, encryption) in [(true, false), (false, false), (true, true)] {
        let dir = tempfile::tempdir().unwrap();
        let mut t = TieredLog::new(basic_then_plain());
        for i in 0..4 {
            t.copy(i);
        }
        t.local_from(4);
        t.log_start(0);
        let m = t.write(dir.path()).unwrap();
        if wrong {
            let e = AbortedTxn {
                producer_id: 7,
                first_offset: 2,
                last_offset: 3,
                last_stable_offset: 4,
            };
            std::fs::write(object(dir.path(), 3, 4, "txnindex"), encode_txn_index(&[e])).unwrap();
        }
        let layout = AivenLayout {
            encryption,
            ..AivenLayout::default()
        };
        replace_local_tiered(&m, &layout).unwrap();
        let c = check_written(dir, vec![m]);
        let v: Vec<_> = (c.remote.findings.iter())
            .filter(|f| f.kind == Kind::RemoteTxnIndexExtra)
            .collect();
        if !wrong || encryption {
            assert!(
                v.is_empty(),
                "wrong {wrong}, encrypted {encryption}: {v:#?}"
            );
            continue;
        }
        assert_eq!(v.len(), 1, "{v:#?}");
        assert_eq!(v[0].severity, Severity::Error);
        assert_eq!(v[0].offset, Some(3));
        assert_eq!(v[0].evidence["committed_transactions_hidden"], 1);
        assert!(v[0].segment.as_deref().unwrap().ends_with(".indexes"));
    }
}
