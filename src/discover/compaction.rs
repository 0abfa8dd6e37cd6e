//! What the inputs say about each topic's cleanup policy, and what the KRaft metadata log
//! says about the cluster (`LogCleaner`: compaction removes whole batches,
//! so sequence and offset gaps are expected on compacted topics).
//!
//! A partition is known to be **compacted** when
//! * it is the group or transaction coordinator's log (`__consumer_offsets`,
//!   `__transaction_state`: the broker creates them with `cleanup.policy=compact`;
//!   `__share_group_state` and `__remote_log_metadata` are created `delete`), decided when
//!   the scan builds the partition context;
//! * `--compacted TOPIC,…` names its topic;
//! * the `cleaner-offset-checkpoint` of its log dir lists it (the log cleaner writes only
//!   the partitions it cleans: `LogCleanerManager` checkpoints compacted logs only); or
//! * the KRaft metadata log of the **same cluster** ([`crate::discover::identity::same_cluster`])
//!   resolves its effective `cleanup.policy` to a list holding `compact`.
//!
//! It is known **not compacted** when that effective policy is `delete` alone or the empty
//! list (`LogConfig`: `compact` is whether the list holds `compact`; a SUBTRACT of every
//! value leaves `""`, which `ValidList` accepts), and nothing above says compacted.
//!
//! The effective policy is resolved as the controller does
//! (`KafkaConfigSchema.resolveEffectiveTopicConfig`; `DynamicBrokerConfig`'s precedence on
//! a broker): the topic's own `cleanup.policy` (TOPIC `ConfigRecord`), else the dynamic
//! `log.cleanup.policy` of the broker holding the data (BROKER `ConfigRecord` named by its
//! node id), else the cluster-wide dynamic default (BROKER `ConfigRecord` with an empty
//! name), else the static `server.properties` value, outside the data: unknown (`None`).
//! A null value deletes a level (`ConfigurationControlManager.replay`): the next decides.
//!
//! The topic's own value is that of the partition directory's **incarnation**: the topic
//! id its `partition.metadata` names (`LogManager` applied that topic's `LogConfig` to its
//! logs while it lived; `RemoveTopicRecord` deletes its configs,
//! `ConfigurationControlManager.deleteTopicConfigs`, and a topic created again under the
//! name starts from the defaults); a directory without an id takes the name's latest
//! incarnation. A deleted incarnation keeps the broker levels in force when it was deleted.
//!
//! Of several copies of the metadata log of the cluster (one per KRaft node handed in), the
//! one of the data's own broker decides — the image that broker applied — else the copy
//! that reaches furthest (by last KRaft epoch, then end offset: `OffsetAndEpoch`, as
//! `cluster::leadership` picks), never merely the first listed.

use crate::discover::identity::{Identities, same_cluster};
use crate::discover::layout::{Inventory, PartitionDir};
use crate::finding::Source;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

pub mod metadata;
pub use metadata::{
    BROKER_KEY, ClusterMetadata, TOPIC_KEY, load_cluster_metadata, not_decoded_finding,
};

/// What an effective `cleanup.policy` list holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// `compact` among its values.
    Compact,
    /// `delete` alone.
    Delete,
    /// The empty list: neither (`LogConfig` then neither compacts nor deletes).
    Empty,
}

impl Policy {
    /// A `cleanup.policy` value as `ConfigDef`'s LIST type parses it (trimmed around the
    /// commas) and `LogConfig` reads it (lower-cased); `None`: a value neither policy
    /// (which `ValidList.in(compact, delete)` rejects).
    pub fn parse(value: &str) -> Option<Policy> {
        if value.trim().is_empty() {
            return Some(Policy::Empty);
        }
        let parts: Vec<&str> = value
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if parts.iter().any(|s| s.eq_ignore_ascii_case("compact")) {
            Some(Policy::Compact)
        } else if !parts.is_empty() && parts.iter().all(|s| s.eq_ignore_ascii_case("delete")) {
            Some(Policy::Delete)
        } else {
            None
        }
    }
}

/// Which level of `resolveEffectiveTopicConfig` decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The topic's own `cleanup.policy` (`DYNAMIC_TOPIC_CONFIG`).
    Topic,
    /// The dynamic `log.cleanup.policy` of this broker (`DYNAMIC_BROKER_CONFIG`).
    Broker(i32),
    /// The cluster-wide dynamic `log.cleanup.policy` (`DYNAMIC_DEFAULT_BROKER_CONFIG`).
    ClusterDefault,
}

/// Why a partition is (or is not) treated as compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Flag,
    CleanerCheckpoint,
    /// The KRaft metadata log's effective policy, and the level that set it.
    Metadata(Policy, Level),
}

impl Reason {
    /// Whether the partition is treated as compacted for this reason.
    pub fn compacted(self) -> bool {
        !matches!(self, Reason::Metadata(Policy::Delete | Policy::Empty, _))
    }

    /// How the report names the source of the knowledge (`compacted_from`).
    pub fn describe(self) -> String {
        let (policy, level) = match self {
            Reason::Flag => return "--compacted".into(),
            Reason::CleanerCheckpoint => return "cleaner-offset-checkpoint".into(),
            Reason::Metadata(p, l) => (p, l),
        };
        let key = match level {
            Level::Topic => TOPIC_KEY,
            _ => BROKER_KEY,
        };
        let value = match policy {
            Policy::Compact => format!("{key} with compact"),
            Policy::Delete => format!("{key}=delete"),
            Policy::Empty => format!("{key}=\"\" (empty: neither compact nor delete)"),
        };
        let at = match level {
            Level::Topic => String::new(),
            Level::Broker(b) => format!("broker {b}'s dynamic config, "),
            Level::ClusterDefault => "cluster-wide dynamic default, ".into(),
        };
        format!("{value} ({at}KRaft metadata log)")
    }
}

/// Everything the inputs say about cleanup policies.
#[derive(Debug, Clone, Default)]
pub struct Knowledge {
    /// `(log dir, topic, partition)` listed in a `cleaner-offset-checkpoint`.
    cleaner: HashSet<(PathBuf, String, i32)>,
    /// The same entries by broker, `(cluster id, node id, topic, partition)`, for the log
    /// dirs whose `meta.properties` names both: the cleaner reads every log dir's file of
    /// its broker as one map by topic-partition (`LogCleanerManager.allCleanerCheckpoints`).
    cleaner_by_node: HashSet<(String, i32, String, i32)>,
    /// The KRaft metadata logs read.
    pub metadata: Vec<ClusterMetadata>,
    /// Topics named by `--compacted`.
    flagged: HashSet<String>,
    /// For an inventory rebuilt from bundles: each partition directory's recorded
    /// `partition.metadata` topic id (on disk, the file is read when needed).
    recorded_ids: Option<HashMap<PathBuf, [u8; 16]>>,
}

impl Knowledge {
    /// Read the cleaner checkpoints and metadata logs of `inv`.
    /// `flagged`: the topics of `--compacted`; `max_bytes`/`max_decompressed` bound the read
    /// of the metadata log as for a scan.
    pub fn load(
        inv: &Inventory,
        ids: &Identities,
        flagged: &[String],
        max_bytes: Option<u64>,
        max_decompressed: usize,
    ) -> Knowledge {
        use crate::read::format::checkpoint::{TextFileKind, parse_offset_checkpoint};
        let (mut cleaner, mut cleaner_by_node) = (HashSet::new(), HashSet::new());
        for ld in &inv.log_dirs {
            let Some(path) = &ld.cleaner_offset_checkpoint else {
                continue;
            };
            let Ok(bytes) = crate::read::segment::load(
                path,
                crate::read::segment::FileClass::Checkpoint,
                crate::read::segment::MmapMode::Never,
                None,
            ) else {
                continue;
            };
            // A malformed checkpoint says nothing (verify reports it).
            let Ok(entries) =
                parse_offset_checkpoint(&bytes, TextFileKind::CleanerOffsetCheckpoint)
            else {
                continue;
            };
            let id = ids.log_dir(Some(&ld.path));
            for e in entries {
                if let (Some(c), Some(b)) = (&id.cluster_id, id.broker_id) {
                    cleaner_by_node.insert((c.clone(), b, e.topic.clone(), e.partition));
                }
                cleaner.insert((ld.path.clone(), e.topic, e.partition));
            }
        }
        Knowledge {
            cleaner,
            cleaner_by_node,
            metadata: load_cluster_metadata(inv, ids, max_bytes, max_decompressed),
            flagged: flagged.iter().cloned().collect(),
            recorded_ids: inv.recorded.as_ref().map(|_| {
                (inv.partitions.iter())
                    .filter_map(|p| {
                        Some((p.path.clone(), inv.recorded_partition(&p.path)?.topic_id?))
                    })
                    .collect()
            }),
        }
    }

    /// Whether `p` is compacted, and why (`None`: unknown); and whether its topic is
    /// compacted now, as far as the inputs say: `--compacted` names it, or the KRaft
    /// metadata log's effective `cleanup.policy` lists `compact` — a
    /// `cleaner-offset-checkpoint` entry proves the log was cleaned, not that it still is
    /// (`LogCleanerManager.updateCheckpoints` keeps the entry of every log that exists,
    /// whatever its policy became). The metadata log's policy (and the
    /// `partition.metadata` it may read) is looked up once for both.
    pub fn judge(&self, p: &PartitionDir, source: &Source) -> (Option<Reason>, bool) {
        let Some(tp) = p.tp.as_ref() else {
            return (None, false);
        };
        let flagged = self.flagged.contains(&tp.topic);
        let metadata = self.metadata_policy(p, source);
        let policy = flagged || matches!(metadata, Some(Reason::Metadata(Policy::Compact, _)));
        let cleaned = p.log_dir.as_ref().is_some_and(|ld| {
            (self.cleaner).contains(&(ld.clone(), tp.topic.clone(), tp.partition))
        }) || self.cleaned_on_its_broker(tp, source);
        let reason = if flagged {
            Some(Reason::Flag)
        } else if cleaned {
            Some(Reason::CleanerCheckpoint)
        } else {
            metadata
        };
        (reason, policy)
    }

    /// A `-future` copy (an inter-log-dir move under way) of a log its broker's cleaner
    /// checkpoint lists in another log dir: `ReplicaAlterLogDirsThread` copies the current
    /// log's batches as they are (cleaned), and the entry moves to the copy's log dir only
    /// at the swap (`LogCleanerManager.alterCheckpointDir`). The broker is known by its
    /// cluster and node ids; the live, `-delete` and `-stray` copies take their own log
    /// dir's entry only.
    fn cleaned_on_its_broker(
        &self,
        tp: &crate::discover::layout::TopicPartition,
        source: &Source,
    ) -> bool {
        let (Some(c), Some(b)) = (source.cluster_id.as_deref(), source.broker_id) else {
            return false;
        };
        source.copy == crate::finding::CopyKind::Future
            && (self.cleaner_by_node).contains(&(c.to_string(), b, tp.topic.clone(), tp.partition))
    }

    /// The copy of the same cluster's metadata log that speaks for `source`'s data: its
    /// own broker's (the image that broker applied; the furthest of them if it has
    /// several), else the one reaching furthest (`OffsetAndEpoch.compareTo`: the last KRaft
    /// epoch, then the end offset; the first listed among equals, as
    /// `cluster::leadership::load_all`).
    /// The smallest dynamic `producer.id.expiration.ms` the KRaft metadata log of
    /// `source`'s cluster (the copy [`Self::metadata_policy`] reads) ever set for the broker
    /// holding it or cluster-wide (`None`: none set). A broker applies its own dynamic
    /// value, else the cluster-wide one, else its static config
    /// (`DynamicBrokerConfig`, `DynamicProducerStateManagerConfig`), and each may have been
    /// in force at any time of the log's history: the smallest is the one under which a
    /// producer idle that long may have been expired. Values below 1 (which the broker's
    /// validation refuses) are not taken.
    pub fn producer_id_expiration(&self, source: &Source) -> Option<i64> {
        let md = self.copy_for(source)?;
        if md.producer_id_expiration.is_empty() {
            return None;
        }
        let broker = source.broker_id.map(|b| b.to_string());
        (md.producer_id_expiration.iter())
            .filter(|&(name, &ms)| {
                ms >= 1 && (name.is_empty() || Some(name.as_str()) == broker.as_deref())
            })
            .map(|(_, &ms)| ms)
            .min()
    }

    fn copy_for(&self, source: &Source) -> Option<&ClusterMetadata> {
        let same: Vec<&ClusterMetadata> = (self.metadata.iter())
            .filter(|m| same_cluster(source, &m.source).is_same())
            .collect();
        let own: Vec<&ClusterMetadata> = (same.iter().copied())
            .filter(|m| source.broker_id.is_some() && m.source.broker_id == source.broker_id)
            .collect();
        let pool = if own.is_empty() { same } else { own };
        pool.into_iter().reduce(|best, m| {
            if (m.last_epoch, m.end_offset) > (best.last_epoch, best.end_offset) {
                m
            } else {
                best
            }
        })
    }

    /// The topic id `p`'s `partition.metadata` names (recorded by a bundle, else read).
    fn topic_id(&self, p: &PartitionDir) -> Option<[u8; 16]> {
        match &self.recorded_ids {
            Some(r) => r.get(&p.path).copied(),
            None => p.read_topic_id(),
        }
    }

    /// What the same cluster's KRaft metadata log says of `p`'s effective policy
    /// (`KafkaConfigSchema.resolveEffectiveTopicConfig`, see the module): the topic level
    /// of `p`'s incarnation, then `source`'s broker, then the cluster default.
    fn metadata_policy(&self, p: &PartitionDir, source: &Source) -> Option<Reason> {
        let tp = p.tp.as_ref()?;
        let md = self.copy_for(source)?;
        // The id is read only for a topic the copy creates.
        let id = if md.latest_id.contains_key(&tp.topic) {
            self.topic_id(p)
        } else {
            None
        };
        let inc = md.incarnation(&tp.topic, id.as_ref())?;
        let brokers = inc.removed_with.as_ref().unwrap_or(&md.broker_policy);
        let broker = source
            .broker_id
            .and_then(|b| Some((brokers.get(&b.to_string())?, Level::Broker(b))));
        let (value, level) = (inc.policy.as_ref().map(|v| (v, Level::Topic)))
            .or(broker)
            .or_else(|| brokers.get("").map(|v| (v, Level::ClusterDefault)))?;
        Some(Reason::Metadata(Policy::parse(value)?, level))
    }
}
