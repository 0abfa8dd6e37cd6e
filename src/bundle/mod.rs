//! Evidence bundles: the per-partition stage on the machine that holds the data, the
//! cluster stage anywhere.
//!
//! [`collect`] runs discovery and the per-partition stage over one broker's log dirs
//! and writes what the cluster stage and the renderers read into one file (the bundle:
//! versioned, zstd-compressed, checksummed, see `file`); [`merge`] reads any number of
//! bundles and runs the cluster stage over them. The merged report is the report `scan`
//! gives over the same directories on one machine. What a bundle holds, and what it
//! leaves on the broker (user topics' keys and values), is in `docs/cluster.md`.

mod collect;
mod content;
mod file;
mod fingerprint;
mod merge;
mod relabel;
mod source;

pub use collect::{CollectSummary, collect, collect_with};
pub use content::{
    DirFiles, FileInventory, Header, LogDirIdentity, PartitionDirFiles, RecordedOptions,
};
pub use file::{FORMAT_VERSION, FileError, MAGIC, OLDEST_READ_VERSION};
pub use fingerprint::{
    FingerprintError, decode as decode_fingerprints, encode as encode_fingerprints,
};
pub use merge::{
    Bundle, Bundles, Merged, bundle_files, merge, merge_bundles, merge_streaming, read_bundles,
    read_bundles_for,
};
pub(crate) use merge::{Staged, stage};

use std::path::{Path, PathBuf};

/// Why bundles could not be read or merged; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// The file is not a readable bundle (not one, truncated, corrupt, another format
    /// version, or an I/O error).
    /// The message holds the [`FileError`]'s (not also chained as its `source()`: a
    /// printer of the chain would repeat it).
    #[error("{}: {error}", path.display())]
    File { path: PathBuf, error: FileError },
    /// A frame does not hold what it should.
    #[error("{}: corrupt bundle: {message}", path.display())]
    Content { path: PathBuf, message: String },
    /// Results of another version.
    #[error(
        "{}: bundle written by klogscan {tool_version} (partition results v{}, cluster inputs v{}); this klogscan ({}) reads v{} and v{}: collect again with this version",
        path.display(), found.0, found.1, env!("CARGO_PKG_VERSION"),
        crate::results::RESULT_FORMAT_VERSION, crate::partition::walked::FORMAT_VERSION
    )]
    Version {
        path: PathBuf,
        tool_version: String,
        found: (u32, u32),
    },
    /// Bundles collected with different per-partition options.
    #[error("{}: collected with other options than {} (--no-crc, --deep, --now, --hanging-after, --max-bytes, --compacted, --remote-storage, …): collect every broker with the same ones", path.display(), first.display())]
    Options { path: PathBuf, first: PathBuf },
    /// Two bundles holding the same directory, of one broker (or of none known).
    #[error("{} and {} both hold {dir} and their meta.properties name the same broker (or none): bundles of one merge hold different directories or come from different brokers (cluster id, node id)", other.display(), path.display())]
    Overlap {
        path: PathBuf,
        other: PathBuf,
        dir: String,
    },
    /// Bundles whose remote history does not match the merge's `--remote-storage`: their
    /// collects replayed no remote segment while the merge is given a remote storage
    /// (`collected` false), or the reverse.
    #[error("{}: {}", path.display(), if *collected {
        "collected with --remote-storage (its tiered partitions' remote segments replayed): give the merge --remote-storage too (the same storage), as the scan it stands for was"
    } else {
        "collected without --remote-storage (or with one it could not read): the remote history was not replayed at collect, so the merge cannot give what scan --remote-storage gives; collect again with --remote-storage (the same storage), or merge without it"
    })]
    RemoteStorage { path: PathBuf, collected: bool },
    /// The merge's `--remote-storage` cannot be read (named, with why, as a scan says it)
    /// while the bundles' collects replayed the remote history from one.
    #[error("{}: {why}", path.display())]
    RemoteStorageUnread { path: PathBuf, why: String },
}

impl BundleError {
    fn file(path: &Path, error: FileError) -> Self {
        BundleError::File {
            path: path.to_path_buf(),
            error,
        }
    }

    /// The file the error is about (for [`BundleError::RemoteStorageUnread`], the remote
    /// storage).
    pub fn path(&self) -> &Path {
        match self {
            BundleError::File { path, .. }
            | BundleError::Content { path, .. }
            | BundleError::Version { path, .. }
            | BundleError::Options { path, .. }
            | BundleError::Overlap { path, .. }
            | BundleError::RemoteStorage { path, .. }
            | BundleError::RemoteStorageUnread { path, .. } => path,
        }
    }
}
