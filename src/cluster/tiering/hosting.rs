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
//! (`super::holds`). A `-delete` directory is a replica the broker was told to drop
//! (`StopReplica`, which also removes the assignment), a `-stray` one a replica it found
//! unassigned at start; neither is hosted. A `-future` one is a move between log dirs,
//! beside the live copy. Directories are one broker's when their log dirs' `meta.properties`
//! give the same node id and cluster id (or they share the log dir); a log dir without a
//! readable one may be any broker's.

use super::replay::{EventAt, Replay};
use crate::discover::identity::Identities;
use crate::discover::layout::{Inventory, PartitionDir};
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

/// The owners of the directories holding each stop's user partition.
#[derive(Debug, Clone, Default)]
pub struct Hosting {
    ids: Identities,
    /// Per stop, in (metadata partition, offset) order, the owners of the live directories
    /// of its user partition, and whether the replay kept the logs as they were there
    /// (`Replay::kept_at`).
    holders: Vec<(EventAt, Vec<Owner>, bool)>,
    /// The owners of every directory of the inputs.
    owners: Vec<Owner>,
}

impl Hosting {
    /// Who hosts the user partition of each stop of `replay`, in `inv`.
    pub fn of(inv: &Inventory, replay: &Replay) -> Hosting {
        if replay.stops.is_empty() {
            return Hosting::default();
        }
        let ids = Identities::load(inv);
        let mut owners: Vec<Owner> = inv.partitions.iter().map(|p| owner(&ids, p)).collect();
        owners.sort();
        owners.dedup();
        let holders = replay
            .all_stops()
            .map(|s| {
                let mut owners: Vec<Owner> = inv
                    .partitions
                    .iter()
                    .filter(|p| super::holds(inv, p, &s.partition))
                    .map(|p| owner(&ids, p))
                    .collect();
                owners.sort();
                owners.dedup();
                (s.at, owners, replay.kept_at(s.at))
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
        for (at, owners, kept) in &self.holders {
            let certain = owners.iter().any(|o| o.same(&me));
            if !certain && !owners.iter().any(|o| o.may_be(&me)) {
                continue;
            }
            if at.metadata_partition != m {
                r.known = false;
            } else if r.cut.is_none() {
                if certain {
                    r.cut = Some(*at);
                    // Past the stops whose logs are kept: how far it applied is not known.
                    r.known &= *kept;
                } else {
                    r.known = false;
                }
            }
        }
        r
    }

    /// The brokers of the inputs the stop at `at` stops (they host its user partition),
    /// each named once: the known node ids ascending, then the log dirs of unknown ones.
    pub fn stopped(&self, at: EventAt) -> Vec<String> {
        names(self.holders_of(at))
    }

    /// The brokers of the inputs the stop at `at` may stop, not known to host its user
    /// partition: one of them and one hosting it may be the same broker (a node id not
    /// known on either side).
    pub fn maybe_stopped(&self, at: EventAt) -> Vec<String> {
        let holders: Vec<&Owner> = self.holders_of(at).collect();
        names(
            self.owners.iter().filter(|o| {
                !holders.iter().any(|h| h.same(o)) && holders.iter().any(|h| h.may_be(o))
            }),
        )
    }

    fn holders_of(&self, at: EventAt) -> impl Iterator<Item = &Owner> {
        self.holders
            .iter()
            .filter(move |h| h.0 == at)
            .flat_map(|h| &h.1)
    }

    /// The node ids of the brokers [`Self::stopped`] names, ascending.
    pub fn stopped_ids(&self, at: EventAt) -> Vec<i32> {
        let mut ids: Vec<i32> = self.holders_of(at).filter_map(|o| o.id).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
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
