//! The newest coordinator records against Kafka's own tests: KIP-932 share groups (types
//! 10–15 of `__consumer_offsets`, and `__share_group_state`'s ShareSnapshot/ShareUpdate),
//! KIP-1071 streams groups (types 17, 19–23), and what a coordinator's load does with a
//! record it does not know or cannot read.
//!
//! Kafka sources read (trunk import of 2025-10, `wtmxxx/kafka-se-homework`):
//! `group-coordinator/.../GroupCoordinatorRecordSerde.java`, `GroupCoordinatorShard.replay`,
//! `GroupMetadataManager.replay(...)` for the share and streams records,
//! `modern/share/ShareGroup.createGroupTombstoneRecords`,
//! `streams/StreamsGroup.createGroupTombstoneRecords`, `coordinator-common/.../
//! CoordinatorRecordSerde.deserialize` and `CoordinatorLoaderImpl`, `share-coordinator/.../
//! ShareCoordinatorShard.replay` and `ShareCoordinatorRecordSerde`, `core/.../
//! DumpLogSegments.scala` (`CoordinatorRecordMessageParser`), and their tests
//! (`GroupCoordinatorRecordSerdeTest`, `GroupMetadataManagerTest`, `ShareCoordinatorRecordSerdeTest`,
//! `CoordinatorLoaderImplTest`). Only facts are written here.
#![cfg(feature = "testkit")]

mod dump;
mod replay;
mod share_replay;
mod share_state;

use klogscan::dump::{DumpOptions, dump_log};
use klogscan::finding::{Finding, Kind};
use klogscan::partition::groups::{Group, GroupState, GroupsOptions, list_groups};
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline::scan;
use klogscan::testkit::group_scenarios::{GroupLog, Spec};
use serde_json::{Value, json};
use std::path::Path;

/// Topic ids (Kafka's URL-safe base64).
const FOO: &str = "AAAAAAAAAAAAAAAAAAAAAQ";
const BAR: &str = "AAAAAAAAAAAAAAAAAAAAAg";

/// The group kinds the replay reports.
const GROUP_KINDS: [Kind; 4] = [
    Kind::GroupLoadFailure,
    Kind::GroupDeletionUnfinished,
    Kind::GroupTombstonesIncomplete,
    Kind::GroupEpochRegression,
];

/// A coordinator log written as `__consumer_offsets-0`, scanned; its groups, deleted ones
/// included.
struct Loaded {
    _dir: tempfile::TempDir,
    findings: Vec<Finding>,
    groups: Vec<Group>,
}

impl Loaded {
    fn of(&self, k: Kind) -> Vec<&Finding> {
        self.findings.iter().filter(|f| f.kind == k).collect()
    }
    fn group_findings(&self) -> Vec<&Finding> {
        self.findings
            .iter()
            .filter(|f| GROUP_KINDS.contains(&f.kind))
            .collect()
    }
    fn assert_clean(&self) {
        assert!(self.findings.is_empty(), "{:#?}", self.findings);
    }
    fn live(&self, id: &str) -> Option<&Group> {
        self.groups
            .iter()
            .find(|g| g.group_id == id && g.state == GroupState::Live)
    }
    fn any(&self, id: &str) -> Vec<&Group> {
        self.groups.iter().filter(|g| g.group_id == id).collect()
    }
}

fn load(log: &GroupLog) -> Loaded {
    let dir = tempfile::tempdir().unwrap();
    log.write(dir.path(), 0).unwrap();
    let report = scan(&[dir.path().to_path_buf()], &ScanOptions::default());
    let inv = klogscan::discover::layout::discover(&[dir.path().to_path_buf()]);
    let groups = list_groups(
        &inv,
        &GroupsOptions {
            include_deleted: true,
            ..Default::default()
        },
    );
    Loaded {
        _dir: dir,
        findings: report.findings,
        groups,
    }
}

fn g(id: &str) -> Value {
    json!({ "groupId": id })
}

fn gm(id: &str, m: &str) -> Value {
    json!({ "groupId": id, "memberId": m })
}

fn tomb(t: i16, key: Value) -> Spec {
    (t, key, None)
}

fn v0(t: i16, key: Value, value: Value) -> Spec {
    (t, key, Some((0, value)))
}

/// One line per record of `--offsets-decoder` / `--share-group-state-decoder`: the text
/// after `key: ` and after ` payload: ` (none when the line has no payload).
fn dump_records(seg: &Path, share_state: bool) -> Vec<(String, Option<String>)> {
    let opts = DumpOptions {
        offsets_decoder: !share_state,
        share_group_state_decoder: share_state,
        deep_iteration: true,
        print_data_log: true,
        ..Default::default()
    };
    let data = std::fs::read(seg).unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    dump_log(seg, &data, &opts, &mut out, &mut err).unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("| offset: "))
        .map(|l| {
            let k = l.split_once(" key: ").unwrap().1;
            match k.split_once(" payload: ") {
                Some((k, p)) => (k.to_string(), Some(p.to_string())),
                None => (k.to_string(), None),
            }
        })
        .collect()
}

/// The dump of `log` written as `__consumer_offsets-0`.
fn dump_offsets(log: &GroupLog) -> Vec<(String, Option<String>)> {
    let dir = tempfile::tempdir().unwrap();
    log.write(dir.path(), 0).unwrap();
    dump_records(
        &dir.path()
            .join("__consumer_offsets-0/00000000000000000000.log"),
        false,
    )
}
