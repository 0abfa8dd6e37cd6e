//! The walker behind [`discover`]: walks the given paths, groups what it finds into
//! partition directories and log dirs, and lists what it could not read.

use super::*;
use std::collections::{HashMap, HashSet};

/// Maximum directory depth searched below each given path.
pub const MAX_DEPTH: usize = 24;

/// Directories listed at most in one discovery (a followed symlink can lead anywhere).
pub const MAX_DIRS: usize = 1_000_000;

#[derive(Debug)]
struct Entry {
    name: String,
    path: PathBuf,
    /// `Some(true)` directory, `Some(false)` anything else; `None` when it could not be
    /// stat'ed (dangling symlink, permission), or is a symlink not followed.
    is_dir: Option<bool>,
    /// A symlink not followed (`DiscoverOptions::follow_symlinks` off), kept only in a
    /// partition directory's `unknown` for the name checks: never a log dir's file.
    unfollowed: bool,
}

/// Options of [`discover_with`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiscoverOptions {
    /// Follow symlinks met during the walk (`--follow`, like `rg -L`). Off by default: a
    /// symlink inside the evidence (`data -> /`, `data -> ../other-broker`) would make
    /// files outside the given roots look like the evidence's own. Paths given
    /// explicitly are always followed. Even when following, a symlink to a directory above
    /// the input, or to another file system, is not walked (said as an error), and a
    /// discovery lists at most `MAX_DIRS` directories.
    pub follow_symlinks: bool,
}

/// True when a broker's load may read the name `name` (a file it writes, a leftover it
/// acts on, a partition directory): an entry of that name that is not analysed is said,
/// never skipped silently.
fn load_reads_name(name: &str) -> bool {
    kafka_like_name(name)
        || parse_leftover_name(name).is_some()
        || parse_partition_dir_name(name).is_some()
}

/// True when `name` ends like a file a broker writes (so a special file or a name that
/// cannot be decoded there is worth a finding rather than silence).
fn kafka_like_name(name: &str) -> bool {
    const SUFFIXES: [&str; 10] = [
        ".log",
        ".index",
        ".timeindex",
        ".txnindex",
        ".snapshot",
        ".checkpoint",
        "-checkpoint",
        ".properties",
        ".metadata",
        "quorum-state",
    ];
    SUFFIXES.iter().any(|s| name.ends_with(s)) || LOG_DIR_MARKERS.contains(&name)
}

#[derive(Default)]
struct Walker {
    opts: DiscoverOptions,
    inv: Inventory,
    /// Canonical paths of directories already walked (dedup + symlink loops).
    visited: HashSet<PathBuf>,
    /// Complete partition dirs, with their canonical path.
    full: Vec<(PathBuf, PartitionDir)>,
    full_index: HashMap<PathBuf, usize>,
    /// Partial partition dirs (single files given), by canonical dir path.
    partial: Vec<(PathBuf, PartitionDir)>,
    partial_index: HashMap<PathBuf, usize>,
    /// The single files added to `partial` (a file given twice is added once).
    single_files: HashSet<PathBuf>,
    /// Partition dirs reached, counting those reached again (see [`Walker::found`]).
    reached: usize,
    /// Log dirs by canonical path.
    log_dir_index: HashMap<PathBuf, usize>,
    /// Canonical paths of log dirs (same order as `inv.log_dirs`).
    log_dir_canon: Vec<PathBuf>,
    /// The input being walked: its file system's device and canonical path (followed
    /// symlinks stay on that file system and below it).
    root: Option<(u64, PathBuf)>,
    /// Directories listed so far (bounded by [`MAX_DIRS`]).
    listed: usize,
    /// Special files (FIFOs, sockets, devices) the listings skipped, by path, with why:
    /// a log dir's offset checkpoint among them is there, unread ([`LogDir::add_unread`]).
    special: HashMap<PathBuf, String>,
}

impl Walker {
    fn error(&mut self, path: &Path, e: impl std::fmt::Display) {
        self.inv.errors.push((path.to_path_buf(), e.to_string()));
    }

    fn input_error(&mut self, path: &Path, e: impl std::fmt::Display) {
        let e = (path.to_path_buf(), e.to_string());
        self.inv.errors.push(e.clone());
        self.inv.input_errors.push(e);
    }

    /// Partitions and log dirs found so far (a partition reached again counts again, so
    /// that an input holding only already-found data is not an error).
    fn found(&self) -> usize {
        self.full.len() + self.reached + self.partial.len() + self.inv.log_dirs.len()
    }

    /// Why a followed symlink to the directory `target_meta` is not walked: it leads above
    /// the input (`data -> /` would walk the whole host), or to another file system than
    /// the input's. (One to the input itself is walked once: directories are visited once.)
    fn symlink_refusal(&self, link: &Path, target_meta: &std::fs::Metadata) -> Option<String> {
        let (root_dev, root) = self.root.as_ref()?;
        let target = std::fs::canonicalize(link).ok()?;
        if root.starts_with(&target) && *root != target {
            return Some(format!(
                "symlink to {} not followed: it holds the input (following it would walk the tree the evidence is in)",
                target.display()
            ));
        }
        #[cfg(unix)]
        if std::os::unix::fs::MetadataExt::dev(target_meta) != *root_dev {
            return Some(format!(
                "symlink to {} not followed: another file system than the input's",
                target.display()
            ));
        }
        #[cfg(not(unix))]
        let _ = (target_meta, root_dev);
        None
    }

    fn list(&mut self, dir: &Path) -> Option<Vec<Entry>> {
        self.listed += 1;
        if self.listed > MAX_DIRS {
            if self.listed == MAX_DIRS + 1 {
                self.error(
                    dir,
                    format_args!("not searched: more than {MAX_DIRS} directories listed (this one and any after it)"),
                );
            }
            return None;
        }
        let rd = match std::fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) => {
                self.error(dir, format_args!("cannot list directory: {e}"));
                return None;
            }
        };
        let mut out = Vec::new();
        for ent in rd {
            let ent = match ent {
                Ok(e) => e,
                Err(e) => {
                    self.error(dir, format_args!("cannot read directory entry: {e}"));
                    continue;
                }
            };
            let path = ent.path();
            let raw_name = ent.file_name();
            let Some(name) = raw_name.to_str().map(str::to_owned) else {
                // Kafka names are ASCII; a name that is not UTF-8 cannot be one the broker
                // wrote, and matching it lossily would guess (a lossy topic, a lossy
                // segment name). What a broker does with it depends on its JVM's file-name
                // encoding (`sun.jnu.encoding`: `java.io.File` decodes the name with it, and
                // under UTF-8 the decoded name no longer names the file, so
                // `File.isFile`/`isDirectory` are false and the load skips it; a single-byte
                // encoding decodes every byte and the load parses the name): not judged.
                // Said when a broker may read the name, never skipped silently.
                if load_reads_name(&raw_name.to_string_lossy()) {
                    self.error(
                        &path,
                        format_args!(
                            "name {} is not valid UTF-8 (a broker writes ASCII names): not analysed; whether a broker's load skips it or reads its name depends on the JVM's file-name encoding (sun.jnu.encoding), so nothing is predicted of it",
                            crate::escape::os_name(&raw_name)
                        ),
                    );
                }
                continue;
            };
            let ft = match ent.file_type() {
                Ok(ft) if ft.is_symlink() && !self.opts.follow_symlinks => {
                    // Not followed (`--follow` to opt in): the walk stays inside the
                    // given roots. A Kafka-named symlink is said, and kept (unread) for
                    // a partition directory's name checks: the broker's listing follows
                    // it (`File.isFile`), so a name its load cannot parse fails the load
                    // wherever it points. A directory one is skipped quietly, as `rg` does.
                    if kafka_like_name(&name) || parse_leftover_name(&name).is_some() {
                        self.error(
                            &path,
                            "symlink not followed (use --follow, or name the file explicitly)",
                        );
                        out.push(Entry {
                            name,
                            path,
                            is_dir: None,
                            unfollowed: true,
                        });
                    }
                    continue;
                }
                Ok(ft) if ft.is_symlink() => match std::fs::metadata(&path) {
                    Ok(m)
                        if m.is_dir()
                            && let Some(why) = self.symlink_refusal(&path, &m) =>
                    {
                        self.error(&path, why);
                        continue;
                    }
                    Ok(m) => Ok(m.file_type()),
                    Err(e) => Err(format!("cannot follow symlink: {e}")),
                },
                Ok(ft) => Ok(ft),
                Err(e) => Err(format!("cannot stat: {e}")),
            };
            let is_dir = match ft {
                Ok(ft) if ft.is_dir() => Some(true),
                Ok(ft) => match crate::read::segment::special_type(ft) {
                    // FIFOs, sockets, devices: never opened (a FIFO blocks the reader).
                    Some(t) if kafka_like_name(&name) => {
                        let why = crate::read::segment::NotRegularFile(t).to_string();
                        self.error(&path, &why);
                        self.special.insert(path, why);
                        continue;
                    }
                    Some(_) => continue,
                    None => Some(false),
                },
                Err(e) => {
                    self.error(&path, e);
                    None
                }
            };
            out.push(Entry {
                name,
                path,
                is_dir,
                unfollowed: false,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Some(out)
    }

    /// Get or create the log dir at `path`; when created, fill it from `entries` (its
    /// files only; subdirectories are the walker's business).
    fn log_dir(&mut self, path: &Path, canon: PathBuf, entries: Option<&[Entry]>) -> PathBuf {
        if let Some(&i) = self.log_dir_index.get(&canon) {
            return self.inv.log_dirs[i].path.clone();
        }
        let mut ld = LogDir {
            path: path.to_path_buf(),
            ..Default::default()
        };
        if let Some(entries) = entries {
            for e in entries {
                if e.name == ".kafka_cleanshutdown" && (e.is_dir == Some(true) || e.unfollowed) {
                    if clean_shutdown_marker(&e.path) {
                        ld.clean_shutdown = Some(e.path.clone());
                    }
                } else if e.is_dir != Some(true) && !e.unfollowed {
                    ld.add_file(&e.name, e.path.clone());
                } else if e.unfollowed {
                    ld.add_unread(&e.name, e.path.clone(), "symlink not followed");
                }
            }
            // Special files are not in the listing (never opened: a FIFO blocks its
            // reader); the offset checkpoints among them are the log dir's, unread.
            for name in super::OFFSET_CHECKPOINTS {
                let at = path.join(name);
                if let Some(why) = self.special.get(&at) {
                    ld.add_unread(name, at, why);
                }
            }
        }
        ld.leftovers.sort_by(|a, b| a.1.cmp(&b.1));
        ld.unknown.sort();
        self.log_dir_index
            .insert(canon.clone(), self.inv.log_dirs.len());
        self.log_dir_canon.push(canon);
        self.inv.log_dirs.push(ld);
        path.to_path_buf()
    }

    /// If the parent of `path` is a broker log dir (has a marker file), register it (files
    /// only, without walking its other children) and return its path.
    fn parent_log_dir(&mut self, path: &Path) -> Option<PathBuf> {
        let parent = parent_dir(path)?;
        let parent = parent.as_path();
        if !LOG_DIR_MARKERS.iter().any(|m| parent.join(m).is_file()) {
            return None;
        }
        let canon = std::fs::canonicalize(parent).ok()?;
        if let Some(&i) = self.log_dir_index.get(&canon) {
            return Some(self.inv.log_dirs[i].path.clone());
        }
        let entries = self.list(parent)?;
        Some(self.log_dir(parent, canon, Some(&entries)))
    }

    /// Walk a directory. Returns the canonical path when it is a partition directory.
    fn walk(&mut self, path: &Path, depth: usize, parent_is_log_dir: bool) -> Option<PathBuf> {
        let canon = match std::fs::canonicalize(path) {
            Ok(c) => c,
            Err(e) => {
                self.error(path, format_args!("cannot resolve path: {e}"));
                return None;
            }
        };
        if !self.visited.insert(canon.clone()) {
            // Reached again (a path given twice, a parent and its child both given, or a
            // symlink loop): report it as a partition if it was one, never walk it twice.
            let known = self.full_index.contains_key(&canon);
            self.reached += usize::from(known);
            return known.then_some(canon);
        }
        let name = match path.file_name().map(|n| (n, n.to_str())) {
            Some((_, Some(n))) => n.to_owned(),
            Some((raw, None)) => {
                // Only a given path gets here (the walk skips such names): its contents
                // are read, its name is not taken for a topic-partition (lossily).
                self.error(
                    path,
                    format_args!(
                        "directory name {} is not valid UTF-8: no topic-partition is read from it",
                        crate::escape::os_name(raw)
                    ),
                );
                String::new()
            }
            None => String::new(),
        };
        if name == REMOTE_LOG_INDEX_CACHE {
            return None;
        }
        let entries = self.list(path)?;
        let is_log_dir = entries
            .iter()
            .any(|e| e.is_dir == Some(false) && is_log_dir_marker(&e.name));
        if !is_log_dir && let Some(pd) = partition_candidate(&name, &entries, parent_is_log_dir) {
            let mut pd = pd;
            pd.path = path.to_path_buf();
            for e in entries {
                if e.is_dir == Some(false) {
                    pd.add_file(&e.name, e.path);
                } else {
                    pd.unknown.push(e.path);
                }
            }
            pd.sort();
            self.full_index.insert(canon.clone(), self.full.len());
            self.full.push((canon.clone(), pd));
            return Some(canon);
        }
        if depth >= MAX_DEPTH {
            self.error(
                path,
                format_args!("not searched: deeper than {MAX_DEPTH} levels"),
            );
            return None;
        }
        let mut children = Vec::new();
        for e in &entries {
            if e.is_dir == Some(true)
                && let Some(c) = self.walk(&e.path, depth + 1, is_log_dir)
            {
                children.push(c);
            }
        }
        if is_log_dir || children.len() >= 2 {
            let ld = self.log_dir(path, canon, Some(&entries));
            for c in children {
                if let Some(&i) = self.full_index.get(&c) {
                    self.full[i].1.log_dir.get_or_insert_with(|| ld.clone());
                }
            }
        }
        None
    }

    fn single_file(&mut self, path: &Path) {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let parent = parent_dir(path).unwrap_or_else(|| PathBuf::from("."));
        let parent = parent.as_path();
        let parent_canon = match std::fs::canonicalize(parent) {
            Ok(c) => c,
            Err(e) => {
                self.error(path, format_args!("cannot resolve parent directory: {e}"));
                return;
            }
        };
        if is_log_dir_marker(&name) || name == ".lock" {
            let lp = self.log_dir(parent, parent_canon.clone(), None);
            let i = self.log_dir_index[&parent_canon];
            debug_assert_eq!(self.inv.log_dirs[i].path, lp);
            let ld = &mut self.inv.log_dirs[i];
            let before = ld.unknown.len();
            ld.add_file(&name, path.to_path_buf());
            // Given twice: keep one.
            if ld.unknown.len() > before && ld.unknown.last().map(|p| p.as_path()) == Some(path) {
                ld.unknown.pop();
            }
            return;
        }
        let i = match self.partial_index.get(&parent_canon) {
            Some(&i) => i,
            None => {
                // A name that is not UTF-8 is not taken for a topic-partition (lossily).
                let parent_name = parent
                    .file_name()
                    .or_else(|| parent_canon.file_name())
                    .and_then(|n| n.to_str())
                    .unwrap_or_default();
                let (tp, kind) = match parse_partition_dir_name(parent_name) {
                    Some((tp, k)) => (Some(tp), Some(k)),
                    None => (None, None),
                };
                let log_dir = self.parent_log_dir(parent);
                let pd = PartitionDir {
                    path: parent.to_path_buf(),
                    tp,
                    kind,
                    log_dir,
                    partial: true,
                    ..Default::default()
                };
                self.partial_index
                    .insert(parent_canon.clone(), self.partial.len());
                self.partial.push((parent_canon, pd));
                self.partial.len() - 1
            }
        };
        // Given twice: keep one (a set, not a search of the directory's files per file).
        if self.single_files.insert(path.to_path_buf()) {
            self.partial[i].1.add_given_file(&name, path.to_path_buf());
        }
    }

    fn finish(mut self) -> Inventory {
        let mut parts: Vec<(PathBuf, PartitionDir)> = self.full;
        for (canon, mut pd) in self.partial {
            if !self.full_index.contains_key(&canon) {
                pd.sort();
                parts.push((canon, pd));
            }
        }
        for (canon, pd) in &mut parts {
            if pd.log_dir.is_none()
                && let Some(parent) = canon.parent()
                && let Some(&i) = self.log_dir_index.get(parent)
            {
                pd.log_dir = Some(self.inv.log_dirs[i].path.clone());
            }
        }
        let mut partitions: Vec<PartitionDir> = Vec::with_capacity(parts.len());
        partitions.extend(parts.into_iter().map(|(_, p)| p));
        partitions.sort_by(|a, b| (&a.tp, &a.path).cmp(&(&b.tp, &b.path)));
        self.inv.partitions = partitions;
        self.inv.log_dirs.sort_by(|a, b| a.path.cmp(&b.path));
        // Every command reads each log dir's `meta.properties` (its cluster and node: the
        // joins and identities rest on it) and takes one it cannot open for none: that is
        // said, as for any file the analysis needs and cannot read. So are the offset
        // checkpoints the partition stage reads (`partition::recovery::LogDirFiles`: the
        // recovery point and log start the recovery model starts from, the high watermark
        // the lost-data check compares with, the cleaner's offsets that say a topic is
        // compacted): one that cannot be opened was taken for an absent one in silence.
        let unopened: Vec<(PathBuf, String)> = self
            .inv
            .log_dirs
            .iter()
            .flat_map(|ld| {
                [
                    &ld.meta_properties,
                    &ld.recovery_point_checkpoint,
                    &ld.log_start_offset_checkpoint,
                    &ld.replication_offset_checkpoint,
                    &ld.cleaner_offset_checkpoint,
                ]
            })
            .filter_map(Option::as_ref)
            .filter_map(|m| match std::fs::File::open(m) {
                Err(e) => Some((m.clone(), e.to_string())),
                // Larger than any properties or checkpoint file klogscan reads (the bound
                // `FileClass::Checkpoint` sets): read as absent, so said.
                Ok(f) => {
                    let (max, what) = crate::read::segment::FileClass::Checkpoint.max_len();
                    let len = f.metadata().map_or(0, |md| md.len());
                    (len > max).then(|| {
                        (
                            m.clone(),
                            format!("{len} bytes: larger than {what}: not read"),
                        )
                    })
                }
            })
            .collect();
        self.inv.errors.extend(unopened);
        self.inv
    }
}

/// The parent directory of `path` (`.` for a bare relative name; `None` at the root).
fn parent_dir(path: &Path) -> Option<PathBuf> {
    match path.parent() {
        Some(p) if p.as_os_str().is_empty() => Some(PathBuf::from(".")),
        Some(p) => Some(p.to_path_buf()),
        None => None,
    }
}

/// Decide whether a directory (not a log dir) is a partition directory. See [`discover`].
fn partition_candidate(
    name: &str,
    entries: &[Entry],
    parent_is_log_dir: bool,
) -> Option<PartitionDir> {
    let mut has_kafka = false;
    let mut has_segment = false;
    let mut has_subdir = false;
    for e in entries {
        match e.is_dir {
            Some(true) => has_subdir = true,
            Some(false) => match classify_partition_file(&e.name) {
                PartFile::Numbered(_, k) | PartFile::Noncanonical(_, k) => {
                    has_kafka = true;
                    has_segment |= k.is_segment_file();
                }
                PartFile::Leftover(_, inner) => has_kafka |= inner,
                PartFile::Unknown => {}
                _ => has_kafka = true,
            },
            None => {}
        }
    }
    match parse_partition_dir_name(name) {
        Some((tp, kind)) if has_kafka || (parent_is_log_dir && !has_subdir) => Some(PartitionDir {
            tp: Some(tp),
            kind: Some(kind),
            ..Default::default()
        }),
        None if has_segment && name != REMOTE_LOG_INDEX_CACHE => Some(PartitionDir::default()),
        _ => None,
    }
}

/// Find every partition directory and log dir under `paths`, known by the names `LocalLog`
/// and `LogFileUtils` give them. Never fails: paths
/// that cannot be read are listed in [`Inventory::errors`].
///
/// Each path may be a broker log dir, a partition dir, a single file, or any directory
/// above them (searched down to [`MAX_DEPTH`] levels). The rules:
///
/// * **Log dir**: a directory holding at least one of [`LOG_DIR_MARKERS`] (or its `.tmp`).
///   A directory without markers that holds two or more partition directories is listed
///   as a log dir too ([`LogDir::has_markers`] is false then). Its partitions get
///   `log_dir` set. A partition dir given directly whose parent has markers gets that
///   parent as its log dir (the parent's files are listed, its other children are not).
/// * **Partition dir**: a directory that is not a log dir and
///   - whose name parses ([`parse_partition_dir_name`]) and which holds at least one
///     Kafka partition file (segment/index/snapshot/`leader-epoch-checkpoint`/
///     `partition.metadata`/KRaft snapshot/`quorum-state`, or a leftover of one), or,
///     when its parent is a log dir with markers, which holds no subdirectory (an empty
///     partition is still a partition there, as for the broker); a name-alike such as
///     `broker-1` holding other directories is searched instead;
///   - or whose name does not parse but which holds segment files (`<n>.log/.index/
///     .timeindex/.txnindex`): listed with `tp: None` (a renamed copy, a test fixture).
///   - its segments are the files of the broker's names (`LogFileUtils.logFile`: the base
///     offset in 20 digits); a segment file under another name of an offset (`5.log`,
///     `…0500.copy.log`: [`noncanonical_segment_name`]) is never read by the broker and goes
///     to `unknown` (a file given explicitly in the digits form is read as given).
///   - a partition dir is not searched further; its subdirectories go to `unknown`.
/// * `remote-log-index-cache` is skipped (`LogManager.loadLogs` skips it by name); given
///   directly inside a log dir (a glob of the log dir), it lists that log dir as a log-dir
///   file given alone does, and elsewhere it is an input error that says what it is.
///   `__cluster_metadata-0` is a partition dir.
/// * A single file is put in a `partial` partition dir for its parent directory (the
///   topic-partition comes from the parent's name when it parses); several files of the
///   same directory share one partial entry, which is dropped when the whole directory
///   is also found. Unrecognised names go to its `unknown`. A log-dir file (e.g.
///   `meta.properties`) given alone fills a log dir for its parent.
/// * Directories are deduplicated by canonical path (so a dir and its parent may both be
///   given). Symlinks met during the walk are not followed (see
///   [`DiscoverOptions::follow_symlinks`]; a Kafka-named one is listed in
///   [`Inventory::errors`], and in a partition directory's `unknown` for its name checks,
///   never read); given paths are. A directory is never walked twice (no loops).
/// * Only directories and regular files are listed: a FIFO, socket or device named like a
///   Kafka file is an [`Inventory::errors`] entry (never opened), as is a name that is not
///   valid UTF-8 and that a broker may read (a Kafka file's, a leftover's, a partition
///   directory's; its bytes that are not UTF-8 written `\xNN`): never matched lossily. A
///   directory given by such a name is walked, but no topic-partition is read from its name.
/// * Output: partitions sorted by (topic, partition, path) (unnamed ones first), segments
///   by base offset, snapshots by offset, log dirs by path.
pub fn discover(paths: &[PathBuf]) -> Inventory {
    discover_with(paths, DiscoverOptions::default())
}

/// [`discover`] with options (symlink following).
pub fn discover_with(paths: &[PathBuf], opts: DiscoverOptions) -> Inventory {
    let mut w = Walker {
        opts,
        ..Default::default()
    };
    for p in paths {
        // `.`, `..` and `dir/..` have no file name: resolve them, or a partition dir given
        // that way would lose its topic-partition (and its parent log dir).
        let resolved;
        let p = if p.file_name().is_none() {
            resolved = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
            &resolved
        } else {
            p
        };
        let meta = match std::fs::metadata(p) {
            Ok(m) => m,
            Err(e) => {
                w.input_error(p, format_args!("cannot stat: {e}"));
                continue;
            }
        };
        if meta.is_dir() {
            #[cfg(unix)]
            let dev = std::os::unix::fs::MetadataExt::dev(&meta);
            #[cfg(not(unix))]
            let dev = 0;
            w.root = std::fs::canonicalize(p).ok().map(|c| (dev, c));
            let seen = std::fs::canonicalize(p).is_ok_and(|c| w.visited.contains(&c));
            // An input that adds no partition and no log dir, and had no read error, is not
            // Kafka data.
            let (found, errors) = (w.found(), w.inv.errors.len());
            let parent_log =
                parent_dir(p).is_some_and(|q| LOG_DIR_MARKERS.iter().any(|m| q.join(m).is_file()));
            if let Some(canon) = w.walk(p, 0, parent_log)
                && parent_log
                && let Some(ld) = w.parent_log_dir(p)
                && let Some(&i) = w.full_index.get(&canon)
            {
                w.full[i].1.log_dir.get_or_insert(ld);
            }
            let index_cache = p.file_name().is_some_and(|n| n == REMOTE_LOG_INDEX_CACHE);
            if index_cache && parent_log {
                // Part of its log dir, as a log-dir file given alone is (`dir/*` of a tiered
                // broker's log dir names it): listed, never a partition.
                w.parent_log_dir(p);
            } else if !seen && w.found() == found {
                let unread = w.inv.errors.len() - errors;
                w.input_error(
                    p,
                    if index_cache {
                        INDEX_CACHE_ALONE.to_string()
                    } else if unread == 0 {
                        "not Kafka data: no partition directory or broker log dir found under it"
                            .to_string()
                    } else {
                        format!(
                            "not Kafka data: no partition directory or broker log dir found under it ({unread} path(s) under it could not be read)"
                        )
                    },
                );
            }
        } else if let Err(why) = classify_input_file(p) {
            w.input_error(p, why);
        } else {
            w.single_file(p);
        }
    }
    w.finish()
}

/// Why a `remote-log-index-cache` given outside a log dir is not analysed.
const INDEX_CACHE_ALONE: &str = "not a partition: a broker's remote index cache (RemoteIndexCache: copies of the indexes of the remote segments it fetched, which LogManager.loadLogs never loads as a log); give the log dir that holds it, with --remote-storage for the remote segments";

/// Whether a `.kafka_cleanshutdown` that is no regular file still says "clean" to
/// `LogManager.loadLogs`: `CleanShutdownFileHandler.exists` is `File.exists` (true for a
/// directory, and for a symlink whose target exists: it follows it), then `delete`
/// (`Files.deleteIfExists`, which removes a symlink itself or an empty directory; a
/// directory with entries throws, an `IOException` that takes the log dir offline — not
/// modelled: such a directory is not read as a clean shutdown). Only the entry's own
/// metadata and listing are read, never a file below it.
fn clean_shutdown_marker(path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::metadata(path).is_ok(),
        Ok(m) if m.is_dir() => std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none()),
        _ => false,
    }
}
