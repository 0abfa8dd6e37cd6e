//! Segment files under names the broker does not give them (`5.log`, `+5.log`, `-0.log`,
//! `00000000000000000500.copy.log`, `5.index`: [`noncanonical_segment_name`]), and what the
//! load does with them.
//!
//! `LogLoader.loadSegmentFiles` lists the directory's regular files (`File.isFile`, which
//! follows a symlink) in name order and reads each `.log` name's offset
//! (`LogFileUtils.offsetFromFile`: the text before the first `.`), then opens the segment of
//! that offset under the broker's name for it (`LogSegment.open` → `FileRecords.open` of
//! `LogFileUtils.logFile`, with `StandardOpenOption.CREATE`): the file found is never read,
//! and when no file has the broker's name the open creates it empty — an empty segment the
//! load then recovers (its offset index is missing) and keeps. When that name exists, the
//! same segment is opened again (`LogSegments.add` replaces it by the same files). An index
//! name's offset is read too: when the broker's `.log` of that offset does not exist at that
//! point of the loop the file is deleted as orphaned, else it is left as it is; a segment
//! only ever opens the broker's names of its indexes. Before that loop the swap
//! completion's second pass deletes every file whose name's offset lies in the swapped range,
//! these included.
//!
//! One model for `scan` (the recovery plan) and `verify` (the prediction and the
//! `noncanonical_segment_name` findings). Not predicted (the prediction says why, as an
//! unknown outcome): a negative offset (the load opens a segment of a negative base, which
//! no broker writes), and an empty segment created inside the offsets of the segment below
//! it (the log's segments then overlap).

use super::RecoverWalk;
use super::plan::SegmentInput;
use super::swaps::CompletedSwaps;
use crate::discover::layout::{
    FileKind, PartitionDir, canonical_segment_name, java_name_order, noncanonical_segment_name,
};
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// One file under a noncanonical name the load reads.
#[derive(Debug, Clone)]
pub(crate) struct Alias {
    pub name: String,
    pub path: PathBuf,
    /// The offset the load reads in its name.
    pub offset: i64,
    /// What the load takes it for (`.log` or an index; for a `.swap` file, what its name
    /// without `.swap` is).
    pub kind: FileKind,
    /// A `.swap` leftover (`5.log.swap`), which the load's first pass handles.
    pub swap: bool,
}

/// What the next load does with an [`Alias`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AliasFate {
    /// A `.log` name: the load opens `segment`, which no file has, so it creates it empty.
    CreatesEmpty { segment: String },
    /// A `.log` name: the load opens `segment`, which exists.
    OpensExisting { segment: String },
    /// Deleted unread before the segments are loaded: its offset lies in the range
    /// `[from, to)` the completed swaps clear.
    DeletedBySwap { from: i64, to: i64 },
    /// An index name deleted as orphaned: `log` does not exist when the loop meets it.
    IndexDeleted { log: String },
    /// An index name left as it is: `log` exists when the loop meets it.
    IndexIgnored { log: String },
    /// A negative offset: the load opens `segment`, of a negative base (not predicted).
    NegativeBase { segment: String },
    /// A `.log.swap` name: the first pass opens `swap`, which no file has, so it creates it
    /// empty and renames it over `log` (`replaced`: a segment file of that name existed).
    SwapCreatesEmpty {
        swap: String,
        log: String,
        replaced: bool,
    },
    /// A `.swap` name whose segment's swap the load takes from the file of the broker's
    /// name (`.log`), or an index's: renamed to `to` unread, and never read under it.
    SwapRenamed { to: String },
    /// A `.swap` name at or above the lowest `.cleaned` offset: deleted unread (an
    /// unfinished split, `removeTempFilesAndCollectSwapFiles`).
    SwapDeleted,
}

/// The noncanonical names of a partition directory, in the load's name order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Aliases {
    pub files: Vec<Alias>,
}

/// A segment that holds nothing, based at `base` (`readNextOffset`: its base).
pub(crate) fn empty_walk(base: i64) -> RecoverWalk {
    RecoverWalk {
        stop: None,
        next_offset: base,
        len: 0,
        overflow: false,
        batches: 0,
        records: 0,
        removed_batches: 0,
        removed_records: 0,
        tail: None,
        state_end: None,
        control_throw: None,
        txn_index_throw: None,
    }
}

fn name_of(path: &Path) -> Option<&str> {
    path.file_name()?.to_str()
}

/// The broker's listing sees a regular file (a symlink to one included).
fn is_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// How the loop sees the directory once the swaps are done.
struct LoopView<'a> {
    /// Base offsets whose `.log` exists under the broker's name (segments not cleared by
    /// the swaps, swapped-in segments, and such names discovery could not list as segments:
    /// symlinks not followed).
    present: HashSet<i64>,
    /// The first `.log` alias of each offset with no such file (the load creates the
    /// segment there), by offset; negative offsets included (not predicted further).
    opened: BTreeMap<i64, &'a Alias>,
    /// Those of `opened` whose offset is not negative: the segments the load creates.
    created: BTreeMap<i64, &'a Alias>,
    swaps: Option<&'a CompletedSwaps>,
}

impl Aliases {
    /// The aliases of `p` (none for a partial directory: its load is not predicted): the
    /// files discovery left unrecognised with a noncanonical segment name, regular files
    /// as the broker's listing sees them, and the `.swap` leftovers whose name without
    /// `.swap` is one.
    pub(crate) fn of(p: &PartitionDir) -> Aliases {
        if p.partial {
            return Aliases::default();
        }
        let plain = p.unknown.iter().filter_map(|path| {
            let name = name_of(path)?;
            let nc = noncanonical_segment_name(name)?;
            is_file(path).then(|| Alias {
                name: name.to_owned(),
                path: path.clone(),
                offset: nc.offset,
                kind: nc.kind,
                swap: false,
            })
        });
        let swaps = p.leftovers.iter().filter_map(|(_, path)| {
            let name = name_of(path)?;
            let nc = noncanonical_segment_name(name.strip_suffix(".swap")?)?;
            is_file(path).then(|| Alias {
                name: name.to_owned(),
                path: path.clone(),
                offset: nc.offset,
                kind: nc.kind,
                swap: true,
            })
        });
        let mut files: Vec<Alias> = plain.chain(swaps).collect();
        files.sort_by(|a, b| java_name_order(&a.name, &b.name));
        Aliases { files }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    fn view<'a>(&'a self, p: &PartitionDir, swaps: Option<&'a CompletedSwaps>) -> LoopView<'a> {
        let cleared = |o: i64| swaps.is_some_and(|sw| sw.clears(o));
        let mut present: HashSet<i64> = p
            .segments
            .iter()
            .filter(|s| s.log.is_some() && !cleared(s.base_offset))
            .map(|s| s.base_offset)
            .collect();
        present.extend(
            swaps
                .iter()
                .flat_map(|sw| sw.segments.iter().map(|s| s.base)),
        );
        let listed: HashSet<&str> = p.unknown.iter().filter_map(|u| name_of(u)).collect();
        let mut opened = BTreeMap::new();
        for a in self
            .files
            .iter()
            .filter(|a| !a.swap && a.kind == FileKind::Log)
        {
            if cleared(a.offset) || present.contains(&a.offset) {
                continue;
            }
            if listed.contains(canonical_segment_name(a.offset, ".log").as_str()) {
                present.insert(a.offset);
                continue;
            }
            opened.entry(a.offset).or_insert(a);
        }
        let created = opened.range(0..).map(|(&o, &a)| (o, a)).collect();
        LoopView {
            present,
            opened,
            created,
            swaps,
        }
    }

    /// What the next load does with each alias, in the load's name order.
    pub(crate) fn fates(
        &self,
        p: &PartitionDir,
        swaps: Option<&CompletedSwaps>,
    ) -> Vec<(&Alias, AliasFate)> {
        let v = self.view(p, swaps);
        let min_cleaned = super::swaps::min_cleaned(p);
        let swapped: HashMap<i64, &super::swaps::SwappedIn> = swaps
            .iter()
            .flat_map(|sw| sw.segments.iter().map(|s| (s.base, s)))
            .collect();
        self.files
            .iter()
            .map(|a| {
                let log = canonical_segment_name(a.offset, ".log");
                let fate = if a.swap {
                    let stem = a.name.strip_suffix(".swap").unwrap_or(&a.name).to_owned();
                    match swapped.get(&a.offset) {
                        _ if min_cleaned.is_some_and(|c| a.offset >= c) => AliasFate::SwapDeleted,
                        _ if a.offset < 0 && a.kind == FileKind::Log => {
                            AliasFate::NegativeBase { segment: log }
                        }
                        Some(s) if s.created && a.kind == FileKind::Log => {
                            AliasFate::SwapCreatesEmpty {
                                swap: canonical_segment_name(a.offset, ".log.swap"),
                                // Unless the swapped range cleared it first.
                                replaced: !v.swaps.is_some_and(|sw| sw.clears(a.offset))
                                    && p.segments
                                        .iter()
                                        .any(|s| s.base_offset == a.offset && s.log.is_some()),
                                log,
                            }
                        }
                        _ => AliasFate::SwapRenamed { to: stem },
                    }
                } else if let Some(sw) = v.swaps.filter(|sw| sw.clears(a.offset)) {
                    AliasFate::DeletedBySwap {
                        from: sw.from,
                        to: sw.to,
                    }
                } else if a.offset < 0 && a.kind == FileKind::Log {
                    AliasFate::NegativeBase { segment: log }
                } else if a.kind == FileKind::Log {
                    match v.created.get(&a.offset) {
                        Some(first) if std::ptr::eq(*first, a) => {
                            AliasFate::CreatesEmpty { segment: log }
                        }
                        _ => AliasFate::OpensExisting { segment: log },
                    }
                } else if v.present.contains(&a.offset)
                    || v.opened.get(&a.offset).is_some_and(|first| {
                        java_name_order(&first.name, &a.name) == Ordering::Less
                    })
                {
                    AliasFate::IndexIgnored { log }
                } else {
                    AliasFate::IndexDeleted { log }
                };
                (a, fate)
            })
            .collect()
    }

    /// The orphaned index files (the broker's names, no `.log` of theirs) that a segment the
    /// load creates adopts: the loop meets them after the alias that creates it, so they
    /// are not deleted and are that segment's indexes.
    pub(crate) fn adopted<'p>(
        &self,
        p: &'p PartitionDir,
        swaps: Option<&CompletedSwaps>,
    ) -> Vec<&'p Path> {
        let v = self.view(p, swaps);
        p.orphan_indexes()
            .filter_map(|s| Some((s, *v.created.get(&s.base_offset)?)))
            .flat_map(|(s, first)| {
                [&s.index, &s.timeindex, &s.txnindex]
                    .into_iter()
                    .flatten()
                    .filter(move |f| {
                        name_of(f)
                            .is_some_and(|n| java_name_order(n, &first.name) == Ordering::Greater)
                    })
                    .map(PathBuf::as_path)
            })
            .collect()
    }

    /// The segments the load opens: `inputs` (the segments found, once the swaps are
    /// done), each marked with the alias the loop meets it under when that comes before its
    /// own name, and an empty segment for each offset whose `.log` the load creates
    /// (recovered at load unless an orphaned offset index of the broker's name is adopted;
    /// an adopted `.txnindex` is checked as any). With why the prediction cannot follow the
    /// load, when it cannot.
    pub(crate) fn apply(
        &self,
        mut inputs: Vec<SegmentInput>,
        p: &PartitionDir,
        swaps: Option<&CompletedSwaps>,
        read: (crate::read::segment::MmapMode, bool),
    ) -> (Vec<SegmentInput>, Option<String>) {
        if self.is_empty() {
            return (inputs, None);
        }
        let v = self.view(p, swaps);
        let mut unmodelled = Vec::new();
        for (a, fate) in self.fates(p, swaps) {
            match fate {
                AliasFate::NegativeBase { segment } => unmodelled.push(format!(
                    "{} makes the load open a segment of a negative base offset ({segment}), which no broker writes: what the load makes of it is not predicted",
                    a.name
                )),
                AliasFate::OpensExisting { .. } => {
                    let first = |s: &SegmentInput| {
                        java_name_order(&a.name, s.load_name()) == Ordering::Less
                    };
                    if let Some(s) = inputs.iter_mut().find(|s| s.base == a.offset)
                        && first(s)
                    {
                        s.opened_as = Some(a.name.clone());
                    }
                }
                _ => {}
            }
        }
        let adopted: HashSet<&Path> = self.adopted(p, swaps).into_iter().collect();
        let orphans: HashMap<i64, &crate::discover::layout::SegmentFiles> =
            p.orphan_indexes().map(|s| (s.base_offset, s)).collect();
        for (&base, first) in &v.created {
            let files = orphans.get(&base);
            let index = files
                .and_then(|s| s.index.as_deref())
                .filter(|f| adopted.contains(f));
            let txn = files
                .and_then(|s| s.txnindex.as_deref())
                .filter(|f| adopted.contains(f));
            // `LogSegment.sanityCheck`: with an offset index the transaction index is
            // checked; without one the segment is recovered (all three rebuilt).
            let verdict = txn
                .filter(|_| index.is_some())
                .map(|t| super::txnindex_verdict(t, &t.display().to_string(), base, read));
            let (corrupt_index, load_error) = match verdict {
                Some(super::TxnIndexVerdict::LoadFails(msg)) => (None, Some(msg)),
                Some(super::TxnIndexVerdict::Corrupt(why)) => (Some(why), None),
                _ => (None, None),
            };
            inputs.push(SegmentInput {
                name: canonical_segment_name(base, ".log"),
                base,
                missing_index: index.is_none(),
                corrupt_index,
                load_error,
                walk: Some(empty_walk(base)),
                opened_as: Some(first.name.clone()),
                created: true,
                read_next: None,
                open_error: None,
                oversize: None,
            });
        }
        inputs.sort_by_key(|s| s.base);
        for (i, s) in inputs.iter().enumerate().filter(|(_, s)| s.created) {
            let below = i.checked_sub(1).map(|j| &inputs[j]);
            let end = below.map(|b| b.walk.as_ref().map(|w| w.next_offset));
            if let Some(end) = end
                && end.is_none_or(|e| e > s.base)
            {
                unmodelled.push(format!(
                    "{} makes the load create the empty segment {} inside the offsets of {} (its end {}): the log's segments then overlap, which is not predicted",
                    s.opened_as.as_deref().unwrap_or_default(),
                    s.name,
                    inputs[i - 1].name,
                    end.map_or("unknown".to_string(), |e| e.to_string())
                ));
            }
        }
        let unmodelled = (!unmodelled.is_empty()).then(|| unmodelled.join("; "));
        (inputs, unmodelled)
    }
}
