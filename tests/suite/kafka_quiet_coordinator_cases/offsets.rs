//! `__consumer_offsets` over years: the cleaner, offset expiry and group deletion, a group
//! created again under its old id, static members restarting, transactional offset commits,
//! record versions changing over an upgrade.

use super::{DAY, MIN, T0, write_and_check};
use klogscan::discover::identity::transaction_partition_for;
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::groups::record;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer, Rec};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// One coordinator record: type, key JSON, value (`(version, JSON)`; `None`: a tombstone).
pub(crate) type CoordRecord = (i16, Value, Option<(i16, Value)>);

/// A batch of coordinator records at `ts`, from `producer`, base sequence `seq` (what the
/// coordinator's `MemoryRecordsBuilder` writes: -1 for `storeGroup`, 0 for `storeOffsets`).
pub(crate) fn coordinator_batch(p: Producer, seq: i32, ts: i64, recs: Vec<CoordRecord>) -> Batch {
    let mut b = Batch::new(p).at(ts);
    for (t, k, v) in recs {
        let (k, v) = record(t, k, v);
        let r = match v {
            Some(v) => Rec::kv(k, v),
            None => Rec::tombstone(k),
        };
        b = b.record(r.at(ts));
    }
    b.tweak(move |s| s.base_sequence = seq)
}

/// `OffsetCommitValue` v3 (`GroupMetadataManager.storeOffsets` of 2.1+).
pub(crate) fn commit(g: &str, topic: &str, partition: i32, offset: i64, ts: i64) -> CoordRecord {
    (
        1,
        json!({"group": g, "topic": topic, "partition": partition}),
        Some((
            3,
            json!({"offset": offset, "leaderEpoch": 0, "metadata": "", "commitTimestamp": ts}),
        )),
    )
}

/// `OffsetCommitValue` v1 (brokers before 2.1: with the `expireTimestamp` the client asked).
fn commit_v1(g: &str, topic: &str, partition: i32, offset: i64, ts: i64) -> CoordRecord {
    (
        1,
        json!({"group": g, "topic": topic, "partition": partition}),
        Some((
            1,
            json!({"offset": offset, "metadata": "", "commitTimestamp": ts,
                "expireTimestamp": ts + DAY}),
        )),
    )
}

fn offset_tombstone(g: &str, topic: &str, partition: i32) -> CoordRecord {
    (
        1,
        json!({"group": g, "topic": topic, "partition": partition}),
        None,
    )
}

/// `GroupMetadataValue` v3 of a stable classic group at `generation` with `members`
/// (`(member id, group.instance.id)`), the first the leader.
pub(crate) fn classic_group(
    g: &str,
    generation: i32,
    members: &[(&str, Option<&str>)],
    ts: i64,
) -> CoordRecord {
    let ms: Vec<Value> = members
        .iter()
        .map(|(m, i)| {
            json!({"memberId": m, "groupInstanceId": i, "clientId": "c", "clientHost": "/10.0.0.9",
                "rebalanceTimeout": 300000, "sessionTimeout": 45000})
        })
        .collect();
    let v = json!({"protocolType": "consumer", "generation": generation, "protocol": "range",
        "leader": members[0].0, "currentStateTimestamp": ts, "members": ms});
    (2, json!({"group": g}), Some((3, v)))
}

/// `GroupMetadataValue` v0 (brokers before 0.10.1: no rebalance timeout, no state timestamp).
fn classic_group_v0(g: &str, generation: i32, member: &str) -> CoordRecord {
    let v = json!({"protocolType": "consumer", "generation": generation, "protocol": "range",
        "leader": member, "members": [{"memberId": member, "clientId": "c",
        "clientHost": "/10.0.0.3", "sessionTimeout": 30000}]});
    (2, json!({"group": g}), Some((0, v)))
}

/// The empty group (`GroupMetadataValue` v3, no protocol, no member).
fn empty_group(g: &str, generation: i32, ts: i64) -> CoordRecord {
    let v = json!({"protocolType": "consumer", "generation": generation, "protocol": null,
        "leader": null, "currentStateTimestamp": ts, "members": []});
    (2, json!({"group": g}), Some((3, v)))
}

/// `__consumer_offsets` partitions (50), each group on its own (`GroupMetadataManager.partitionFor`).
#[derive(Default)]
struct Offsets(BTreeMap<i32, PartitionBuilder>);

impl Offsets {
    fn log(&mut self, g: &str) -> &mut PartitionBuilder {
        let n = transaction_partition_for(g, 50);
        self.0
            .entry(n)
            .or_insert_with(|| PartitionBuilder::new("__consumer_offsets", n))
    }
    /// A `storeGroup` write.
    fn group(&mut self, g: &str, ts: i64, rec: CoordRecord) {
        self.log(g)
            .append(coordinator_batch(Producer::PLAIN, -1, ts, vec![rec]));
    }
    /// A `storeOffsets` write.
    fn offsets(&mut self, g: &str, ts: i64, recs: Vec<CoordRecord>) {
        self.log(g)
            .append(coordinator_batch(Producer::PLAIN, 0, ts, recs));
    }
}

/// Four years of `__consumer_offsets`, after the cleaner (its cleaned part keeps the latest
/// record per key at its offset; the head after it is whole):
///
/// * `billing-service`, from a 0.10 broker (`GroupMetadataValue` v0, `OffsetCommitValue` v1),
///   went empty and its offsets expired: `GroupMetadataManager.cleanupGroupMetadata` wrote the
///   offsets' tombstones and then the group's in one batch; the cleaner removed the values
///   they supersede and kept the tombstones (younger than `delete.retention.ms`). Two years
///   later an application creates the group again under the same id (generation 1, v3).
/// * `legacy-reports` kept its v0 group and a v1 offset nobody committed again after the
///   upgrade to 2.x, which writes v3 offsets for its other partitions, then a rebalance
///   writes the group as v3 (`GroupMetadataManager.groupMetadataValue` picks the version by
///   `metadata.version`/IBP).
/// * `static-app`'s static member (`group.instance.id=host-1`) restarts: the coordinator
///   replaces its member id and stores the group at the same generation without a rebalance
///   (`GroupCoordinator.updateStaticMemberAndRebalance`, the 2024 `GroupMetadataManager`'s
///   `classicGroupJoinExistingStaticMember`).
/// * `enricher`'s producer 4200 commits offsets in its transactions
///   (`GroupMetadataManager.storeOffsets` with the producer id, then the markers):
///   committed, aborted, committed — its output partition carries the same markers.
///
/// `GroupMetadataManager.loadGroupsAndOffsets` (and the 4.x `GroupCoordinatorShard.replay`)
/// load all of it. Nothing at warning or above.
/// Twin: the last transactional offset commit's COMMIT never reached `__consumer_offsets`
/// (its output partition has it): the offsets stay pending behind an open transaction for
/// 40 minutes — reported at warning or above.
#[test]
fn consumer_offsets_after_the_cleaner_expiry_and_upgrades() {
    for twin in [false, true] {
        let mut o = Offsets::default();
        let mut out = PartitionBuilder::new("enriched", 0);
        // billing-service, 2020: values removed by the cleaner, tombstones kept
        let (bill, legacy) = ("billing-service", "legacy-reports");
        o.log(bill).skip_offsets(40);
        let t = T0 + 30 * DAY;
        let tombs = vec![
            offset_tombstone(bill, "orders", 0),
            offset_tombstone(bill, "orders", 1),
            (2, json!({"group": bill}), None),
        ];
        o.log(bill)
            .append(coordinator_batch(Producer::PLAIN, -1, t, tombs));
        // legacy-reports: cleaned part, v0 group and v1 offsets
        o.log(legacy).skip_offsets(25);
        o.group(
            legacy,
            t + DAY,
            classic_group_v0(legacy, 3, "consumer-1-abc"),
        );
        let v1 = (0..3)
            .map(|p| commit_v1(legacy, "reports", p, 500 + p as i64, t + DAY))
            .collect();
        o.offsets(legacy, t + DAY, v1);
        // the head: after the upgrade to 2.x
        let t = T0 + 400 * DAY;
        o.offsets(
            legacy,
            t,
            (0..2)
                .map(|p| commit(legacy, "reports", p, 900, t))
                .collect(),
        );
        o.group(
            legacy,
            t + MIN,
            classic_group(legacy, 4, &[("consumer-1-def", None)], t + MIN),
        );
        // billing-service created again
        let t = T0 + 800 * DAY;
        o.group(
            bill,
            t,
            classic_group(bill, 1, &[("consumer-9-x", None)], t),
        );
        o.offsets(
            bill,
            t + 5_000,
            vec![commit(bill, "orders", 0, 12, t + 5_000)],
        );
        // static-app: the static member restarts
        let st = "static-app";
        o.group(
            st,
            t,
            classic_group(st, 7, &[("host-1-aaa", Some("host-1"))], t),
        );
        o.offsets(st, t + 1_000, vec![commit(st, "events", 0, 70, t + 1_000)]);
        let r = t + 10 * MIN;
        o.group(
            st,
            r,
            classic_group(st, 7, &[("host-1-bbb", Some("host-1"))], r),
        );
        o.offsets(st, r + 1_000, vec![commit(st, "events", 0, 75, r + 1_000)]);
        // enricher: transactional offset commits
        let g = "enricher";
        let p = Producer::transactional(4200, 3);
        for (i, commit_it) in [true, false, true].into_iter().enumerate() {
            let ts = t + 20 * MIN + i as i64 * MIN;
            out.append(Batch::new(p).records(2).at(ts));
            let recs = vec![commit(g, "raw", 0, 10 * (i as i64 + 1), ts + 20)];
            o.log(g).append(coordinator_batch(p, 0, ts + 20, recs));
            let last = i == 2;
            for (k, b) in [&mut out, o.log(g)].into_iter().enumerate() {
                if twin && last && k == 1 {
                    continue;
                }
                let now = b.now();
                b.advance_time(ts + 150 - now);
                b.end_txn(p, commit_it, 2);
            }
        }
        // billing-service goes empty later; traffic 40 minutes on
        let e = t + 60 * MIN;
        o.group(bill, e, empty_group(bill, 2, e));
        out.append(Batch::new(Producer::PLAIN).records(1).at(e));
        let mut ld = LogDirBuilder::new(1).partition(out);
        for (_, p) in o.0 {
            ld = ld.partition(p);
        }
        let q = write_and_check(ld);
        if twin {
            let f = q
                .scan
                .findings
                .iter()
                .find(|f| {
                    f.topic == "__consumer_offsets"
                        && f.severity >= Severity::Warning
                        && matches!(
                            f.kind,
                            Kind::HangingTransaction
                                | Kind::GroupOffsetsPendingInHangingTransaction
                        )
                })
                .unwrap_or_else(|| panic!("{:#?}", super::lines(&q.scan.findings)));
            assert_eq!(f.producer_id, Some(4200));
        } else {
            q.assert_quiet();
            q.assert_merge_equals_scan();
        }
    }
}
