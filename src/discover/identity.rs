//! Where evidence comes from: the cluster, broker and log dir of every partition directory,
//! and which copy of the partition it holds (the directory name as `LocalLog.parseTopicPartitionName`
//! reads it; `meta.properties` as `MetaProperties` validates it).
//!
//! * [`Identities::load`] reads each log dir's `meta.properties` once: `cluster.id`, and the
//!   node id (`node.id` in v1 files, `broker.id` in v0 files, as the broker's
//!   `MetaProperties` reads them). A log dir without a readable `meta.properties` has an
//!   unknown cluster and broker, unless `--cluster-id ID=PATH` names its cluster
//!   ([`given`]: it fills a missing `cluster.id`, never replaces one).
//! * [`copy_kind`] maps the directory name's suffix to a [`CopyKind`]: `topic-N` is the
//!   live copy; `.<uuid>-future` (an inter-log-dir move in progress, KIP-113),
//!   `.<uuid>-delete` (scheduled for deletion) and `.<uuid>-stray` (KIP-858) are not
//!   served to clients.
//! * [`same_cluster`] is the one notion of "same cluster" every join uses (the coordinator
//!   confirmation, the KRaft metadata's topic configs, the replica comparison): two
//!   sources with a `cluster.id` each belong to the same cluster exactly when the ids are
//!   equal; without an id on either side, only directories of the same log dir are known
//!   to belong together.
//! * [`demote_non_live`] rewrites the live-partition verdicts of a non-live copy (a
//!   hanging transaction pinning the LSO, an `abort` aimed at the live partition): the
//!   copy's damage is real, but no consumer reads it.

use crate::discover::layout::{DirKind, Inventory, PartitionDir};
use crate::finding::{CopyKind, Finding, Kind, Severity, Source};
use crate::read::format::checkpoint::parse_meta_properties;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

pub mod given;
pub use given::{GivenClusterId, GivenClusterIdError, apply_given, check_given};

/// The copy kind a partition directory's name gives (`None`: an unnamed directory or a
/// plain `topic-N`, both treated as live).
pub fn copy_kind(kind: Option<&DirKind>) -> CopyKind {
    match kind {
        Some(DirKind::Future { .. }) => CopyKind::Future,
        Some(DirKind::Delete { .. }) => CopyKind::Delete,
        Some(DirKind::Stray { .. }) => CopyKind::Stray,
        Some(DirKind::Normal) | None => CopyKind::Live,
    }
}

/// What a log dir's `meta.properties` says about its owner.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogDirIdentity {
    pub cluster_id: Option<String>,
    pub broker_id: Option<i32>,
    /// `directory.id` (written since 3.7: each log dir of a broker has its own), as Kafka
    /// prints it.
    pub directory_id: Option<String>,
    /// The file's `version`: 0 (ZooKeeper-era or migrated), 1 (KRaft).
    pub meta_version: Option<i32>,
}

/// The identity of every log dir of an inventory.
#[derive(Debug, Clone, Default)]
pub struct Identities {
    by_log_dir: HashMap<PathBuf, LogDirIdentity>,
    /// Cluster ids given for directories without one (`Inventory::given_cluster_ids`).
    given: std::collections::BTreeMap<PathBuf, String>,
    /// The log dirs whose `cluster.id` came from `given`.
    filled: std::collections::HashSet<PathBuf>,
    /// Each log dir's `cluster.id` and displayed path as the sources of its partitions
    /// share them (one allocation each per log dir, not per partition and finding).
    shared: HashMap<PathBuf, (Option<Arc<str>>, Arc<str>)>,
}

/// The bytes of a `meta.properties` (`None`: absent or not read). The file is a handful
/// of lines, but the broker's reader (`Properties.load`) takes comments and blank lines of
/// any length: it is read up to the properties files' bound (`FileClass::Checkpoint`), and
/// one larger is named by discovery.
pub(crate) fn load_meta_properties(
    path: &std::path::Path,
) -> Option<impl std::ops::Deref<Target = [u8]>> {
    crate::read::segment::load(
        path,
        crate::read::segment::FileClass::Checkpoint,
        crate::read::segment::MmapMode::Never,
        None,
    )
    .ok()
}

/// Read one `meta.properties` (`None` when absent, unreadable or invalid: the broker would
/// refuse such a log dir, and nothing it says can be trusted).
pub(crate) fn read_meta_properties(path: &std::path::Path) -> Option<LogDirIdentity> {
    let bytes = load_meta_properties(path)?;
    let m = parse_meta_properties(&bytes).ok()?;
    Some(LogDirIdentity {
        directory_id: m.directory_id_string(),
        cluster_id: m.cluster_id.filter(|c| !c.trim().is_empty()),
        broker_id: m.node_id,
        meta_version: Some(m.version),
    })
}

impl Identities {
    /// Read the `meta.properties` of every log dir of `inv`.
    pub fn load(inv: &Inventory) -> Identities {
        if let Some(r) = &inv.recorded {
            let by_log_dir = inv
                .log_dirs
                .iter()
                .map(|ld| {
                    let m = r.meta_properties.get(&ld.path).cloned().unwrap_or_default();
                    let id = LogDirIdentity {
                        cluster_id: m.cluster_id,
                        broker_id: m.node_id,
                        directory_id: m.directory_id,
                        meta_version: m.version,
                    };
                    (ld.path.clone(), id)
                })
                .collect();
            return Identities::with_given(by_log_dir, inv);
        }
        let by_log_dir = inv
            .log_dirs
            .iter()
            .map(|ld| {
                let id = ld
                    .meta_properties
                    .as_deref()
                    .and_then(read_meta_properties)
                    .unwrap_or_default();
                (ld.path.clone(), id)
            })
            .collect();
        Identities::with_given(by_log_dir, inv)
    }

    /// `by_log_dir` with the given ids of `inv` filling the missing `cluster.id`s.
    fn with_given(mut by_log_dir: HashMap<PathBuf, LogDirIdentity>, inv: &Inventory) -> Self {
        let given = inv.given_cluster_ids.clone();
        let mut filled = std::collections::HashSet::new();
        for (path, id) in &mut by_log_dir {
            if id.cluster_id.is_none() && given.contains_key(path) {
                id.cluster_id = given.get(path).cloned();
                filled.insert(path.clone());
            }
        }
        let shared = by_log_dir
            .iter()
            .map(|(path, id)| {
                let cluster = id.cluster_id.as_deref().map(Arc::from);
                (
                    path.clone(),
                    (cluster, Arc::from(path.display().to_string())),
                )
            })
            .collect();
        Identities {
            by_log_dir,
            given,
            filled,
            shared,
        }
    }

    /// Whether the `cluster.id` of the log dir at `path` was given (`--cluster-id`) rather
    /// than read from its `meta.properties`.
    pub fn cluster_id_given(&self, path: &std::path::Path) -> bool {
        self.filled.contains(path)
    }

    /// The identity of a log dir (default: unknown).
    pub fn log_dir(&self, path: Option<&std::path::Path>) -> LogDirIdentity {
        path.and_then(|p| self.by_log_dir.get(p))
            .cloned()
            .unwrap_or_default()
    }

    /// The source of a partition directory: its log dir's identity, its path, its copy kind.
    pub fn source(&self, p: &PartitionDir) -> Source {
        let id = self.log_dir(p.log_dir.as_deref());
        let shared = p.log_dir.as_deref().and_then(|d| self.shared.get(d));
        let cluster_id = match shared {
            Some((Some(c), _)) => Some(c.clone()),
            _ => id
                .cluster_id
                .or_else(|| self.given.get(&p.path).cloned())
                .map(Arc::from),
        };
        Source {
            cluster_id,
            broker_id: id.broker_id,
            log_dir: p.log_dir.as_ref().map(|d| match shared {
                Some((_, name)) => name.clone(),
                None => Arc::from(d.display().to_string()),
            }),
            path: Some(p.path.display().to_string()),
            copy: copy_kind(p.kind.as_ref()),
            kraft: id.meta_version == Some(1),
        }
    }
}

/// Whether two sources belong to the same cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterMatch {
    /// Same `cluster.id`.
    SameId,
    /// No `cluster.id` known, but the same log dir: one broker's disk, hence one cluster.
    SameLogDir,
    /// Different `cluster.id`s.
    Different,
    /// At least one side has no `cluster.id` and the log dirs differ: nothing proves it.
    Unknown,
}

impl ClusterMatch {
    /// True when the two sources are known to belong to one cluster.
    pub fn is_same(self) -> bool {
        matches!(self, ClusterMatch::SameId | ClusterMatch::SameLogDir)
    }
}

/// The one "same cluster" rule (module docs).
pub fn same_cluster(a: &Source, b: &Source) -> ClusterMatch {
    match (&a.cluster_id, &b.cluster_id) {
        (Some(x), Some(y)) if x == y => ClusterMatch::SameId,
        (Some(_), Some(_)) => ClusterMatch::Different,
        _ if a.log_dir.is_some() && a.log_dir == b.log_dir => ClusterMatch::SameLogDir,
        _ => ClusterMatch::Unknown,
    }
}

/// A key grouping sources that [`same_cluster`] joins: the cluster id, or (without one) the
/// log dir, or (outside any log dir) the partition directory itself.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClusterKey {
    Id(String),
    LogDir(String),
    Alone(String),
}

impl ClusterKey {
    pub fn of(s: &Source) -> ClusterKey {
        match (&s.cluster_id, &s.log_dir) {
            (Some(id), _) => ClusterKey::Id(id.to_string()),
            (None, Some(d)) => ClusterKey::LogDir(d.to_string()),
            (None, None) => ClusterKey::Alone(s.path.clone().unwrap_or_default()),
        }
    }
    /// How the evidence names the cluster.
    pub fn describe(&self) -> String {
        match self {
            ClusterKey::Id(id) => format!("cluster {id}"),
            ClusterKey::LogDir(d) => {
                format!("log dir {d} (cluster unknown: no meta.properties with a cluster.id)")
            }
            ClusterKey::Alone(p) => {
                format!("directory {p} (cluster unknown: no log dir, no meta.properties)")
            }
        }
    }
}

/// How a non-live copy is described in messages.
pub(crate) fn copy_phrase(copy: CopyKind) -> &'static str {
    match copy {
        CopyKind::Future => {
            "in a -future copy (an inter-log-dir move in progress; the live directory serves consumers)"
        }
        CopyKind::Delete => "in a -delete copy (scheduled for deletion; never served to consumers)",
        CopyKind::Stray => {
            "in a -stray copy (a replica this broker no longer hosts; never served to consumers)"
        }
        CopyKind::Live => "in the live copy",
    }
}

/// Give every finding of one partition directory its source, and rewrite the live-partition
/// verdicts of a non-live copy:
/// * `hanging_transaction` becomes `open_transaction` (info): the transaction is open in
///   these bytes, but no last stable offset of a served partition depends on them (every
///   `open_transaction` of the copy says so in its broker text);
/// * remediations that run `kafka-transactions.sh abort` (aimed at the live partition) are
///   replaced: the live copy has to be examined on its own;
/// * the client error is "none": no client fetches from the directory.
///
/// Every other finding keeps its kind and severity (damage in a copy is real: a `-future`
/// copy becomes the live one when the move completes).
pub fn apply_source(source: &Source, findings: &mut [Finding]) {
    for f in findings.iter_mut() {
        if f.source == Source::default() {
            f.source = source.clone();
        }
    }
    demote_non_live(findings);
}

/// The non-live rewrite of [`apply_source`] (on findings whose source is already set).
pub fn demote_non_live(findings: &mut [Finding]) {
    for f in findings.iter_mut() {
        let copy = f.source.copy;
        if copy.is_live() {
            continue;
        }
        let phrase = copy_phrase(copy);
        if f.kind == Kind::HangingTransaction {
            f.kind = Kind::OpenTransaction;
            f.severity = Severity::Info;
            // The clause on the last stable offset ends the message: no LSO here.
            f.drop_lso_clause();
            f.message = format!("{} ({phrase}: not served to consumers)", f.message);
            crate::finding::evidence::merge(
                &mut f.evidence,
                &crate::finding::evidence::NonLiveJoint {
                    copy: Some(copy.as_str().to_string()),
                    hanging_if_live: true,
                },
            );
        }
        // No coordinator loads a copy that is not the live partition: what its records
        // would do to a load says nothing of the groups the live copy serves.
        if matches!(
            f.kind,
            Kind::GroupLoadFailure | Kind::OffsetsRecordUndecodable
        ) {
            f.broker_behaviour = format!(
                "no group coordinator loads this copy ({phrase}): the groups are served from the live {}-{} directory, which is judged by its own records; this copy's damage matters only if it is made live again",
                f.topic, f.partition
            );
        }
        if f.kind == Kind::ShareStateRecordUndecodable {
            f.broker_behaviour = format!(
                "no share coordinator loads this copy ({phrase}): the share groups' state is served from the live {}-{} directory, which is judged by its own records; this copy's damage matters only if it is made live again",
                f.topic, f.partition
            );
        }
        // No broker serves or appends to this copy: the reads and the reused offsets of
        // `segment_past_next_base` are a live log's.
        if f.kind == Kind::SegmentPastNextBase {
            f.broker_behaviour = format!(
                "no broker serves or appends to this copy ({phrase}): its segments reach past the next one's base, which matters only if it is made live again (a -future copy replaces the live log when its move completes); the live {}-{} directory is judged by its own segments",
                f.topic, f.partition
            );
            f.remediation = Some(format!(
                "this is not the live copy ({phrase}): check the live {}-{} directory's own findings",
                f.topic, f.partition
            ));
        }
        // An open transaction of a copy pins no last stable offset either (a -delete
        // copy's producer state is not even rebuilt past offset 0).
        if f.kind == Kind::OpenTransaction {
            f.broker_behaviour = format!(
                "no consumer reads this copy, so no last stable offset is pinned by it; the live partition is judged by its own directory ({phrase})"
            );
        }
        // No client fetches from this directory: no client error follows from it.
        f.client_error = Some(format!("none: no client reads this copy ({phrase})"));
        if f.remediation
            .as_deref()
            .is_some_and(|r| r.contains("kafka-transactions.sh"))
        {
            f.remediation = Some(format!(
                "this is not the live copy ({phrase}): do not abort anything on its account; check the live {}-{} directory's own findings",
                f.topic, f.partition
            ));
        }
    }
}

/// Counts of the non-live copies of a scan (`summary.non_live`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct NonLiveCounts {
    /// Partition directories that are `-future`, `-delete` or `-stray` copies.
    pub partitions: usize,
    /// Findings of those copies, by severity (included in `summary.findings` too).
    pub error: u64,
    pub warning: u64,
    pub info: u64,
}

/// Count the non-live partitions and findings.
pub(crate) fn non_live_counts<'a>(
    partitions: impl IntoIterator<Item = &'a Source>,
    findings: impl IntoIterator<Item = &'a Finding>,
) -> NonLiveCounts {
    let mut c = NonLiveCounts {
        partitions: partitions.into_iter().filter(|s| !s.copy.is_live()).count(),
        ..Default::default()
    };
    for f in findings.into_iter().filter(|f| !f.source.copy.is_live()) {
        match f.severity {
            Severity::Error => c.error += 1,
            Severity::Warning => c.warning += 1,
            Severity::Info => c.info += 1,
        }
    }
    c
}

/// Java's `String.hashCode` (over UTF-16 code units, wrapping).
pub(crate) fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// The `__transaction_state` partition that owns a transactional id:
/// `Utils.abs(transactionalId.hashCode) % partitionCount` (TransactionStateManager
/// `partitionFor`; `Utils.abs` maps `Integer.MIN_VALUE` to 0).
pub fn transaction_partition_for(transactional_id: &str, partitions: i32) -> i32 {
    let h = java_string_hash(transactional_id);
    let abs = if h == i32::MIN { 0 } else { h.abs() };
    abs % partitions.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_hash_matches_known_values() {
        // Values of java.lang.String#hashCode.
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("hello"), 99_162_322);
        assert_eq!(java_string_hash("polygenelubricants"), i32::MIN);
        assert_eq!(transaction_partition_for("polygenelubricants", 50), 0);
        assert_eq!(transaction_partition_for("hello", 50), 99_162_322 % 50);
        // Negative hash: "my-txn-id-0" style ids can hash below zero.
        let h = java_string_hash("zzzzzzzzzz");
        assert!(h < 0);
        assert_eq!(transaction_partition_for("zzzzzzzzzz", 50), h.abs() % 50);
    }

    #[test]
    fn same_cluster_rule() {
        let s = |c: Option<&str>, d: Option<&str>| Source {
            cluster_id: c.map(Arc::from),
            log_dir: d.map(Arc::from),
            ..Default::default()
        };
        assert_eq!(
            same_cluster(&s(Some("a"), Some("/x")), &s(Some("a"), Some("/y"))),
            ClusterMatch::SameId
        );
        assert_eq!(
            same_cluster(&s(Some("a"), Some("/x")), &s(Some("b"), Some("/x"))),
            ClusterMatch::Different
        );
        assert_eq!(
            same_cluster(&s(None, Some("/x")), &s(None, Some("/x"))),
            ClusterMatch::SameLogDir
        );
        assert_eq!(
            same_cluster(&s(None, Some("/x")), &s(Some("a"), Some("/y"))),
            ClusterMatch::Unknown
        );
        assert_eq!(
            same_cluster(&s(None, None), &s(None, None)),
            ClusterMatch::Unknown
        );
    }
}
