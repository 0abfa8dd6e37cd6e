//! The `klogscan` command line: parse arguments, choose a renderer, map results to exit codes
//! (0 clean, 1 findings at or above `--fail-on`, 2 could not analyse). Everything else is
//! library code.

// Functions stay under 150 lines (clippy.toml); an exception is an `allow` with its reason.
#![warn(clippy::too_many_lines)]
use anyhow::Result;
use clap::ValueEnum;
use klogscan::dump::{self, DumpFormat, DumpOptions};
use klogscan::finding::Severity;
use klogscan::partition::scan::{self, ScanOptions};
use klogscan::report::filter::Filter;
use klogscan::report::style::Style;
use klogscan::report::{self, html, json, jsonl, table, triage};
use klogscan::request::{self, Answer, Request, Streamed};
use klogscan::results::ScanReport;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

mod cli;
mod collect_out;
mod commands;
mod help;

use cli::*;
use commands::{
    cmd_collect, cmd_consumers, cmd_dump, cmd_groups, cmd_history, cmd_txns_cluster, cmd_verify,
    not_for_this_command,
};

/// Where text goes: with colour (a terminal), every control character is escaped except
/// the SGR colour sequences klogscan writes; without, every control character but the line
/// feed — both backstops behind the per-field escaping.
fn text_out<'a>(out: &'a mut dyn Write, style: &Style) -> Box<dyn Write + 'a> {
    if style.color {
        Box::new(klogscan::escape::SgrWriter::new(out))
    } else {
        Box::new(klogscan::escape::JsonWriter::text(out))
    }
}

/// `--threads` above [`klogscan::partition::scan::MAX_THREADS`] is capped, with a warning.
fn capped_threads(n: Option<usize>) -> Option<usize> {
    let max = klogscan::partition::scan::MAX_THREADS;
    n.map(|n| {
        if n > max {
            eprintln!("klogscan: warning: --threads {n} capped at {max}");
        }
        n.clamp(1, max)
    })
}

/// Print every file that could not be (fully) read on stderr; true when there was one
/// (the run is then incomplete: exit 2). Paths that could not be read at all
/// (`report.errors`, whose findings name them as their `segment`) are printed by
/// [`input_failures`]; a segment outside a partition directory (partition -1) is the
/// walk's and printed here.
fn report_unreadable<'a>(
    findings: impl Iterator<Item = &'a klogscan::Finding>,
    errors: &[(PathBuf, String)],
) -> bool {
    let mut any = false;
    // A file two stages needed (the scan and a cross-check) is said once.
    let mut said = std::collections::HashSet::new();
    for f in findings.filter(|f| f.is_unread_file(errors)) {
        if said.insert(f.message.as_str()) {
            eprintln!("klogscan: {}", klogscan::escape::text(&f.message));
        }
        any = true;
    }
    any
}

/// The scan options the per-partition flags of `scan` and `collect` give, and their
/// `--remote-storage` (made ready by the library, `cluster::tiering::RemoteStorage`).
fn partition_options(a: &cli::PartitionArgs, remote_storage: &Option<PathBuf>) -> ScanOptions {
    ScanOptions::default()
        .with_remote_storage(remote_storage.clone())
        .with_check_crc(!a.no_crc)
        .with_deep(a.deep)
        .with_threads(capped_threads(a.threads))
        .with_mmap(a.mmap.mode())
        .with_max_decompressed_per_file(a.max_decompressed_per_file)
        .with_follow_symlinks(a.follow)
        .with_max_bytes(a.max_bytes)
        .with_max_decompressed(a.max_decompressed)
        .with_now_ms(a.now)
        .with_compacted_topics(a.compacted.clone())
        // Only `producers` prints every producer's state (it turns this back on).
        .with_keep_producers(false)
        // Only `txns --cluster` lists every cluster transaction (it turns this back on).
        .with_keep_cluster_txns(false)
        .with_hanging_after_ms(a.hanging_after)
        .with_cluster_ids(a.ids.cluster_id.clone())
}

fn scan_options(a: &ScanArgs) -> Result<ScanOptions> {
    commands::timeline_refusal(a)?;
    let mut o = partition_options(&a.part, &a.remote_storage);
    o.coordinator_tolerance_ms = a.coordinator_tolerance;
    o.marker_delay_ms = a.marker_delay;
    if a.format == OutFormat::Table && io::stderr().is_terminal() {
        o.progress = progress_bar();
    }
    Ok(o)
}

/// A progress bar on stderr that appears only once the run lasts longer than a moment.
fn progress_bar() -> scan::Progress {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    use scan::ProgressUpdate;
    use std::sync::Mutex;
    use std::time::{Duration, Instant};
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bytes}/{total_bytes} ({binary_bytes_per_sec}) {msg}",
    ) {
        bar.set_style(style);
    }
    let started = Instant::now();
    let state = Mutex::new((bar, false, 0u64, 0u64));
    scan::Progress::new(move |u| {
        let Ok(mut g) = state.lock() else { return };
        let (bar, shown, done, total) = &mut *g;
        match u {
            ProgressUpdate::Start { partitions, bytes } => {
                bar.set_length(bytes);
                *total = partitions;
            }
            ProgressUpdate::Bytes(n) => bar.inc(n),
            ProgressUpdate::PartitionDone => *done += 1,
        }
        bar.set_message(format!("{done}/{total} partitions"));
        if !*shown && started.elapsed() > Duration::from_millis(500) {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            *shown = true;
        }
        if *done == *total && *shown {
            bar.finish_and_clear();
        }
    })
}

/// 2 when nothing could be analysed, 1 when a finding reaches `fail_on`, else 0.
fn exit_code(nothing_read: bool, max: Option<Severity>, fail_on: FailOn) -> ExitCode {
    if nothing_read {
        return ExitCode::from(2);
    }
    let threshold = match fail_on {
        FailOn::Error => Some(Severity::Error),
        FailOn::Warning => Some(Severity::Warning),
        FailOn::Info => Some(Severity::Info),
        FailOn::Never => None,
    };
    match (threshold, max) {
        (Some(t), Some(max)) if max >= t => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    }
}

type Render = fn(&ScanReport, &Style, &mut dyn Write) -> io::Result<()>;
type RenderJson = fn(&ScanReport, &mut dyn Write) -> io::Result<()>;

/// How human output looks: colour per `--color` and `NO_COLOR`, borders per whether stdout
/// is a terminal, width per `COLUMNS`, the terminal, or 140 ([`Style::width_from`]).
fn style(color: ColorChoice) -> Style {
    let tty = io::stdout().is_terminal();
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let color = match color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => tty && !no_color,
    };
    let columns = std::env::var("COLUMNS").ok();
    let terminal = if tty {
        comfy_table::Table::new().width()
    } else {
        None
    };
    let width = Style::width_from(columns.as_deref(), terminal);
    if tty {
        Style::terminal(color, Some(width))
    } else {
        Style {
            color,
            width,
            ..Style::default()
        }
    }
}

/// The filters of `a` (`--transactional-id` is resolved by the request).
fn filter(a: &ScanArgs) -> Filter {
    Filter {
        topics: a.topic.clone(),
        partition: a.partition,
        producer_ids: a.producer_id.clone(),
        since: a.since,
        until: a.until,
        offsets: a.offsets,
        min_severity: a.min_severity.map(|m| match m {
            MinSeverity::Error => Severity::Error,
            MinSeverity::Warning => Severity::Warning,
            MinSeverity::Info => Severity::Info,
        }),
    }
}

/// The library request the flags of `a` make.
/// With `merging` (`klogscan merge`) the inputs are evidence bundles.
fn request(a: &ScanArgs, keep_producers: bool, merging: bool) -> Result<Request> {
    if merging {
        commands::merge_refusals(a)?;
    }
    let opts = scan_options(a)?.with_keep_producers(keep_producers);
    Ok(Request::new(a.paths.clone())
        .with_options(opts)
        .with_filter(filter(a))
        .with_transactional_ids(a.transactional_id.clone())
        .with_timelines(a.format == OutFormat::Html)
        .with_timeline_partitions(a.timeline.clone())
        .with_bundles(merging))
}

/// Print the request's warnings (refused archive entries, caps) on stderr.
fn print_warnings(warnings: &[String]) {
    for w in warnings {
        eprintln!("klogscan: {}", klogscan::escape::text(w));
    }
}

/// Run the request of `a`; with `stream` (`--format jsonl`), each partition is written as
/// soon as its own analysis is final, filtered and path-mapped as the finished report is.
fn scan_shown(
    a: &ScanArgs,
    keep_producers: bool,
    stream: Option<&mut jsonl::Stream<'_>>,
    merging: bool,
) -> Result<Answer> {
    let req = request(a, keep_producers, merging)?;
    let answer = match stream {
        None => request::run(&req)?,
        Some(s) => {
            let (answer, status) = request::run_streaming(&req, &mut |e| match e {
                Streamed::Begin(given) => s.begin(given),
                Streamed::Partition {
                    value,
                    path,
                    findings,
                    shown,
                    ..
                } => {
                    s.partition(value, path, findings, shown);
                    Ok(())
                }
                _ => Ok(()),
            })?;
            status?;
            answer
        }
    };
    print_warnings(&answer.warnings);
    Ok(answer)
}
/// Print the paths that could not be analysed on stderr (ripgrep's rule: diagnostics never
/// go to stdout) and return exit code 2 when there is any, whatever `--fail-on` says.
fn input_failures(errors: &[(PathBuf, String)], code: ExitCode) -> ExitCode {
    for (p, why) in errors {
        eprintln!(
            "klogscan: {}: {}",
            klogscan::escape::path(p),
            klogscan::escape::text(why)
        );
    }
    if errors.is_empty() {
        code
    } else {
        ExitCode::from(2)
    }
}

/// After a scan's output: say when nothing was read, flush, and choose the exit code.
fn finish_scan(report: &ScanReport, out: &mut dyn Write, fail_on: FailOn) -> Result<ExitCode> {
    finish_output(
        report.nothing_read(),
        report.findings.iter(),
        &report.errors,
        out,
        fail_on,
    )
}

/// After any command's report: say when nothing was read, flush, report unreadable
/// inputs on stderr, and choose the exit code (0, 1 at or above `fail_on`, 2).
fn finish_output<'a>(
    nothing_read: bool,
    findings: impl Iterator<Item = &'a klogscan::Finding> + Clone,
    errors: &[(PathBuf, String)],
    out: &mut dyn Write,
    fail_on: FailOn,
) -> Result<ExitCode> {
    out.flush()?;
    let incomplete = report_unreadable(findings.clone(), errors);
    let max = findings.map(|f| f.severity).max();
    // The specific reasons first, then the conclusion.
    let code = input_failures(errors, exit_code(nothing_read || incomplete, max, fail_on));
    if nothing_read {
        eprintln!("klogscan: no partition found under the given paths");
    }
    Ok(code)
}

/// `producers` and `txns`: a scan rendered as JSON or a table; exit 2 when nothing was read.
fn scan_view(
    a: &ScanArgs,
    style: &Style,
    out: &mut dyn Write,
    as_json: RenderJson,
    as_table: Render,
    keep_producers: bool,
) -> Result<ExitCode> {
    let report = scan_shown(a, keep_producers, None, false)?.report;
    match a.format {
        OutFormat::Json => as_json(&report, &mut klogscan::escape::JsonWriter::new(&mut *out))?,
        OutFormat::Table => as_table(
            &report,
            style,
            &mut klogscan::escape::JsonWriter::text(&mut *out),
        )?,
        other => {
            return Err(not_for_this_command(
                other,
                "producers and txns print table or json",
            ));
        }
    }
    finish_scan(&report, out, a.fail_on)
}

fn run(cli: Cli) -> Result<ExitCode> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let style = style(cli.color);
    // `merge` prints what `scan` prints, from bundles.
    let (command, merging) = match cli.command {
        Command::Merge(a) => (Command::Scan(a), true),
        c => (c, false),
    };
    match command {
        Command::Scan(a) if a.format == OutFormat::Jsonl => {
            let mut w = klogscan::escape::JsonWriter::new(&mut out);
            let mut stream = jsonl::Stream::new(&mut w, a.findings_only);
            let report = scan_shown(&a, false, Some(&mut stream), merging)?.report;
            stream.finish(&report)?;
            finish_scan(&report, &mut out, a.fail_on)
        }
        Command::Scan(a) => {
            let Answer {
                report,
                timelines,
                producer_timelines,
                ..
            } = scan_shown(&a, false, None, merging)?;
            match a.format {
                OutFormat::Html => {
                    html::write_scan_with(&report, &timelines, &producer_timelines, &mut out)?
                }
                OutFormat::Json => {
                    json::write_scan(&report, &mut klogscan::escape::JsonWriter::new(&mut out))?
                }
                // Streamed by the arm above; the same lines at once otherwise.
                OutFormat::Jsonl => jsonl::write_scan(
                    &report,
                    a.findings_only,
                    &mut klogscan::escape::JsonWriter::new(&mut out),
                )?,
                OutFormat::FindHanging => {
                    triage::write_hanging(&triage::hanging_rows(&report.findings), &mut out)?
                }
                OutFormat::Table => table::write_scan_with(
                    &report,
                    &table::TextOptions {
                        style,
                        findings_only: a.findings_only,
                    },
                    &mut text_out(&mut out, &style),
                )?,
            }
            finish_scan(&report, &mut out, a.fail_on)
        }
        Command::Producers(a) => scan_view(
            &a,
            &style,
            &mut out,
            json::write_producers,
            table::write_producers_with,
            true,
        ),
        Command::Txns(a) if a.cluster => cmd_txns_cluster(a, &style, &mut out),
        Command::Txns(a) => scan_view(
            &a.scan,
            &style,
            &mut out,
            json::write_txns,
            table::write_txns_with,
            false,
        ),
        Command::Groups(a) => cmd_groups(a, &style, &mut out),
        Command::Consumers(a) => cmd_consumers(a, &style, &mut out),
        Command::Verify(a) => cmd_verify(a, &style, &mut out),
        Command::History(a) => cmd_history(a, &mut out),
        Command::Completions { shell } => {
            // Generated whole, then written: clap_complete panics on a write error (a
            // closed pipe, a full disk), and written here it is reported like any output.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cli::command(), "klogscan", &mut script);
            out.write_all(&script)?;
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            help::write_man(cli::command(), &mut out)?;
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Dump(a) => cmd_dump(a, &mut out),
        Command::Collect(a) => cmd_collect(a),
        // Turned into `Scan` above.
        Command::Merge(_) => Ok(ExitCode::from(2)),
    }
}

fn main() -> ExitCode {
    // SAFETY: the binary installs no other SIGBUS handler; klogscan's guards every map it
    // makes (a file truncated under a scan is reported, never a signal).
    unsafe { klogscan::read::segment::enable_guarded_maps() };
    let cli = cli::parse();
    // The global pool, started once here, of `--threads` workers (each command's work
    // runs on it; `start_global_pool` says why not first).
    let threads = match &cli.command {
        Command::Scan(a) | Command::Producers(a) | Command::Merge(a) => a.part.threads,
        Command::Txns(a) => a.scan.part.threads,
        Command::Verify(a) => a.scan.part.threads,
        // `dump`'s only use of `--threads` (the others warn where they read it).
        Command::Dump(a) => capped_threads(a.threads),
        Command::Consumers(a) => a.threads,
        Command::Collect(a) => a.part.threads,
        Command::Groups(_) | Command::History(_) => None,
        Command::Completions { .. } | Command::Man => Some(1),
    };
    match klogscan::partition::scan::start_global_pool(threads) {
        Ok(None) => {}
        Ok(Some(note)) => eprintln!("klogscan: warning: {note}"),
        Err(e) => {
            eprintln!("klogscan: error: {e}");
            return ExitCode::from(2);
        }
    }
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            if e.chain().any(|c| {
                c.downcast_ref::<io::Error>()
                    .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("klogscan: {}", klogscan::escape::text(&format!("{e:#}")));
            ExitCode::from(2)
        }
    }
}
