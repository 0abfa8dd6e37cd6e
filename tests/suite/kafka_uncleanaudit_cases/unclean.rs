//! `UncleanLeaderElectionTest` as the 2026 trunk runs it (server/src/test/java/org/apache/
//! kafka/server/, JUnit, each flow once per consumer group protocol:
//! `testUncleanLeaderElectionEnabledClassic`, `…Consumer`, and the topic-override and
//! altered-config ones): the cluster runs the latest metadata version, whose bootstrap turns
//! the eligible leader replicas on (`EligibleLeaderReplicasVersion.ELRV_1` from 4.1-IV0), and
//! each test first turns them off (`disableEligibleLeaderReplicas`: `updateFeatures` with
//! `eligible.leader.replicas.version` 0, a `FeatureLevelRecord` in the metadata log) before
//! the flow `kafka_electaudit_cases::unclean` writes at 3.6-IV2.

use super::agreed;
use crate::kafka_electaudit_cases::unclean::{Unclean, cluster_of, log_at};
use crate::kafka_imgaudit_cases::all_lines;
use crate::kafka_quiet_cluster_cases::loud;
use klogscan::finding::{Kind, Severity};
use klogscan::read::format::metadata::MetaRecord;

/// The 2026 trunk's latest production metadata version in the tests' clusters (4.2-IV1).
const MV_4_2_IV1: i16 = 29;

fn elr_off() -> MetaRecord {
    MetaRecord::FeatureLevel {
        name: "eligible.leader.replicas.version".into(),
        feature_level: 0,
    }
}

/// At 4.2-IV1 with the ELR feature downgraded to 0, the flows of
/// `testUncleanLeaderElectionEnabled{Classic,Consumer}`,
/// `…EnabledByTopicOverride…` and `testTopicUncleanLeaderElectionEnableWithAlterTopicConfigs…`
/// give what the 3.6 flow gives: one `unclean_leader_election` of broker 2 at epoch 2 from
/// outside the ISR [1], an error, broker 1's "second" (5 offsets) lost, no record refused.
/// Near miss (`testUncleanLeaderElectionDisabled…`, `…DisabledByTopicOverride…`): the
/// partition waits for broker 1, the elections are clean: no `unclean_leader_election`.
#[test]
fn the_2026_flows_with_the_elr_feature_off_lose_the_leaders_tail_as_before() {
    for how in [Unclean::Static, Unclean::TopicOverride, Unclean::Altered] {
        let v = cluster_of(how, log_at(how, MV_4_2_IV1, &[elr_off()])).check();
        let u = agreed(&v, Kind::UncleanLeaderElection);
        assert_eq!(u.len(), 1, "{}", all_lines(&v));
        let e = &u[0].evidence;
        assert_eq!(u[0].severity, Severity::Error, "{e:#}");
        assert_eq!(
            (&e["new_leader"], &e["new_leader_epoch"]),
            (&2.into(), &2.into())
        );
        assert_eq!(e["path"], "outside_isr");
        assert_eq!(e["old_leader_copy"]["lost_offsets"], 5, "{e:#}");
        assert!(agreed(&v, Kind::MetadataRecordRejected).is_empty());
        // nothing else at warning or above
        assert_eq!(loud(&v.scan.findings).len(), 1, "{}", all_lines(&v));
    }
    let how = Unclean::Disabled;
    let v = cluster_of(how, log_at(how, MV_4_2_IV1, &[elr_off()])).check();
    assert!(
        agreed(&v, Kind::UncleanLeaderElection).is_empty(),
        "{}",
        all_lines(&v)
    );
    assert!(agreed(&v, Kind::MetadataRecordRejected).is_empty());
}
