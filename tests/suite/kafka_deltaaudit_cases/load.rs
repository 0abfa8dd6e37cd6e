//! KAFKA-17941 (apache/kafka PR #17688, November 2024: Kafka 4.0.0; PR #20529 on the 3.9
//! branch, September 2025): `TransactionStateManager.loadTransactionMetadata` moves its
//! read position past every batch, empty ones included. Before, it moved only past a batch
//! holding a record of the current key version, and each of its reads returns the batches
//! of one segment (`LocalLog.read`): a segment ending with batches holding no such record
//! (an empty batch, records of another key version) was read again and again, and the
//! load never completed — whether the log ended there or not.

use super::*;
use crate::kafka_quiet_cluster_cases::Brokers;
use crate::kafka_txnstate_cases::{held, view};
use klogscan::request::{self, Request};
use klogscan::testkit::txnlog::state::*;
use klogscan::testkit::txnlog::{key, key_version};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer, Rec};
use klogscan::verify::BrokerVersion;

const PARTITION: i32 = 7;

/// What ends the first segment, after `id1`'s PrepareCommit at offset 0.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Tail {
    /// An empty batch at offset 1 (no producer id, no records, one offset: what a 4.0+
    /// cleaner keeps of a cleaning round's last batch, KAFKA-17076, and what
    /// `createEmptyBatch(1, 1)` writes in the Kafka test).
    Empty,
    /// A batch at offset 1 holding one record of key version `i16::MAX`.
    UnknownKey,
}

/// `__transaction_state-7`: `id1` PrepareCommit (listing `topic1`-0) at offset 0, `tail` at
/// 1, then `id2` Ongoing (listing `topic2`-0) at 2 — in a second segment when `rolled`.
fn log(tail: Tail, rolled: bool) -> Brokers {
    let t = T0;
    let v = |pid, st, tp: &str| {
        let ps: &[(&str, &[i32])] = &[(tp, &[0])];
        tv2((pid, 1), st, ps, (t, t), (-1, -1))
    };
    let rec = |id: &str, v: TxnValue| Rec::kv(key(id), v.encode());
    let mut p = PartitionBuilder::new("__transaction_state", PARTITION).start_time(t);
    let plain = || Batch::new(Producer::PLAIN).at(t);
    p.append(plain().record(rec("id1", v(1, PREPARE_COMMIT, "topic1"))));
    match tail {
        Tail::Empty => p.append(plain().tweak(|s| {
            s.overrides.last_offset_delta = Some(0);
            s.overrides.max_timestamp = Some(s.base_timestamp);
            s.base_timestamp = -1;
        })),
        Tail::UnknownKey => {
            let k = key_version(i16::MAX, "");
            p.append(plain().record(Rec::kv(k.clone(), k)))
        }
    };
    if rolled {
        p.roll();
    }
    p.append(plain().record(rec("id2", v(2, ONGOING, "topic2"))));
    let mut b = Brokers::new();
    b.write(1, "data", LogDirBuilder::new(1).partition(p), None);
    b
}

/// `(anomaly, offset)` of the `transaction_state_anomaly` findings among `fs`.
fn anomalies<'a>(fs: impl Iterator<Item = &'a Finding>) -> Vec<(String, i64)> {
    fs.filter(|f| f.kind == Kind::TransactionStateAnomaly)
        .map(|f| {
            let a = f.evidence["anomaly"].as_str().unwrap_or("");
            (a.to_string(), f.offset.unwrap_or(-1))
        })
        .collect()
}

/// `TransactionStateManagerTest.testLoadTransactionMetadataContainingSegmentEndingWithEmptyBatch`
/// (KAFKA-17941): the first segment ends with an empty batch, a second segment follows. The
/// load holds both ids (`id1` PrepareCommit on `topic1`-0, `id2` Ongoing on `topic2`-0);
/// nothing is reported about the log (no anomaly, no batch not decoded). Near miss: with a
/// record of another key version in place of the empty batch, it is an
/// `unknown_key_version` record the 4.0+ load skips, and the same two ids are held.
#[test]
fn a_segment_ending_with_an_empty_batch_loads_on() {
    let o = opts(T0 + 60 * SEC, None);
    for tail in [Tail::Empty, Tail::UnknownKey] {
        let b = log(tail, true);
        let vw = view(&b, &o);
        let ids: Vec<(&str, &str)> = (held(&vw).into_iter())
            .map(|(id, t)| (id, t.state.name()))
            .collect();
        assert_eq!(
            ids,
            [("id1", "PrepareCommit"), ("id2", "Ongoing")],
            "{tail:?}"
        );
        assert_eq!(vw.ids["id2"].source.offset, 2, "{tail:?}");
        let req = Request::new(b.all()).with_options(o.clone());
        let a = request::verify(&req, Some(BrokerVersion(4, 0, 0))).unwrap();
        let want: Vec<(String, i64)> = match tail {
            Tail::Empty => vec![],
            Tail::UnknownKey => vec![("unknown_key_version".into(), 1)],
        };
        assert_eq!(anomalies(a.report.findings()), want, "{tail:?}");
        let odd: Vec<_> = (a.report.findings())
            .filter(|f| f.topic == "__transaction_state" && f.kind != Kind::TransactionStateAnomaly)
            .filter(|f| f.severity >= Severity::Warning)
            .collect();
        assert!(odd.is_empty(), "{tail:?}: {odd:#?}");
    }
}

/// The same KAFKA-17941 stall with a record of another key version ending the first
/// segment: before 4.0.0 (and on the 3.9 branch before the backport) the load reads
/// offset 1 from the first segment again and again — `id2` in the next segment is never
/// reached. So `load_never_completes` (error) at offset 1 where no release is known, and
/// under `verify --broker-version 3.9.0`; `verify --broker-version 4.0.0` keeps it an
/// `unknown_key_version` (skipped). klogscan found it only when those batches ended the
/// log (fixed in `cluster::coordinator::history`: a later segment no longer clears it).
/// Near miss: the same three batches in one segment: the read returns them together, the
/// position moves past `id2`'s batch, and the load completes on every release.
#[test]
fn a_segment_ending_in_unknown_keys_stalls_the_load_before_4_0() {
    let endless = vec![("load_never_completes".to_string(), 1)];
    let skipped = vec![("unknown_key_version".to_string(), 1)];
    let o = opts(T0 + 60 * SEC, None);
    for (rolled, unknown_release, v39) in [(true, &endless, &endless), (false, &skipped, &skipped)]
    {
        let b = log(Tail::UnknownKey, rolled);
        let v = b.check_with(o.clone());
        for (name, fs) in reports(&v) {
            assert_eq!(
                &anomalies(fs.into_iter()),
                unknown_release,
                "{name} rolled {rolled}"
            );
        }
        let req = Request::new(b.all()).with_options(o.clone());
        for (version, want) in [
            (BrokerVersion(3, 9, 0), v39),
            (BrokerVersion(4, 0, 0), &skipped),
        ] {
            let a = request::verify(&req, Some(version)).unwrap();
            assert_eq!(
                &anomalies(a.report.findings()),
                want,
                "{version:?} rolled {rolled}"
            );
        }
        if rolled {
            let f = (v.scan.findings.iter())
                .find(|f| f.evidence["anomaly"] == "load_never_completes")
                .unwrap();
            assert!(f.message.contains("end of its segment"), "{}", f.message);
            assert_eq!(f.severity, Severity::Error);
        }
    }
}
