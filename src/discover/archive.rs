//! Archives as input: `.tar`, `.tar.gz`/`.tgz`, `.tar.zst` and `.zip` of broker data dirs.
//!
//! The archive is opened read-only and streamed once: its Kafka files (segments, indexes,
//! snapshots, checkpoints, `meta.properties`, `partition.metadata`, the clean-shutdown
//! marker) are copied into a private temporary directory, 64 KiB at a time, and scanned
//! there like any directory; the rest of the archive is skipped. An uncompressed tar is
//! not copied: its segments, indexes and snapshots lie whole at known offsets in it and
//! are read there (the temporary directory holds placeholders of no data block that the
//! read layer resolves to the archive's bytes, see `read::segment`); only its small text
//! files are copied, so it never needs more disk than its own size. Memory stays bounded
//! (the decompressor's window and one copy buffer); disk use is the size of those Kafka
//! files, capped by [`Limits::max_total_bytes`], by the temporary file system's free space
//! less a margin, and per archive by [`Limits::max_ratio`] times its size past
//! [`Limits::ratio_floor`] (a decompression bomb): the warnings name each entry left out.
//! The temporary directory is removed when the [`Prepared`] inputs are dropped, and by a
//! reaper process when klogscan dies of a signal or an abort (`temp`).
//!
//! An archive that breaks part-way (cut short, a corrupt block) is an input error naming
//! the last entry read whole; the Kafka files read up to it are analysed. An entry whose
//! path clashes with an earlier one (a file where a directory is needed, or the reverse)
//! is skipped with a warning; a path given twice is extracted twice, the last copy wins
//! (as `tar` extracts), with a warning.
//!
//! Entries that would land outside the directory (absolute paths, `..`), links and
//! special files are refused, and so is an entry larger than [`Limits::max_entry_bytes`];
//! each refusal is reported as a warning. Paths in the report are mapped back to the
//! archive: `broker1.tgz!/data/payments-3/00000000000000000000.log`.
//!
//! Any other input is passed on unchanged: the layout reports a file that is not Kafka data
//! as an input error. An archive that cannot be read is one too ([`Prepared::failed`]).

use crate::finding::Finding;
use crate::read::segment::InPlace;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

mod metered;
mod temp;
pub(crate) use temp::{base as temp_base, room_on};

/// Bounds on what an archive may put on disk.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Total bytes extracted from all archives (the rest is skipped, with a warning).
    pub max_total_bytes: u64,
    /// One entry larger than this is refused (a Kafka segment is 1 GiB by default).
    pub max_entry_bytes: u64,
    /// Entries read (files, directories, skipped ones) per archive.
    pub max_entries: u64,
    /// Bytes extracted from one archive at most this many times its size (a decompression
    /// bomb), once past [`Limits::ratio_floor`].
    pub max_ratio: u64,
    /// Bytes any archive may extract whatever its ratio (small archives of mostly-zero
    /// preallocated segments compress far beyond any sane ratio).
    pub ratio_floor: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_total_bytes: 64 << 30,
            max_entry_bytes: 16 << 30,
            max_entries: 10_000_000,
            // gzip cannot exceed ~1032:1; zstd and a zip's deflate64 can.
            max_ratio: 1100,
            ratio_floor: 1 << 30,
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
    /// Members of uncompressed tars read in place (unregistered before the temporary
    /// directory holding their placeholders is removed: field order).
    in_place: InPlace,
    temp: Option<temp::TempRoot>,
}

/// The temporary directory for archives could not be made.
#[derive(Debug, thiserror::Error)]
#[error("cannot create a temporary directory for archives: {0}")]
pub struct TempError(io::Error);

/// What a file's name says it is, before any byte is read.
enum Named {
    /// A broker's file: never sniffed (a segment's first bytes are its base offset, which
    /// can read as gzip's or zip's magic).
    Kafka,
    /// An archive's name (the extension as written, the kind it names).
    Archive(&'static str, ArchiveKind),
    Unknown,
}

fn named(path: &Path) -> Named {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if is_kafka_file_name(&name) {
        return Named::Kafka;
    }
    let lower = name.to_ascii_lowercase();
    for (ext, kind) in [
        (".tar.gz", ArchiveKind::TarGz),
        (".tgz", ArchiveKind::TarGz),
        (".tar.zst", ArchiveKind::TarZst),
        (".tzst", ArchiveKind::TarZst),
        (".zip", ArchiveKind::Zip),
        (".tar", ArchiveKind::Tar),
    ] {
        if lower.ends_with(ext) {
            return Named::Archive(ext, kind);
        }
    }
    Named::Unknown
}

/// The archive format of a file by its first bytes (tar: the `ustar` magic).
fn sniff(path: &Path) -> io::Result<Option<ArchiveKind>> {
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
    } else if h.len() >= 262 && &h[257..262] == b"ustar" {
        Some(ArchiveKind::Tar)
    } else {
        None
    })
}

/// Recognise an archive: by name first (a Kafka file name is never an archive, whatever
/// its first bytes; a `.tar` name is a tar even without the `ustar` magic of old tars),
/// by its first bytes for any other name.
pub(crate) fn archive_kind(path: &Path) -> io::Result<Option<ArchiveKind>> {
    match named(path) {
        Named::Kafka => Ok(None),
        Named::Archive(_, ArchiveKind::Tar) => Ok(Some(sniff(path)?.unwrap_or(ArchiveKind::Tar))),
        Named::Archive(..) | Named::Unknown => sniff(path),
    }
}

/// For a file named as an archive klogscan reads (`.tgz`, `.tar.gz`, `.tar.zst`, `.zip`)
/// whose first bytes are no archive's: why it cannot be read.
pub(crate) fn misnamed_archive(path: &Path) -> Option<String> {
    let Named::Archive(ext, kind) = named(path) else {
        return None;
    };
    if sniff(path).ok()?.is_some() {
        return None;
    }
    let magic = match kind {
        ArchiveKind::TarGz => "a gzip stream's (1f 8b)",
        ArchiveKind::TarZst => "a zstd frame's (28 b5 2f fd)",
        ArchiveKind::Zip => "a zip archive's (PK 03 04)",
        ArchiveKind::Tar => return None,
    };
    Some(format!(
        "not an archive: named {ext} but its first bytes are not {magic}, and not Kafka data"
    ))
}

/// Is `name` a file a broker keeps in a log dir or a partition dir?
pub fn is_kafka_file_name(name: &str) -> bool {
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

/// The input that `place` is inside of, both resolved through symlinks (`place` by its
/// nearest existing ancestor): a directory, the directory of a Kafka file named alone (a
/// segment, an index: its partition directory is evidence too), or any other file itself
/// (an archive: writing beside it is writing beside the evidence, not into it); and
/// whether `place` is that input itself. Where `collect --out` and the archives' temporary
/// directory are refused: the inputs are evidence and are never written to.
pub fn inside_input(place: &Path, inputs: &[PathBuf]) -> Option<(PathBuf, bool)> {
    let absolute = std::path::absolute(place).ok()?;
    // The nearest ancestor that exists, resolved, with the rest of the path after it.
    let mut rest = Vec::new();
    let mut at = absolute.as_path();
    let resolved = loop {
        if let Ok(r) = at.canonicalize() {
            break r;
        }
        rest.push(at.file_name()?.to_owned());
        at = at.parent()?;
    };
    let target = rest.iter().rev().fold(resolved, |p, n| p.join(n));
    inputs.iter().find_map(|i| {
        let i = i.canonicalize().ok()?;
        let kafka_file = !i.is_dir()
            && i.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(is_kafka_file_name);
        let root = match kafka_file {
            true => i.parent()?.to_path_buf(),
            false => i,
        };
        target
            .starts_with(&root)
            .then(|| (root.clone(), target == root))
    })
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
        in_place: InPlace::default(),
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
            match misnamed_archive(input).filter(|_| input.is_file()) {
                Some(why) => p.failed.push((input.clone(), why)),
                None => p.paths.push(input.clone()),
            }
            continue;
        };
        let shown = input.display().to_string();
        if p.temp.is_none() {
            let given: Vec<PathBuf> = inputs.iter().map(|(i, _)| i.clone()).collect();
            p.temp = Some(temp::TempRoot::new(&given).map_err(TempError)?);
        }
        let root = p
            .temp
            .as_ref()
            .map(|t| t.path().join(p.maps.len().to_string()))
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
            archive_len: std::fs::metadata(input).map_or(0, |m| m.len()),
            extracted: 0,
            last: None,
            in_place: &mut p.in_place,
        };
        let res = match kind {
            ArchiveKind::Zip => x.zip(input),
            _ => x.tar(input, kind),
        };
        let (files, last) = (x.files, x.last.take());
        if let Err(e) = res {
            // What was read before the damage is analysed; the error names where it stops.
            let why = match &last {
                Some(l) if files > 0 => format!(
                    "cannot read it as an archive past entry {l}: {e} (the {files} Kafka files up to it are analysed, nothing after it)"
                ),
                Some(l) => format!("cannot read it as an archive past entry {l}: {e}"),
                None => format!("cannot read it as an archive: {e}"),
            };
            p.failed.push((input.clone(), why));
            p.maps
                .push((root.display().to_string(), format!("{shown}!")));
            if files > 0 {
                p.paths.push(root);
            } else {
                let _ = std::fs::remove_dir_all(&root);
            }
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
    /// The archive's size on disk (the ratio's base).
    archive_len: u64,
    /// Bytes extracted from this archive so far.
    extracted: u64,
    /// The last entry read whole (named when the archive breaks after it).
    last: Option<String>,
    /// Where members read in place are registered.
    in_place: &'a mut InPlace,
}

/// Why an entry that is not a regular file is not read.
const NOT_REGULAR: &str = "a link or special file, not a regular file";

/// Why a tar entry of type `t` is not read (`None`: a regular file, read).
fn not_regular(t: tar::EntryType) -> Option<&'static str> {
    if t.is_file() {
        None
    } else if t.is_gnu_sparse() {
        Some(
            "a sparse member (GNU sparse format, its holes not stored): not read; unpack the archive yourself",
        )
    } else {
        Some(NOT_REGULAR)
    }
}

/// Is `name` a Kafka file an uncompressed tar's member is read in place for: a segment,
/// an index or a producer snapshot (also as `.deleted`, `.cleaned`, `.swap`), every reader
/// of which goes through `read::segment`.
fn read_in_place(name: &str) -> bool {
    let name = ["deleted", "cleaned", "swap"]
        .iter()
        .find_map(|s| name.strip_suffix(s).and_then(|n| n.strip_suffix('.')))
        .unwrap_or(name);
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && ["log", "index", "timeindex", "txnindex", "snapshot"].contains(&ext)
    })
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
            self.warnings.push(format!(
                "{}!/{}: skipped: {why}",
                self.shown,
                entry.trim_start_matches('/')
            ));
        }
    }

    /// Decide on one entry; `Some(destination)` when it is to be copied (or, when not
    /// `on_disk`, placed: read in place, no byte of it written, so the caps on what
    /// reaches the disk do not apply).
    fn admit(
        &mut self,
        name: &Path,
        size: u64,
        not_regular: Option<&'static str>,
        on_disk: bool,
    ) -> io::Result<Option<PathBuf>> {
        let regular = not_regular.is_none();
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
            if let Some(why) = not_regular.filter(|_| is_kafka_file_name(&file_name)) {
                self.warn(&shown, why);
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
        if on_disk && size > *self.budget {
            self.warn(
                &shown,
                "the extraction cap (total bytes of Kafka files taken from archives) is reached: this file and later ones are not analysed",
            );
            return Ok(None);
        }
        if let Some(why) = self.beyond_bounds(size).filter(|_| on_disk) {
            self.warn(&shown, &why);
            return Ok(None);
        }
        let dest = self.root.join(&rel);
        if let Some(parent) = dest.parent()
            && let Err(e) = std::fs::create_dir_all(parent)
        {
            // An earlier entry made a file where this one needs a directory.
            self.warn(&shown, &format!("its directory cannot be made: {e} (an earlier entry of the same name is a file)"));
            return Ok(None);
        }
        if dest.is_dir() {
            self.warn(&shown, "an earlier entry made a directory of the same name");
            return Ok(None);
        }
        if dest.exists() && self.warnings.len() < 1000 {
            self.warnings.push(format!(
                "{}!/{}: appears more than once in the archive: the last copy is analysed (as tar extracts it)",
                self.shown,
                rel.display()
            ));
        }
        Ok(Some(dest))
    }

    /// Why an entry of `size` bytes is not extracted although it passes the archive's
    /// caps: it would leave the temporary file system less than its margin, or make this
    /// archive decompress beyond [`Limits::max_ratio`] times its size (past the floor).
    fn beyond_bounds(&self, size: u64) -> Option<String> {
        let after = self.extracted.saturating_add(size);
        let ratio_cap = self
            .archive_len
            .saturating_mul(self.limits.max_ratio)
            .max(self.limits.ratio_floor);
        if after > ratio_cap {
            return Some(format!(
                "this archive of {} bytes would decompress to more than {ratio_cap} bytes ({} times its size, at least {} bytes): a decompression bomb, or data to unpack yourself",
                self.archive_len, self.limits.max_ratio, self.limits.ratio_floor
            ));
        }
        match temp::room_on(self.root) {
            Some(room) if size > room => Some(format!(
                "{size} bytes, more than the temporary file system at {} can take ({room} bytes free beyond its margin): set TMPDIR to a larger one, or unpack the archive yourself",
                temp::base().display()
            )),
            _ => None,
        }
    }

    /// Copy `size` bytes of an entry to `dest`, with the entry's modification time when the
    /// archive keeps one (`mtime`, seconds since the epoch): the reference time of the
    /// hanging-transaction rule reads the broker's checkpoint times as `tar -x` restores
    /// them (`partition::scan::reference`).
    fn copy(
        &mut self,
        from: &mut dyn Read,
        dest: &Path,
        size: u64,
        mtime: Option<u64>,
    ) -> io::Result<()> {
        let mut out = io::BufWriter::with_capacity(64 << 10, File::create(dest)?);
        let copied = io::copy(&mut from.take(size), &mut out);
        let flushed = io::Write::flush(&mut out);
        let copied = copied.and_then(|n| {
            if n == size {
                Ok(n)
            } else {
                Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("{} is cut short: {n} of its {size} bytes", dest.display()),
                ))
            }
        });
        let n = match (copied, flushed) {
            (Ok(n), Ok(())) => n,
            (Err(e), _) | (_, Err(e)) => {
                // A cut entry is not analysed as if whole.
                drop(out);
                let _ = std::fs::remove_file(dest);
                return Err(e);
            }
        };
        if let Some(t) =
            mtime.and_then(|s| std::time::UNIX_EPOCH.checked_add(std::time::Duration::from_secs(s)))
        {
            // A time the file system refuses leaves the extraction's own: no bound taken.
            let _ = out.get_ref().set_modified(t);
        }
        *self.budget = self.budget.saturating_sub(n);
        self.extracted = self.extracted.saturating_add(n);
        self.files += 1;
        Ok(())
    }

    fn tar(&mut self, path: &Path, kind: ArchiveKind) -> io::Result<()> {
        let file = File::open(path)?;
        if kind == ArchiveKind::Tar && InPlace::supported() {
            return self.tar_in_place(file);
        }
        let file = BufReader::with_capacity(64 << 10, file);
        let reader: Box<dyn Read> = match kind {
            ArchiveKind::TarGz => Box::new(flate2::read::MultiGzDecoder::new(file)),
            ArchiveKind::TarZst => Box::new(zstd::stream::read::Decoder::with_buffer(file)?),
            _ => Box::new(file),
        };
        let gap = metered::Gap::default();
        let mut ar = tar::Archive::new(metered::Metered::new(reader, &gap));
        gap.open();
        for entry in ar.entries()? {
            gap.close();
            let mut entry = entry?;
            let name = entry.path()?.into_owned();
            let not_regular = not_regular(entry.header().entry_type());
            // The data's length: a PAX `size` record overrides the header's field.
            let size = entry.size();
            let mtime = entry.header().mtime().ok();
            match self.admit(&name, size, not_regular, true)? {
                Some(dest) => self.copy(&mut entry, &dest, size, mtime)?,
                // Read past here, not by the reader between entries (which is bounded).
                None => drop(io::copy(&mut entry, &mut io::sink())?),
            }
            self.last = Some(name.display().to_string());
            gap.open();
        }
        Ok(())
    }

    /// An uncompressed tar: its headers are read (the data between them skipped by
    /// seeking), and its segments, indexes and snapshots are read in place, where they lie
    /// in the archive (see `read::segment`'s `inplace`); nothing of them reaches the disk.
    /// The archive's other Kafka files (checkpoints, properties: small text files several
    /// readers open by path) are copied, which cannot take more room than the archive.
    fn tar_in_place(&mut self, file: File) -> io::Result<()> {
        let archive_len = file.metadata()?.len();
        let shared = Arc::new(file.try_clone()?);
        let gap = metered::Gap::default();
        let file = BufReader::with_capacity(64 << 10, file);
        let mut ar = tar::Archive::new(metered::Metered::new(file, &gap));
        gap.open();
        for entry in ar.entries_with_seek()? {
            gap.close();
            let mut entry = entry?;
            let name = entry.path()?.into_owned();
            let size = entry.size();
            let at = entry.raw_file_position();
            // Seeking past the end raises no error: a member cut short is found here.
            if at.checked_add(size).is_none_or(|end| end > archive_len) {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "{} is cut short: the archive ends {} bytes into its {size} bytes",
                        name.display(),
                        archive_len.saturating_sub(at)
                    ),
                ));
            }
            let not_regular = not_regular(entry.header().entry_type());
            let placed = name
                .file_name()
                .is_some_and(|n| read_in_place(&n.to_string_lossy()));
            if let Some(dest) = self.admit(&name, size, not_regular, !placed)? {
                if placed {
                    self.in_place.place(&dest, &shared, at, size)?;
                    self.files += 1;
                } else {
                    let mtime = entry.header().mtime().ok();
                    self.copy(&mut entry, &dest, size, mtime)?;
                }
            }
            self.last = Some(name.display().to_string());
            // The data not read is skipped by seeking: only headers count.
            gap.open();
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
            let not_regular = (!regular).then_some(NOT_REGULAR);
            // Only the extended timestamp (UTC seconds): the DOS time is the archiver's
            // local time, of an unknown zone.
            let mtime = entry.extra_data_fields().find_map(|f| match f {
                zip::ExtraField::ExtendedTimestamp(t) => t.mod_time().map(u64::from),
                _ => None,
            });
            if let Some(dest) = self.admit(&raw, size, not_regular, true)? {
                self.copy(&mut entry, &dest, size, mtime)?;
            }
            self.last = Some(raw.display().to_string());
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
            let mut shown = d.to_string();
            self.fix(&mut shown);
            if *shown != **d {
                *d = shown.into();
            }
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

#[cfg(test)]
mod bounds_tests;

#[cfg(test)]
mod inplace_tests;
#[cfg(test)]
mod tests;
