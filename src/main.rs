//! The `klogscan` command line: parse arguments, choose a renderer, map results to exit codes
//! (0 clean, 1 findings at or above `--fail-on`, 2 could not analyse). Everything else is
//! library code.

use anyhow::Result;
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use klogscan::archive::{self, Prepared};
use klogscan::dump::{self, DumpFormat, DumpOptions};
use klogscan::finding::Severity;
use klogscan::pipeline;
use klogscan::report::filter::{Filter, OffsetRange};
use klogscan::report::style::Style;
use klogscan::report::timeline::Timeline;
use klogscan::report::{self, html, json, jsonl, table, triage};
use klogscan::scan::{self, ScanOptions, ScanReport};
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

mod help;

#[derive(Parser)]
#[command(
    name = "klogscan",
    version,
    about = "Offline forensic analyzer for Apache Kafka broker data directories",
    long_about = "Reads Kafka segment files, indexes, snapshots and checkpoints directly (read-only), rebuilds \
producer and transaction state like a broker, and reports anomalies: hanging transactions, zombie writes \
(KAFKA-9144), epoch regressions, sequence gaps, corrupt or truncated batches.\n\n\
Exit codes: 0 clean, 1 findings at or above --fail-on, 2 could not analyse or an input failed \
(a path that does not exist or is not Kafka data; reported on stderr)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Colour: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, value_enum, default_value = "auto", global = true)]
    color: ColorChoice,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand)]
enum Command {
    /// Replay every partition and report anomalies (the main job).
    #[command(after_help = help::SCAN)]
    Scan(ScanArgs),
    /// Rebuilt producer state per partition (columns of `kafka-transactions.sh describe-producers`).
    #[command(after_help = help::PRODUCERS)]
    Producers(ScanArgs),
    /// Transaction statistics per partition: committed, aborted, open, empty, sizes, durations.
    #[command(after_help = help::TXNS)]
    Txns(TxnsArgs),
    /// Print files as `kafka-dump-log.sh --files` does (or as JSON Lines).
    #[command(after_help = help::DUMP)]
    Dump(DumpArgs),
    /// Groups rebuilt from __consumer_offsets as the group coordinator loads them
    /// (classic, consumer, share, streams: epochs, members, assignments, offsets).
    #[command(after_help = help::GROUPS)]
    Groups(GroupsArgs),
    /// Cross-check indexes, snapshots and checkpoints against the log, and predict what a
    /// broker does with each partition on its next start (truncation, deleted segments, load failures).
    #[command(after_help = help::VERIFY)]
    Verify(VerifyArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = help::COMPLETIONS)]
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff) on stdout.
    #[command(after_help = help::MAN)]
    Man,
}

#[derive(Args)]
struct GroupsArgs {
    /// Broker data dirs, partition dirs, or directories above them.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Only this group id.
    #[arg(long)]
    group: Option<String>,
    /// Only groups of this type: classic, consumer, share, streams.
    #[arg(long = "type")]
    group_type: Option<String>,
    /// Also list deleted groups.
    #[arg(long)]
    deleted: bool,
    /// One line per member instead of one per group (table format).
    #[arg(long)]
    members: bool,
    #[arg(long, value_enum, default_value = "table")]
    format: OutFormat,
}

#[derive(Args)]
struct VerifyArgs {
    #[command(flatten)]
    scan: ScanArgs,
    /// Version of the broker that will load the data (e.g. 2.4.0): below 2.4.1 a
    /// coordinator-epoch regression fails the load (KAFKA-9144).
    #[arg(long)]
    broker_version: Option<String>,
}

#[derive(Args)]
struct TxnsArgs {
    #[command(flatten)]
    scan: ScanArgs,
    /// One row per cluster transaction (its partitions joined, with the coordinator's
    /// record when `__transaction_state` is in the inputs) instead of statistics.
    #[arg(long)]
    cluster: bool,
    /// With --cluster: only transactions still open at or ending after this time (epoch ms or RFC 3339).
    #[arg(long)]
    from: Option<String>,
    /// With --cluster: only transactions started at or before this time (epoch ms or RFC 3339).
    #[arg(long)]
    to: Option<String>,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
enum OutFormat {
    /// Human tables (ASCII when not on a terminal), the triage summary first.
    Table,
    /// One JSON document (docs/report-schema.md).
    Json,
    /// JSON Lines, one `{"type", "data"}` object per partition and per finding (scan).
    Jsonl,
    /// `kafka-transactions.sh find-hanging`'s columns for the hanging transactions (scan).
    FindHanging,
    /// One self-contained HTML file: triage, partition timelines (SVG), findings (scan).
    Html,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum MinSeverity {
    Error,
    Warning,
    Info,
}

#[derive(Clone, Copy, ValueEnum)]
enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

#[derive(Args)]
struct ScanArgs {
    /// Broker data dirs, partition dirs, segment files, or directories above them.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: OutFormat,
    /// Reference time for "hanging" (`now`, epoch ms or RFC 3339); default: the newest batch
    /// timestamp in each partition's log dir.
    #[arg(long, value_parser = report::parse_time)]
    now: Option<i64>,
    /// An open transaction idle longer than this is hanging; a unit is required
    /// (500ms, 900s, 15m, 2h, 1d).
    #[arg(long, default_value = "15m", value_parser = report::parse_duration)]
    hanging_after: i64,
    /// Exit 1 when a finding reaches this severity.
    #[arg(long, value_enum, default_value = "error")]
    fail_on: FailOn,
    /// Show only topics matching these globs (`*`, `?`) or `topic-N` partition names as the
    /// table shows them; comma-separated. Filters select what is shown, never what is analysed.
    #[arg(long, value_delimiter = ',')]
    topic: Vec<String>,
    /// Show only this partition number.
    #[arg(long)]
    partition: Option<i32>,
    /// Show only this producer id (repeatable, comma-separated).
    #[arg(long, value_delimiter = ',')]
    producer_id: Vec<i64>,
    /// Show only the producer ids this transactional id maps to in `__transaction_state`
    /// (the coordinator's log must be among the inputs).
    #[arg(long)]
    transactional_id: Vec<String>,
    /// Show only findings whose batch timestamp is at or after this time (RFC 3339, epoch ms, now).
    #[arg(long, value_parser = report::parse_time)]
    since: Option<i64>,
    /// Show only findings whose batch timestamp is at or before this time.
    #[arg(long, value_parser = report::parse_time)]
    until: Option<i64>,
    /// Show only findings at these offsets: A..B (B excluded), A..=B, A.., ..B or A.
    #[arg(long, value_parser = report::filter::parse_offsets)]
    offsets: Option<OffsetRange>,
    /// Show only findings of at least this severity.
    #[arg(long, value_enum)]
    min_severity: Option<MinSeverity>,
    /// Only the triage summary and the findings (no partition table).
    #[arg(long)]
    findings_only: bool,
    /// Worker threads (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Skip CRC verification (header walk only).
    #[arg(long)]
    no_crc: bool,
    /// Decompress and check records too (record counts, offset deltas, maxTimestamp).
    #[arg(long)]
    deep: bool,
    /// Read at most this many bytes of each segment.
    #[arg(long)]
    max_bytes: Option<u64>,
    /// Cap on one batch's decompressed size, in bytes.
    #[arg(long, default_value_t = klogscan::format::codec::DEFAULT_MAX_DECOMPRESSED)]
    max_decompressed: usize,
    /// Topics known to be compacted (comma-separated), besides what the inputs prove
    /// (cleaner-offset-checkpoint, KRaft cleanup.policy, internal topics).
    #[arg(long, value_delimiter = ',')]
    compacted: Vec<String>,
    /// Budget of decompressed bytes per segment for --deep (and `__consumer_offsets`
    /// checks); compressed batches beyond it are checked by header and CRC only, and a
    /// `decompression_budget_exceeded` finding says so.
    #[arg(long, default_value_t = klogscan::scan::DEFAULT_MAX_DECOMPRESSED_PER_FILE)]
    max_decompressed_per_file: u64,
    /// Memory-map sealed segments (auto) or read every byte (never). Either way a file
    /// that shrinks or fails while it is read is reported, never a crash.
    #[arg(long, value_enum, default_value = "auto")]
    mmap: MmapArg,
    /// Follow symlinks found inside the given directories (like `rg -L`); paths given on
    /// the command line are always followed.
    #[arg(long, short = 'L')]
    follow: bool,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum MmapArg {
    Auto,
    Never,
}

impl MmapArg {
    fn mode(self) -> klogscan::segment::MmapMode {
        match self {
            MmapArg::Auto => klogscan::segment::MmapMode::Auto,
            MmapArg::Never => klogscan::segment::MmapMode::Never,
        }
    }
}

/// `--threads` above [`klogscan::scan::MAX_THREADS`] is capped, with a warning.
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

fn capped_threads(n: Option<usize>) -> Option<usize> {
    let max = klogscan::scan::MAX_THREADS;
    n.map(|n| {
        if n > max {
            eprintln!("klogscan: warning: --threads {n} capped at {max}");
        }
        n.clamp(1, max)
    })
}

/// Print every file of a partition that could not be (fully) read on stderr; true when
/// there was one (the run is then incomplete: exit 2). Paths that could not be read at all
/// (`report.errors`, partition -1) are printed by [`input_failures`].
fn report_unreadable(findings: &[klogscan::Finding]) -> bool {
    let mut any = false;
    for f in findings
        .iter()
        .filter(|f| f.kind == klogscan::Kind::UnreadableFile && f.partition >= 0)
    {
        eprintln!("klogscan: {}", klogscan::escape::text(&f.message));
        any = true;
    }
    any
}

#[derive(Args)]
struct DumpArgs {
    /// Files to dump: .log, .checkpoint (KRaft snapshots), .index, .timeindex, .txnindex, .snapshot;
    /// inside an archive as the reports name them (`x.tgz!/dir/file`, a directory, or `x.tgz`).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// One line per record.
    #[arg(long)]
    deep_iteration: bool,
    /// Print keys and payloads (implies --deep-iteration).
    #[arg(long)]
    print_data_log: bool,
    /// Omit per-record metadata (with --print-data-log).
    #[arg(long)]
    skip_record_metadata: bool,
    /// Read at most this many bytes of each .log file.
    #[arg(long)]
    max_bytes: Option<u64>,
    /// Decode `__transaction_state` records (implies --print-data-log).
    #[arg(long)]
    transaction_log_decoder: bool,
    /// Decode `__consumer_offsets` records (implies --print-data-log).
    #[arg(long)]
    offsets_decoder: bool,
    /// Decode `__share_group_state` records (implies --print-data-log).
    #[arg(long)]
    share_group_state_decoder: bool,
    /// Decode KRaft metadata records of __cluster_metadata and snapshots (implies --print-data-log).
    #[arg(long)]
    cluster_metadata_decoder: bool,
    /// Print --offsets-decoder output in the Kafka <=3.7 text form, not the 3.8+/4.x JSON.
    #[arg(long)]
    legacy_decoder_text: bool,
    /// Decode `__transaction_state` records in Kafka 4.x's JSON shape (implies
    /// --transaction-log-decoder; without it the ≤3.x Scala text is printed).
    #[arg(long)]
    transaction_log_json: bool,
    /// For .index/.timeindex files: run only the broker's index sanity check.
    #[arg(long)]
    index_sanity_check: bool,
    /// For .index/.timeindex files: check the entries against the log, print only problems.
    #[arg(long)]
    verify_index_only: bool,
    /// text (kafka-dump-log's shape) or json (JSON Lines, every line with a `type`).
    #[arg(long, value_enum, default_value = "text")]
    format: DumpOutFormat,
    /// Cap on one batch's decompressed size, in bytes.
    #[arg(long, default_value_t = klogscan::format::codec::DEFAULT_MAX_DECOMPRESSED)]
    max_decompressed: usize,
    /// Worker threads formatting pieces of large files (default: one per core); the
    /// output is the same for any number.
    #[arg(long)]
    threads: Option<usize>,
    /// Memory-map large index/snapshot/log files loaded whole (auto) or read them
    /// (never: files above 256 MiB are then refused).
    #[arg(long, value_enum, default_value = "auto")]
    mmap: MmapArg,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum DumpOutFormat {
    /// kafka-dump-log's text.
    #[value(alias = "table")]
    Text,
    /// JSON Lines (docs/dump-json.md).
    #[value(alias = "jsonl")]
    Json,
}

fn scan_options(a: &ScanArgs) -> Result<ScanOptions> {
    let mut o = ScanOptions {
        check_crc: !a.no_crc,
        deep: a.deep,
        threads: capped_threads(a.threads),
        mmap: a.mmap.mode(),
        max_decompressed_per_file: a.max_decompressed_per_file,
        follow_symlinks: a.follow,
        max_bytes: a.max_bytes,
        max_decompressed: a.max_decompressed,
        now_ms: a.now,
        compacted_topics: a.compacted.clone(),
        // Only `producers` prints every producer's state (it turns this back on).
        keep_producers: false,
        ..Default::default()
    };
    o.replay.hanging_after_ms = a.hanging_after;
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

/// How human output looks: colour per `--color` and `NO_COLOR`, borders and width per
/// whether stdout is a terminal.
fn style(color: ColorChoice) -> Style {
    let tty = io::stdout().is_terminal();
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let color = match color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => tty && !no_color,
    };
    if tty {
        Style::terminal(color, comfy_table::Table::new().width())
    } else {
        Style {
            color,
            ..Style::default()
        }
    }
}

/// The filters of `a`, with `--transactional-id` resolved through the coordinator's log.
fn filter(a: &ScanArgs, inputs: &[PathBuf], opts: &ScanOptions) -> Result<Filter> {
    let mut f = Filter {
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
    };
    if !a.transactional_id.is_empty() {
        use klogscan::coordinator::CoordinatorView;
        let view = CoordinatorView::load(&klogscan::layout::discover(inputs), opts);
        if view.is_empty() {
            anyhow::bail!(
                "--transactional-id needs the coordinator's log: add the __transaction_state-N directories to the inputs"
            );
        }
        for id in &a.transactional_id {
            let Some(t) = view.ids.get(id) else {
                anyhow::bail!(
                    "transactional id {id:?} is not in the __transaction_state partitions read ({:?})",
                    view.partitions_read
                );
            };
            for p in [t.producer_id, t.previous_producer_id, t.next_producer_id] {
                if p >= 0 && !f.producer_ids.contains(&p) {
                    f.producer_ids.push(p);
                }
            }
        }
    }
    Ok(f)
}

/// Extract the archives among the inputs, print their warnings.
fn prepare(paths: &[PathBuf]) -> Result<Prepared> {
    let p = archive::prepare(paths, &archive::Limits::default())?;
    for w in &p.warnings {
        eprintln!("klogscan: {w}");
    }
    Ok(p)
}

/// Scan `a.paths` (archives extracted), fill the client errors, apply the filters; with
/// `--format html`, read the timelines while extracted archives still exist.
/// With `stream` (`--format jsonl`), each partition is written as soon as the pipeline
/// hands it over, filtered and path-mapped as the finished report will be.
fn scan_shown(
    a: &ScanArgs,
    keep_producers: bool,
    stream: Option<&mut jsonl::Stream<'_>>,
) -> Result<(ScanReport, Vec<Option<Timeline>>)> {
    let inputs = prepare(&a.paths)?;
    let opts = ScanOptions {
        // A producer filter shows the partitions where the producer appears.
        keep_producers: keep_producers
            || !a.producer_id.is_empty()
            || !a.transactional_id.is_empty(),
        ..scan_options(a)?
    };
    let flt = filter(a, &inputs.paths, &opts)?;
    let mut report = match stream {
        None => pipeline::scan(&inputs.paths, &opts),
        Some(s) => {
            let given: Vec<String> = inputs
                .paths
                .iter()
                .map(|p| inputs.display(&p.display().to_string()))
                .collect();
            s.begin(&given)?;
            pipeline::scan_streaming(&inputs.paths, &opts, &mut |p, fs| {
                let mut fs = fs.to_vec();
                report::client::fill(&mut fs);
                let shown = flt.partition_shown(p, &fs);
                fs.retain(|f| flt.finding_matches(f));
                fs.iter_mut().for_each(|f| inputs.fix_finding(f));
                let mut v = serde_json::to_value(p).unwrap_or_default();
                inputs.fix_value(&mut v);
                let path = inputs.display(&p.path);
                s.partition(&v, &path, &fs, shown);
            })
        }
    };
    report::client::fill(&mut report.findings);
    flt.apply(&mut report);
    let timelines = if a.format == OutFormat::Html {
        html::timelines(&report)
    } else {
        Vec::new()
    };
    inputs.fix_report(&mut report);
    report.errors.extend(inputs.failed.iter().cloned());
    Ok((report, timelines))
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
    if report.nothing_read() {
        eprintln!("klogscan: no partition found under the given paths");
    }
    out.flush()?;
    let incomplete = report_unreadable(&report.findings);
    Ok(input_failures(
        &report.errors,
        exit_code(
            report.nothing_read() || incomplete,
            report.max_severity(),
            fail_on,
        ),
    ))
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
    let (report, _) = scan_shown(a, keep_producers, None)?;
    match a.format {
        OutFormat::Json => as_json(&report, &mut klogscan::escape::JsonWriter::new(&mut *out))?,
        OutFormat::Table => as_table(
            &report,
            style,
            &mut klogscan::escape::JsonWriter::text(&mut *out),
        )?,
        other => anyhow::bail!(
            "--format {} is for `klogscan scan`; producers and txns print table or json",
            other
                .to_possible_value()
                .map_or("?".into(), |v| v.get_name().to_string())
        ),
    }
    if report.nothing_read() {
        eprintln!("klogscan: no partition found under the given paths");
    }
    out.flush()?;
    let incomplete = report_unreadable(&report.findings);
    Ok(input_failures(
        &report.errors,
        exit_code(
            report.nothing_read() || incomplete,
            report.max_severity(),
            a.fail_on,
        ),
    ))
}

fn run(cli: Cli) -> Result<ExitCode> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let style = style(cli.color);
    match cli.command {
        Command::Scan(a) if a.format == OutFormat::Jsonl => {
            let mut w = klogscan::escape::JsonWriter::new(&mut out);
            let mut stream = jsonl::Stream::new(&mut w, a.findings_only);
            let (report, _) = scan_shown(&a, false, Some(&mut stream))?;
            stream.finish(&report)?;
            finish_scan(&report, &mut out, a.fail_on)
        }
        Command::Scan(a) => {
            let (report, timelines) = scan_shown(&a, false, None)?;
            match a.format {
                OutFormat::Html => html::write_scan(&report, &timelines, &mut out)?,
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
        Command::Txns(a) if a.cluster => {
            let time = |t: &Option<String>| {
                t.as_deref()
                    .map(report::parse_time)
                    .transpose()
                    .map_err(anyhow::Error::msg)
            };
            // The cluster view filters transactions itself, with every value of the
            // repeatable filters; finding filters have no transaction to act on.
            for (given, flag) in [
                (a.scan.since.is_some(), "--since"),
                (a.scan.until.is_some(), "--until"),
                (a.scan.offsets.is_some(), "--offsets"),
                (a.scan.min_severity.is_some(), "--min-severity"),
            ] {
                if given {
                    anyhow::bail!(
                        "{flag} selects findings; txns --cluster lists transactions: use --from/--to, --topic, --partition, --producer-id, --transactional-id"
                    );
                }
            }
            let filter = klogscan::report::filter::TxnFilter {
                transactional_ids: a.scan.transactional_id.clone(),
                producer_ids: a.scan.producer_id.clone(),
                topics: a.scan.topic.clone(),
                partition: a.scan.partition,
                from_ms: time(&a.from)?,
                to_ms: time(&a.to)?,
            };
            let inputs = prepare(&a.scan.paths)?;
            let mut report = pipeline::scan(&inputs.paths, &scan_options(&a.scan)?);
            inputs.fix_report(&mut report);
            report.errors.extend(inputs.failed.iter().cloned());
            match a.scan.format {
                OutFormat::Json => json::write_cluster_txns(
                    &report,
                    &filter,
                    &mut klogscan::escape::JsonWriter::new(&mut out),
                )?,
                OutFormat::Table => table::write_cluster_txns_with(
                    &report,
                    &filter,
                    &style,
                    &mut text_out(&mut out, &style),
                )?,
                other => anyhow::bail!(
                    "--format {} is for `klogscan scan`; txns prints table or json",
                    other
                        .to_possible_value()
                        .map_or("?".into(), |v| v.get_name().to_string())
                ),
            }
            out.flush()?;
            Ok(input_failures(
                &report.errors,
                exit_code(report.nothing_read(), report.max_severity(), a.scan.fail_on),
            ))
        }
        Command::Txns(a) => scan_view(
            &a.scan,
            &style,
            &mut out,
            json::write_txns,
            table::write_txns_with,
            false,
        ),
        Command::Groups(a) => {
            use klogscan::groups::{self, GroupType, GroupsOptions, render};
            let group_type = match a.group_type.as_deref().map(GroupType::parse) {
                Some(None) => anyhow::bail!("--type: expected classic, consumer, share or streams"),
                Some(t) => t,
                None => None,
            };
            let inv = klogscan::layout::discover(&a.paths);
            if !inv.partitions.iter().any(|p| {
                p.tp.as_ref()
                    .is_some_and(|tp| tp.topic == "__consumer_offsets")
            }) {
                eprintln!("klogscan: no __consumer_offsets partition found");
                return Ok(ExitCode::from(2));
            }
            let opts = GroupsOptions {
                group: a.group.clone(),
                group_type,
                include_deleted: a.deleted,
                ..Default::default()
            };
            let list = groups::list_groups(&inv, &opts);
            match a.format {
                OutFormat::Json => render::write_json(&list, &mut out)?,
                OutFormat::Table if a.members => render::write_members_table(&list, &mut out)?,
                OutFormat::Table => render::write_table(&list, &mut out)?,
                other => anyhow::bail!(
                    "--format {} is for `klogscan scan`; groups prints table or json",
                    other
                        .to_possible_value()
                        .map_or("?".into(), |v| v.get_name().to_string())
                ),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Verify(a) => {
            use klogscan::verify::{self, VerifyOptions, render};
            if a.scan.max_bytes.is_some() {
                // The cross-checks compare indexes, snapshots and checkpoints with the log
                // end: on a partial read they would report what was not read.
                eprintln!(
                    "klogscan: verify needs whole segments: --max-bytes is not supported here (use scan --max-bytes)"
                );
                return Ok(ExitCode::from(2));
            }
            let inputs = prepare(&a.scan.paths)?;
            let scan = scan_options(&a.scan)?;
            let flt = filter(&a.scan, &inputs.paths, &scan)?;
            let opts = VerifyOptions {
                scan,
                broker_version: a
                    .broker_version
                    .as_deref()
                    .map(str::parse)
                    .transpose()
                    .map_err(anyhow::Error::msg)?,
            };
            let mut report = verify::verify(&inputs.paths, &opts);
            inputs.fix_verify(&mut report);
            report.errors.extend(inputs.failed.iter().cloned());
            report::client::fill(&mut report.findings);
            flt.retain_findings(&mut report.findings);
            report
                .partitions
                .retain(|p| flt.partition_matches(&p.topic, p.partition));
            for p in &mut report.partitions {
                report::client::fill(&mut p.findings);
                flt.retain_findings(&mut p.findings);
            }
            if flt.is_active() {
                // The summary counts what is shown.
                let ps = &report.partitions;
                let s = &mut report.summary;
                s.partitions = ps.len();
                s.recovered = ps
                    .iter()
                    .filter(|p| !p.prediction.recovered_segments.is_empty())
                    .count();
                s.truncated = ps
                    .iter()
                    .filter(|p| p.prediction.truncation.is_some())
                    .count();
                s.load_failures = ps
                    .iter()
                    .filter(|p| p.prediction.load_failure.is_some())
                    .count();
                s.findings = report::filter::counts(&report.findings);
            }
            match a.scan.format {
                OutFormat::Json => {
                    render::write_json(&report, &mut klogscan::escape::JsonWriter::new(&mut out))?
                }
                OutFormat::Table => report::verify_text::write_verify(
                    &report,
                    &style,
                    &mut text_out(&mut out, &style),
                )?,
                other => anyhow::bail!(
                    "--format {} is for `klogscan scan`; verify prints table or json",
                    other
                        .to_possible_value()
                        .map_or("?".into(), |v| v.get_name().to_string())
                ),
            }
            if report.nothing_read() {
                eprintln!("klogscan: no partition found under the given paths");
            }
            out.flush()?;
            let incomplete = report_unreadable(&report.findings);
            Ok(input_failures(
                &report.errors,
                exit_code(
                    report.nothing_read() || incomplete,
                    report.max_severity(),
                    a.scan.fail_on,
                ),
            ))
        }
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "klogscan", &mut out);
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            clap_mangen::Man::new(Cli::command()).render(&mut out)?;
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Dump(a) => {
            let format = match a.format {
                DumpOutFormat::Text => DumpFormat::Text,
                DumpOutFormat::Json => DumpFormat::Json,
            };
            let opts = DumpOptions {
                deep_iteration: a.deep_iteration
                    || a.print_data_log
                    || a.transaction_log_decoder
                    || a.transaction_log_json
                    || a.offsets_decoder
                    || a.share_group_state_decoder
                    || a.cluster_metadata_decoder,
                print_data_log: a.print_data_log
                    || a.transaction_log_decoder
                    || a.transaction_log_json
                    || a.offsets_decoder
                    || a.share_group_state_decoder
                    || a.cluster_metadata_decoder,
                skip_record_metadata: a.skip_record_metadata,
                max_bytes: a.max_bytes,
                format,
                max_decompressed: Some(a.max_decompressed),
                transaction_log_decoder: a.transaction_log_decoder || a.transaction_log_json,
                transaction_log_json: a.transaction_log_json,
                offsets_decoder: a.offsets_decoder,
                share_group_state_decoder: a.share_group_state_decoder,
                cluster_metadata_decoder: a.cluster_metadata_decoder,
                legacy_decoder_text: a.legacy_decoder_text,
                index_sanity_check: a.index_sanity_check,
                verify_index_only: a.verify_index_only,
                piece_bytes: None,
                mmap: a.mmap.mode(),
                piece_text_cap: None,
            };
            let stderr = io::stderr();
            // Buffered: a crafted file can make millions of stderr lines.
            let mut err = BufWriter::new(stderr.lock());
            if let Some(n) = capped_threads(a.threads) {
                // The output locks cannot move to a pool thread: size the global pool.
                let _ = rayon::ThreadPoolBuilder::new()
                    .num_threads(n.max(1))
                    .build_global();
            }
            // JSON Lines: C1 controls and DEL as \u escapes too (`escape::JsonWriter`).
            let mut json_out;
            let mut json_err;
            let (o, e): (&mut dyn Write, &mut dyn Write) = if format == DumpFormat::Json {
                json_out = klogscan::escape::JsonWriter::new(&mut out);
                json_err = klogscan::escape::JsonWriter::new(&mut err);
                (&mut json_out, &mut json_err)
            } else {
                (&mut out, &mut err)
            };
            // Archives (`x.tgz`, `x.tgz!/dir/file`): the files asked for are extracted and
            // named by their place in the archive.
            let inputs = dump::archive_inputs::prepare(&a.paths, &archive::Limits::default())?;
            for w in &inputs.prepared.warnings {
                eprintln!("klogscan: {}", klogscan::escape::text(w));
            }
            let failed = inputs.refused.iter().chain(&inputs.prepared.failed);
            let mut input_failed = false;
            for (p, why) in failed {
                eprintln!(
                    "klogscan: {}: {}",
                    klogscan::escape::path(p),
                    klogscan::escape::text(why)
                );
                input_failed = true;
            }
            let json = format == DumpFormat::Json;
            let mut rw_out;
            let mut rw_err;
            let (o, e): (&mut dyn Write, &mut dyn Write) = if inputs.prepared.has_archives() {
                rw_out = dump::archive_inputs::Rewrite::new(o, &inputs.prepared, json);
                rw_err = dump::archive_inputs::Rewrite::new(e, &inputs.prepared, json);
                (&mut rw_out, &mut rw_err)
            } else {
                (o, e)
            };
            let status = dump::dump_paths(&inputs.paths, &opts, o, e)?;
            o.flush()?;
            e.flush()?;
            out.flush()?;
            err.flush()?;
            Ok(
                if status.files == 0 || status.unreadable_files > 0 || input_failed {
                    ExitCode::from(2)
                } else if status.has_problems() {
                    ExitCode::from(1)
                } else {
                    ExitCode::SUCCESS
                },
            )
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
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
