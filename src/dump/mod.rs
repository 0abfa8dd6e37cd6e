//! `klogscan dump`: what `kafka-dump-log.sh --files` prints (`DumpLogSegments`),
//! as text in Kafka's exact shape or as JSON Lines (`docs/dump-json.md`).
//!
//! OWNER: dump helper (`mod.rs`, `log/`, `decoders.rs` = `.log`/`.checkpoint` files) and
//! index helper (`files.rs` = `.index`, `.timeindex`, `.txnindex`, `.snapshot`).

// CLI glue for `klogscan dump` over archives, used by the binary: hidden, not part of the
// supported library surface (docs/library.md).
#[doc(hidden)]
pub mod archive_inputs;
pub(crate) mod decoders;
crate::internal_mod! {
    mod coordinator_json;
    mod files;
    mod log;
    mod text_files;
    mod txnlog_json;
    mod remote_log_text;
}

pub use log::{LogDumpSummary, LogFileKind, dump_log};

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Output format of `dump`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DumpFormat {
    #[default]
    Text,
    /// JSON Lines: one object per batch (records nested with deep iteration).
    Json,
}

/// Options of `dump`, mirroring kafka-dump-log's.
#[derive(Debug, Clone, Default)]
pub struct DumpOptions {
    /// `--deep-iteration`: print every record (implied by `print_data_log` and by the decoder).
    pub deep_iteration: bool,
    /// `--print-data-log`: print keys and values (lossy UTF-8), not for control batches.
    pub print_data_log: bool,
    /// `--skip-record-metadata`: omit the per-record metadata part of record lines.
    pub skip_record_metadata: bool,
    /// `--max-bytes N`: read at most N bytes of each `.log`/`.checkpoint`; suppresses the
    /// `Found N invalid bytes` line (unless N is `Int32.MAX`, Kafka's default).
    pub max_bytes: Option<u64>,
    pub format: DumpFormat,
    /// Decompression cap per batch.
    pub max_decompressed: Option<usize>,
    /// `--transaction-log-decoder`: decode `__transaction_state` keys and values (Scala
    /// text form); implies `print_data_log`.
    pub transaction_log_decoder: bool,
    /// `--offsets-decoder`: decode `__consumer_offsets` keys and values (Scala text form);
    /// implies `print_data_log`.
    pub offsets_decoder: bool,
    /// `--share-group-state-decoder`: decode `__share_group_state` keys and values
    /// (Kafka 4.x JSON form); implies `print_data_log`.
    pub share_group_state_decoder: bool,
    /// `--cluster-metadata-decoder`: decode KRaft metadata records (`__cluster_metadata`,
    /// snapshots) as Kafka 3.x/4.x print them; implies `print_data_log`.
    pub cluster_metadata_decoder: bool,
    /// `--legacy-decoder-text`: print `--offsets-decoder` in the Kafka ≤3.7 Scala text
    /// form instead of the 3.8+/4.x JSON form.
    pub legacy_decoder_text: bool,
    /// `--index-sanity-check`: for `.index` / `.timeindex`, run only the broker's sanity
    /// check and print `<file> passed sanity check.` or the broker's exception message.
    pub index_sanity_check: bool,
    /// `--verify-index-only`: for `.index` / `.timeindex`, check the entries against the
    /// log and print only the problems, not the entries.
    pub verify_index_only: bool,
    /// With `transaction_log_decoder`: print keys and values in Kafka 4.x's JSON shape
    /// (`txnlog_json`) instead of the ≤3.x Scala text.
    pub transaction_log_json: bool,
    /// Size of the pieces a large `.log` file is cut into to be formatted in parallel on
    /// the current rayon pool (`None`: `log::DUMP_PIECE`). The output does not depend
    /// on it nor on the number of threads.
    pub piece_bytes: Option<usize>,
    /// `--mmap`: whether large files loaded whole (indexes, snapshots, the `.log` an index
    /// is checked against) may be mapped ([`crate::read::segment::load`]).
    pub mmap: crate::read::segment::MmapMode,
    /// Text one parallel piece may buffer before the sequential walk prints it instead
    /// (`None`: `log::PIECE_TEXT_CAP`); the output is the same.
    pub piece_text_cap: Option<usize>,
    /// `--remote-log-metadata-decoder`: decode `__remote_log_metadata` records as Kafka
    /// 3.9+/4.x print them; implies `print_data_log`.
    pub remote_log_metadata_decoder: bool,
}

/// What a multi-file dump found (for the exit code).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DumpStatus {
    /// Files dumped (any kind).
    pub files: usize,
    /// Files ignored because of their suffix.
    pub unknown_files: usize,
    /// Files that could not be read (the error went to `err`).
    pub unreadable_files: usize,
    /// Files in which something was invalid: log/checkpoint files with a bad CRC, parse
    /// error or trailing bytes ([`LogDumpSummary::has_problems`]); index files failing the
    /// sanity check or with entries that do not match their log.
    pub files_with_problems: usize,
}

impl DumpStatus {
    /// True when anything was invalid or unreadable.
    pub fn has_problems(&self) -> bool {
        self.unreadable_files > 0 || self.files_with_problems > 0
    }
}

/// `new File(path)` on a POSIX system (`UnixFileSystem.normalize`): repeated `/`
/// collapsed, a trailing `/` dropped (not the root's); `.` and `..` kept. What the tool
/// prints of a path it was given (`Dumping <file>`) and opens.
pub(crate) fn java_file(path: &Path) -> PathBuf {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let mut out: Vec<u8> = Vec::with_capacity(path.as_os_str().len());
    for &c in path.as_os_str().as_bytes() {
        if !(c == b'/' && out.last() == Some(&b'/')) {
            out.push(c);
        }
    }
    if out.len() > 1 && out.last() == Some(&b'/') {
        out.pop();
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

/// `File.getAbsolutePath` of `path` ([`java_file`]'s form): itself when absolute, else the
/// working directory and it joined as text (`UnixFileSystem.resolve`: no `.` or `..`
/// resolved, unlike `std::path::absolute`).
pub(crate) fn java_absolute(path: &Path) -> PathBuf {
    let p = java_file(path);
    if p.is_absolute() {
        return p;
    }
    let Ok(cwd) = std::env::current_dir() else {
        return p;
    };
    if p.as_os_str().is_empty() {
        return cwd;
    }
    let mut s = cwd.into_os_string();
    if s != "/" {
        s.push("/");
    }
    s.push(p.as_os_str());
    PathBuf::from(s)
}

/// Dump `paths` in order. The broker's text files, by file name (the offset checkpoints,
/// `leader-epoch-checkpoint`, `partition.metadata`, `meta.properties`,
/// `.kafka_cleanshutdown`) → `text_files::dump_text_file`; a 3.6–3.7 `remote_log_snapshot`
/// → `remote_log_text::dump_snapshot_file`; then by suffix as
/// kafka-dump-log does: `.log` and `.checkpoint` → [`dump_log`]; `.index`, `.timeindex`,
/// `.txnindex`, `.snapshot` → the functions of `files`; anything else → `Ignoring unknown
/// file <f>` on `err`.
///
/// In text format `Dumping <path>` is printed for every path, as Kafka's main loop does
/// (for log files by [`dump_log`], for the others here — the `files` functions must not
/// print it). With deep iteration the `Non-consecutive offsets` blocks go to `err` after
/// all files, as Kafka prints them. Files are read read-only.
pub fn dump_paths(
    paths: &[PathBuf],
    opts: &DumpOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<DumpStatus> {
    let mut status = DumpStatus::default();
    // (file, kept pairs, pairs counted beyond them)
    type NonConsecutive = (PathBuf, Vec<(i64, i64)>, u64);
    let mut non_consecutive: Vec<NonConsecutive> = Vec::new();
    let text = opts.format == DumpFormat::Text;
    for given in paths {
        // As `new File(arg)` holds it: every line names (and the file opened is) that.
        let normal = java_file(given);
        let path = &normal;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let suffix = name.rfind('.').map_or("", |i| &name[i..]);
        if let Some(kind) = crate::read::format::checkpoint::TextFileKind::from_file_name(&name) {
            match text_files::dump_text_file(path, kind, opts, out, err) {
                Ok(ok) => {
                    status.files += 1;
                    if !ok {
                        status.files_with_problems += 1;
                    }
                }
                Err(e) => {
                    writeln!(err, "Cannot read {}: {e}", crate::escape::path(path))?;
                    status.unreadable_files += 1;
                }
            }
            continue;
        }
        if name == crate::read::format::remote_log::REMOTE_LOG_SNAPSHOT_FILE {
            match remote_log_text::dump_snapshot_file(path, opts, out, err) {
                Ok(ok) => {
                    status.files += 1;
                    status.files_with_problems += usize::from(!ok);
                }
                Err(e) => {
                    writeln!(err, "Cannot read {}: {e}", crate::escape::path(path))?;
                    status.unreadable_files += 1;
                }
            }
            continue;
        }
        match suffix {
            ".log" | ".checkpoint" => {
                let s = match log::dump_log_file(path, opts, out, err) {
                    Ok(s) => s,
                    Err(log::FileDumpError::Write(e)) => return Err(e),
                    Err(log::FileDumpError::Read { error: e, started }) => {
                        if text && !started {
                            writeln!(out, "Dumping {}", crate::escape::path(path))?;
                        }
                        writeln!(err, "Cannot read {}: {e}", crate::escape::path(path))?;
                        status.unreadable_files += 1;
                        continue;
                    }
                };
                status.files += 1;
                if s.has_problems() {
                    status.files_with_problems += 1;
                }
                if !s.non_consecutive.is_empty() {
                    non_consecutive.push((path.clone(), s.non_consecutive, s.non_consecutive_more));
                }
            }
            ".index" | ".timeindex" | ".txnindex" | ".snapshot" => {
                // The files module prints its own `Dumping <path>` line.
                let r = dispatch_file(suffix, path, opts, out, err);
                match r {
                    Ok(ok) => {
                        status.files += 1;
                        if !ok {
                            status.files_with_problems += 1;
                        }
                    }
                    Err(e) => {
                        writeln!(err, "Cannot dump {}: {e}", crate::escape::path(path))?;
                        status.unreadable_files += 1;
                    }
                }
            }
            _ => {
                if text {
                    writeln!(out, "Dumping {}", crate::escape::path(path))?;
                }
                writeln!(err, "Ignoring unknown file {}", crate::escape::path(path))?;
                status.unknown_files += 1;
            }
        }
    }
    if text {
        for (path, pairs, more) in &non_consecutive {
            log::write_non_consecutive(path, pairs, *more, err)?;
        }
    }
    Ok(status)
}

fn dispatch_file(
    suffix: &str,
    path: &Path,
    opts: &DumpOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<bool> {
    match suffix {
        ".index" => files::dump_index(path, opts, out, err),
        ".timeindex" => files::dump_timeindex(path, opts, out, err),
        ".txnindex" => files::dump_txnindex(path, opts, out, err),
        _ => files::dump_snapshot(path, opts, out, err),
    }
}
