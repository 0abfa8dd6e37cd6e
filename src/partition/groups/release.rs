//! The group coordinator's load failures only some releases meet (`evidence.load_fails_in`
//! before a fix), decided for the release `verify --broker-version` states
//! (`ScanOptions::broker_version`, read by the cluster stage's `cluster::groups`).
//!
//! Which releases carry each fix (confluentinc/kafka branches 4.0–4.4 of 2026-08, where
//! each fix landed against the version each branch was at):
//! * KAFKA-19453 (share record of a group or member the load does not hold,
//!   `GroupMetadataManager.replay` of the ShareGroup* records): 4.1.0 and later, never on
//!   the 4.0 branch;
//! * KAFKA-19862 (`ConsumerGroup.addPartitionEpochs` / `StreamsGroup.addTaskProcessId`):
//!   4.2.0 and later, and on the 4.0 and 4.1 branches in December 2025, when they were at
//!   4.0.2-SNAPSHOT and 4.1.2-SNAPSHOT: 4.0.2 and 4.1.2 on;
//! * KAFKA-20254 (`getOrMaybeCreatePersistedStreamsGroup` over a simple classic group):
//!   trunk in March 2026 (4.3.0) and the 4.2 branch before its 4.2.1: 4.2.1 and later;
//! * KAFKA-20570 (`ConsumerProtocol` turns every error of a subscription's read into the
//!   `SchemaException` `ClassicGroup.computeSubscribedTopics` catches): 4.2.2, 4.3.2 and
//!   4.4.0 on, never on the 4.0 and 4.1 branches; the ≤ 3.x load
//!   (`GroupMetadata.computeSubscribedTopics`) throws too, from 3.3 on for the malformed
//!   shapes earlier releases read as a buffer underflow (`evidence.fails_since`).
//!
//! * KAFKA-14869 (KIP-915's first part, apache/kafka PR #13511 of April 2023, and its second
//!   part, PR #13526 / #13604): 3.4.1, 3.5.0 and later. It decides a 3.x release's own group
//!   coordinator (the Scala `GroupMetadataManager.doLoadGroupsAndOffsets`), which reads key
//!   versions 0–2 alone: before it (3.0.0–3.4.0; the backports to the 3.0–3.3 branches came
//!   after their last releases) `readMessageKey` throws `IllegalStateException` at the first
//!   record of another key version, and `readOffsetMessageValue` / `readGroupMessageValue` at
//!   a value version above 3 (Kafka 4.1 and later write offset commits at version 4);
//!   `loadGroupsAndOffsets` catches it and serves the partition with none of its groups.
//!   With it the load skips those keys unread ("Unknown message key … Ignoring it") and
//!   reads value version 4. The replay keeps that first record unreported
//!   (`kafka_3_before_kafka_14869`, `replay::three`): a stated 3.0.0–3.4.0 makes it the
//!   certain stop, and every failure a 4.x load meets at a record of key version 3 or more
//!   (consumer, share, streams group records: `kafka_4` and the scopes before a 4.x fix)
//!   is gone for a stated 3.0.0–3.5.x — the first release's load stopped at or before it,
//!   the second's skips it.
//!
//! Where the stated release alone does not settle it the finding keeps its scoped wording:
//! 3.6.0–3.9.x for the records only 4.x coordinators replay (those releases can run the new
//! group coordinator instead of the Scala one, `group.coordinator.new.enable` or the
//! `consumer` rebalance protocol enabled: the broker's configuration decides, and the new
//! one replays consumer group records), a release before 4.1 for streams groups (4.1
//! brought them), a release before 3.0 for a classic group's subscription and for
//! KAFKA-14869's stop.

use super::replay::Anomaly;
use crate::finding::evidence::{self, LoadFailsIn, LoadJoint, ReleaseJoint, ScopeJoint};
use crate::partition::recovery::BrokerVersion as V;
use std::borrow::Cow;

/// The fix whose releases accept the record of a failure of scope `s` (`None`: a failure
/// of every release, `kafka_4` or `kafka_3_and_4`).
pub(crate) fn fix_of(s: LoadFailsIn) -> Option<&'static str> {
    match s {
        LoadFailsIn::Kafka4 | LoadFailsIn::Kafka3And4 | LoadFailsIn::Kafka4Since42 => None,
        LoadFailsIn::Kafka4BeforeKafka19453 => Some("KAFKA-19453"),
        LoadFailsIn::Kafka4BeforeKafka19862 => Some("KAFKA-19862"),
        LoadFailsIn::Kafka4BeforeKafka20254 => Some("KAFKA-20254"),
        LoadFailsIn::Kafka3And4BeforeKafka20570 => Some("KAFKA-20570"),
        LoadFailsIn::Kafka3BeforeKafka14869 => Some("KAFKA-14869"),
    }
}

/// Whether release `v` carries the fix of scope `s` (see the module's list).
fn has_fix(s: LoadFailsIn, v: V) -> bool {
    match s {
        LoadFailsIn::Kafka4 | LoadFailsIn::Kafka3And4 | LoadFailsIn::Kafka4Since42 => false,
        LoadFailsIn::Kafka4BeforeKafka19453 => v >= V(4, 1, 0),
        LoadFailsIn::Kafka4BeforeKafka19862 => match (v.0, v.1) {
            (4, 0 | 1) => v.2 >= 2,
            _ => v >= V(4, 2, 0),
        },
        LoadFailsIn::Kafka4BeforeKafka20254 => v >= V(4, 2, 1),
        LoadFailsIn::Kafka3And4BeforeKafka20570 => match (v.0, v.1) {
            (4, 2 | 3) => v.2 >= 2,
            _ => v >= V(4, 4, 0),
        },
        LoadFailsIn::Kafka3BeforeKafka14869 => v >= KAFKA_14869,
    }
}

/// The first release whose load reads a streams group metadata value's
/// `LastAssignmentConfigs` (`kafka_4_since_4_2`).
const SINCE_4_2: V = V(4, 2, 0);

/// The first release with KAFKA-14869 (3.4.1; 3.5.0 and later): its own group coordinator
/// skips the keys of versions other than 0–2 and reads value version 4.
const KAFKA_14869: V = V(3, 4, 1);

/// The first release that can run the new group coordinator (`group.coordinator.new.enable`
/// in 3.6.0; in 3.7–3.9 also a `group.coordinator.rebalance.protocols` with `consumer`):
/// which coordinator loads the partition is the broker's configuration's choice.
const NEW_COORDINATOR: V = V(3, 6, 0);

/// Whether `a` is a record a 4.x load throws on whose key version (3 or more: consumer,
/// share or streams group records) a 3.x release's own coordinator never replays: before
/// KAFKA-14869 its load throws at the first such record at the latest (the
/// `kafka_3_before_kafka_14869` stop, at or before it), since then it skips them.
fn skipped_by_3x(a: &Anomaly) -> bool {
    a.load_fails && a.key_version.is_some_and(|k| !(0..=2).contains(&k))
}

/// Whether `a` is the first record a 3.x load before KAFKA-14869 throws on (`replay::three`).
fn is_3x_stop(a: &Anomaly) -> bool {
    a.kind == super::replay::AnomalyKind::LoadFailure
        && evidence::read_value::<LoadJoint>(&a.evidence).load_fails_in
            == LoadFailsIn::Kafka3BeforeKafka14869
}

/// What the load of release `v` does with the record of `a`: `Some(true)` it throws,
/// `Some(false)` it goes past it (loads or skips it, or stopped before it), `None` the
/// release alone does not say (or there is nothing to decide): [`throws_in`], and for a
/// 3.x release with the Scala coordinator alone (before 3.6.0) the records of key versions
/// it does not replay.
fn decide(a: &Anomaly, v: V) -> Option<bool> {
    if is_3x_stop(a) {
        return (v >= V(3, 0, 0)).then_some(!has_fix(LoadFailsIn::Kafka3BeforeKafka14869, v));
    }
    if (V(3, 0, 0)..NEW_COORDINATOR).contains(&v) && skipped_by_3x(a) {
        return Some(false);
    }
    throws_in(a, v)
}

/// Whether the load of release `v` throws on the record of `a`: `Some(true)` it does,
/// `Some(false)` it loads the record, `None` the release alone does not say (or `a` is no
/// failure scoped before a fix).
pub(crate) fn throws_in(a: &Anomaly, v: V) -> Option<bool> {
    if !a.load_fails || a.kind != super::replay::AnomalyKind::LoadFailure {
        return None;
    }
    let s = evidence::read_value::<LoadJoint>(&a.evidence).load_fails_in;
    if s == LoadFailsIn::Kafka4Since42 {
        // 4.0 (no streams groups) and 4.1 (the field unread) load it; a 3.x release is
        // `decide`'s.
        return (v >= V(4, 0, 0)).then_some(v >= SINCE_4_2);
    }
    fix_of(s)?;
    let scope = evidence::read_value::<ScopeJoint>(&a.evidence);
    let streams = scope.group_type.as_deref() == Some("streams");
    let known = match s {
        LoadFailsIn::Kafka3And4BeforeKafka20570 => match scope.fails_since.as_deref() {
            Some("3.3") if v < V(3, 3, 0) => return Some(false),
            _ => v >= V(3, 0, 0),
        },
        LoadFailsIn::Kafka4BeforeKafka20254 => v >= V(4, 1, 0),
        LoadFailsIn::Kafka4BeforeKafka19862 if streams => v >= V(4, 1, 0),
        _ => v >= V(4, 0, 0),
    };
    known.then_some(!has_fix(s, v))
}

/// `anomalies` as the load of release `v` meets them: the failures scoped before a fix
/// that `v` carries are gone (its load goes past them), those `v` certainly throws on
/// carry `evidence.broker_version` and say so in their message (a stop of every load of
/// `v`: `check::load_stops` stops there); the rest stay as they are. No release: as is.
pub(crate) fn for_release(anomalies: &[Anomaly], v: Option<V>) -> Cow<'_, [Anomaly]> {
    let Some(v) = v else {
        return Cow::Borrowed(anomalies);
    };
    if anomalies.iter().all(|a| decide(a, v).is_none()) {
        return Cow::Borrowed(anomalies);
    }
    let mut out = Vec::with_capacity(anomalies.len());
    for a in anomalies {
        match decide(a, v) {
            None => out.push(a.clone()),
            Some(false) => {}
            Some(true) => {
                let s = evidence::read_value::<LoadJoint>(&a.evidence).load_fails_in;
                let why = match fix_of(s) {
                    Some(fix) => format!("is one without {fix}"),
                    None => "is one that reads the field".to_string(),
                };
                let mut a = a.clone();
                a.load_fails = true;
                a.message = format!(
                    "{} — Kafka {v}, the release given (--broker-version), {why}: its load throws at this record",
                    a.message
                );
                let broker_version = Some(v.to_string());
                evidence::merge(&mut a.evidence, &ReleaseJoint { broker_version });
                out.push(a);
            }
        }
    }
    Cow::Owned(out)
}

/// The release a finding's anomaly was decided for ([`for_release`]), if any.
pub(crate) fn decided_for(a: &Anomaly) -> Option<V> {
    let r = evidence::read_value::<ReleaseJoint>(&a.evidence);
    r.broker_version?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_fix_by_release() {
        let s19862 = LoadFailsIn::Kafka4BeforeKafka19862;
        let s20570 = LoadFailsIn::Kafka3And4BeforeKafka20570;
        let fixed = |s, v: &[V]| v.iter().map(|v| has_fix(s, *v)).collect::<Vec<_>>();
        assert_eq!(
            fixed(
                s19862,
                &[V(4, 0, 1), V(4, 0, 2), V(4, 1, 1), V(4, 1, 2), V(4, 2, 0)]
            ),
            [false, true, false, true, true]
        );
        assert_eq!(
            fixed(
                s20570,
                &[
                    V(4, 1, 9),
                    V(4, 2, 1),
                    V(4, 2, 2),
                    V(4, 3, 1),
                    V(4, 3, 2),
                    V(4, 4, 0)
                ]
            ),
            [false, false, true, false, true, true]
        );
        let s20254 = LoadFailsIn::Kafka4BeforeKafka20254;
        assert_eq!(
            fixed(s20254, &[V(4, 2, 0), V(4, 2, 1), V(4, 3, 0)]),
            [false, true, true]
        );
        let s19453 = LoadFailsIn::Kafka4BeforeKafka19453;
        assert_eq!(fixed(s19453, &[V(4, 0, 9), V(4, 1, 0)]), [false, true]);
        let s14869 = LoadFailsIn::Kafka3BeforeKafka14869;
        assert_eq!(
            fixed(s14869, &[V(3, 3, 2), V(3, 4, 0), V(3, 4, 1), V(3, 5, 0)]),
            [false, false, true, true]
        );
    }

    /// A 4.x failure at a record of key version 3 or more: gone for 3.0.0–3.5.x (stopped
    /// before, or skipped), kept for 3.6+ (the new coordinator may be configured) and before
    /// 3.0; the 3.x stop is certain for 3.0.0–3.4.0 alone, dropped from 3.4.1 on.
    #[test]
    fn three_x_releases() {
        use crate::partition::groups::replay::AnomalyKind;
        let a = |key_version: i16, load_fails: bool, ev: serde_json::Value| Anomaly {
            kind: AnomalyKind::LoadFailure,
            group: None,
            offset: 0,
            position: 0,
            segment: String::new(),
            message: String::new(),
            evidence: ev,
            load_fails,
            severity: None,
            key_version: Some(key_version),
        };
        let plain = a(3, true, serde_json::json!({}));
        let stop = a(
            3,
            false,
            serde_json::json!({"load_fails_in": "kafka_3_before_kafka_14869"}),
        );
        let classic = a(2, true, serde_json::json!({}));
        let at = |a: &Anomaly, v: &[V]| v.iter().map(|v| decide(a, *v)).collect::<Vec<_>>();
        let vs = [
            V(2, 8, 0),
            V(3, 0, 0),
            V(3, 4, 0),
            V(3, 4, 1),
            V(3, 5, 9),
            V(3, 6, 0),
            V(4, 0, 0),
        ];
        let (n, t, f) = (None, Some(true), Some(false));
        assert_eq!(at(&plain, &vs), [n, f, f, f, f, n, n]);
        assert_eq!(at(&stop, &vs), [n, t, t, f, f, f, f]);
        assert_eq!(at(&classic, &vs), [n; 7]);
    }
}
