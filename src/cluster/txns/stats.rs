//! Transaction statistics (at least what tombentley/klog's `segment txn-stat` gives, per
//! partition, plus the same per transactional id over cluster transactions): counts of
//! committed, aborted, empty and open transactions; size (records, batches, bytes) and
//! duration distributions; the longest transactions; producers fenced.

use super::Joined;
use super::Outcome;
use crate::partition::state::txnrec::{TxnEnd, TxnRecord};
use rayon::prelude::*;
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
    /// Nearest-rank percentiles of `values` (see [`Distribution::of_slice`]).
    pub fn of(values: impl IntoIterator<Item = i64>) -> Self {
        let mut v: Vec<i64> = values.into_iter().collect();
        Self::of_slice(&mut v)
    }

    /// Nearest-rank percentiles of `v` (reordered): min, max and the exact integer sum in
    /// one pass (the mean is that sum divided once: the same as summing in any order while
    /// the sum stays below 2^53, and closer beyond); the ranks by counting when the values
    /// span no more than their number (record and batch counts), else by three selections,
    /// not a sort (the ranks are ordered, so each selection works on what lies above the
    /// previous one). Both give the values a sort would put at those ranks.
    pub fn of_slice(v: &mut [i64]) -> Self {
        let n = v.len();
        if n == 0 {
            return Distribution::default();
        }
        let (mut min, mut max, mut sum) = (i64::MAX, i64::MIN, 0i128);
        for &x in v.iter() {
            min = min.min(x);
            max = max.max(x);
            sum += i128::from(x);
        }
        let index = |p: f64| (((p / 100.0) * n as f64).ceil() as usize).clamp(1, n) - 1;
        let ranks = [index(50.0), index(90.0), index(99.0)];
        let span = max.abs_diff(min);
        let [p50, p90, p99] = if n >= 64 && span < n as u64 && n <= u32::MAX as usize {
            counted(v, min, span as usize, ranks)
        } else {
            selected(v, ranks)
        };
        Distribution {
            count: n as u64,
            min,
            p50,
            p90,
            p99,
            max,
            mean: sum as f64 / n as f64,
        }
    }
}

/// The values at the ascending `ranks` of `v`, whose values lie in `min..=min + span`
/// (`span < v.len() <= u32::MAX`): a histogram walked once.
fn counted(v: &[i64], min: i64, span: usize, ranks: [usize; 3]) -> [i64; 3] {
    let mut counts = vec![0u32; span + 1];
    for &x in v {
        counts[x.abs_diff(min) as usize] += 1;
    }
    let mut out = [min; 3];
    let (mut next, mut below) = (0, 0usize);
    for (k, &c) in counts.iter().enumerate() {
        below += c as usize;
        // Rank `r` holds the first value with more than `r` values at or below it.
        while next < 3 && ranks[next] < below {
            out[next] = min.wrapping_add(k as i64);
            next += 1;
        }
        if next == 3 {
            break;
        }
    }
    out
}

/// The values at the ascending `ranks` of `v` (reordered), by selection.
fn selected(v: &mut [i64], [i50, i90, i99]: [usize; 3]) -> [i64; 3] {
    let mut at = |from: usize, i: usize| -> i64 {
        // Everything at `from..` is ≥ every value before `from`; pick rank `i` in it.
        *v[from..].select_nth_unstable(i - from).1
    };
    let p50 = at(0, i50);
    let p90 = if i90 > i50 { at(i50 + 1, i90) } else { p50 };
    let p99 = if i99 > i90 { at(i90 + 1, i99) } else { p90 };
    [p50, p90, p99]
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

impl PartitionStats {
    /// The counts and sizes of a partition without transactions (its topic, partition and
    /// path left empty), as the join's statistics would give it.
    pub fn no_transactions() -> PartitionStats {
        PartitionStats {
            size: sizes(std::iter::empty(), &mut Vec::new()),
            ..Default::default()
        }
    }
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
    /// The input partitions with transactions (one without any has
    /// [`PartitionStats::no_transactions`]).
    pub by_partition: Vec<PartitionStats>,
    /// The longest closed transactions, longest first.
    pub longest: Vec<LongTxn>,
}

impl TxnStatistics {
    /// The statistics of each partition of a scan, looked up by its report
    /// ([`PartitionLookup::get`]).
    pub(crate) fn by_report(&self) -> PartitionLookup<'_> {
        PartitionLookup {
            by_path: self
                .by_partition
                .iter()
                .map(|p| (p.path.as_str(), p))
                .collect(),
            none: PartitionStats::no_transactions(),
        }
    }
}

/// Whether the join reads partition `p`: every partition but the coordinator's own.
pub(crate) fn joined(p: &crate::partition::results::PartitionReport) -> bool {
    p.topic != super::TRANSACTION_STATE_TOPIC
}

/// [`TxnStatistics::by_partition`] by partition directory (see [`TxnStatistics::by_report`]).
pub(crate) struct PartitionLookup<'a> {
    by_path: std::collections::HashMap<&'a str, &'a PartitionStats>,
    none: PartitionStats,
}

impl PartitionLookup<'_> {
    /// The statistics of partition `p`: its own when it has transactions, those of every
    /// partition without ([`PartitionStats::no_transactions`]) when the join read it
    /// ([`joined`]; the join leaves out partitions without transactions only when nothing
    /// can read them, and they would get the same), `None` when it did not.
    pub(crate) fn get(
        &self,
        p: &crate::partition::results::PartitionReport,
    ) -> Option<&PartitionStats> {
        self.by_path
            .get(p.path.as_str())
            .copied()
            .or_else(|| joined(p).then_some(&self.none))
    }
}

/// The distribution of `values`, read into `buf` (a buffer reused from one to the next).
fn dist(buf: &mut Vec<i64>, values: impl Iterator<Item = i64>) -> Distribution {
    buf.clear();
    buf.extend(values);
    Distribution::of_slice(buf)
}

fn sizes(
    rs: impl Iterator<Item = (u64, u64, u64, Option<i64>)> + Clone,
    buf: &mut Vec<i64>,
) -> Sizes {
    Sizes {
        records: dist(buf, rs.clone().map(|r| r.0 as i64)),
        batches: dist(buf, rs.clone().map(|r| r.1 as i64)),
        bytes: dist(buf, rs.clone().map(|r| r.2 as i64)),
        duration_ms: dist(buf, rs.filter_map(|r| r.3)),
    }
}

/// The statistics of each input partition with transactions (in parallel: they run after
/// every partition was walked, next to the rest of the join). A partition without any has
/// the same statistics as every other one ([`PartitionStats::no_transactions`]): not made
/// per partition (100 000 empty partitions held ≈ 350 bytes each of them).
fn partition_stats(inputs: &Joined<'_>) -> Vec<PartitionStats> {
    inputs
        .partitions
        .par_iter()
        .filter(|p| !p.txns.is_empty())
        .map_init(Vec::new, |buf, p| {
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
            buf.clear();
            buf.extend(p.txns.iter().map(|r| r.producer_id));
            buf.sort_unstable();
            buf.dedup();
            s.producers = buf.len() as u64;
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
            s.size = sizes(data, buf);
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
/// 300 000 transactions).
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
}

/// The rows' indices by producer id, then data epoch, start time and transaction order:
/// each producer id's transactions together, in the order [`fencing`] reads them.
fn by_producer(rows: &[TxnRow]) -> Vec<usize> {
    // Among rows of one producer id, data epoch and start time, the transaction order is
    // by domain, then row.
    let mut keys: Vec<(i64, i16, i64, u32, usize)> = rows
        .iter()
        .enumerate()
        .map(|(i, t)| (t.producer_id, t.producer_epoch, t.start_ms, t.domain, i))
        .collect();
    // Unique keys (the row ends them), so any sort gives this order. The rows come domain
    // by domain, producer id by producer id, each producer id's mostly by epoch and time:
    // a few long runs, which the merge sort finds and merges.
    keys.sort();
    keys.into_iter().map(|k| k.4).collect()
}

/// Fencing epoch bumps of one producer id's transactions with data, sorted by data epoch
/// (ties in transaction order).
fn fencing(rows: &[TxnRow], of_pid: &[usize]) -> u64 {
    let mut prev: Option<&TxnRow> = None;
    let mut n = 0;
    for b in of_pid.iter().map(|&i| &rows[i]).filter(|t| !t.is_empty()) {
        if let Some(a) = prev
            && b.producer_epoch != a.producer_epoch
            // TV2: the next transaction starts at the epoch its predecessor's markers carry.
            && !(a.transaction_version_2 && a.marker_epoch == Some(b.producer_epoch))
        {
            n += 1;
        }
        prev = Some(b);
    }
    n
}

fn tx_sizes<'a>(ts: impl Iterator<Item = &'a TxnRow> + Clone + 'a, buf: &mut Vec<i64>) -> Sizes {
    sizes(
        ts.filter(|t| !t.is_empty())
            .map(|t| (t.records, t.batches, t.bytes, t.duration_ms())),
        buf,
    )
}

/// The per-transactional-id statistics ([`IdStats`], ≈ 400 bytes each), kept as the
/// compact rows they are computed from and made one at a time when read or serialised:
/// with one id per transaction (300 000 producers without the coordinator's log) the
/// list would otherwise cost more than the transactions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ByTransactionalId {
    /// In the order they were made.
    rows: Vec<TxnRow>,
    /// Indices of `rows` sorted by (transactional id, producer id when the id is unknown):
    /// each id's rows together.
    order: Vec<usize>,
    /// Where each id's rows start in `order`.
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
    /// `by_pid`: the rows' indices by producer id ([`by_producer`]).
    fn new(rows: Vec<TxnRow>, by_pid: Vec<usize>, fenced: BTreeMap<i64, u64>) -> Self {
        // The order of an id's rows does not matter to its statistics. The rows without
        // a transactional id come first, by producer id (as `by_pid` has them); then the
        // others by id.
        let mut named: Vec<(&str, usize)> = Vec::new();
        let mut order = by_pid;
        order.retain(|&i| match rows[i].transactional_id.as_deref() {
            Some(id) => {
                named.push((id, i));
                false
            }
            None => true,
        });
        named.sort_unstable();
        order.extend(named.into_iter().map(|(_, i)| i));
        let starts = (0..order.len())
            .filter(|&k| k == 0 || id_key(&rows[order[k - 1]]) != id_key(&rows[order[k]]))
            .collect();
        ByTransactionalId {
            rows,
            order,
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
        let to = self.starts.get(i + 1).copied().unwrap_or(self.order.len());
        Some(self.id_stats(&self.order[from..to]))
    }
    /// Every id's statistics, in order.
    pub fn iter(&self) -> impl Iterator<Item = IdStats> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }
    fn id_stats(&self, of_id: &[usize]) -> IdStats {
        let ts = of_id.iter().map(|&i| &self.rows[i]);
        let mut buf: Vec<i64> = ts.clone().map(|t| t.producer_id).collect();
        buf.sort_unstable();
        buf.dedup();
        let pids = buf.clone();
        let mut r = IdStats {
            transactional_id: ts
                .clone()
                .next()
                .and_then(|t| t.transactional_id.as_deref().map(str::to_string)),
            fenced: pids
                .iter()
                .map(|p| self.fenced.get(p).copied().unwrap_or(0))
                .sum(),
            producer_ids: pids,
            partitions: dist(&mut buf, ts.clone().map(|t| i64::from(t.partitions))),
            size: tx_sizes(ts.clone(), &mut buf),
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

/// The statistics of the transactions `rows` (from `inputs`), in the order they were made
/// (domain by domain, producer id by producer id): the transaction order is a stable sort
/// of it by domain, start time, producer id and epoch, which the ties below are broken by.
pub fn statistics(
    inputs: &Joined<'_>,
    rows: Vec<TxnRow>,
    opts: &super::TxnOptions,
) -> TxnStatistics {
    let (by_partition, s) = rayon::join(|| partition_stats(inputs), || of_rows(rows, opts));
    TxnStatistics { by_partition, ..s }
}

/// [`statistics`] but the partitions'.
fn of_rows(rows: Vec<TxnRow>, opts: &super::TxnOptions) -> TxnStatistics {
    let mut s = TxnStatistics {
        cluster_transactions: rows.len() as u64,
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
    s.size = tx_sizes(rows.iter(), &mut Vec::with_capacity(rows.len()));
    let by_pid = by_producer(&rows);
    let mut fenced_pids: BTreeMap<i64, u64> = BTreeMap::new();
    for ids in by_pid.chunk_by(|&a, &b| rows[a].producer_id == rows[b].producer_id) {
        let n = fencing(&rows, ids);
        if n > 0 {
            fenced_pids.insert(rows[ids[0]].producer_id, n);
        }
    }
    s.producers_fenced = fenced_pids.len() as u64;
    s.longest = longest(&rows, opts.longest);
    s.by_transactional_id = ByTransactionalId::new(rows, by_pid, fenced_pids);
    s
}

/// The `n` longest closed transactions, longest first.
fn longest(rows: &[TxnRow], n: usize) -> Vec<LongTxn> {
    // Only the first `n` are reported: select them, then order those. Ties are in
    // transaction order (by domain and epoch for the same start and producer id, then
    // row): the row index ends the key, so the result is the stable sort's.
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
            t.domain,
            t.producer_epoch,
            i,
        )
    };
    if n < longest.len() {
        longest.select_nth_unstable_by_key(n, key);
        longest.truncate(n);
    }
    longest.sort_unstable_by_key(key);
    longest
        .into_iter()
        .take(n)
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
        .collect()
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
        // The whole i64 range (the widest buckets), skewed samples (one bucket holding
        // most values), a single repeated value; the mean is the exact sum divided.
        let sorted = |v: &[i64]| Distribution {
            mean: v.iter().map(|&x| i128::from(x)).sum::<i128>() as f64 / v.len() as f64,
            ..sorted(v)
        };
        for n in [64_usize, 65, 100, 1000] {
            let extremes: Vec<i64> = (0..n)
                .map(|i| match i % 5 {
                    0 => i64::MIN,
                    1 => i64::MAX,
                    2 => i as i64,
                    _ => -(i as i64),
                })
                .collect();
            assert_eq!(
                Distribution::of(extremes.clone()),
                sorted(&extremes),
                "n {n}"
            );
            let skewed: Vec<i64> = (0..n)
                .map(|i| {
                    if i % 50 == 0 {
                        1 << 40
                    } else {
                        1000 + i as i64 % 7
                    }
                })
                .collect();
            assert_eq!(Distribution::of(skewed.clone()), sorted(&skewed), "n {n}");
            let same = vec![-5_i64; n];
            assert_eq!(Distribution::of(same.clone()), sorted(&same), "n {n}");
        }
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
