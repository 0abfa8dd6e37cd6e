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
//! Where the stated release alone does not settle it the finding keeps its scoped wording:
//! a release before 4.0 for the records only 4.x coordinators replay (consumer, share and
//! streams groups: whether a ≤ 3.x load skips their key types depends on the 3.x release),
//! a release before 4.1 for streams groups (4.1 brought them), a release before 3.0 for a
//! classic group's subscription.

use super::replay::Anomaly;
use crate::finding::evidence::{self, LoadFailsIn, LoadJoint, ReleaseJoint, ScopeJoint};
use crate::partition::recovery::BrokerVersion as V;
use std::borrow::Cow;

/// The fix whose releases accept the record of a failure of scope `s` (`None`: a failure
/// of every release, `kafka_4` or `kafka_3_and_4`).
pub(crate) fn fix_of(s: LoadFailsIn) -> Option<&'static str> {
    match s {
        LoadFailsIn::Kafka4 | LoadFailsIn::Kafka3And4 => None,
        LoadFailsIn::Kafka4BeforeKafka19453 => Some("KAFKA-19453"),
        LoadFailsIn::Kafka4BeforeKafka19862 => Some("KAFKA-19862"),
        LoadFailsIn::Kafka4BeforeKafka20254 => Some("KAFKA-20254"),
        LoadFailsIn::Kafka3And4BeforeKafka20570 => Some("KAFKA-20570"),
    }
}

/// Whether release `v` carries the fix of scope `s` (see the module's list).
fn has_fix(s: LoadFailsIn, v: V) -> bool {
    match s {
        LoadFailsIn::Kafka4 | LoadFailsIn::Kafka3And4 => false,
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
    }
}

/// Whether the load of release `v` throws on the record of `a`: `Some(true)` it does,
/// `Some(false)` it loads the record, `None` the release alone does not say (or `a` is no
/// failure scoped before a fix).
pub(crate) fn throws_in(a: &Anomaly, v: V) -> Option<bool> {
    if !a.load_fails || a.kind != super::replay::AnomalyKind::LoadFailure {
        return None;
    }
    let s = evidence::read_value::<LoadJoint>(&a.evidence).load_fails_in;
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
    if anomalies.iter().all(|a| throws_in(a, v).is_none()) {
        return Cow::Borrowed(anomalies);
    }
    let mut out = Vec::with_capacity(anomalies.len());
    for a in anomalies {
        match throws_in(a, v) {
            None => out.push(a.clone()),
            Some(false) => {}
            Some(true) => {
                let s = evidence::read_value::<LoadJoint>(&a.evidence).load_fails_in;
                let fix = fix_of(s).unwrap_or_default();
                let mut a = a.clone();
                a.message = format!(
                    "{} — Kafka {v}, the release given (--broker-version), is one without {fix}: its load throws at this record",
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
    }
}
