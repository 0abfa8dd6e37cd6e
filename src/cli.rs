//! The command line's arguments (clap derive): what `run` in `main.rs` dispatches on.

use crate::help;
use clap::{Args, Parser, Subcommand, ValueEnum};
use klogscan::report;
use klogscan::report::filter::OffsetRange;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "klogscan",
    version,
    about = "Offline forensic analyzer for Apache Kafka broker data directories",
    long_about = "Reads Kafka segment files, indexes, snapshots and checkpoints directly (read-only), rebuilds \
producer and transaction state like a broker, and reports anomalies: hanging transactions, zombie writes \
(KAFKA-9144), epoch regressions, sequence gaps, corrupt or truncated batches.\n\n\
Exit codes: 0 clean (also when the filters match nothing: \"nothing matches the filters\"), \
1 findings at or above --fail-on, 2 no partition found, bad arguments, or an input failed \
(a path that does not exist or is not Kafka data; reported on stderr)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Colour: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, value_enum, default_value = "auto", global = true)]
    pub color: ColorChoice,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand)]
pub enum Command {
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
    /// Committed offsets of every group held against their partitions: lag to the high
    /// watermark and the last stable offset, hanging transactions, truncation, retention.
    #[command(after_help = help::CONSUMERS)]
    Consumers(ConsumersArgs),
    /// Cross-check indexes, snapshots and checkpoints against the log, and predict what a
    /// broker does with each partition on its next start (truncation, deleted segments, load failures).
    #[command(after_help = help::VERIFY)]
    Verify(VerifyArgs),
    /// The leadership history replayed from the KRaft metadata log: per partition its
    /// leaders, leader epochs, ISR, ELR and recovery state, and each election's choice.
    #[command(after_help = help::HISTORY)]
    History(HistoryArgs),

    /// Run the per-partition stage over one broker's log dirs and write an evidence bundle
    /// (read-only on the data; user topics' keys and values stay out of it).
    #[command(after_help = help::COLLECT)]
    Collect(CollectArgs),
    /// Merge evidence bundles from `collect` into the report `scan` gives over all their
    /// directories on one machine (same output options as scan).
    #[command(after_help = help::MERGE)]
    Merge(ScanArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = help::COMPLETIONS)]
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff) on stdout.
    #[command(after_help = help::MAN)]
    Man,
}

#[derive(Args)]
pub struct GroupsArgs {
    /// Broker data dirs, partition dirs, or directories above them.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Only this group id.
    #[arg(long)]
    pub group: Option<String>,
    /// Only groups of this type: classic, consumer, share, streams.
    #[arg(long = "type")]
    pub group_type: Option<String>,
    /// Also list deleted groups.
    #[arg(long)]
    pub deleted: bool,
    /// One line per member instead of one per group (table format).
    #[arg(long)]
    pub members: bool,
    #[arg(long, value_enum, default_value = "table")]
    pub format: OutFormat,
    #[command(flatten)]
    pub ids: ClusterIdArgs,
}

#[derive(Args)]
pub struct ConsumersArgs {
    /// Broker data dirs, partition dirs, or directories above them (the groups'
    /// `__consumer_offsets` and their data partitions).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Only this group id.
    #[arg(long)]
    pub group: Option<String>,
    /// Only this topic.
    #[arg(long)]
    pub topic: Option<String>,
    /// Only this partition number (0 or more).
    #[arg(long, allow_negative_numbers = true, value_parser = partition_number)]
    pub partition: Option<i32>,
    /// Reference time for "hanging" (`now`, epoch ms or RFC 3339); default: the newest batch
    /// timestamp in each partition's log dir.
    #[arg(long, value_parser = report::parse_time)]
    pub now: Option<i64>,
    /// An open transaction idle longer than this is hanging (500ms, 900s, 15m, 2h, 1d).
    #[arg(long, default_value = "15m", value_parser = report::parse_duration)]
    pub hanging_after: i64,
    /// Worker threads (default, or 0: one per core).
    #[arg(long, value_parser = usize_value)]
    pub threads: Option<usize>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: OutFormat,
    #[command(flatten)]
    pub ids: ClusterIdArgs,
}

#[derive(Args)]
pub struct HistoryArgs {
    /// Broker data dirs, partition dirs, or directories above them.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Only this topic.
    #[arg(long)]
    pub topic: Option<String>,
    /// Only this partition number (0 or more).
    #[arg(long, allow_negative_numbers = true, value_parser = partition_number)]
    pub partition: Option<i32>,
    /// Only changes at or after this time (now, epoch ms, or RFC 3339).
    #[arg(long, value_parser = report::parse_time)]
    pub since: Option<i64>,
    /// Only changes at or before this time.
    #[arg(long, value_parser = report::parse_time)]
    pub until: Option<i64>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: OutFormat,
}

#[derive(Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub scan: ScanArgs,
    /// Version of the broker that will load the data (e.g. 2.4.0, or a Confluent Platform
    /// version such as 5.4.0-ccs, read as the Kafka version it ships): below 2.4.1 a
    /// coordinator-epoch regression fails the load (KAFKA-9144); below 3.4.0 a loaded
    /// producer expires after 7 days, not 1; it also decides the coordinators' loads that
    /// only some releases fail (group records before KAFKA-19453/19862/20254/20570, an
    /// unknown transaction log value from 4.3.0), whether a producer left at epoch 32767 is
    /// stuck (not from 4.3.0, KAFKA-20090) and, from 4.4.0, transaction index entry
    /// versions read as a whole int16 (KAFKA-19562).
    #[arg(long)]
    pub broker_version: Option<klogscan::verify::BrokerVersion>,
}

#[derive(Args)]
pub struct TxnsArgs {
    #[command(flatten)]
    pub scan: ScanArgs,
    /// One row per cluster transaction (its partitions joined, with the coordinator's
    /// record when `__transaction_state` is in the inputs) instead of statistics.
    #[arg(long)]
    pub cluster: bool,
    /// With --cluster: only transactions still open at or ending after this time (now, epoch
    /// ms, RFC 3339, a date, or a duration ago: 2h).
    #[arg(long, requires = "cluster", value_parser = report::parse_time)]
    pub from: Option<i64>,
    /// With --cluster: only transactions started at or before this time (as --from).
    #[arg(long, requires = "cluster", value_parser = report::parse_time)]
    pub to: Option<i64>,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
pub enum OutFormat {
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
pub enum MinSeverity {
    Error,
    Warning,
    Info,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

#[derive(Args)]
pub struct ScanArgs {
    /// Broker data dirs, partition dirs, segment files, or directories above them.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: OutFormat,
    /// The per-partition options (`collect` takes the same).
    #[command(flatten)]
    pub part: PartitionArgs,
    /// Exit 1 when a finding (among those shown) reaches this severity; a filter matching
    /// nothing exits 0 ("nothing matches the filters").
    #[arg(long, value_enum, default_value = "error")]
    pub fail_on: FailOn,
    /// Show only topics matching these globs (`*`, `?`, `[...]`) or `topic-N` partition names
    /// as the table shows them; comma-separated. Filters select what is shown, never what is
    /// analysed.
    #[arg(long, value_delimiter = ',')]
    pub topic: Vec<String>,
    /// Show only this partition number (0 or more).
    #[arg(long, allow_negative_numbers = true, value_parser = partition_number)]
    pub partition: Option<i32>,
    /// Show only this producer id (repeatable, comma-separated).
    #[arg(long, value_delimiter = ',', value_parser = i64_value)]
    pub producer_id: Vec<i64>,
    /// Show only the producer ids this transactional id maps to in `__transaction_state`
    /// (the coordinator's log must be among the inputs).
    #[arg(long)]
    pub transactional_id: Vec<String>,
    /// Show only findings whose batch timestamp is at or after this time (RFC 3339 with Z or an offset, a date 2019-11-05, a duration ago 2h/30m/1d, epoch ms, now; no offset: UTC).
    #[arg(long, value_parser = report::parse_time)]
    pub since: Option<i64>,
    /// Show only findings whose batch timestamp is at or before this time.
    #[arg(long, value_parser = report::parse_time)]
    pub until: Option<i64>,
    /// Show only findings at these offsets: A..B (B excluded), A..=B, A.., ..B or A.
    #[arg(long, value_parser = report::filter::parse_offsets)]
    pub offsets: Option<OffsetRange>,
    /// Show only findings of at least this severity.
    #[arg(long, value_enum)]
    pub min_severity: Option<MinSeverity>,
    /// With --format html: also draw the timeline of these partitions, findings or not
    /// (`topic-N`, a topic glob, or a partition directory's path; repeatable,
    /// comma-separated). With --producer-id, the HTML report also shows each producer in
    /// every partition it wrote to, on one time axis.
    #[arg(long, value_delimiter = ',', value_name = "PARTITION")]
    pub timeline: Vec<String>,
    /// Only the triage summary and the findings (no partition table).
    #[arg(long)]
    pub findings_only: bool,
    /// The tiered storage's remote segments: a directory in Kafka's `LocalTieredStorage`
    /// layout (the one holding `kafka-tiered-storage/`, or that directory itself) or in the
    /// Aiven plugin's object layout; an object store URL (`s3://bucket/prefix`) with the
    /// `remote-object-store` feature. Checked against the `__remote_log_metadata` records,
    /// and replayed before the local segments (the whole history).
    #[arg(long, value_name = "DIR")]
    pub remote_storage: Option<PathBuf>,
    /// Cross-partition join: how far a partition's marker or open data may lie outside a
    /// coordinator transaction's window (Prepare…Complete for a marker, start…Prepare for
    /// open data) and still be that transaction's; only a tie-break (500ms, 30s, 2m).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = report::parse_duration)]
    pub coordinator_tolerance: i64,
    /// Cross-partition join without the coordinator's records (TV0/1): how long after the
    /// coordinator's Prepare record a transaction's first marker may land; data stamped
    /// earlier than that before a transaction's first marker is that transaction's.
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = report::parse_duration)]
    pub marker_delay: i64,
}

/// The options that shape per-partition results: `scan`'s, and `collect`'s (every broker of
/// one merge is collected with the same ones; the bundle records them).
#[derive(Args, Clone)]
pub struct PartitionArgs {
    /// Reference time for "hanging" (`now`, epoch ms, RFC 3339, a date, or a duration ago: 2h); default: the newest batch
    /// timestamp in each partition's log dir.
    #[arg(long, value_parser = report::parse_time)]
    pub now: Option<i64>,
    /// An open transaction idle longer than this is hanging; a unit is required
    /// (500ms, 900s, 15m, 2h, 1d).
    #[arg(long, default_value = "15m", value_parser = report::parse_duration)]
    pub hanging_after: i64,
    /// Worker threads (default, or 0: one per core).
    #[arg(long, value_parser = usize_value)]
    pub threads: Option<usize>,
    /// Skip CRC verification (header walk only).
    #[arg(long)]
    pub no_crc: bool,
    /// Decompress and check records too (record counts, offset deltas, maxTimestamp).
    #[arg(long)]
    pub deep: bool,
    /// Read at most this many bytes of each segment.
    #[arg(long, value_parser = u64_value)]
    pub max_bytes: Option<u64>,
    /// Cap on one batch's decompressed size, in bytes.
    #[arg(long, default_value_t = klogscan::read::format::codec::DEFAULT_MAX_DECOMPRESSED, value_parser = usize_value)]
    pub max_decompressed: usize,
    /// Topics known to be compacted (comma-separated), besides what the inputs prove
    /// (cleaner-offset-checkpoint, KRaft cleanup.policy, internal topics).
    #[arg(long, value_delimiter = ',')]
    pub compacted: Vec<String>,
    /// Budget of decompressed bytes per segment for --deep (and `__consumer_offsets`
    /// checks); compressed batches beyond it are checked by header and CRC only, and a
    /// `decompression_budget_exceeded` finding says so.
    #[arg(long, default_value_t = klogscan::partition::scan::DEFAULT_MAX_DECOMPRESSED_PER_FILE, value_parser = u64_value)]
    pub max_decompressed_per_file: u64,
    /// Memory-map segments of 1 MiB or more and read smaller files (auto), or read every
    /// byte (never). Either way a file
    /// that shrinks or fails while it is read is reported, never a crash.
    #[arg(long, value_enum, default_value = "auto")]
    pub mmap: MmapArg,
    /// Follow symlinks found inside the given directories (like `rg -L`); paths given on
    /// the command line are always followed.
    #[arg(long, short = 'L')]
    pub follow: bool,
    #[command(flatten)]
    pub ids: ClusterIdArgs,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum MmapArg {
    Auto,
    Never,
}

impl MmapArg {
    pub fn mode(self) -> klogscan::read::segment::MmapMode {
        match self {
            MmapArg::Auto => klogscan::read::segment::MmapMode::Auto,
            MmapArg::Never => klogscan::read::segment::MmapMode::Never,
        }
    }
}

#[derive(Args)]
pub struct DumpArgs {
    /// Files to dump: .log, .checkpoint (KRaft snapshots), .index, .timeindex, .txnindex, .snapshot;
    /// inside an archive as the reports name them (`x.tgz!/dir/file`, a directory, or `x.tgz`).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// One line per record.
    #[arg(long)]
    pub deep_iteration: bool,
    /// Print keys and payloads (implies --deep-iteration).
    #[arg(long)]
    pub print_data_log: bool,
    /// Omit per-record metadata (with --print-data-log).
    #[arg(long)]
    pub skip_record_metadata: bool,
    /// Read at most this many bytes of each .log file.
    #[arg(long, value_parser = u64_value)]
    pub max_bytes: Option<u64>,
    /// Decode `__transaction_state` records (implies --print-data-log).
    #[arg(long)]
    pub transaction_log_decoder: bool,
    /// Decode `__consumer_offsets` records (implies --print-data-log).
    #[arg(long)]
    pub offsets_decoder: bool,
    /// Decode `__share_group_state` records (implies --print-data-log).
    #[arg(long)]
    pub share_group_state_decoder: bool,
    /// Decode KRaft metadata records of __cluster_metadata and snapshots (implies --print-data-log).
    #[arg(long)]
    pub cluster_metadata_decoder: bool,
    /// Decode `__remote_log_metadata` records (tiered storage; implies --print-data-log).
    #[arg(long)]
    pub remote_log_metadata_decoder: bool,
    /// Print --offsets-decoder output in the Kafka <=3.7 text form, not the 3.8+/4.x JSON.
    #[arg(long)]
    pub legacy_decoder_text: bool,
    /// Decode `__transaction_state` records in Kafka 4.x's JSON shape (implies
    /// --transaction-log-decoder; without it the ≤3.x Scala text is printed).
    #[arg(long)]
    pub transaction_log_json: bool,
    /// For .index/.timeindex files: run only the broker's index sanity check.
    #[arg(long)]
    pub index_sanity_check: bool,
    /// For .index/.timeindex files: check the entries against the log, print only problems.
    #[arg(long)]
    pub verify_index_only: bool,
    /// text (kafka-dump-log's shape) or json (JSON Lines, every line with a `type`).
    #[arg(long, value_enum, default_value = "text")]
    pub format: DumpOutFormat,
    /// Cap on one batch's decompressed size, in bytes.
    #[arg(long, default_value_t = klogscan::read::format::codec::DEFAULT_MAX_DECOMPRESSED, value_parser = usize_value)]
    pub max_decompressed: usize,
    /// Worker threads formatting pieces of large files (default, or 0: one per core); the
    /// output is the same for any number.
    #[arg(long, value_parser = usize_value)]
    pub threads: Option<usize>,
    /// Memory-map segments and index/snapshot/log files of 1 MiB or more (auto) or read
    /// them (never: files loaded whole above 256 MiB are then refused).
    #[arg(long, value_enum, default_value = "auto")]
    pub mmap: MmapArg,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum DumpOutFormat {
    /// kafka-dump-log's text.
    #[value(alias = "table")]
    Text,
    /// JSON Lines (docs/dump-json.md).
    #[value(alias = "jsonl")]
    Json,
}

/// The command line as parsed, completed and documented: each command's `--format` offers
/// (in `--help`, completions and the man page) and accepts only the formats it prints —
/// `scan` and `merge` every one; `producers`, `txns`, `verify`, `groups`, `consumers` and
/// `history` `table` and `json`.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    let only = |names: &[&str]| {
        let values: Vec<clap::builder::PossibleValue> = OutFormat::value_variants()
            .iter()
            .filter_map(ValueEnum::to_possible_value)
            .filter(|v| names.contains(&v.get_name()))
            .collect();
        PossibleValuesParser::new(values)
            .map(|s| OutFormat::from_str(&s, false).unwrap_or(OutFormat::Table))
    };
    let mut cmd = Cli::command();
    for sub in [
        "producers",
        "txns",
        "verify",
        "groups",
        "consumers",
        "history",
    ] {
        let parser = only(&["table", "json"]);
        cmd = cmd.mut_subcommand(sub, |c| c.mut_arg("format", |a| a.value_parser(parser)));
    }
    cmd
}

/// Parse the process's arguments with [`command`] (exits with clap's message on an error,
/// or with the help or version asked for: [`exit`]).
pub fn parse() -> Cli {
    use clap::FromArgMatches;
    let matches = command().try_get_matches().unwrap_or_else(|e| exit(e));
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| exit(e));
    // `--threads 0` chooses, as ripgrep's `-j 0` does: one per core, as without it.
    let threads = match &mut cli.command {
        Command::Scan(a) | Command::Producers(a) | Command::Merge(a) => Some(&mut a.part.threads),
        Command::Txns(a) => Some(&mut a.scan.part.threads),
        Command::Verify(a) => Some(&mut a.scan.part.threads),
        Command::Dump(a) => Some(&mut a.threads),
        Command::Consumers(a) => Some(&mut a.threads),
        Command::Collect(a) => Some(&mut a.part.threads),
        _ => None,
    };
    if let Some(t) = threads.filter(|t| **t == Some(0)) {
        *t = None;
    }
    cli
}

/// clap's `Error::exit`, with two differences. A usage error echoes the value given: its
/// control characters are escaped ([`klogscan::escape::text`]) as in every other
/// diagnostic, never sent raw to the terminal. Help and version go to standard output, and
/// a write that fails is not ignored: exit 2 with the reason on stderr, except for a
/// reader that went away (a broken pipe), which ends quietly as every output does.
fn exit(mut e: clap::Error) -> ! {
    use clap::error::ContextValue;
    use std::io::Write;
    let escaped: Vec<_> = e
        .context()
        .filter_map(|(kind, value)| match value {
            ContextValue::String(s) if klogscan::escape::text(s) != s.as_str() => Some((
                kind,
                ContextValue::String(klogscan::escape::text(s).into_owned()),
            )),
            ContextValue::Strings(v)
                if v.iter().any(|s| klogscan::escape::text(s) != s.as_str()) =>
            {
                let v = v.iter().map(|s| klogscan::escape::text(s).into_owned());
                Some((kind, ContextValue::Strings(v.collect())))
            }
            _ => None,
        })
        .collect();
    for (kind, value) in escaped {
        e.insert(kind, value);
    }
    if e.use_stderr() {
        e.exit()
    }
    match e.print().and_then(|()| std::io::stdout().flush()) {
        Ok(()) => std::process::exit(0),
        Err(w) if w.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(w) => {
            eprintln!("klogscan: {}", klogscan::escape::text(&w.to_string()));
            std::process::exit(2)
        }
    }
}

/// `collect`: the per-partition options of `scan` (they shape the results: every broker of
/// one merge is collected with the same), and where the bundle goes.
#[derive(Args)]
pub struct CollectArgs {
    /// One broker's log dirs (its `log.dirs`), or anything `scan` takes.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The bundle to write (as FILE.partial first, renamed once complete); `-`, a pipe or
    /// a device is written as a stream. Never inside an input (the evidence is read-only).
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    #[command(flatten)]
    pub part: PartitionArgs,
    /// The tiered storage's remote segments, as `scan --remote-storage` takes them (a
    /// `LocalTieredStorage` or Aiven directory; an object store URL with the
    /// `remote-object-store` feature): each tiered partition's remote segments are replayed
    /// before its local ones. Give the merge the same storage (its checks walk the objects).
    #[arg(long, value_name = "DIR")]
    pub remote_storage: Option<PathBuf>,
    /// With --remote-storage: another broker's log dir (or a `__remote_log_metadata-N`
    /// directory) holding the `__remote_log_metadata` partition that names this broker's
    /// remote segments, when this broker holds no copy of it; read-only, for the remote
    /// history only (repeatable).
    #[arg(long, value_name = "DIR", requires = "remote_storage")]
    pub remote_log_metadata: Vec<PathBuf>,
}

/// `--cluster-id ID=PATH`, shared by every command that discovers inputs.
#[derive(Args, Clone, Default)]
pub struct ClusterIdArgs {
    /// The directories under PATH are cluster ID (repeatable: `--cluster-id ID=PATH`), for
    /// evidence copied without `meta.properties`, so that the joins within one cluster run.
    /// It fills a missing `meta.properties` only: one naming another cluster is an error.
    #[arg(long = "cluster-id", value_name = "ID=PATH")]
    pub cluster_id: Vec<klogscan::results::GivenClusterId>,
}

/// `--partition`: a partition number is 0 or more — the digits after the last `-` of a
/// topic-partition directory's name (`LocalLog.parseTopicPartitionName`), never a sign —
/// and a 32-bit int (`TopicPartition.partition`): a negative one would match nothing.
fn partition_number(s: &str) -> Result<i32, String> {
    if report::whole_number(s).is_some_and(|n| n < 0) {
        return Err(format!(
            "partition {s} is negative: a partition number is 0 or more (the number after the last '-' of a topic-partition directory's name, as LocalLog.parseTopicPartitionName reads it)"
        ));
    }
    within(s, 0, i32::MAX.into())
}

/// An integer option's value in `min..=max`: beyond it, too large (or negative, too
/// small), never "not a number" ([`report::parse_whole`]).
fn within<T: TryFrom<i128>>(s: &str, min: i128, max: i128) -> Result<T, String> {
    let n = report::parse_whole(s, min, max)?;
    T::try_from(n).map_err(|_| format!("{s} is out of range"))
}

fn u64_value(s: &str) -> Result<u64, String> {
    within(s, 0, u64::MAX.into())
}

fn usize_value(s: &str) -> Result<usize, String> {
    within(s, 0, i128::try_from(usize::MAX).unwrap_or(i128::MAX))
}

fn i64_value(s: &str) -> Result<i64, String> {
    within(s, i64::MIN.into(), i64::MAX.into())
}
