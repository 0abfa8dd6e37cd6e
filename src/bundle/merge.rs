//! `merge`: read bundles, rebuild the report their per-partition stages made, run the
//! cluster stage over it.
//!
//! The report is the one `scan` makes over the same directories on one machine: the
//! partitions in discovery's order (topic-partition, then path), each with its findings,
//! then the findings of no partition in the scan's order (unreadable paths first), ids
//! assigned over the whole, then the cluster checks with an inventory rebuilt from the
//! bundles ([`Inventory::recorded`] carries what they recorded of the files those checks
//! read; no file of the bundles' brokers is read here).

use super::content::{FileInventory, Header, PartitionDirFiles, PartitionFrame, Rest};
use super::file::{FileError, FrameReader, Tag};
use super::relabel::{self, Relabel};
use super::source::Source;
use super::{BundleError, fingerprint};
use crate::cluster::tiering::{MetadataReplay, RemoteStorage};
use crate::discover::layout::{
    DirKind, Inventory, LogDir, PartitionDir, Recorded, RecordedMeta, RecordedPartition,
    TopicPartition,
};
use crate::finding::{Finding, Kind};
use crate::partition::walked::BatchKey;
use crate::results::{PartitionReport, ScanOptions, ScanReport};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

mod parts;
mod stage;
pub(crate) use parts::Parts;
pub(crate) use stage::{Staged, stage};

/// One bundle, read whole: its header and file inventory; its partitions' results are in
/// the [`Bundles`] it was read into by [`read_bundles`] (a bundle read alone keeps none).
#[derive(Debug, Clone)]
pub struct Bundle {
    pub header: Header,
    pub files: FileInventory,
    /// Where its partitions are in the `Parts` it was read into.
    pub(crate) parts: std::ops::Range<usize>,
    /// Where its partition directories are in the [`Bundles`]' inventory (their entries
    /// in `files` move there as the bundle is read).
    pub(crate) dirs: std::ops::Range<usize>,
    pub(crate) rest: Rest,
}

/// Bundles read for a merge ([`read_bundles`]): each with its path, and their partitions.
#[derive(Debug, Clone, Default)]
pub struct Bundles {
    pub list: Vec<(PathBuf, Bundle)>,
    pub(crate) parts: Parts,
    /// The inventory of every bundle's directories, added to as each bundle is read, in
    /// the bundles' order (put in discovery's order by the merge).
    pub(crate) dirs: Dirs,
}

/// The merged inventory as the bundles are read, and what they recorded of their files.
#[derive(Debug, Clone, Default)]
pub(crate) struct Dirs {
    inv: Inventory,
    recorded: Recorded,
}

fn content(path: &Path, what: &str, e: impl std::fmt::Display) -> BundleError {
    BundleError::Content {
        path: path.to_path_buf(),
        message: format!("{what}: {e}"),
    }
}

fn parse<T: serde::de::DeserializeOwned>(
    path: &Path,
    what: &str,
    b: &[u8],
    names: &Relabel,
) -> Result<T, BundleError> {
    names.parse(b).map_err(|e| content(path, what, e))
}

impl Bundle {
    /// Read and check the bundle at `path`.
    pub fn read(path: &Path) -> Result<Bundle, BundleError> {
        let file = super::file::open(path).map_err(|e| BundleError::file(path, e.into()))?;
        Self::read_from(path, std::io::BufReader::new(file))
    }

    /// Read a bundle from `r` (`path` names it in errors), every frame checked; its
    /// partitions' results are dropped once read ([`read_bundles`] keeps them).
    pub fn read_from(path: &Path, r: impl std::io::Read) -> Result<Bundle, BundleError> {
        let mut parts = Parts::default();
        let mut b = Self::read_keeping(path, r, &|_| true, &Relabel::default(), &mut parts)?;
        b.parts = 0..0;
        Ok(b)
    }

    /// The header and file inventory of the bundle at `path` (its first two frames).
    pub fn read_head(path: &Path) -> Result<(Header, FileInventory), BundleError> {
        let file = super::file::open(path).map_err(|e| BundleError::file(path, e.into()))?;
        Self::read_head_from(path, file)
    }

    /// [`Self::read_head`] of the bundle `r` reads (`path` names it in errors).
    fn read_head_from(
        path: &Path,
        r: impl std::io::Read,
    ) -> Result<(Header, FileInventory), BundleError> {
        let mut frames =
            FrameReader::new(std::io::BufReader::new(r)).map_err(|e| BundleError::file(path, e))?;
        let mut next = || frames.next().map_err(|e| BundleError::file(path, e));
        let (header, files) = head(path, &mut next, &Relabel::default())?;
        Ok((header, files))
    }

    /// [`Self::read_from`], its partitions added to `parts`, decoding the fingerprints of
    /// the partition directories `keep` accepts only (the others' are checked by their
    /// frame's CRC, and dropped), every path renamed by `names`.
    fn read_keeping(
        path: &Path,
        r: impl std::io::Read,
        keep: &dyn Fn(usize) -> bool,
        names: &Relabel,
        parts: &mut Parts,
    ) -> Result<Bundle, BundleError> {
        let mut frames = FrameReader::new(r).map_err(|e| BundleError::file(path, e))?;
        let mut next = || frames.next().map_err(|e| BundleError::file(path, e));
        let missing = || BundleError::file(path, FileError::Truncated);
        let (header, files) = head(path, &mut next, names)?;
        // Its partition directories by path: `keep` takes their index.
        let index: HashMap<&str, usize> = (files.partitions.iter().enumerate())
            .map(|(i, p)| (p.path.as_str(), i))
            .collect();
        let first = parts.reports.len();
        let mut keys: HashMap<String, Option<Vec<BatchKey>>> = HashMap::new();
        let mut rest = None;
        while let Some((tag, payload)) = next()? {
            match tag {
                Tag::Partition if rest.is_none() => {
                    let p: PartitionFrame = parse(path, "partition", &payload, names)?;
                    if p.result.format_version != crate::results::RESULT_FORMAT_VERSION
                        || p.result.cluster_inputs.version
                            != crate::partition::walked::FORMAT_VERSION
                    {
                        return Err(content(path, "partition", "of another format version"));
                    }
                    let batches = match p.fingerprints {
                        false => None,
                        true => keys.remove(&p.result.partition.path).ok_or_else(|| {
                            let dir = &p.result.partition.path;
                            content(path, "partition", format!("{dir} lacks its fingerprints"))
                        })?,
                    };
                    parts.push(p, batches);
                }
                // Written while the scan ran, before the partitions' results.
                Tag::Fingerprints if parts.reports.len() == first => {
                    let keep = |d: &str| {
                        index
                            .get(names.string(d).as_str())
                            .is_some_and(|&i| keep(i))
                    };
                    let (dir, k) = fingerprint::read_frame(&payload, &keep)
                        .map_err(|e| content(path, "fingerprints", e))?;
                    let dir = names.string(&dir);
                    if keys.insert(dir.clone(), k).is_some() {
                        return Err(content(path, "fingerprints", format!("{dir} twice")));
                    }
                }
                Tag::Rest if rest.is_none() => {
                    rest = Some(parse(path, "trailer", &payload, names)?)
                }
                other => return Err(content(path, "frame", format!("{other:?} out of place"))),
            }
        }
        let rest = rest.ok_or_else(missing)?;
        if let Some(dir) = keys.keys().next() {
            return Err(content(
                path,
                "fingerprints",
                format!("of no partition ({dir})"),
            ));
        }
        Ok(Bundle {
            header,
            files,
            parts: first..parts.reports.len(),
            dirs: 0..0,
            rest,
        })
    }
}

impl Dirs {
    /// Room for `n` partition directories.
    fn with_capacity(n: usize) -> Dirs {
        let mut d = Dirs::default();
        d.inv.partitions.reserve_exact(n);
        d.recorded.partitions.reserve_exact(n);
        d
    }

    /// The topic-partition of each partition directory of `b` named as one, by path.
    fn topic_partitions(&self, b: &Bundle) -> HashMap<&str, (&str, i32)> {
        self.inv.partitions[b.dirs.clone()]
            .iter()
            .filter_map(|p| {
                let tp = p.tp.as_ref()?;
                Some((p.path.to_str()?, (tp.topic.as_str(), tp.partition)))
            })
            .collect()
    }
}

/// The first two frames: the header (its versions checked) and the file inventory.
fn head(
    path: &Path,
    next: &mut dyn FnMut() -> Result<Option<(Tag, Vec<u8>)>, BundleError>,
    names: &Relabel,
) -> Result<(Header, FileInventory), BundleError> {
    let missing = || BundleError::file(path, FileError::Truncated);
    let (tag, h) = next()?.ok_or_else(missing)?;
    if tag != Tag::Header {
        return Err(content(path, "first frame", "not a header"));
    }
    let header: Header = parse(path, "header", &h, names)?;
    if header.result_format_version != crate::results::RESULT_FORMAT_VERSION
        || header.cluster_inputs_version != crate::partition::walked::FORMAT_VERSION
    {
        return Err(BundleError::Version {
            path: path.to_path_buf(),
            tool_version: header.tool_version,
            found: (header.result_format_version, header.cluster_inputs_version),
        });
    }
    let (tag, inv) = next()?.ok_or_else(missing)?;
    if tag != Tag::Inventory {
        return Err(content(path, "second frame", "not the file inventory"));
    }
    Ok((header, parse(path, "file inventory", &inv, names)?))
}

/// A merged report, with the options it was made with and the inventory rebuilt from the
/// bundles (what the renderers and `--transactional-id` take besides the report).
#[derive(Debug)]
pub struct Merged {
    pub report: ScanReport,
    pub options: ScanOptions,
    pub inventory: Inventory,
    /// What the merged report cannot hold as the scan's does (printed on stderr).
    pub warnings: Vec<String>,
}

/// The `*.klb` files of a directory (in name order), or the file itself (`-`: standard
/// input, once; a pipe or FIFO is read once, see `super::source`).
pub fn bundle_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, BundleError> {
    let mut out = Vec::new();
    let stdin = Path::new(super::source::STDIN);
    if paths.iter().filter(|p| p.as_path() == stdin).count() > 1 {
        return Err(content(
            stdin,
            "bundle",
            "standard input (-) given more than once",
        ));
    }
    for p in paths {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| BundleError::file(p, e.into()))?
                .filter_map(Result::ok)
                .map(|e| e.path())
                // Every `*.klb` entry but a directory: one that is no regular file (a
                // FIFO, a dangling link) is read or refused by name, never skipped unsaid.
                .filter(|f| f.extension().is_some_and(|x| x == "klb") && !f.is_dir())
                .collect();
            if found.is_empty() {
                return Err(content(p, "directory", "holds no *.klb bundle"));
            }
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// Merge the bundles `files` (directories: their `*.klb` files) with `base`'s threads and
/// what-to-keep settings; the per-partition options are the bundles' own (all equal).
pub fn merge(files: &[PathBuf], base: &ScanOptions) -> Result<Merged, BundleError> {
    merge_streaming(files, base, &mut |_, _| {})
}

/// [`merge`], handing each partition to `on_partition` before the cluster checks run
/// (as `pipeline::analyse_streaming` does).
pub fn merge_streaming(
    files: &[PathBuf],
    base: &ScanOptions,
    on_partition: &mut dyn FnMut(&PartitionReport, &[Finding]),
) -> Result<Merged, BundleError> {
    merge_bundles(read_bundles_for(files, base)?, base, on_partition)
}

/// [`read_bundles`], keeping of each partition only what a run with `opts` reads: its
/// producers' final states with `keep_producers`, its timeline with `collect_timelines`
/// (a merge that prints no HTML holds none of them).
pub fn read_bundles_for(files: &[PathBuf], opts: &ScanOptions) -> Result<Bundles, BundleError> {
    read_slim(files, &|p: &mut [PartitionReport]| {
        for p in p {
            // An absent (empty) outcome has no producers: writing through it would
            // allocate one.
            if let Some(o) = p.carried.outcome.get_mut().filter(|_| !opts.keep_producers) {
                o.producers = Vec::new();
            }
            if !opts.collect_timelines {
                p.carried.set_timeline(None);
            }
        }
    })
}

/// Read the bundles `files` (directories: their `*.klb` files), each named by its path,
/// without the names and sizes of each directory's files (no merge reads them).
/// As a scan keeps batch keys only for the topic-partitions more than one of its
/// directories holds, only those directories' fingerprints are decoded and kept (a first
/// pass reads each bundle's header and file inventory to know them, and how many
/// partitions they hold). The directories of bundles whose log-dir paths another bundle
/// shares are named by their broker (`super::relabel`).
pub fn read_bundles(files: &[PathBuf]) -> Result<Bundles, BundleError> {
    read_slim(files, &|_| {})
}

/// [`read_bundles`], `slim` cutting each bundle's partitions down as soon as it is read.
fn read_slim(
    files: &[PathBuf],
    slim: &dyn Fn(&mut [PartitionReport]),
) -> Result<Bundles, BundleError> {
    let files = bundle_files(files)?;
    // A pipe's bundle is copied once, to be read twice (`super::source`).
    let sources = (files.iter())
        .map(|f| Source::of(f).map_err(|e| BundleError::file(f, e)))
        .collect::<Result<Vec<_>, BundleError>>()?;
    let reader = |f: &Path, s: &Source| s.reader().map_err(|e| BundleError::file(f, e.into()));
    // Every bundle's directories are held at once here (the renaming compares them
    // across bundles): without their lists of files, which nothing here reads.
    let heads = files
        .iter()
        .zip(&sources)
        .map(|(f, s)| {
            let (header, mut inv) = Bundle::read_head_from(f, reader(f, s)?)?;
            inv.drop_file_lists();
            Ok((header, inv))
        })
        .collect::<Result<Vec<_>, BundleError>>()?;
    let names =
        relabel::relabels(&heads.iter().map(|(h, i)| (h, i)).collect::<Vec<_>>()).map_err(|a| {
            BundleError::Overlap {
                path: files[a.second].clone(),
                other: files[a.first].clone(),
                dir: a.dir,
            }
        })?;
    let total: usize = heads.iter().map(|(_, inv)| inv.partitions.len()).sum();
    // Which directories hold a topic-partition another one holds too: a flag per
    // directory of each bundle (a set of their paths would hold every replicated path
    // while the bundles are read).
    let comparable = |p: &PartitionDirFiles| {
        matches!(p.kind, Some(DirKind::Normal) | Some(DirKind::Future { .. }))
    };
    let mut holders: HashMap<(&str, i32), u32> = HashMap::new();
    for (_, inv) in &heads {
        for p in inv.partitions.iter().filter(|p| comparable(p)) {
            if let Some((topic, n)) = &p.tp {
                *holders.entry((topic.as_str(), *n)).or_default() += 1;
            }
        }
    }
    let copied: Vec<Vec<bool>> = heads
        .iter()
        .map(|(_, inv)| {
            (inv.partitions.iter())
                .map(|p| {
                    let tp = p.tp.as_ref().map(|(t, n)| (t.as_str(), *n));
                    comparable(p) && tp.and_then(|tp| holders.get(&tp)).is_some_and(|&n| n > 1)
                })
                .collect()
        })
        .collect();
    drop(holders);
    drop(heads);
    // One list for every bundle's partitions, of the size their inventories give: the
    // report takes it as it is (a list grown as bundles are read, or one per bundle moved
    // into the report's, would hold up to twice the partitions at once).
    let mut parts = Parts::with_capacity(total);
    let mut dirs = Dirs::with_capacity(total);
    let mut list = Vec::with_capacity(files.len());
    for (((f, names), copied), source) in files.into_iter().zip(&names).zip(&copied).zip(&sources) {
        let file = reader(&f, source)?;
        let keep = |i: usize| copied.get(i).copied().unwrap_or(false);
        let r = std::io::BufReader::new(file);
        let mut b = Bundle::read_keeping(&f, r, &keep, names, &mut parts)?;
        // The inventory takes what it needs of the file lists (whether each directory has
        // a `partition.metadata`), then they go.
        dirs.add(&mut b);
        b.files.drop_file_lists();
        slim(&mut parts.reports[b.parts.clone()]);
        list.push((f, b));
    }
    Ok(Bundles { list, parts, dirs })
}

/// [`merge_streaming`] over bundles already read ([`read_bundles`]).
pub fn merge_bundles(
    bundles: Bundles,
    base: &ScanOptions,
    on_partition: &mut dyn FnMut(&PartitionReport, &[Finding]),
) -> Result<Merged, BundleError> {
    stage(bundles, base)?.merge(on_partition, None)
}

/// The remote history is replayed at collect, the objects are walked by the merge's
/// tiering check: a scan does both or neither. Bundles whose collect replayed it (`collected`)
/// need a remote storage the merge reads; bundles whose collect did not (given none, or
/// one it could not read) are refused by a merge that reads one, and merged as the scan
/// does by one given a storage it cannot read either (the report lists why, exit 2).
fn check_remote_history(
    first: &Path,
    collected: bool,
    remote: &RemoteStorage,
) -> Result<(), BundleError> {
    match (collected, remote.is_read(), remote.error()) {
        (true, false, Some((given, why))) => Err(BundleError::RemoteStorageUnread {
            path: given.clone(),
            why: why.clone(),
        }),
        (c, r, _) if c != r => Err(BundleError::RemoteStorage {
            path: first.to_path_buf(),
            collected,
        }),
        _ => Ok(()),
    }
}

/// What a merge with `--remote-storage` cannot give as the scan does: a tiered replica
/// whose collect replayed none of the remote segments the metadata records (carried by
/// another broker's bundle) name, because its broker held no copy of that
/// `__remote_log_metadata` partition.
fn unreplayed_warnings(
    report: &ScanReport,
    inv: &Inventory,
    opts: &ScanOptions,
    replayed: &MetadataReplay,
) -> Vec<String> {
    crate::cluster::tiering::history::unreplayed(report, inv, opts, replayed)
        .into_iter()
        .map(|i| {
            format!(
                "{}: its remote segments were not replayed at collect (its broker's bundle holds no copy of the __remote_log_metadata partition that names them; another bundle does): its producer state and transactions start at the local log, where `scan --remote-storage` over all these directories replays the remote history first; collect its broker again with --remote-log-metadata naming a log dir that holds that partition",
                report.partitions[i].path
            )
        })
        .collect()
}

/// Two bundles holding the same directory path cannot be one scan's inputs.
fn check_overlap(bundles: &[(PathBuf, Bundle)], inv: &Dirs) -> Result<(), BundleError> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, (path, b)) in bundles.iter().enumerate() {
        let dirs = b.files.log_dirs.iter().map(|d| d.path.as_str());
        let parts = inv.inv.partitions[b.dirs.clone()].iter();
        for d in dirs.chain(parts.filter_map(|p| p.path.to_str())) {
            if let Some(other) = seen.insert(d, i)
                && other != i
            {
                return Err(BundleError::Overlap {
                    path: path.clone(),
                    other: bundles[other].0.clone(),
                    dir: d.to_string(),
                });
            }
        }
    }
    Ok(())
}

impl Dirs {
    /// Add the directories of `b` (just read), as discovery would list them, with what it
    /// recorded of their files: its partition directories, metadata logs and small files
    /// move from the bundle into the inventory (no copy of every path is held beside it).
    fn add(&mut self, b: &mut Bundle) {
        let Dirs { inv, recorded } = self;
        let first = inv.partitions.len();
        for d in &b.files.log_dirs {
            let has = |n: &str| d.files.iter().any(|(f, _)| f == n);
            let markers = crate::discover::layout::LOG_DIR_MARKERS
                .iter()
                .any(|m| has(m));
            if markers && !has(".kafka_cleanshutdown") {
                recorded.unclean_shutdown.insert(PathBuf::from(&d.path));
            }
            if markers {
                recorded.broker_log_dirs.insert(PathBuf::from(&d.path));
            }
        }
        for ld in &b.header.log_dirs {
            let path = PathBuf::from(&ld.path);
            recorded.meta_properties.insert(
                path.clone(),
                RecordedMeta::new(
                    ld.cluster_id.clone(),
                    ld.node_id,
                    ld.directory_id.clone(),
                    ld.meta_version,
                ),
            );
            inv.log_dirs.push(LogDir {
                path,
                ..Default::default()
            });
        }
        for p in std::mem::take(&mut b.files.partitions) {
            let mut d = PartitionDir::default();
            d.path = PathBuf::from(p.path);
            d.tp =
                p.tp.map(|(topic, partition)| TopicPartition { topic, partition });
            d.kind = p.kind;
            d.log_dir = p.log_dir.map(PathBuf::from);
            let has_metadata = (p.files.iter())
                .any(|(name, _)| name == crate::discover::layout::PARTITION_METADATA);
            if d.tp
                .as_ref()
                .is_some_and(|tp| crate::discover::layout::is_kraft_metadata(&tp.topic))
                && let Some(end) = crate::discover::layout::newest_snapshot_end(
                    p.files.iter().map(|(name, _)| name.as_str()),
                )
            {
                recorded.kraft_snapshot_ends.insert(d.path.clone(), end);
            }
            recorded
                .partitions
                .push(RecordedPartition::new(p.topic_id, has_metadata));
            if let Some(id) = p.cluster_id_given {
                // A partition directory outside any log dir: its given id is its identity.
                inv.given_cluster_ids.insert(d.path.clone(), id);
            }
            inv.partitions.push(d);
        }
        b.dirs = first..inv.partitions.len();
        for (path, md) in &b.rest.cluster_metadata {
            if let Ok(json) = serde_json::to_string(md) {
                recorded.cluster_metadata.insert(PathBuf::from(path), json);
            }
        }
        for (path, log) in std::mem::take(&mut b.rest.metadata_logs) {
            if let Ok(json) = serde_json::to_string(&log) {
                recorded.metadata_logs.insert(PathBuf::from(path), json);
            }
        }
        // A partition's leader-epoch checkpoint goes with its record, without its path.
        let mine: HashMap<&str, usize> = inv.partitions[first..]
            .iter()
            .enumerate()
            .filter_map(|(i, p)| Some((p.path.to_str()?, first + i)))
            .collect();
        for (path, text) in std::mem::take(&mut b.rest.small_files) {
            let file = Path::new(&path);
            let dir = file.parent().and_then(Path::to_str);
            match dir.and_then(|d| mine.get(d)) {
                Some(&i)
                    if file
                        .file_name()
                        .is_some_and(|n| n == crate::discover::layout::LEADER_EPOCH_CHECKPOINT) =>
                {
                    recorded.partitions[i].leader_epoch_checkpoint = Some(text.into_boxed_str());
                }
                _ => {
                    recorded.small_files.insert(PathBuf::from(path), text);
                }
            }
        }
        for (path, why) in std::mem::take(&mut b.rest.unread_small_files) {
            recorded.unread.insert(PathBuf::from(path), why);
        }
        let pairs = |v: &[(String, String)]| {
            v.iter()
                .map(|(p, why)| (PathBuf::from(p), why.clone()))
                .collect::<Vec<_>>()
        };
        inv.errors.extend(pairs(&b.files.errors));
        inv.input_errors.extend(pairs(&b.files.input_errors));
    }

    /// The inventory of the bundles' directories, as discovery would list them (sorted by
    /// topic-partition and path), with what the bundles recorded of their files.
    fn finish(self) -> Inventory {
        let Dirs {
            mut inv,
            mut recorded,
        } = self;
        // Discovery's order, the records moved along (stable: as a sort of the list itself).
        let ps = &inv.partitions;
        let mut order: Vec<usize> = (0..ps.len()).collect();
        order.sort_by(|&a, &b| (&ps[a].tp, &ps[a].path).cmp(&(&ps[b].tp, &ps[b].path)));
        permute(&mut inv.partitions, &order);
        permute(&mut recorded.partitions, &order);
        let ps = &inv.partitions;
        let mut by_path: Vec<u32> = (0..ps.len() as u32).collect();
        by_path.sort_unstable_by(|&a, &b| {
            let path = |i: u32| ps[i as usize].path.as_os_str();
            path(a).cmp(path(b))
        });
        recorded.by_path = by_path;
        inv.log_dirs.sort_by(|a, b| a.path.cmp(&b.path));
        inv.recorded = Some(std::sync::Arc::new(recorded));
        inv
    }
}

/// Discovery's order of the bundles' partitions (topic-partition from the directory's
/// name, then path): `order[k]` is the index in `parts` of the report's `k`-th partition.
fn discovery_order(bundles: &[(PathBuf, Bundle)], parts: &Parts, dirs: &Dirs) -> Vec<usize> {
    let mut keys: Vec<(Option<(&str, i32)>, &Path)> = Vec::with_capacity(parts.reports.len());
    for (_, b) in bundles {
        let tps = dirs.topic_partitions(b);
        for r in &parts.reports[b.parts.clone()] {
            let tp = tps.get(r.path.as_str()).copied();
            keys.push((tp, Path::new(&r.path)));
        }
    }
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| keys[a].cmp(&keys[b]));
    order
}

/// The report the bundles' per-partition stages make together, before the cluster checks.
/// The partitions' list is put in discovery's order (`order`, [`discovery_order`]) in
/// place and becomes the report's (no second list of partitions).
fn report(bundles: Vec<(PathBuf, Bundle)>, parts: Parts, order: Vec<usize>) -> ScanReport {
    let Parts {
        reports: mut partitions,
        findings: mut own,
        ..
    } = parts;
    let mut loose: Vec<Finding> = Vec::new();
    let mut inputs = Vec::new();
    let mut errors = Vec::new();
    for (_, b) in bundles {
        loose.extend(b.rest.findings);
        inputs.extend(b.header.inputs);
        errors.extend(
            b.files
                .errors
                .into_iter()
                .map(|(p, why)| (PathBuf::from(p), why)),
        );
    }
    permute(&mut partitions, &order);
    permute(&mut own, &order);
    drop(order);
    let mut report = ScanReport::default();
    for (p, fs) in partitions.iter_mut().zip(own) {
        let start = report.findings.len();
        report.findings.extend(fs);
        p.carried.finding_range = start..report.findings.len();
    }
    report.partitions = partitions;
    // The scan lists the unreadable paths' findings first, then the others of no
    // partition (each bundle's in its own order).
    let (unreadable, other): (Vec<Finding>, Vec<Finding>) = loose
        .into_iter()
        .partition(|f| f.kind == Kind::UnreadableFile);
    report.findings.extend(unreadable);
    report.findings.extend(other);
    crate::finding::assign_ids(&mut report.findings);
    report.summary = crate::partition::results::summarise(&report.partitions, &report.findings);
    report.inputs = inputs;
    report.errors = errors;
    report
}

/// Put `v` in the order `order` gives (`order[k]`: the index of the element that goes to
/// position `k`), in place, by following each cycle of the permutation.
fn permute<T>(v: &mut [T], order: &[usize]) {
    let mut done = vec![false; v.len()];
    for start in 0..v.len() {
        let mut k = start;
        while !done[k] {
            done[k] = true;
            let from = order[k];
            if from == start {
                break;
            }
            v.swap(k, from);
            k = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::permute;

    #[test]
    fn permute_puts_each_element_where_the_order_says() {
        let order = [3, 0, 4, 1, 2, 6, 5];
        let mut v: Vec<char> = "abcdefg".chars().collect();
        permute(&mut v, &order);
        let want: Vec<char> = order.iter().map(|&i| (b'a' + i as u8) as char).collect();
        assert_eq!(v, want);
        let mut same = vec![1, 2, 3];
        permute(&mut same, &[0, 1, 2]);
        assert_eq!(same, [1, 2, 3]);
    }
}
