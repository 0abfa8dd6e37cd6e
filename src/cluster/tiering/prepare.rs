//! `--remote-storage` made ready for one run, the same way for `scan`, `collect` and
//! `merge`: a directory is used as given; an object-store URL is fetched into a temporary
//! directory (`remote-object-store` feature, `objects`) kept while the
//! [`RemoteStorage`] lives; anything else — a path that does not exist, a file, an
//! archive — is an input error (the report's `errors`, exit 2) and the remote storage is
//! not read: no remote segment is replayed and none is said missing, since nothing
//! about the storage is known.

use super::MetadataReplay;
use super::history;
use crate::cluster::report::ScanReport;
use crate::discover::layout::Inventory;
use crate::partition::remote::RemoteHistory;
use crate::partition::results::ScanOptions;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// The remote storage of one run.
pub struct RemoteStorage {
    /// The directory read (`None`: none given, or the one given cannot be read).
    root: Option<PathBuf>,
    /// Why the remote storage given cannot be read: `(as given, why)`.
    error: Option<(PathBuf, String)>,
    /// Before the per-partition stage: the remote log metadata replayed from the
    /// inventory's segments (when a usable storage was given), what the remote history
    /// is chosen from; taken by [`Self::history`], so not held through the scan.
    replayed: Option<MetadataReplay>,
    #[cfg(feature = "remote-object-store-core")]
    _dir: Option<tempfile::TempDir>,
}

impl RemoteStorage {
    /// Before the per-partition stage (`scan`, `collect`): the `__remote_log_metadata`
    /// partitions of `inv` are replayed from their segments, once, when a remote storage
    /// is given — the objects a URL's mirror fetches and the remote history
    /// ([`Self::history`]) both come from that replay.
    pub fn before_scan(inv: &Inventory, opts: &ScanOptions) -> Self {
        Self::before_scan_with(inv, &[], opts)
    }

    /// [`Self::before_scan`] with other copies of `__remote_log_metadata` partitions than
    /// the inventory's (`collect --remote-log-metadata`: another broker's), read for the
    /// remote history only ([`MetadataReplay::with_copies`]).
    pub fn before_scan_with(
        inv: &Inventory,
        copies: &[crate::discover::layout::PartitionDir],
        opts: &ScanOptions,
    ) -> Self {
        let replay = || MetadataReplay::with_copies(&ScanReport::default(), inv, copies, opts);
        let Some(given) = &opts.remote_storage else {
            return Self::prepare(opts, None);
        };
        if super::storage::is_url(&given.to_string_lossy()) {
            // The mirror fetches the objects the replay names.
            let replayed = replay();
            let mut out = Self::prepare(opts, Some(&replayed));
            out.replayed = out.root.is_some().then_some(replayed);
            return out;
        }
        // A directory is checked first: one that cannot be read needs no replay.
        let mut out = Self::prepare(opts, None);
        if out.root.is_some() {
            out.replayed = Some(replay());
        }
        out
    }

    /// After the per-partition stage (`merge`): the objects a URL's mirror fetches are
    /// those `replayed` (the run's one replay, which the cluster stage reads too) names.
    pub fn after_scan(opts: &ScanOptions, replayed: &MetadataReplay) -> Self {
        Self::prepare(opts, Some(replayed))
    }

    fn prepare(opts: &ScanOptions, replayed: Option<&MetadataReplay>) -> Self {
        let mut out = RemoteStorage {
            root: None,
            error: None,
            replayed: None,
            #[cfg(feature = "remote-object-store-core")]
            _dir: None,
        };
        let Some(given) = &opts.remote_storage else {
            return out;
        };
        let text = given.to_string_lossy();
        if !super::storage::is_url(&text) {
            match unusable_dir(given) {
                Some(why) => out.error = Some((given.clone(), why)),
                None => out.root = Some(given.clone()),
            }
            return out;
        }
        #[cfg(feature = "remote-object-store-core")]
        {
            let empty = MetadataReplay::default();
            match super::objects::mirror(&text, replayed.unwrap_or(&empty)) {
                Ok(dir) => {
                    out.root = Some(dir.path().to_path_buf());
                    out._dir = Some(dir);
                }
                Err(e) => out.error = Some((given.clone(), e)),
            }
        }
        #[cfg(not(feature = "remote-object-store-core"))]
        {
            let _ = replayed;
            out.error = Some((
                given.clone(),
                "an object store URL needs klogscan built with the `remote-object-store` feature"
                    .into(),
            ));
        }
        out
    }

    /// `given` with the remote storage this run reads: the directory given, the one a URL
    /// was fetched into, or none when the one given cannot be read.
    pub fn options<'a>(&self, given: &'a ScanOptions) -> Cow<'a, ScanOptions> {
        if given.remote_storage == self.root {
            return Cow::Borrowed(given);
        }
        let mut run = given.clone();
        run.remote_storage = self.root.clone();
        Cow::Owned(run)
    }

    /// Whether a remote storage is read (the remote history is replayed, the objects are
    /// walked).
    pub fn is_read(&self) -> bool {
        self.root.is_some()
    }

    /// Why the remote storage given cannot be read: `(as given, why)`.
    pub fn error(&self) -> Option<&(PathBuf, String)> {
        self.error.as_ref()
    }

    /// List why the remote storage cannot be read among `report`'s input errors.
    pub fn record(&self, report: &mut ScanReport) {
        report.errors.extend(self.error.clone());
    }

    /// The remote segments each tiered replica of `inv` replays before its local log
    /// (empty unless made by [`Self::before_scan`] with a storage that is read).
    pub fn history(&mut self, inv: &Inventory, opts: &ScanOptions) -> RemoteHistory {
        // The replay is read here only: it is not held through the scan.
        match (&self.root, self.replayed.take()) {
            (Some(root), Some(replayed)) => history::remote_history(root, inv, opts, &replayed),
            _ => RemoteHistory::default(),
        }
    }
}

/// Why `root`, given as `--remote-storage` and not a URL, is not a directory to read.
fn unusable_dir(root: &Path) -> Option<String> {
    const IGNORED: &str =
        "the remote storage is not read (no remote segment is replayed or checked)";
    let meta = match std::fs::metadata(root) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Some(format!("--remote-storage: no such directory; {IGNORED}"));
        }
        Err(e) => return Some(format!("--remote-storage: cannot be read: {e}; {IGNORED}")),
    };
    if meta.is_dir() {
        return match std::fs::read_dir(root) {
            Ok(_) => None,
            Err(e) => Some(format!("--remote-storage: cannot be read: {e}; {IGNORED}")),
        };
    }
    if crate::discover::archive::archive_kind(root)
        .ok()
        .flatten()
        .is_some()
    {
        return Some(format!(
            "--remote-storage: an archive, which klogscan reads as an input but not as the remote storage (its objects are read by name, in place): extract it and give the directory; {IGNORED}"
        ));
    }
    Some(format!(
        "--remote-storage: not a directory (a LocalTieredStorage or Aiven plugin directory, or an object store URL); {IGNORED}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(root: &Path) -> RemoteStorage {
        let opts = ScanOptions::default().with_remote_storage(root.to_path_buf());
        RemoteStorage::after_scan(&opts, &MetadataReplay::default())
    }

    #[test]
    fn a_directory_is_read_as_given() {
        let d = tempfile::tempdir().unwrap();
        let r = prepared(d.path());
        assert!(r.is_read() && r.error().is_none());
        let opts = ScanOptions::default().with_remote_storage(d.path().to_path_buf());
        assert!(matches!(r.options(&opts), Cow::Borrowed(_)));
    }

    #[test]
    fn a_missing_path_a_file_and_an_archive_are_input_errors() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("notes.txt");
        std::fs::write(&file, "not a storage").unwrap();
        let tar = d.path().join("remote.tar");
        let mut b = tar::Builder::new(std::fs::File::create(&tar).unwrap());
        b.append_path_with_name(&file, "kafka-tiered-storage/notes.txt")
            .unwrap();
        b.finish().unwrap();
        drop(b);
        for (path, says) in [
            (d.path().join("absent"), "no such directory"),
            (file, "not a directory"),
            (tar, "an archive"),
        ] {
            let r = prepared(&path);
            assert!(!r.is_read());
            let (p, why) = r.error().unwrap();
            assert_eq!(p, &path);
            assert!(why.contains(says), "{why}");
            assert!(why.contains("the remote storage is not read"), "{why}");
            let opts = ScanOptions::default().with_remote_storage(path.clone());
            assert_eq!(r.options(&opts).remote_storage, None);
            let mut report = ScanReport::default();
            r.record(&mut report);
            assert_eq!(report.errors.len(), 1);
        }
    }
}
