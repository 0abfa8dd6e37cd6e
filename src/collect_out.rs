//! Where `collect` writes its bundle (`--out`), decided before anything is read.
//!
//! * A regular file (new or replaced) is written as `<out>.partial` and renamed once
//!   complete, so a collect that stops never leaves a bundle that looks whole; the partial
//!   file is removed when the collect fails.
//! * `-`, or something that exists and is neither a regular file nor a directory (a FIFO,
//!   `/dev/stdout`, a socket, a character device), is written in place as a stream: a
//!   rename would replace the device or pipe with a regular file (with root's rights,
//!   `--out /dev/null` once turned `/dev/null` into a file). A bundle's end frame tells a
//!   reader whether the stream was complete.
//! * A directory, or a place inside one of the inputs, is refused before the scan: the
//!   inputs are evidence and are never written to.

use anyhow::{Result, anyhow, bail};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The bundle's destination.
pub(crate) enum Dest {
    /// Written to `partial`, renamed to `out` once complete.
    File { out: PathBuf, partial: PathBuf },
    /// Written in place (`None`: standard output).
    Stream(Option<PathBuf>),
}

impl Dest {
    /// Decide where `out` is written, refusing a directory and a place inside `inputs`.
    pub(crate) fn of(out: &Path, inputs: &[PathBuf]) -> Result<Dest> {
        if out.as_os_str() == "-" {
            return Ok(Dest::Stream(None));
        }
        let shown = klogscan::escape::path(out);
        match std::fs::metadata(out) {
            Ok(m) if m.is_dir() => {
                bail!("--out {shown} is a directory: name the bundle file to write")
            }
            Ok(m) if !m.is_file() => return Ok(Dest::Stream(Some(out.to_path_buf()))),
            _ => {}
        }
        if let Some((input, same)) = klogscan::discover::archive::inside_input(out, inputs) {
            let relation = if same { "is" } else { "is inside" };
            bail!(
                "--out {shown} {relation} the input {}: klogscan never writes into the evidence it reads; write the bundle elsewhere",
                klogscan::escape::path(&input)
            );
        }
        let mut partial = out.as_os_str().to_owned();
        partial.push(".partial");
        Ok(Dest::File {
            out: out.to_path_buf(),
            partial: PathBuf::from(partial),
        })
    }

    /// Where the bundle is named in messages.
    pub(crate) fn shown(&self) -> String {
        match self {
            Dest::File { out, .. } | Dest::Stream(Some(out)) => {
                klogscan::escape::path(out).to_string()
            }
            Dest::Stream(None) => "standard output".into(),
        }
    }

    /// Run `write` over the destination's writer; a regular file is renamed into place
    /// when `keep` says so of `write`'s result, and removed otherwise or on an error.
    pub(crate) fn write<T>(
        &self,
        write: impl FnOnce(Box<dyn Write + Send>) -> std::io::Result<T>,
        keep: impl FnOnce(&T) -> bool,
    ) -> Result<T> {
        let cannot = |e: std::io::Error| anyhow!("cannot write {}: {e}", self.shown());
        match self {
            Dest::Stream(None) => {
                write(Box::new(BufWriter::new(std::io::stdout()))).map_err(cannot)
            }
            Dest::Stream(Some(path)) => {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(cannot)?;
                write(Box::new(BufWriter::new(f))).map_err(cannot)
            }
            Dest::File { out, partial } => {
                let f = std::fs::File::create(partial)
                    .map_err(|e| anyhow!("cannot write {}: {e}", partial.display()))?;
                let written = write(Box::new(BufWriter::new(f)));
                let ok = written.as_ref().is_ok_and(keep);
                if !ok {
                    let _ = std::fs::remove_file(partial);
                    return written.map_err(cannot);
                }
                std::fs::rename(partial, out).map_err(|e| {
                    let _ = std::fs::remove_file(partial);
                    anyhow!(
                        "cannot rename {} to {}: {e}",
                        partial.display(),
                        out.display()
                    )
                })?;
                written.map_err(cannot)
            }
        }
    }
}
