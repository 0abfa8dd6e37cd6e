//! Transaction statistics (at least what tombentley/klog's `segment txn-stat` gives, per
//! partition, plus the same per transactional id over cluster transactions): counts of
//! committed, aborted, empty and open transactions; size (records, batches, bytes) and
//! duration distributions; the longest transactions; producers fenced.

use super::input::TxnInputs;
use super::Outcome;
use crate::state::txnrec::{TxnEnd, TxnRecord};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// min / nearest-rank percentiles / max / mean of a sample (all zero when empty).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Distribution {
    pub count: u64,
    pub min: i64,
    pub p50: i64,
    pub p90: i64,
    pub p99: i64,
    pub max: i64,
    pub mean: f64,
}

impl Distribution {
    /// Nearest-rank percentiles of `values`: three selections, not a sort (the ranks are
    /// ordered, so each selection works on what lies above the previous one). The mean is
    /// the exact integer sum divided once (the same as summing in any order while the sum
    /// stays below 2^53, and closer beyond).
    pub fn of(values: impl IntoIterator<Item = i64>) -> Self {
        let mut v: Vec<i64> = values.into_iter().collect();
        let n = v.len();
        if n == 0 {
            return Distribution::default();
        }
        let index = |p: f64| (((p / 100.0) * n as f64).ceil() as usize).clamp(1, n) - 1;
        let mut at = |from: usize, i: usize| -> i64 {
            // Everything at `from..` is ≥ every value before `from`; pick rank `i` in it.
            *v[from..].select_nth_unstable(i - from).1
        };
        let (i50, i90, i99) = (index(50.0), index(90.0), index(99.0));
        let p50 = at(0, i50);
        let p90 = if i90 > i50 { at(i50 + 1, i90) } else { p50 };
        let p99 = if i99 > i90 { at(i90 + 1, i99) } else { p90 };
        let sum: i128 = v.iter().map(|&x| i128::from(x)).sum();
        Distribution {
            count: n as u64,
            min: v.iter().copied().min().unwrap_or_default(),
            p50,
            p90,
            p99,
            max: v.iter().copied().max().unwrap_or_default(),
            mean: sum as f64 / n as f64,
        }
    }
}

/// Sizes and durations of a set of transactions with data.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Sizes {
    pub records: Distribution,
    pub batches: Distribution,
    pub bytes: Distribution,
    /// Closed transactions only: last marker − first data timestamp.
    pub duration_ms: Distribution,
}

/// One partition copy's transactions.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PartitionStats {
    pub topic: String,
    pub partition: i32,
    pub path: String,
    pub committed: u64,
    pub aborted: u64,
    /// Markers with no data before them (empty transactions, re-sent markers).
    pub empty_commits: u64,
    pub empty_aborts: u64,
    pub open: u64,
    /// Distinct producer ids with transactions here.
    pub producers: u64,
    /// Over the transactions with data.
    pub size: Sizes,
}

/// The cluster transactions of one transactional id (or of one producer id whose
/// transactional id is unknown).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct IdStats {
    pub transactional_id: Option<String>,
    pub producer_ids: Vec<i64>,
    pub committed: u64,
    pub aborted: u64,
    /// No data on any partition.
    pub empty: u64,
    pub open: u64,
    /// Markers on some partitions, none yet on others.
    pub partial: u64,
    /// COMMIT on some partitions, ABORT on others.
    pub mixed: u64,
    /// Epoch bumps outside EndTxn: a new producer instance (InitProducerId) fencing the
    /// previous one, or the coordinator's timeout abort.
    pub fenced: u64,
    /// Partitions per transaction.
    pub partitions: Distribution,
    pub size: Sizes,
}

/// A row of the longest transactions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LongTxn {
    pub transactional_id: Option<String>,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub outcome: Outcome,
    pub start_ms: i64,
    pub end_ms: Option<i64>,
    pub duration_ms: i64,
    pub partitions: usize,
    pub records: u64,
}

/// Statistics of a scan's transactions.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TxnStatistics {
    pub cluster_transactions: u64,
    pub committed: u64,
    pub aborted: u64,
    pub empty: u64,
    pub open: u64,
    pub partial: u64,
    pub mixed: u64,
    /// Producer ids with at least one fencing epoch bump.
    pub producers_fenced: u64,
    /// Over cluster transactions with data.
    pub size: Sizes,
    /// Serialised as a list of [`IdStats`], made one at a time from compact rows.
    pub by_transactional_id: ByTransactionalId,
    pub by_partition: Vec<PartitionStats>,
    /// The longest closed transactions, longest first.
    pub longest: Vec<LongTxn>,
}

fn sizes<'a>(rs: impl Iterator<Item = (u64, u64, u64, Option<i64>)> + Clone + 'a) -> Sizes {
    Sizes {
        records: Distribution::of(rs.clone().map(|r| r.0 as i64)),
        batches: Distribution::of(rs.clone().map(|r| r.1 as i64)),
        bytes: Distribution::of(rs.clone().map(|r| r.2 as i64)),
        duration_ms: Distribution::of(rs.filter_map(|r| r.3)),
    }
}

fn partition_stats(inputs: &TxnInputs) -> Vec<PartitionStats> {
    inputs
        .partitions
        .iter()
        .map(|p| {
            let mut s = PartitionStats {
                topic: p.topic.clone(),
                partition: p.partition,
                path: p.origin.path.clone(),
                ..Default::default()
            };
            for r in &p.txns {
                match (r.end, r.is_empty()) {
                    (TxnEnd::Open, _) => s.open += 1,
                    (TxnEnd::Commit, true) => s.empty_commits += 1,
                    (TxnEnd::Abort, true) => s.empty_aborts += 1,
                    (TxnEnd::Commit, false) => s.committed += 1,
                    (TxnEnd::Abort, false) => s.aborted += 1,
                }
            }
            let pids: std::collections::BTreeSet<i64> =
                p.txns.iter().map(|r| r.producer_id).collect();
            s.producers = pids.len() as u64;
            let data = p
                .txns
                .iter()
                .filter(|r| !r.is_empty())
                .map(|r: &TxnRecord| {
                    (
                        u64::from(r.records),
                        u64::from(r.batches),
                        r.bytes,
                        r.duration_ms(),
                    )
                });
            s.size = sizes(data);
            s
        })
        .collect()
}

fn count(outcome: Outcome, empty: bool, c: &mut [&mut u64; 6]) {
    let i = match (outcome, empty) {
        (_, true) => 2,
        (Outcome::Committed, _) => 0,
        (Outcome::Aborted, _) => 1,
        (Outcome::Open, _) => 3,
        (Outcome::Partial, _) => 4,
        (Outcome::Mixed, _) => 5,
    };
    *c[i] += 1;
}

/// What the statistics need of one cluster transaction (88 bytes, its parts not kept:
/// issue #11, 300 000 transactions).
#[derive(Debug, Clone, PartialEq)]
pub struct TxnRow {
    pub transactional_id: Option<Arc<str>>,
    pub producer_id: i64,
    pub start_ms: i64,
    pub end_ms: Option<i64>,
    pub records: u64,
    pub batches: u64,
    pub bytes: u64,
    /// Number of partitions.
    pub partitions: u32,
    /// Index of its join domain (domains in their order).
    pub domain: u32,
    pub producer_epoch: i16,
    pub marker_epoch: Option<i16>,
    pub transaction_version_2: bool,
    pub outcome: Outcome,
}

impl TxnRow {
    /// No data on any partition.
    pub fn is_empty(&self) -> bool {
        self.batches == 0
    }
    /// As `ClusterTxn::duration_ms`.
    pub fn duration_ms(&self) -> Option<i64> {
        self.end_ms.map(|e| e.saturating_sub(self.start_ms).max(0))
    }
    /// The order of the transaction list: domain, start time, producer id, epoch.
    pub fn order_key(&self) -> (u32, i64, i64, i16) {
        (
            self.domain,
            self.start_ms,
            self.producer_id,
            self.producer_epoch,
        )
    }
}

/// Fencing epoch bumps of one producer id's transactions (in transaction order), sorted
/// by data epoch.
fn fencing<'a>(txns: impl Iterator<Item = &'a TxnRow>) -> u64 {
    let mut v: Vec<&TxnRow> = txns.filter(|t| !t.is_empty()).collect();
    v.sort_by_key(|t| (t.producer_epoch, t.start_ms));
    v.windows(2)
        .filter(|w| {
            let (a, b) = (w[0], w[1]);
            if b.producer_epoch == a.producer_epoch {
                return false;
            }
            // TV2: the next transaction starts at the epoch its predecessor's markers carry.
            !(a.transaction_version_2 && a.marker_epoch == Some(b.producer_epoch))
        })
        .count() as u64
}

fn tx_sizes<'a>(ts: impl Iterator<Item = &'a TxnRow> + Clone + 'a) -> Sizes {
    sizes(
        ts.filter(|t| !t.is_empty())
            .map(|t| (t.records, t.batches, t.bytes, t.duration_ms())),
    )
}

/// The per-transactional-id statistics ([`IdStats`], ≈ 400 bytes each), kept as the
/// compact rows they are computed from and made one at a time when read or serialised:
/// with one id per transaction (300 000 producers without the coordinator's log) the
/// list would otherwise cost more than the transactions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ByTransactionalId {
    /// Sorted by (transactional id, producer id when the id is unknown), each id's rows in
    /// transaction order.
    rows: Vec<TxnRow>,
    /// Where each id's rows start in `rows`.
    starts: Vec<usize>,
    /// Fencing epoch bumps per producer id (only ids with some).
    fenced: BTreeMap<i64, u64>,
}

fn id_key(t: &TxnRow) -> (Option<&str>, Option<i64>) {
    (
        t.transactional_id.as_deref(),
        t.transactional_id.is_none().then_some(t.producer_id),
    )
}

impl ByTransactionalId {
    fn new(mut rows: Vec<TxnRow>, fenced: BTreeMap<i64, u64>) -> Self {
        // The order of an id's rows does not matter to its statistics: no stable sort
        // (and no buffer of half the rows).
        rows.sort_unstable_by(|a, b| id_key(a).cmp(&id_key(b)));
        let starts = (0..rows.len())
            .filter(|&i| i == 0 || id_key(&rows[i - 1]) != id_key(&rows[i]))
            .collect();
        ByTransactionalId {
            rows,
            starts,
            fenced,
        }
    }
    /// Number of ids.
    pub fn len(&self) -> usize {
        self.starts.len()
    }
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }
    /// The statistics of the `i`-th id.
    pub fn get(&self, i: usize) -> Option<IdStats> {
        let from = *self.starts.get(i)?;
        let to = self.starts.get(i + 1).copied().unwrap_or(self.rows.len());
        Some(self.id_stats(&self.rows[from..to]))
    }
    /// Every id's statistics, in order.
    pub fn iter(&self) -> impl Iterator<Item = IdStats> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }
    fn id_stats(&self, ts: &[TxnRow]) -> IdStats {
        let mut pids: Vec<i64> = ts.iter().map(|t| t.producer_id).collect();
        pids.sort_unstable();
        pids.dedup();
        let mut r = IdStats {
            transactional_id: ts
                .first()
                .and_then(|t| t.transactional_id.as_deref().map(str::to_string)),
            fenced: pids
                .iter()
                .map(|p| self.fenced.get(p).copied().unwrap_or(0))
                .sum(),
            producer_ids: pids,
            partitions: Distribution::of(ts.iter().map(|t| i64::from(t.partitions))),
            size: tx_sizes(ts.iter()),
            ..Default::default()
        };
        for t in ts {
            let mut c = [
                &mut r.committed,
                &mut r.aborted,
                &mut r.empty,
                &mut r.open,
                &mut r.partial,
                &mut r.mixed,
            ];
            count(t.outcome, t.is_empty(), &mut c);
        }
        r
    }
}

impl Serialize for ByTransactionalId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// The statistics of the transactions `rows` (from `inputs`), in transaction order.
pub fn statistics(
    inputs: &TxnInputs,
    rows: Vec<TxnRow>,
    opts: &super::TxnOptions,
) -> TxnStatistics {
    let mut s = TxnStatistics {
        cluster_transactions: rows.len() as u64,
        by_partition: partition_stats(inputs),
        ..Default::default()
    };
    for t in &rows {
        let mut c = [
            &mut s.committed,
            &mut s.aborted,
            &mut s.empty,
            &mut s.open,
            &mut s.partial,
            &mut s.mixed,
        ];
        count(t.outcome, t.is_empty(), &mut c);
    }
    s.size = tx_sizes(rows.iter());
    // Per producer id, its transactions in transaction order (a stable sort).
    let mut by_pid: Vec<usize> = (0..rows.len()).collect();
    // (producer id, row): the stable order without a stable sort's scratch buffer.
    by_pid.sort_unstable_by_key(|&i| (rows[i].producer_id, i));
    let mut fenced_pids: BTreeMap<i64, u64> = BTreeMap::new();
    for ids in by_pid.chunk_by(|&a, &b| rows[a].producer_id == rows[b].producer_id) {
        let n = fencing(ids.iter().map(|&i| &rows[i]));
        if n > 0 {
            fenced_pids.insert(rows[ids[0]].producer_id, n);
        }
    }
    drop(by_pid);
    s.producers_fenced = fenced_pids.len() as u64;
    // Only the first `opts.longest` are reported: select them, then order those. The row
    // index ends the key, so the result is the stable sort's (ties keep row order).
    let mut longest: Vec<(usize, &TxnRow)> = rows
        .iter()
        .enumerate()
        .filter(|(_, t)| t.end_ms.is_some())
        .collect();
    let key = |&(i, t): &(usize, &TxnRow)| {
        (
            std::cmp::Reverse(t.duration_ms()),
            t.start_ms,
            t.producer_id,
            i,
        )
    };
    if opts.longest < longest.len() {
        longest.select_nth_unstable_by_key(opts.longest, key);
        longest.truncate(opts.longest);
    }
    longest.sort_unstable_by_key(key);
    s.longest = longest
        .into_iter()
        .take(opts.longest)
        .map(|(_, t)| LongTxn {
            transactional_id: t.transactional_id.as_deref().map(str::to_string),
            producer_id: t.producer_id,
            producer_epoch: t.producer_epoch,
            outcome: t.outcome,
            start_ms: t.start_ms,
            end_ms: t.end_ms,
            duration_ms: t.duration_ms().unwrap_or(0),
            partitions: t.partitions as usize,
            records: t.records,
        })
        .collect();
    s.by_transactional_id = ByTransactionalId::new(rows, fenced_pids);
    s
}

#[cfg(test)]
mod tests {
    use super::Distribution;

    /// The nearest-rank definition, by a full sort.
    fn sorted(values: &[i64]) -> Distribution {
        let mut v = values.to_vec();
        v.sort_unstable();
        let n = v.len();
        let rank = |p: f64| v[(((p / 100.0) * n as f64).ceil() as usize).clamp(1, n) - 1];
        Distribution {
            count: n as u64,
            min: v[0],
            p50: rank(50.0),
            p90: rank(90.0),
            p99: rank(99.0),
            max: v[n - 1],
            mean: v.iter().map(|&x| x as f64).sum::<f64>() / n as f64,
        }
    }

    #[test]
    fn selection_gives_the_sorted_percentiles() {
        // Lengths around the rank boundaries, repeated values, negative values.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for n in (1..=40).chain([99, 100, 101, 199, 1000, 4097]) {
            for spread in [3_i64, 1_000_000] {
                let values: Vec<i64> = (0..n)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        (x % spread as u64) as i64 - spread / 3
                    })
                    .collect();
                assert_eq!(Distribution::of(values.clone()), sorted(&values), "n {n}");
            }
        }
        assert_eq!(Distribution::of([]), Distribution::default());
    }

    #[test]
    fn mean_of_huge_values_is_the_exact_sum_divided() {
        let d = Distribution::of([i64::MAX, i64::MAX, 1]);
        assert_eq!(d.max, i64::MAX);
        assert_eq!(d.p50, i64::MAX);
        let exact = (2 * i128::from(i64::MAX) + 1) as f64 / 3.0;
        assert_eq!(d.mean, exact);
    }
}
