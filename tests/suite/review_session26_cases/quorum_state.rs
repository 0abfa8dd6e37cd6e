//! `quorum-state` as `FileQuorumStateStore.readStateFromFile` reads it: the first line
//! (`BufferedReader.readLine` over a UTF-8 decoder that keeps a BOM), Jackson's
//! `ObjectMapper.readTree` (2.x: trailing tokens ignored, `FAIL_ON_TRAILING_TOKENS` off —
//! KAFKA-12800 notes it), `data_version` by `JsonNode.shortValue`, then the generated
//! `QuorumStateDataJsonConverter.read` — every field of the schema read whatever the
//! version (`JsonConverterGenerator.generateRead` tests `struct.versions()`), an `int32` by
//! `MessageUtil.jsonNodeToInt` (an `IntNode` or a `NumberFormatException`), an `int64` by
//! `jsonNodeToLong`, a `string` only textual, a `uuid` by `Uuid.fromString`, the nullable
//! `currentVoters` taking a JSON `null` — and `ElectionState.fromQuorumStateData`, which
//! streams `currentVoters()`. Whatever throws stops `KafkaRaftClient.initialize` (it reads
//! the snapshot and log first, `partitionState.updateState()`, then
//! `QuorumState.initialize` reads this file).

use super::{BROKER_EPOCHS, before_failover, no_data};
use crate::kafka_quiet_kraft_cases::{Node, cluster, copy, epoch_of, quorum_state};
use klogscan::cluster::leadership::load::{parse_quorum_state, quorum_state_failure};
use klogscan::finding::{Finding, Kind, Severity};
use std::path::Path;

const V1: &str = r#"{"leaderId":3001,"leaderEpoch":2,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}"#;
const V0: &str = r#"{"clusterId":"","leaderId":3001,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":3000},{"voterId":3001}],"data_version":0}"#;

/// `text` reads as Kafka reads it: no failure, and the leadership history takes its
/// leader and epoch.
fn reads(text: &[u8]) {
    let shown = String::from_utf8_lossy(text);
    assert_eq!(quorum_state_failure(text), None, "{shown}");
    let q = parse_quorum_state(text).unwrap_or_else(|| panic!("{shown}"));
    assert_eq!(
        (q.leader_id, q.leader_epoch),
        (Some(3001), Some(2)),
        "{shown}"
    );
}

/// `text` makes the start throw: a failure named, nothing taken.
fn refused(text: &[u8]) {
    let shown = String::from_utf8_lossy(text);
    assert!(quorum_state_failure(text).is_some(), "{shown}");
    assert_eq!(parse_quorum_state(text), None, "{shown}");
}

/// `FileQuorumStateStoreTest.testWriteReadElectedLeader` shapes with what an editor or a
/// copy adds: CRLF or CR after the line (`readLine` stops at either), spaces and tabs
/// around the object (Jackson skips them), a second line of anything (never read). A UTF-8
/// BOM is kept by Java's decoder and Jackson refuses U+FEFF in a character source
/// (jackson-core #458), a first line that is empty is no object (`IOException`): the
/// start fails, as klogscan says.
#[test]
fn line_ends_whitespace_and_a_bom_as_read_line_and_jackson_take_them() {
    for v in [V0, V1] {
        for text in [
            format!("{v}\r\n"),
            format!("{v}\r"),
            format!(" \t{v}\t \n"),
            format!("{v}\nnot json at all"),
        ] {
            reads(text.as_bytes());
        }
        for text in [format!("\u{feff}{v}"), format!("\r\n{v}"), format!("\n{v}")] {
            refused(text.as_bytes());
        }
    }
}

/// `JsonNode.shortValue` of `data_version`: a JSON `null` or a text is 0 (the version-0
/// fields then mandatory), an int keeps its low 16 bits (65537 is 1), a double is cast to
/// an int then a short (1.9 is 1, -0.5 is 0, 1e20 saturates to -1: refused).
#[test]
fn data_version_read_as_short_value_reads_it() {
    let with = |v: &str, version: &str| {
        let (old, new) = ("\"data_version\":", format!("\"data_version\":{version}"));
        let i = v.find(old).unwrap();
        format!("{}{new}}}", &v[..i])
    };
    for (base, version) in [
        (V0, "null"),
        (V0, "\"1\""),
        (V0, "-0.5"),
        (V1, "65537"),
        (V1, "1.9"),
    ] {
        reads(with(base, version).as_bytes());
    }
    for (base, version) in [(V1, "null"), (V1, "2"), (V1, "1e20"), (V0, "-1")] {
        refused(with(base, version).as_bytes());
    }
}

/// Fields the generated reader does not know are skipped, and a field of version 0 in a
/// version-1 file is read like any other (the converter tests the struct's versions, not
/// the field's): a v1 file with a textual `clusterId` and an unknown field reads.
#[test]
fn unknown_fields_and_other_versions_fields_of_the_right_type_read() {
    let text = V1.replace(
        "{\"leaderId\"",
        "{\"clusterId\":\"x\",\"future\":[1],\"leaderId\"",
    );
    reads(text.as_bytes());
}

/// Divergence: a field of the wrong type makes the generated reader throw
/// (`QuorumStateDataJsonConverter.read`, from `JsonConverterGenerator.generateTargetFromJson`):
/// `MessageUtil.jsonNodeToInt` takes only an `IntNode` — a text (`"3001"`) is a
/// `NumberFormatException`, so is a number past an int (`LongNode`: `Integer.parseInt` of
/// its text) or a double (`"1.0"`); `jsonNodeToLong` refuses a textual `appliedOffset`; a
/// non-textual `clusterId` or `votedDirectoryId` is a `RuntimeException`; a
/// `votedDirectoryId` that is not 22 base64url characters of 16 bytes is
/// `Uuid.fromString`'s `IllegalArgumentException`. None of these is caught: the node does
/// not start. klogscan accepts every one (docs/findings.md: "a field of the wrong type …
/// not judged") and even takes a wrapped epoch (4294967298 as 2) into the history.
#[test]
fn wrong_typed_fields_stop_the_start() {
    let cases = [
        V1.replace("\"leaderId\":3001", "\"leaderId\":\"3001\""),
        V1.replace("\"leaderEpoch\":2", "\"leaderEpoch\":4294967298"),
        V1.replace("\"votedId\":-1", "\"votedId\":-1.0"),
        V1.replace("\"AAAAAAAAAAAAAAAAAAAAAA\"", "\"not-a-uuid\""),
        V1.replace("\"AAAAAAAAAAAAAAAAAAAAAA\"", "7"),
        V0.replace("\"appliedOffset\":0", "\"appliedOffset\":\"0\""),
        V0.replace("\"clusterId\":\"\"", "\"clusterId\":0"),
        V0.replace("{\"voterId\":3000}", "{\"voterId\":\"3000\"}"),
    ];
    for text in cases {
        refused(text.as_bytes());
    }
}

/// Divergence: `currentVoters` is nullable in version 0 (`QuorumStateData.json`), so the
/// generated reader takes a JSON `null` as a null list at any version, and
/// `ElectionState.fromQuorumStateData` then calls `currentVoters().stream()`: a
/// `NullPointerException` out of `QuorumState.initialize`, the node does not start
/// (trunk and the 2025-10 mirror alike). klogscan finds the field present and reads the
/// file; `verify` says nothing of the controller that will not start.
#[test]
fn null_current_voters_stop_the_start() {
    let v0 = V0.replace("[{\"voterId\":3000},{\"voterId\":3001}]", "null");
    let v1 = V1.replace("{\"leaderId\"", "{\"currentVoters\":null,\"leaderId\"");
    refused(v0.as_bytes());
    refused(v1.as_bytes());
    let (v, _b) = checked(|root| {
        let part = root.join("broker-3000/metadata/__cluster_metadata-0");
        std::fs::write(part.join("quorum-state"), &v0).unwrap();
    });
    let q = unreadable(&v);
    assert_eq!(q.len(), 1, "{q:#?}");
    assert!(
        q[0].source
            .path
            .as_deref()
            .unwrap_or_default()
            .contains("broker-3000")
    );
}

/// Divergence: an integer past a `long` is Jackson's `BigIntegerNode`, whose `shortValue`
/// is `BigInteger.shortValue` — the low 16 bits. `data_version` 18446744073709551617
/// (2^64+1) or 9223372036854775809 (2^63+1) is version 1 for Kafka, and a v1 file with it
/// reads. klogscan goes through an `f64` saturated to an int (-1) and reports
/// `IllegalStateException: data_version (-1)` for a file the node starts with.
#[test]
fn data_version_past_a_long_is_its_low_bits() {
    for big in ["18446744073709551617", "9223372036854775809"] {
        let text = V1.replace("\"data_version\":1", &format!("\"data_version\":{big}"));
        reads(text.as_bytes());
    }
}

/// Divergence: Jackson 2's `ObjectMapper.readTree` reads the first JSON value and ignores
/// what follows on the line (`DeserializationFeature.FAIL_ON_TRAILING_TOKENS` is off by
/// default; KAFKA-12800 had to turn it on for the generator's own inputs). A first line
/// with a stray `}` or text after the object reads, and the node starts; klogscan
/// (`serde_json::from_slice`, "trailing characters") reports `quorum_state_unreadable`,
/// error, "the node does not start".
#[test]
fn trailing_content_after_the_object_is_ignored() {
    for tail in ["}", " x", ",{}"] {
        reads(format!("{V1}{tail}\n").as_bytes());
    }
}

/// Five nodes in step after [`before_failover`] (3001 leads epoch 2), each with a v1
/// `quorum-state`, `edit` applied to the tree before the checks.
fn checked(edit: impl FnOnce(&Path)) -> (crate::kafka_quiet_cluster_cases::Verdict, super::Tree) {
    let s = before_failover();
    let e = epoch_of(&s);
    let nodes: Vec<Node> = [3000, 3001, 3002, 1, 2]
        .into_iter()
        .map(|id| {
            let voted = if id == 3001 { 3001 } else { -1 };
            Node::new(id, copy(&s, 0), quorum_state(true, 3001, e, voted))
        })
        .collect();
    let b = cluster(nodes, &BROKER_EPOCHS, &no_data);
    edit(b.root.path());
    (b.check(), b)
}

fn unreadable(v: &crate::kafka_quiet_cluster_cases::Verdict) -> Vec<Finding> {
    (v.verify.findings())
        .filter(|f| f.kind == Kind::QuorumStateUnreadable)
        .cloned()
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// `FileQuorumStateStore.readElectionState`: no file is `Optional.empty()`, and
/// `QuorumState.initialize` starts the node unattached (`withUnknownLeader(0)`, then the
/// log's latest epoch when it is higher: the remediation's claim holds) — no finding for
/// 3002 without the file. A broker, an observer, reads its own `quorum-state` through the
/// same store (`KafkaRaftManager` builds it for every KRaft node): broker 1's unreadable
/// file is reported on broker 1's copy. `KafkaMetadataLog.apply` opens only the live
/// `__cluster_metadata-0`: the same file in broker 2's `-delete` copy is not.
#[test]
fn missing_file_quiet_observer_file_reported_delete_copy_not() {
    let (v, _b) = checked(|root| {
        std::fs::remove_file(root.join("broker-3002/metadata/__cluster_metadata-0/quorum-state"))
            .unwrap();
        let b1 = root.join("broker-1/data/__cluster_metadata-0/quorum-state");
        std::fs::write(b1, V1.replace("\"data_version\":1", "\"data_version\":2")).unwrap();
        let live = root.join("broker-2/data/__cluster_metadata-0");
        let gone =
            root.join("broker-2/data/__cluster_metadata-0.0123456789abcdef0123456789abcdef-delete");
        copy_dir(&live, &gone);
        std::fs::write(gone.join("quorum-state"), "not json").unwrap();
    });
    let q = unreadable(&v);
    assert_eq!(q.len(), 1, "{q:#?}");
    assert_eq!(q[0].severity, Severity::Error);
    let path = q[0].source.path.as_deref().unwrap_or_default();
    assert!(
        path.contains("broker-1/") && !path.contains("delete"),
        "{path}"
    );
    let fix = q[0].remediation.as_deref().unwrap_or_default();
    assert!(
        fix.contains("unattached") && fix.contains("latest epoch"),
        "{fix}"
    );
}
