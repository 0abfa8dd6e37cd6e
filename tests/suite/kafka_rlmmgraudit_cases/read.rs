//! What a fetch from remote storage reads (`RemoteLogManager.read`).

use crate::kafka_quiet_tiered_cases::{check, check_written, history};
use crate::kafka_rlmaudit_cases::{metadata, storage};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::files::{topic_id_for, uuid_text};
use klogscan::testkit::remote_log::segment_uuid;

/// `RemoteLogManagerTest.testReadForMissingFirstBatchInRemote`: a fetch whose offset no batch
/// of the object from the indexed position holds (`findFirstBatch` returns none) is answered
/// with no records — the consumer polls nothing and stays there. On disk: `orders-0`'s copy
/// [0,19] (two batches of ten) whose object holds only its first batch, [0,9], as the
/// metadata's size does not; a fetch of 10..=19 finds no batch. `scan --remote-storage` says
/// the object is not the copied segment (`remote_segment_mismatch`: its size and end offset;
/// nothing damaged — it ends on a batch boundary); the metadata alone sees nothing (the
/// metadata findings are empty). Near miss: the whole object (quiet).
#[test]
fn object_without_the_fetched_batch_is_a_mismatch() {
    let build = |cut: bool| {
        let mut t = history();
        t.copy(0);
        t.copy(1);
        t.local_from(2);
        t.log_start(0);
        check(vec![t], |d| {
            if !cut {
                return;
            }
            let log = d
                .join("remote/kafka-tiered-storage")
                .join(format!("orders-0-{}", uuid_text(&topic_id_for("orders"))))
                .join(format!("{:020}-{}.log", 0, uuid_text(&segment_uuid(1))));
            let bytes = std::fs::read(&log).unwrap();
            let first = 12 + i32::from_be_bytes(bytes[8..12].try_into().unwrap()) as usize;
            std::fs::write(&log, &bytes[..first]).unwrap();
        })
    };
    let c = build(true);
    assert_eq!(metadata(&c), vec![]);
    assert_eq!(
        storage(&c),
        vec![(Kind::RemoteSegmentMismatch, 0, Severity::Error)]
    );
    let m = (c.remote.findings.iter())
        .find(|f| f.kind == Kind::RemoteSegmentMismatch)
        .unwrap();
    assert_eq!(
        m.evidence["differences"],
        serde_json::json!(["size", "end_offset"])
    );
    assert_eq!(m.evidence["walked"]["last_offset"], 9);
    assert_eq!(m.evidence["damaged_count"], 0);

    let c = build(false);
    assert_eq!(metadata(&c), vec![]);
    assert_eq!(storage(&c), vec![]);
}

/// `RemoteLogManager.copyLogSegment` sets a segment's `TxnIndexEmpty` from its local
/// transaction index (`segment.txnIndex().isEmpty()`), and a remote read_committed fetch
/// collects the aborted transactions of the segments after the fetched one through
/// `RemoteLogMetadataCache.nextSegmentWithTxnIndex`, which passes over every segment flagged
/// empty (`RemoteLogManagerTest.testFetchNextSegmentWithTxnIndex`,
/// `testFindNextSegmentWithTxnIndex*`). On disk: `orders-0`'s copy [0,…] flagged
/// `TxnIndexEmpty=true` whose `.txnindex` object holds one aborted transaction (34 bytes):
/// `remote_txn_index_hidden` (error, with `--remote-storage` only: the metadata alone cannot
/// tell). Near misses: the same object under `TxnIndexEmpty=false` (what the copy writes),
/// and the flag `true` over an empty `.txnindex` object — nothing.
#[test]
fn a_transaction_index_flagged_empty_over_aborted_transactions_is_named() {
    use klogscan::testkit::files::{AbortedTxn, encode_txn_index};
    let build = |flag: bool, entries: &[AbortedTxn]| {
        let t = flagged(flag);
        let bytes = encode_txn_index(entries);
        check(vec![t], move |d| {
            let object = d
                .join("remote/kafka-tiered-storage")
                .join(format!("orders-0-{}", uuid_text(&topic_id_for("orders"))))
                .join(format!(
                    "{:020}-{}.txnindex",
                    0,
                    uuid_text(&segment_uuid(1))
                ));
            std::fs::write(object, bytes).unwrap();
        })
    };
    let aborted = one_aborted();
    let c = build(true, &aborted);
    assert_eq!(metadata(&c), vec![]);
    // The entry ends at 4, where this history holds no ABORT marker of producer 7: that is
    // `remote_txn_index_extra` too (a warning: 7 wrote no committed transaction there).
    let extra = (Kind::RemoteTxnIndexExtra, 4, Severity::Warning);
    assert_eq!(
        storage(&c),
        vec![extra, (Kind::RemoteTxnIndexHidden, 0, Severity::Error)]
    );
    let f = (c.remote.findings.iter())
        .find(|f| f.kind == Kind::RemoteTxnIndexHidden)
        .unwrap();
    assert_eq!(f.evidence["aborted_transactions"], 1);
    assert_eq!(f.evidence["txn_index_bytes"], 34);
    assert!(
        f.broker_behaviour.contains("nextSegmentWithTxnIndex"),
        "{f:#?}"
    );
    // near misses
    for (flag, entries) in [(false, &aborted[..]), (true, &[][..])] {
        let c = build(flag, entries);
        let want = if entries.is_empty() {
            vec![]
        } else {
            vec![extra]
        };
        assert_eq!(storage(&c), want, "flag {flag}, {} entries", entries.len());
        assert_eq!(metadata(&c), vec![]);
    }
}

/// The same in the Aiven plugin's layout, where a segment's indexes are one `.indexes`
/// object and its `.rsm-manifest` states where each lies and its size
/// (`SegmentIndexesV1.transaction`: null when the copy was given no transaction index):
/// `TxnIndexEmpty=true` over a manifest stating 34 bytes of transaction index is
/// `remote_txn_index_hidden`, judged from the manifest (also for an encrypted segment, whose
/// manifest states the index's stored size: its bytes, the IV and the tag). Near misses:
/// the flag false; the flag true over an empty transaction index.
#[test]
fn a_transaction_index_flagged_empty_in_an_aiven_manifest_is_named() {
    use klogscan::testkit::aiven::{AivenLayout, replace_local_tiered};
    use klogscan::testkit::files::{AbortedTxn, encode_txn_index};
    let build = |flag: bool, entries: &[AbortedTxn], encryption: bool| {
        let dir = tempfile::tempdir().unwrap();
        let m = flagged(flag).write(dir.path()).unwrap();
        let object = m.remote_partition_dir.join(format!(
            "{:020}-{}.txnindex",
            0,
            uuid_text(&segment_uuid(1))
        ));
        std::fs::write(object, encode_txn_index(entries)).unwrap();
        let layout = AivenLayout {
            encryption,
            ..AivenLayout::default()
        };
        replace_local_tiered(&m, &layout).unwrap();
        check_written(dir, vec![m])
    };
    let aborted = one_aborted();
    let c = build(true, &aborted, false);
    assert_eq!(metadata(&c), vec![]);
    // The unencrypted `.indexes` object's transaction index is read: its entry ends at 4,
    // where no ABORT of producer 7 is (`remote_txn_index_extra`, as in the layout above).
    let extra = (Kind::RemoteTxnIndexExtra, 4, Severity::Warning);
    assert_eq!(
        storage(&c),
        vec![extra, (Kind::RemoteTxnIndexHidden, 0, Severity::Error)]
    );
    let e = (c.remote.findings.iter())
        .find(|f| f.kind == Kind::RemoteTxnIndexExtra)
        .unwrap();
    assert!(
        e.segment.as_deref().unwrap().ends_with(".indexes"),
        "{e:#?}"
    );
    let f = (c.remote.findings.iter())
        .find(|f| f.kind == Kind::RemoteTxnIndexHidden)
        .unwrap();
    assert_eq!(f.evidence["txn_index_bytes"], 34);
    assert!(
        f.segment.as_deref().unwrap().ends_with(".rsm-manifest"),
        "{f:#?}"
    );
    // Encrypted: the manifest states the stored size (34 + the IV and tag); the entries
    // cannot be read, so only the flag is judged.
    let c = build(true, &aborted, true);
    let kinds: Vec<Kind> = storage(&c).into_iter().map(|(k, _, _)| k).collect();
    assert!(kinds.contains(&Kind::RemoteTxnIndexHidden), "{kinds:?}");
    assert!(!kinds.contains(&Kind::RemoteTxnIndexExtra), "{kinds:?}");
    let f = (c.remote.findings.iter())
        .find(|f| f.kind == Kind::RemoteTxnIndexHidden)
        .unwrap();
    assert_eq!(f.evidence["txn_index_bytes"], 34 + 28);
    assert_eq!(f.evidence["aborted_transactions"], 1);
    // near misses
    for (flag, entries) in [(false, &aborted[..]), (true, &[][..])] {
        let c = build(flag, entries, false);
        let want = if entries.is_empty() {
            vec![]
        } else {
            vec![extra]
        };
        assert_eq!(storage(&c), want, "flag {flag}, {} entries", entries.len());
        assert_eq!(metadata(&c), vec![]);
    }
}

/// `orders-0`'s copy [0,…] flagged `TxnIndexEmpty=flag`, the next copied, the local log
/// from the third segment.
fn flagged(flag: bool) -> klogscan::testkit::remote_log::TieredLog {
    let mut t = history();
    let mut seg = t.remote_segment(0);
    seg.txn_index_empty = Some(flag);
    let r = t.copy_started_as(seg, 0);
    t.copy_finished(r);
    t.copy(1);
    t.local_from(2);
    t.log_start(0);
    t
}

/// One aborted transaction's index entry.
fn one_aborted() -> [klogscan::testkit::files::AbortedTxn; 1] {
    [klogscan::testkit::files::AbortedTxn {
        producer_id: 7,
        first_offset: 2,
        last_offset: 4,
        last_stable_offset: 2,
    }]
}
