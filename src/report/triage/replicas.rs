//! The replicas of one partition in one report: the same hanging transaction found in the
//! live copies of several brokers is one incident (one abort, sent to the partition
//! leader, closes it: the ABORT marker replicates), and the partitions of an incident name
//! the brokers (and clusters) they were seen on when the report holds several.

use crate::finding::{Finding, Kind, Severity, Source};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What a group of findings says about one live copy of a partition: its cluster and
/// partition, and each finding there by kind, offset, producer, epoch and severity (sorted).
/// Two copies with the same state show the same transaction; a copy that differs (a marker
/// the other lacks, another open transaction) has another.
#[derive(PartialEq, Eq, Hash)]
struct CopyState {
    cluster: String,
    topic: String,
    partition: i32,
    findings: Vec<Seen>,
}

/// One finding of a copy's state: kind, offset, producer id and epoch, severity.
type Seen = (Kind, Option<i64>, Option<i64>, Option<i16>, Severity);

/// The state of group `g` when it is a hanging transaction of one live copy (one broker,
/// one directory) of a `topic-N` partition of a known cluster, without damage (damage is
/// decided copy by copy); `None` otherwise. Findings of other partitions in the group (a
/// consumer group the transaction blocks) do not count.
fn copy_state(findings: &[Finding], g: &[usize]) -> Option<CopyState> {
    let h = g
        .iter()
        .map(|&i| &findings[i])
        .find(|f| f.kind == Kind::HangingTransaction && f.source.copy.is_live())?;
    let cluster = h.source.cluster_id.clone()?;
    h.source.broker_id?;
    if h.topic.is_empty() || h.partition < 0 {
        return None;
    }
    let mut state = Vec::new();
    for f in g.iter().map(|&i| &findings[i]) {
        if super::super::decision::is_damage(f.kind) {
            return None;
        }
        if f.topic != h.topic || f.partition != h.partition {
            continue;
        }
        if f.source != h.source {
            return None;
        }
        state.push((
            f.kind,
            f.offset,
            f.producer_id,
            f.producer_epoch,
            f.severity,
        ));
    }
    state.sort();
    Some(CopyState {
        cluster: cluster.to_string(),
        topic: h.topic.clone(),
        partition: h.partition,
        findings: state,
    })
}

/// Merge the groups that hold the same hanging transaction state in live copies of one
/// partition of one cluster into the first of them (groups in order; members stay sorted).
pub(super) fn merge_same_state(findings: &[Finding], groups: Vec<Vec<usize>>) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::with_capacity(groups.len());
    let mut first: HashMap<CopyState, usize> = HashMap::new();
    for g in groups {
        match copy_state(findings, &g) {
            Some(s) => match first.get(&s) {
                Some(&k) => {
                    out[k].extend(g);
                    out[k].sort_unstable();
                }
                None => {
                    first.insert(s, out.len());
                    out.push(g);
                }
            },
            None => out.push(g),
        }
    }
    out
}

/// Whether partition names get their brokers, and their clusters: only in a report of
/// several (one broker's report keeps `topic-N`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Naming {
    brokers: bool,
    clusters: bool,
}

impl Naming {
    /// From the sources of the findings and of the report's partitions (a partition without
    /// findings still counts: the leader's incident names its broker beside a clean
    /// follower).
    pub(super) fn of<'a>(
        findings: &'a [Finding],
        partitions: impl Iterator<Item = &'a Source>,
    ) -> Naming {
        let mut brokers = BTreeSet::new();
        let mut clusters = BTreeSet::new();
        for s in findings.iter().map(|f| &f.source).chain(partitions) {
            if let Some(b) = s.broker_id {
                brokers.insert(b);
                clusters.insert(s.cluster_id.as_deref());
            }
        }
        Naming {
            brokers: brokers.len() > 1,
            clusters: clusters.len() > 1,
        }
    }
}

/// The partitions of group `g`, sorted: `topic-N`, followed in a report of several brokers
/// by the brokers that show it (`payments-3 (brokers 1, 2)`), and in a report of several
/// clusters by its cluster (`payments-3 (cluster c1, broker 1)`).
pub(super) fn partition_names(findings: &[Finding], g: &[usize], naming: Naming) -> Vec<String> {
    let mut seen: BTreeMap<String, (BTreeSet<Option<&str>>, BTreeSet<i32>)> = BTreeMap::new();
    for f in g.iter().map(|&i| &findings[i]) {
        let e = seen.entry(super::tp(f)).or_default();
        if f.source.broker_id.is_some() {
            e.0.insert(f.source.cluster_id.as_deref());
        }
        e.1.extend(f.source.broker_id);
    }
    seen.into_iter()
        .map(|(name, (clusters, brokers))| {
            let mut what = Vec::new();
            if naming.clusters && !clusters.is_empty() {
                let c: Vec<&str> = clusters.iter().map(|c| c.unwrap_or("unknown")).collect();
                let s = if c.len() == 1 { "" } else { "s" };
                what.push(format!("cluster{s} {}", c.join(", ")));
            }
            if naming.brokers && !brokers.is_empty() {
                let b: Vec<String> = brokers.iter().map(i32::to_string).collect();
                let s = if b.len() == 1 { "" } else { "s" };
                what.push(format!("broker{s} {}", b.join(", ")));
            }
            if what.is_empty() {
                name
            } else {
                format!("{name} ({})", crate::escape::text(&what.join(", ")))
            }
        })
        .collect()
}

/// The notes of an incident that holds the same hanging transaction in several brokers'
/// copies of a partition: its commands are given once, and run once.
pub(super) fn replicated_notes(findings: &[Finding], g: &[usize]) -> Vec<String> {
    let mut copies: BTreeMap<(String, Option<i64>, Option<i64>), BTreeSet<i32>> = BTreeMap::new();
    for f in g.iter().map(|&i| &findings[i]) {
        if f.kind == Kind::HangingTransaction && f.source.copy.is_live() {
            let key = (super::tp(f), f.offset, f.producer_id);
            copies.entry(key).or_default().extend(f.source.broker_id);
        }
    }
    copies
        .into_iter()
        .filter(|(_, b)| b.len() > 1)
        .map(|((name, offset, _), brokers)| {
            let list: Vec<String> = brokers.iter().map(i32::to_string).collect();
            format!(
                "{name}: the same open transaction{} in the copies of brokers {}: run its abort once (it goes to the partition leader, and the ABORT marker replicates to the other copies); a second abort finds no open transaction",
                offset.map_or(String::new(), |o| format!(" at offset {o}")),
                list.join(", ")
            )
        })
        .collect()
}
