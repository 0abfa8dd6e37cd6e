//! Which brokers of the inputs a record the metadata cache throws on stops
//! ([`super::replay::Stop`]), and so which reading of the replay each replica is judged
//! against ([`Reading`]).
//!
//! `ConsumerTask.processConsumerRecord` deserializes every record of the metadata
//! partitions the broker consumes, but hands one to `RemotePartitionMetadataStore` only
//! when `shouldProcess` holds: the record's user partition is assigned to the broker (it
//! leads or follows it, `ConsumerTask.addAssignmentsForPartitions`). So the cache's
//! IllegalArgumentException is thrown only on a broker hosting that user partition, and
//! there `ConsumerTask.ingestRecords` closes the task: the broker applies nothing more of
//! the record's metadata partition, and its other metadata partitions stop wherever the
//! task was (not known). A broker hosting none of it skips the record and goes on.
//!
//! What a broker hosts is read from the inputs: a live `topic-N` directory of the user
//! partition (the same topic id when its `partition.metadata` reads) in one of its log dirs
//! (`super::copy_of`), or a `-future` one: the destination of a move between log dirs
//! (`AlterReplicaLogDirs`), made only on a broker hosting the partition, whose live copy
//! may be in a log dir not collected. A `-delete` directory is a replica the broker was told
//! to drop (`StopReplica`, which also removes the assignment), but deletion is asynchronous
//! and the directory stays until it runs, without a restart: the broker hosted the
//! partition until recently, and a task closed while it did stays closed (`ConsumerTask.run`
//! returns; only a restart makes a new one). Whether the stop came before the drop is not
//! known, so a `-delete` copy makes its broker one that may be stopped, as an unknown
//! identity does. A `-stray` one is a replica the broker found unassigned at start: a restart
//! since, whose new task skips the partition; not hosted. Directories are one broker's when
//! their log dirs' `meta.properties` give the same node id and cluster id (or they share the
//! log dir); a log dir without a readable one may be any broker's.

use super::replay::{EventAt, Replay};
use crate::discover::identity::Identities;
use crate::discover::layout::{DirKind, Inventory, PartitionDir};
use std::path::PathBuf;

/// Whose a directory is: its log dir (or the directory itself, outside any) and what the
/// log dir's `meta.properties` says.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Owner {
    dir: PathBuf,
    cluster: Option<String>,
    id: Option<i32>,
}

impl Owner {
    /// Certainly the same broker: the same log dir, or the same node id of the same cluster.
    fn same(&self, o: &Owner) -> bool {
        self.dir == o.dir
            || (self.id.is_some()
                && self.id == o.id
                && self.cluster.is_some()
                && self.cluster == o.cluster)
    }

    /// Possibly the same broker: one is not known, or the node ids are equal and no two
    /// known cluster ids differ.
    fn may_be(&self, o: &Owner) -> bool {
        match (self.id, o.id) {
            (Some(a), Some(b)) => {
                a == b
                    && (self.cluster.is_none() || o.cluster.is_none() || self.cluster == o.cluster)
            }
            _ => true,
        }
    }

    /// How a finding names the broker.
    fn name(&self) -> String {
        match self.id {
            Some(id) => format!("broker {id}"),
            None => format!("the broker of log dir {}", self.dir.display()),
        }
    }
}

/// How far a broker's consumer applied a replica's metadata partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// Applied up to this record (exclusive), the earliest stop in the replica's metadata
    /// partition of a user partition its broker hosts; `None`: to the end.
    pub cut: Option<EventAt>,
    /// Whether the broker certainly applied up to `cut`. Not when its task may have
    /// closed first: at a stop in another metadata partition of a partition it hosts or
    /// may host, or at an earlier stop of one it may host (its identity not known).
    pub known: bool,
}

impl Reading {
    /// Every record applied, as far as the inputs show.
    pub const ALL: Reading = Reading {
        cut: None,
        known: true,
    };
}

/// Who holds a stop's user partition.
#[derive(Debug, Clone)]
struct Holders {
    at: EventAt,
    /// The owners of its live and `-future` directories: they host it.
    hosting: Vec<Owner>,
    /// The owners of its `-delete` directories: they hosted it until recently, perhaps
    /// when the record was applied.
    deleting: Vec<Owner>,
    /// Whether the replay kept the logs as they were there (`Replay::kept_at`).
    kept: bool,
}

impl Holders {
    /// Whether `o`'s broker may host the partition (its identity or its `-delete` copy
    /// leaving it open).
    fn may_host(&self, o: &Owner) -> bool {
        self.hosting.iter().any(|h| h.may_be(o))
            || self.deleting.iter().any(|h| h.same(o) || h.may_be(o))
    }
}

/// How many brokers a finding's message names among those a stop may stop; the rest are
/// counted. A partition directory given without its log dir is an owner of its own, so
/// there may be thousands.
const NAMED_IN_MESSAGE: usize = 5;

/// How many of them the evidence lists (`may_stop_brokers`); `may_stop_broker_count`
/// counts them all.
pub const NAMED_IN_EVIDENCE: usize = 64;

/// The owners of the directories holding each stop's user partition.
#[derive(Debug, Clone, Default)]
pub struct Hosting {
    ids: Identities,
    /// Per stop, in (metadata partition, offset) order, who holds its user partition.
    holders: Vec<Holders>,
    /// The owners of every directory of the inputs.
    owners: Vec<Owner>,
}

/// Owners sorted, each once.
fn sorted(mut owners: Vec<Owner>) -> Vec<Owner> {
    owners.sort();
    owners.dedup();
    owners
}

impl Hosting {
    /// Who hosts the user partition of each stop of `replay`, in `inv`.
    pub fn of(inv: &Inventory, replay: &Replay) -> Hosting {
        if replay.stops.is_empty() {
            return Hosting::default();
        }
        let ids = Identities::load(inv);
        let owners = sorted(inv.partitions.iter().map(|p| owner(&ids, p)).collect());
        let holders = replay
            .all_stops()
            .map(|s| {
                let (mut hosting, mut deleting) = (Vec::new(), Vec::new());
                for p in &inv.partitions {
                    match super::copy_of(inv, p, &s.partition) {
                        Some(DirKind::Normal | DirKind::Future { .. }) => {
                            hosting.push(owner(&ids, p))
                        }
                        Some(DirKind::Delete { .. }) => deleting.push(owner(&ids, p)),
                        Some(DirKind::Stray { .. }) | None => {}
                    }
                }
                Holders {
                    at: s.at,
                    hosting: sorted(hosting),
                    deleting: sorted(deleting),
                    kept: replay.kept_at(s.at),
                }
            })
            .collect();
        Hosting {
            ids,
            holders,
            owners,
        }
    }

    /// The reading of a replica in directory `p` whose user partition's records are in
    /// `metadata_partition` (`None`: it has none).
    pub fn reading(&self, p: &PartitionDir, metadata_partition: Option<i32>) -> Reading {
        let (Some(m), false) = (metadata_partition, self.holders.is_empty()) else {
            return Reading::ALL;
        };
        let me = owner(&self.ids, p);
        let mut r = Reading::ALL;
        for h in &self.holders {
            let certain = h.hosting.iter().any(|o| o.same(&me));
            if !certain && !h.may_host(&me) {
                continue;
            }
            if h.at.metadata_partition != m {
                r.known = false;
            } else if r.cut.is_none() {
                if certain {
                    r.cut = Some(h.at);
                    // Past the stops whose logs are kept: how far it applied is not known.
                    r.known &= h.kept;
                } else {
                    r.known = false;
                }
            }
        }
        r
    }

    /// The earliest stop before `at` in its metadata partition that certainly stopped
    /// `o`'s broker (it hosts that stop's partition): `o` never reaches `at`.
    fn stopped_before(&self, o: &Owner, at: EventAt) -> Option<EventAt> {
        self.holders
            .iter()
            .take_while(|h| h.at < at)
            .filter(|h| h.at.metadata_partition == at.metadata_partition)
            .find(|h| h.hosting.iter().any(|x| x.same(o)))
            .map(|h| h.at)
    }

    /// The brokers of the inputs the stop at `at` stops (they host its user partition and
    /// no earlier stop of its metadata partition stopped them), each named once: the known
    /// node ids ascending, then the log dirs of unknown ones.
    pub fn stopped(&self, at: EventAt) -> Vec<String> {
        names(self.reaching(at))
    }

    /// The brokers of the inputs hosting the user partition of the stop at `at` that an
    /// earlier stop of its metadata partition stopped first, each named with the offset
    /// of that stop.
    pub fn stopped_earlier(&self, at: EventAt) -> Vec<String> {
        let mut named: Vec<(Option<i32>, String)> = self
            .holders_of(at)
            .filter_map(|o| {
                let before = self.stopped_before(o, at)?;
                Some((o.id, format!("{} (at offset {})", o.name(), before.offset)))
            })
            .collect();
        named.sort_by_key(|(id, name)| (id.is_none(), *id, name.clone()));
        named.dedup();
        named.into_iter().map(|o| o.1).collect()
    }

    /// The brokers of the inputs the stop at `at` may stop, not known to host its user
    /// partition: one of them and one hosting it may be the same broker (a node id not
    /// known on either side), or it holds a `-delete` copy of the partition.
    pub fn maybe_stopped(&self, at: EventAt) -> Vec<String> {
        let Some(h) = self.holders.iter().find(|h| h.at == at) else {
            return Vec::new();
        };
        names(self.owners.iter().filter(|o| {
            !h.hosting.iter().any(|x| x.same(o))
                && h.may_host(o)
                && self.stopped_before(o, at).is_none()
        }))
    }

    fn holders_of(&self, at: EventAt) -> impl Iterator<Item = &Owner> {
        self.holders
            .iter()
            .filter(move |h| h.at == at)
            .flat_map(|h| &h.hosting)
    }

    /// The hosts of the stop at `at`'s partition that reach it.
    fn reaching(&self, at: EventAt) -> impl Iterator<Item = &Owner> {
        self.holders_of(at)
            .filter(move |o| self.stopped_before(o, at).is_none())
    }

    /// The node ids of the brokers [`Self::stopped`] names, ascending.
    pub fn stopped_ids(&self, at: EventAt) -> Vec<i32> {
        let mut ids: Vec<i32> = self.reaching(at).filter_map(|o| o.id).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}

/// `names` as a message lists them: the first `NAMED_IN_MESSAGE`, then how many more.
pub fn listed(names: &[String]) -> String {
    match names.len().checked_sub(NAMED_IN_MESSAGE) {
        Some(more) if more > 0 => {
            format!("{} and {more} more", names[..NAMED_IN_MESSAGE].join(", "))
        }
        _ => names.join(", "),
    }
}

/// Each broker of `owners` named once: the known node ids ascending, then the log dirs of
/// unknown ones.
fn names<'a>(owners: impl Iterator<Item = &'a Owner>) -> Vec<String> {
    let mut named: Vec<(Option<i32>, String)> = owners.map(|o| (o.id, o.name())).collect();
    named.sort_by_key(|(id, name)| (id.is_none(), *id, name.clone()));
    named.dedup();
    named.into_iter().map(|o| o.1).collect()
}

fn owner(ids: &Identities, p: &PartitionDir) -> Owner {
    let id = ids.log_dir(p.log_dir.as_deref());
    Owner {
        dir: p.log_dir.clone().unwrap_or_else(|| p.path.clone()),
        cluster: id.cluster_id,
        id: id.broker_id,
    }
}
