//! Archives as input: `.tar`, `.tar.gz`/`.tgz`, `.tar.zst` and `.zip` of broker data dirs.
//!
//! The archive is opened read-only and streamed once: its Kafka files (segments, indexes,
//! snapshots, checkpoints, `meta.properties`, `partition.metadata`, the clean-shutdown
//! marker) are copied into a private temporary directory, 64 KiB at a time, and scanned
//! there like any directory; the rest of the archive is skipped. Memory stays bounded
//! (the decompressor's window and one copy buffer); disk use is the size of those Kafka
//! files, capped by [`Limits::max_total_bytes`] (the scan says what the cap left out).
//! The temporary directory is removed when the [`Prepared`] inputs are dropped.
//!
//! Entries that would land outside the directory (absolute paths, `..`), links and
//! special files are refused, and so is an entry larger than [`Limits::max_entry_bytes`];
//! each refusal is reported as a warning. Paths in the report are mapped back to the
//! archive: `broker1.tgz!/data/payments-3/00000000000000000000.log`.
//!
//! Any other input is passed on unchanged: the layout reports a file that is not Kafka data
//! as an input error. An archive that cannot be read is one too ([`Prepared::failed`]).

use crate::finding::Finding;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Component, Path, PathBuf};

/// Bounds on what an archive may put on disk.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Total bytes extracted from all archives (the rest is skipped, with a warning).
    pub max_total_bytes: u64,
    /// One entry larger than this is refused (a Kafka segment is 1 GiB by default).
    pub max_entry_bytes: u64,
    /// Entries read (files, directories, skipped ones) per archive.
    pub max_entries: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_total_bytes: 64 << 30,
            max_entry_bytes: 16 << 30,
            max_entries: 10_000_000,
        }
    }
}

/// The archive formats recognised (by content, not by name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveKind {
    Tar,
    TarGz,
    TarZst,
    Zip,
}

/// The inputs ready to scan: archives replaced by the directories they were extracted to.
#[derive(Debug)]
pub struct Prepared {
    /// What to scan, in the order given.
    pub paths: Vec<PathBuf>,
    /// `(temporary root, archive name as given)` for every archive.
    maps: Vec<(String, String)>,
    /// Warnings to print on stderr (refused entries, caps reached).
    pub warnings: Vec<String>,
    /// Archives that could not be read, with why: input errors (the report's `errors`),
    /// the other inputs are still analysed.
    pub failed: Vec<(PathBuf, String)>,
    temp: Option<TempDir>,
}

/// The temporary directory for archives could not be made.
#[derive(Debug, thiserror::Error)]
#[error("cannot create a temporary directory for archives: {0}")]
pub struct TempError(io::Error);

/// Recognise an archive by its first bytes (tar: the `ustar` magic, or a `.tar` name).
pub(crate) fn archive_kind(path: &Path) -> io::Result<Option<ArchiveKind>> {
    let mut head = [0u8; 262];
    let mut f = File::open(path)?;
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..])? {
            0 => break,
            k => n += k,
        }
    }
    let h = &head[..n];
    Ok(if h.starts_with(&[0x1f, 0x8b]) {
        Some(ArchiveKind::TarGz)
    } else if h.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Some(ArchiveKind::TarZst)
    } else if h.starts_with(b"PK\x03\x04") || h.starts_with(b"PK\x05\x06") {
        Some(ArchiveKind::Zip)
    } else if h.len() >= 262 && &h[257..262] == b"ustar"
        || path.extension().is_some_and(|e| e == "tar")
    {
        Some(ArchiveKind::Tar)
    } else {
        None
    })
}

/// Is `name` a file a broker keeps in a log dir or a partition dir?
pub(crate) fn is_kafka_file_name(name: &str) -> bool {
    const EXTS: [&str; 10] = [
        "log",
        "index",
        "timeindex",
        "txnindex",
        "snapshot",
        "checkpoint",
        "deleted",
        "cleaned",
        "swap",
        "tmp",
    ];
    let ext_ok = name
        .rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && EXTS.contains(&ext));
    ext_ok
        || name.ends_with("-checkpoint")
        || matches!(
            name,
            "meta.properties" | "partition.metadata" | ".kafka_cleanshutdown"
        )
}

/// Extract the archives among the inputs; every other input is passed on unchanged.
pub fn prepare(inputs: &[PathBuf], limits: &Limits) -> Result<Prepared, TempError> {
    let selected: Vec<(PathBuf, Vec<PathBuf>)> =
        inputs.iter().map(|i| (i.clone(), Vec::new())).collect();
    prepare_selected(&selected, limits)
}

/// [`prepare`], each archive restricted to the entries under the given directories inside
/// it (none: every Kafka file); what `dump archive!/dir/file` needs.
pub(crate) fn prepare_selected(
    inputs: &[(PathBuf, Vec<PathBuf>)],
    limits: &Limits,
) -> Result<Prepared, TempError> {
    let mut p = Prepared {
        paths: Vec::with_capacity(inputs.len()),
        maps: Vec::new(),
        warnings: Vec::new(),
        failed: Vec::new(),
        temp: None,
    };
    let mut budget = limits.max_total_bytes;
    for (input, only) in inputs {
        let kind = if input.is_file() {
            archive_kind(input).ok().flatten()
        } else {
            None
        };
        let Some(kind) = kind else {
            p.paths.push(input.clone());
            continue;
        };
        let shown = input.display().to_string();
        if p.temp.is_none() {
            p.temp = Some(TempDir::new().map_err(TempError)?);
        }
        let root = p
            .temp
            .as_ref()
            .map(|t| t.path.join(p.maps.len().to_string()))
            .unwrap_or_default();
        std::fs::create_dir_all(&root).map_err(TempError)?;
        let mut x = Extractor {
            root: &root,
            shown: &shown,
            limits,
            budget: &mut budget,
            warnings: &mut p.warnings,
            entries: 0,
            files: 0,
            only,
        };
        let res = match kind {
            ArchiveKind::Zip => x.zip(input),
            _ => x.tar(input, kind),
        };
        let files = x.files;
        if let Err(e) = res {
            p.failed
                .push((input.clone(), format!("cannot read it as an archive: {e}")));
            let _ = std::fs::remove_dir_all(&root);
            p.maps
                .push((root.display().to_string(), format!("{shown}!")));
            continue;
        }
        if files == 0 {
            p.warnings
                .push(format!("{shown}: the archive holds no Kafka files"));
        }
        p.maps
            .push((root.display().to_string(), format!("{shown}!")));
        p.paths.push(root);
    }
    Ok(p)
}

struct Extractor<'a> {
    root: &'a Path,
    shown: &'a str,
    limits: &'a Limits,
    budget: &'a mut u64,
    warnings: &'a mut Vec<String>,
    entries: u64,
    files: u64,
    /// Only entries under these directories (empty: all).
    only: &'a [PathBuf],
}

/// The entry's path below the root, or why it is refused.
pub(crate) fn safe_relative(name: &Path) -> Result<PathBuf, &'static str> {
    let mut out = PathBuf::new();
    for c in name.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            Component::ParentDir => return Err("its path climbs out with `..`"),
            Component::RootDir | Component::Prefix(_) => return Err("its path is absolute"),
        }
    }
    if out.as_os_str().is_empty() {
        return Err("its path is empty");
    }
    Ok(out)
}

impl Extractor<'_> {
    fn warn(&mut self, entry: &str, why: &str) {
        if self.warnings.len() < 1000 {
            self.warnings
                .push(format!("{}!/{entry}: skipped: {why}", self.shown));
        }
    }

    /// Decide on one entry; `Some(destination)` when it is to be copied.
    fn admit(&mut self, name: &Path, regular: bool, size: u64) -> io::Result<Option<PathBuf>> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(io::Error::other(format!(
                "more than {} entries",
                self.limits.max_entries
            )));
        }
        let shown = name.display().to_string();
        let rel = match safe_relative(name) {
            Ok(r) => r,
            Err(why) => {
                self.warn(&shown, why);
                return Ok(None);
            }
        };
        let file_name = rel
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !self.only.is_empty() && !self.only.iter().any(|d| rel.starts_with(d)) {
            return Ok(None);
        }
        if !regular || !is_kafka_file_name(&file_name) {
            if !regular && is_kafka_file_name(&file_name) {
                self.warn(&shown, "a link or special file, not a regular file");
            }
            return Ok(None);
        }
        if size > self.limits.max_entry_bytes {
            self.warn(
                &shown,
                &format!(
                    "{size} bytes, above the {} bytes allowed for one file",
                    self.limits.max_entry_bytes
                ),
            );
            return Ok(None);
        }
        if size > *self.budget {
            self.warn(
                &shown,
                "the extraction cap (total bytes of Kafka files taken from archives) is reached: this file and later ones are not analysed",
            );
            return Ok(None);
        }
        let dest = self.root.join(&rel);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)?;
        }
        Ok(Some(dest))
    }

    fn copy(&mut self, from: &mut dyn Read, dest: &Path, size: u64) -> io::Result<()> {
        let mut out = io::BufWriter::with_capacity(64 << 10, File::create(dest)?);
        let n = io::copy(&mut from.take(size), &mut out)?;
        io::Write::flush(&mut out)?;
        *self.budget = self.budget.saturating_sub(n);
        self.files += 1;
        Ok(())
    }

    fn tar(&mut self, path: &Path, kind: ArchiveKind) -> io::Result<()> {
        let file = BufReader::with_capacity(64 << 10, File::open(path)?);
        let reader: Box<dyn Read> = match kind {
            ArchiveKind::TarGz => Box::new(flate2::read::MultiGzDecoder::new(file)),
            ArchiveKind::TarZst => Box::new(zstd::stream::read::Decoder::with_buffer(file)?),
            _ => Box::new(file),
        };
        let mut ar = tar::Archive::new(reader);
        for entry in ar.entries()? {
            let mut entry = entry?;
            let name = entry.path()?.into_owned();
            let regular = entry.header().entry_type().is_file();
            let size = entry.header().size()?;
            if let Some(dest) = self.admit(&name, regular, size)? {
                self.copy(&mut entry, &dest, size)?;
            }
        }
        Ok(())
    }

    fn zip(&mut self, path: &Path) -> io::Result<()> {
        let file = BufReader::new(File::open(path)?);
        let mut ar = zip::ZipArchive::new(file).map_err(io::Error::other)?;
        for i in 0..ar.len() {
            let mut entry = ar.by_index(i).map_err(io::Error::other)?;
            let raw = PathBuf::from(entry.name().map_err(io::Error::other)?.as_ref());
            let link = entry.unix_mode().is_some_and(|m| m & 0o170000 == 0o120000);
            let regular = entry.is_file() && !link;
            let size = entry.size();
            if let Some(dest) = self.admit(&raw, regular, size)? {
                self.copy(&mut entry, &dest, size)?;
            }
        }
        Ok(())
    }
}

impl Prepared {
    /// True when an archive was among the inputs.
    pub fn has_archives(&self) -> bool {
        !self.maps.is_empty()
    }

    /// Where `archive` (as given) was extracted, unless it could not be read.
    pub fn extracted(&self, archive: &Path) -> Option<&Path> {
        let shown = format!("{}!", archive.display());
        let (tmp, _) = self.maps.iter().find(|(_, s)| *s == shown)?;
        self.paths
            .iter()
            .find(|p| p.as_os_str() == std::ffi::OsStr::new(tmp.as_str()))
            .map(PathBuf::as_path)
    }

    /// `(temporary root, archive name as shown)` for every archive, for output rewriting.
    pub fn roots(&self) -> &[(String, String)] {
        &self.maps
    }

    /// `s` with every temporary path replaced by the archive path it came from.
    pub fn display(&self, s: &str) -> String {
        let mut out = s.to_string();
        for (tmp, shown) in &self.maps {
            if out.contains(tmp.as_str()) {
                out = out.replace(tmp.as_str(), shown);
            }
        }
        out
    }

    pub(crate) fn fix(&self, s: &mut String) {
        if self.maps.iter().any(|(t, _)| s.contains(t.as_str())) {
            *s = self.display(s);
        }
    }

    pub(crate) fn fix_path(&self, p: &mut PathBuf) {
        let s = p.display().to_string();
        let d = self.display(&s);
        if d != s {
            *p = PathBuf::from(d);
        }
    }

    /// Map every string of a JSON value back to the archives (a partition line that
    /// `scan --format jsonl` writes before the report is complete).
    pub fn fix_value(&self, v: &mut serde_json::Value) {
        if !self.maps.is_empty() {
            self.fix_json(v);
        }
    }

    fn fix_json(&self, v: &mut serde_json::Value) {
        match v {
            serde_json::Value::String(s) => self.fix(s),
            serde_json::Value::Array(a) => a.iter_mut().for_each(|v| self.fix_json(v)),
            serde_json::Value::Object(m) => m.values_mut().for_each(|v| self.fix_json(v)),
            _ => {}
        }
    }

    pub(crate) fn fix_source(&self, s: &mut crate::finding::Source) {
        if let Some(p) = &mut s.path {
            self.fix(p);
        }
        if let Some(d) = &mut s.log_dir {
            self.fix(d);
        }
    }

    /// Map a finding's paths back to the archive.
    pub fn fix_finding(&self, f: &mut Finding) {
        if self.maps.is_empty() {
            return;
        }
        self.fix(&mut f.message);
        if let Some(s) = &mut f.segment {
            self.fix(s);
        }
        self.fix_source(&mut f.source);
        if let Some(s) = &mut f.remediation {
            self.fix(s);
        }
        self.fix_json(&mut f.evidence);
    }
}

/// A private temporary directory, removed on drop.
#[derive(Debug)]
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new() -> io::Result<TempDir> {
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        for attempt in 0..100u32 {
            let path = base.join(format!(
                "klogscan-{}-{nanos:x}-{attempt}",
                std::process::id()
            ));
            let mut b = std::fs::DirBuilder::new();
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
            match b.create(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other("no free temporary directory name"))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_file_names() {
        for n in [
            "00000000000000000000.log",
            "00000000000000000000.index",
            "00000000000000000017.snapshot",
            "leader-epoch-checkpoint",
            "replication-offset-checkpoint",
            "meta.properties",
            "partition.metadata",
            "00000000000000000000.log.deleted",
            "00000000000000000000.checkpoint",
        ] {
            assert!(is_kafka_file_name(n), "{n}");
        }
        for n in ["README.md", "notes.txt", ".log", "server.properties"] {
            assert!(!is_kafka_file_name(n), "{n}");
        }
    }

    fn tar_of(files: &[(&str, usize)]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (name, size) in files {
            let mut h = tar::Header::new_gnu();
            h.set_size(*size as u64);
            h.set_mode(0o644);
            h.set_cksum();
            b.append_data(&mut h, name, vec![0u8; *size].as_slice())
                .unwrap();
        }
        b.into_inner().unwrap()
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "klogscan-archive-test-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn absurd_entries_and_the_total_cap_are_refused_and_said() {
        let d = scratch("limits");
        let ar = d.join("b.tar");
        std::fs::write(
            &ar,
            tar_of(&[
                ("t-0/00000000000000000000.log", 100),
                ("t-0/00000000000000000000.index", 5000),
                ("t-1/00000000000000000000.log", 300),
                ("t-1/notes.txt", 10),
            ]),
        )
        .unwrap();
        let limits = Limits {
            max_total_bytes: 350,
            max_entry_bytes: 1000,
            max_entries: 100,
        };
        let p = prepare(std::slice::from_ref(&ar), &limits).unwrap();
        let root = &p.paths[0];
        assert!(root.join("t-0/00000000000000000000.log").is_file());
        assert!(
            !root.join("t-0/00000000000000000000.index").exists(),
            "above one file's limit"
        );
        assert!(
            !root.join("t-1/00000000000000000000.log").exists(),
            "above the total cap"
        );
        assert!(!root.join("t-1/notes.txt").exists(), "not a Kafka file");
        let w = p.warnings.join("\n");
        assert!(
            w.contains("above the 1000 bytes allowed for one file"),
            "{w}"
        );
        assert!(w.contains("extraction cap"), "{w}");
        assert_eq!(
            p.display(&root.join("t-0").display().to_string()),
            format!("{}!/t-0", ar.display())
        );
        let tmp = root.clone();
        drop(p);
        assert!(
            !tmp.exists(),
            "the temporary directory is removed with the inputs"
        );
        let too_many = Limits {
            max_entries: 2,
            ..Limits::default()
        };
        let p = prepare(std::slice::from_ref(&ar), &too_many).unwrap();
        assert!(p.paths.is_empty());
        assert!(
            p.failed[0].1.contains("more than 2 entries"),
            "{:?}",
            p.failed
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn escaping_paths_are_refused() {
        assert!(safe_relative(Path::new("../etc/passwd")).is_err());
        assert!(safe_relative(Path::new("/etc/passwd")).is_err());
        assert!(safe_relative(Path::new("a/../../b")).is_err());
        assert_eq!(
            safe_relative(Path::new("./data/t-0/x.log")).unwrap(),
            PathBuf::from("data/t-0/x.log")
        );
    }
}
