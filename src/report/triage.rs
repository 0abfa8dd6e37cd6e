//! The triage summary: findings grouped into incidents, each told in a few lines — where,
//! what is wrong, since when, the root cause and what follows from it, what the clients
//! saw, and the commands that fix it. Also the `find-hanging` view of hanging transactions.
//!
//! An incident is a connected group of findings: linked by `caused_by` (a rule's claim that
//! one finding follows from another), about the same batch (same partition copy, producer
//! and offset — a zombie write, the epoch regression of the same batch and the transaction
//! it leaves hanging), or repeats of one kind in one partition copy (a flapping producer's
//! sequence gaps). The same hanging transaction seen in the live copies of several brokers
//! of one cluster (the same findings there: kinds, offsets, producers) is one incident, its
//! commands given once (`replicas`). Groups of info findings only are not incidents.

use super::client;
use super::filter::finding_time;
use super::format_ms;
use super::style::{wrap, wrap_command};
use crate::finding::evidence::{self, CoordinatorJoint, OpenTxnJoint, ZombieJoint};
use crate::finding::{Finding, Kind, Severity};
use crate::results::ScanReport;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::{self, Write};

mod replicas;

/// One incident.
#[derive(Debug, Clone, Serialize)]
pub struct Incident {
    pub severity: Severity,
    /// `topic-N` names; in a report of several brokers (clusters) followed by the brokers
    /// (the cluster) that show it: `payments-3 (brokers 1, 2)`.
    pub partitions: Vec<String>,
    /// What is wrong, in one sentence.
    pub summary: String,
    /// The earliest and latest batch timestamps among its findings (ms).
    pub since: Option<i64>,
    pub last_seen: Option<i64>,
    /// Id of the root-cause finding.
    pub root: String,
    /// Ids of the findings that follow from it, in causal order.
    pub follows: Vec<String>,
    /// What the applications experienced.
    pub clients: Vec<String>,
    /// What to do, in one sentence, for damage (`crc_mismatch`, `truncated_batch`,
    /// `truncation_below_high_watermark`, …): re-fetch from an intact replica, or save the
    /// only copy first; `commands` then runs it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// Exact commands that fix it (or confirm, then fix).
    pub commands: Vec<String>,
    /// Remediation sentences of the findings, when there is no command.
    pub advice: Vec<String>,
    /// How to run `commands`: once for the same transaction in several brokers' copies;
    /// before a restart that `verify` predicts forgets the transaction; why a placeholder
    /// (`<transactional-id>`, `<topic>`) stands instead of a value from the data (commands
    /// are quoted for POSIX shells), and the operator's own placeholders.
    pub notes: Vec<String>,
    /// Indexes into the report's findings (root first).
    #[serde(skip)]
    pub members: Vec<usize>,
}

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        parent[ra.max(rb)] = ra.min(rb);
    }
}

/// Position of a kind in the catalogue: causes come before consequences there (integrity,
/// then epochs and sequences, then transactions).
fn kind_rank(k: Kind) -> usize {
    Kind::ALL.iter().position(|x| *x == k).unwrap_or(usize::MAX)
}

fn tp(f: &Finding) -> String {
    super::partition_name(&f.topic, f.partition, f.source.path.as_deref())
}

/// Group findings into incidents, most severe first; the partitions are named with their
/// brokers when the findings come from several brokers (clusters: their clusters).
pub fn incidents(findings: &[Finding]) -> Vec<Incident> {
    incidents_with(findings, replicas::Naming::of(findings, std::iter::empty()))
}

/// The incidents of a report ([`incidents`] of its findings), the partitions named with
/// their brokers when the report holds several brokers' partitions, with findings or not
/// (clusters: their clusters). What the reports show.
pub fn incidents_in(report: &ScanReport) -> Vec<Incident> {
    let sources = report.partitions.iter().map(|p| &p.source);
    incidents_with(
        &report.findings,
        replicas::Naming::of(&report.findings, sources),
    )
}

fn incidents_with(findings: &[Finding], naming: replicas::Naming) -> Vec<Incident> {
    let n = findings.len();
    let mut parent: Vec<usize> = (0..n).collect();
    let by_id: HashMap<&str, usize> = findings
        .iter()
        .enumerate()
        .map(|(i, f)| (f.id.as_str(), i))
        .collect();
    // A partition copy: its cluster, broker and kind of copy (two clusters may share
    // broker ids and topic names).
    let copy = |f: &'_ Finding| {
        let s = &f.source;
        (tp(f), s.cluster_id.clone(), s.broker_id, s.copy.as_str())
    };
    type Copy = (
        String,
        Option<std::sync::Arc<str>>,
        Option<i32>,
        &'static str,
    );
    let mut same_batch: HashMap<(Copy, i64, i64), usize> = HashMap::new();
    let mut same_kind: HashMap<(Copy, Kind), usize> = HashMap::new();
    for (i, f) in findings.iter().enumerate() {
        // Repeats of one kind in one partition copy are one incident (a thousand sequence
        // gaps of a flapping producer are one problem, not a thousand).
        let key = (copy(f), f.kind);
        match same_kind.get(&key) {
            Some(&j) => union(&mut parent, i, j),
            None => {
                same_kind.insert(key, i);
            }
        }
        for c in &f.caused_by {
            if let Some(&j) = by_id.get(c.as_str()) {
                union(&mut parent, i, j);
            }
        }
        if let (Some(o), Some(p)) = (f.offset, f.producer_id) {
            let key = (copy(f), o, p);
            match same_batch.get(&key) {
                Some(&j) => union(&mut parent, i, j),
                None => {
                    same_batch.insert(key, i);
                }
            }
        }
    }
    let mut groups: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for i in 0..n {
        let r = find(&mut parent, i);
        groups.entry(r).or_default().push(i);
    }
    let groups = replicas::merge_same_state(findings, groups.into_values().collect());
    let ctx = Context {
        by_id,
        naming,
        forgotten: forgotten(findings),
    };
    let mut out: Vec<Incident> = groups
        .into_iter()
        .filter(|g| g.iter().any(|&i| findings[i].severity >= Severity::Warning))
        .map(|g| incident(findings, g, &ctx))
        .collect();
    out.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.members.first().cmp(&b.members.first()))
    });
    out
}

/// What the incidents of one report share.
struct Context<'a> {
    by_id: HashMap<&'a str, usize>,
    naming: replicas::Naming,
    /// The open transactions (copy's directory, producer id, first offset) that `verify`
    /// predicts the copy's next start forgets ([`forgotten`]).
    forgotten: HashSet<(Option<&'a str>, i64, i64)>,
}

/// The open transactions a `snapshot_mismatch` of `verify` says the copy's next start
/// forgets (a clean shutdown and no producer snapshot: `evidence.open`). `scan` predicts no
/// restart: none there.
fn forgotten(findings: &[Finding]) -> HashSet<(Option<&str>, i64, i64)> {
    let mut out = HashSet::new();
    for f in findings.iter().filter(|f| f.kind == Kind::SnapshotMismatch) {
        for t in f
            .evidence
            .get("open")
            .and_then(|o| o.as_array())
            .into_iter()
            .flatten()
        {
            if let (Some(p), Some(o)) = (
                t.get("producer_id").and_then(|v| v.as_i64()),
                t.get("first_offset").and_then(|v| v.as_i64()),
            ) {
                out.insert((f.source.path.as_deref(), p, o));
            }
        }
    }
    out
}

fn incident(findings: &[Finding], mut g: Vec<usize>, ctx: &Context<'_>) -> Incident {
    let by_id = &ctx.by_id;
    let member: BTreeSet<usize> = g.iter().copied().collect();
    // Causal order: a finding after the findings it is caused by; ties by catalogue order.
    let depth = |i: usize| {
        let mut d = 0usize;
        let mut cur = vec![i];
        let mut seen = BTreeSet::new();
        while let Some(x) = cur.pop() {
            if !seen.insert(x) || seen.len() > 64 {
                continue;
            }
            for c in &findings[x].caused_by {
                if let Some(&j) = by_id.get(c.as_str())
                    && member.contains(&j)
                {
                    d = d.max(seen.len());
                    cur.push(j);
                }
            }
        }
        d
    };
    g.sort_by_key(|&i| (depth(i), kind_rank(findings[i].kind), findings[i].offset, i));
    let root = &findings[g[0]];
    let severity = g
        .iter()
        .map(|&i| findings[i].severity)
        .max()
        .unwrap_or(Severity::Info);
    let partitions = replicas::partition_names(findings, &g, ctx.naming);
    let times: Vec<i64> = g
        .iter()
        .filter_map(|&i| finding_time(&findings[i]))
        .collect();
    let since = times.iter().min().copied();
    let last_seen = times.iter().max().copied();
    let stuck = g.iter().map(|&i| &findings[i]).find(|f| {
        matches!(f.kind, Kind::HangingTransaction | Kind::LsoBelowLogStart)
            && f.source.copy.is_live()
    });
    let summary = match stuck {
        Some(h) => {
            let lso = evidence::read::<OpenTxnJoint>(h)
                .last_stable_offset
                .or(h.offset)
                .map_or("?".to_string(), |o| o.to_string());
            let who = match (h.producer_id, h.producer_epoch) {
                (Some(p), Some(e)) => format!("producer {p}@{e}"),
                (Some(p), None) => format!("producer {p}"),
                _ => "a producer".into(),
            };
            let why = cause_phrase(findings, &g);
            format!(
                "{}: last stable offset stuck at {lso}{} — open transaction of {who}{why}",
                tp(h),
                finding_time(h).map_or(String::new(), |t| format!(" since {}", format_ms(t)))
            )
        }
        None => {
            let more = g.iter().filter(|&&i| findings[i].kind == root.kind).count() - 1;
            if more > 0 {
                format!(
                    "{}: {} (and {more} more {})",
                    tp(root),
                    root.message,
                    root.kind
                )
            } else {
                format!("{}: {}", tp(root), root.message)
            }
        }
    };
    let clients = clients_of(findings, &g);
    let mut commands = Vec::new();
    let mut advice = Vec::new();
    let mut notes = replicas::replicated_notes(findings, &g);
    let mut args = crate::escape::ShellArgs::default();
    for &i in &g {
        let f = &findings[i];
        // A transaction the coordinator still owns (Ongoing or Prepare* listing the
        // partition) is not aborted by hand: its remediation says what to do instead.
        let abortable = !CoordinatorJoint::owned_by_coordinator(f);
        if matches!(f.kind, Kind::HangingTransaction) && f.source.copy.is_live() && abortable {
            if let Some(o) = f.offset {
                // Verify's prediction: the copy's next start forgets the transaction.
                if let Some(p) = f.producer_id
                    && ctx.forgotten.contains(&(f.source.path.as_deref(), p, o))
                {
                    notes.push(crate::partition::recovery::forgotten_transaction_note(
                        o,
                        f.source.broker_id,
                    ));
                }
                commands.extend(hanging_commands(f, o, &mut args));
            }
        } else if let Some(r) = &f.remediation
            && !advice.contains(r)
        {
            advice.push(r.clone());
        }
    }
    // Damage ends with a decision and its commands, never with an empty remedy.
    let decision = super::decision::damage(findings, &g, &mut args).map(|d| {
        commands.extend(d.commands);
        d.decision
    });
    // Several hanging transactions of one partition share its find-hanging line.
    let mut seen = HashSet::new();
    commands.retain(|c| seen.insert(c.clone()));
    notes.extend(placeholder_notes(&commands, args.notes()));
    let mut seen = HashSet::new();
    notes.retain(|n| seen.insert(n.clone()));
    Incident {
        severity,
        partitions,
        summary,
        since,
        last_seen,
        root: root.id.clone(),
        follows: g[1..].iter().map(|&i| findings[i].id.clone()).collect(),
        clients,
        notes,
        commands,
        advice,
        decision,
        members: g,
    }
}

/// The commands of the hanging transaction `f` at offset `o`: confirm, describe its
/// transactional id when the coordinator's log names one, abort (also for brokers before
/// 3.0). Every value quoted for a POSIX shell, or a placeholder and a note.
fn hanging_commands(f: &Finding, o: i64, args: &mut crate::escape::ShellArgs) -> Vec<String> {
    let topic = crate::escape::flag("topic", &args.topic(&f.topic));
    let part = args.partition(f.partition);
    let mut commands = vec![format!(
        "kafka-transactions.sh --bootstrap-server <broker> find-hanging {topic} --partition {part}"
    )];
    if let Some(id) = CoordinatorJoint::of(f).and_then(|c| c.transactional_id) {
        commands.push(format!(
            "kafka-transactions.sh --bootstrap-server <broker> describe {}",
            args.option(
                "transactional-id",
                &id,
                "transactional-id",
                "the transactional id"
            )
        ));
    }
    commands.push(format!(
        "kafka-transactions.sh --bootstrap-server <broker> abort {topic} --partition {part} --start-offset {o}"
    ));
    commands.extend(abort_before_3_0(f, &topic, &part));
    commands
}

/// The notes of `commands`: why a value from the data is a placeholder (`from_data`), then
/// the operator's own values to fill in (`<broker>`, `<server.properties>`): left as they
/// are, a POSIX shell reads `<` and `>` as redirections.
fn placeholder_notes(commands: &[String], from_data: &[String]) -> Vec<String> {
    let mut notes = from_data.to_vec();
    let own: Vec<&str> = ["<broker>", "<server.properties>"]
        .into_iter()
        .filter(|p| commands.iter().any(|c| c.contains(p)))
        .collect();
    if !own.is_empty() {
        notes.push(format!(
            "{}: yours to fill in before running (a shell reads < and > as redirections)",
            own.join(", ")
        ));
    }
    notes
}

/// Incidents told in the text summary (the most severe first); JSON and HTML hold all.
pub(crate) const MAX_SHOWN: usize = 20;
/// Follow-on findings named in an incident's `then:` line.
const MAX_CHAIN: usize = 8;

/// Why a stuck transaction is stuck, from the incident's findings (empty when unknown).
fn cause_phrase(findings: &[Finding], g: &[usize]) -> String {
    let of = |k: Kind| g.iter().map(|&i| &findings[i]).find(|f| f.kind == k);
    if let Some(z) = of(Kind::ZombieWrite) {
        let fenced = evidence::read::<ZombieJoint>(z)
            .marker
            .map_or(String::new(), |m| format!(" at epoch {}", m.producer_epoch));
        return format!(
            ": zombie producer {}@{} wrote after being fenced{fenced} (KAFKA-9144)",
            z.producer_id.unwrap_or(-1),
            z.producer_epoch.unwrap_or(-1)
        );
    }
    if let Some(n) = of(Kind::NonTransactionalWriteInTransaction) {
        return format!(": {}", n.message);
    }
    if let Some(r) = of(Kind::ProducerEpochRegression) {
        return format!(": {}", r.message);
    }
    match CoordinatorJoint::of(&findings[g[0]]) {
        Some(c) => format!(" (coordinator: {})", c.verdict),
        None => " that no marker closes".into(),
    }
}

/// Text from the data (names, ids, messages quoting them) for a text output, control
/// characters escaped ([`crate::escape`]): no terminal command, no forged line.
fn esc(s: &str) -> String {
    crate::escape::text(s).into_owned()
}

/// Write the triage summary (nothing when there is no incident).
pub(crate) fn write_summary(
    report: &ScanReport,
    incidents: &[Incident],
    style: &super::style::Style,
    w: &mut dyn Write,
) -> io::Result<()> {
    if incidents.is_empty() {
        return Ok(());
    }
    let mut buf = Vec::new();
    write_blocks(report, incidents, style, &mut buf)?;
    let text = String::from_utf8_lossy(&buf);
    if style.unicode {
        w.write_all(text.as_bytes())
    } else {
        // Files and pipes get plain ASCII punctuation.
        w.write_all(text.replace('—', "-").replace('→', "->").as_bytes())
    }
}

fn write_blocks(
    report: &ScanReport,
    incidents: &[Incident],
    style: &super::style::Style,
    w: &mut dyn Write,
) -> io::Result<()> {
    let title = format!(
        "TRIAGE: {} incident{}",
        incidents.len(),
        if incidents.len() == 1 { "" } else { "s" }
    );
    writeln!(w, "{}", style.heading(&title, None))?;
    for (n, inc) in incidents.iter().enumerate().take(MAX_SHOWN) {
        let f = &report.findings;
        let root = &f[inc.members[0]];
        let width = usize::from(style.width);
        let tag = format!("[{}] {}", n + 1, inc.severity.as_str().to_uppercase());
        writeln!(
            w,
            "\n{} {}",
            style.heading(&tag, Some(inc.severity)),
            wrap(&esc(&inc.summary), width, tag.len() + 1, 4)
        )?;
        writeln!(w, "    partitions: {}", esc(&inc.partitions.join(", ")))?;
        if let Some(s) = inc.since {
            let last = inc
                .last_seen
                .filter(|l| *l != s)
                .map_or(String::new(), |l| format!(" (last seen {})", format_ms(l)));
            writeln!(w, "    since:      {}{last}", format_ms(s))?;
        }
        let line = format!(
            "{} @{} ({}): {}",
            root.kind,
            root.offset.map_or("-".into(), |o| o.to_string()),
            root.id,
            root.message
        );
        writeln!(w, "    root cause: {}", wrap(&esc(&line), width, 16, 16))?;
        if inc.members.len() > 1 {
            let mut chain: Vec<String> = inc.members[1..]
                .iter()
                .take(MAX_CHAIN)
                .map(|&i| {
                    format!(
                        "{} @{}{}",
                        f[i].kind,
                        f[i].offset.map_or("-".into(), |o| o.to_string()),
                        elsewhere(&f[i], root)
                    )
                })
                .collect();
            if inc.members.len() - 1 > MAX_CHAIN {
                chain.push(format!("{} more", inc.members.len() - 1 - MAX_CHAIN));
            }
            let line = format!("→ {}", chain.join(" → "));
            writeln!(w, "    then:       {}", wrap(&line, width, 16, 16))?;
        }
        if !inc.clients.is_empty() {
            let line = esc(&inc.clients.join("; "));
            writeln!(w, "    clients:    {}", wrap(&line, width, 16, 16))?;
        }
        if let Some(d) = &inc.decision {
            writeln!(w, "    decision:   {}", wrap(d, width, 16, 16))?;
        }
        for (k, c) in inc.commands.iter().enumerate() {
            // Wrapped as the shell continues a line: a copy-paste still runs.
            writeln!(
                w,
                "    {}{}",
                if k == 0 {
                    "fix:        "
                } else {
                    "            "
                },
                wrap_command(&esc(c), width, 16, 18)
            )?;
        }
        for n in &inc.notes {
            writeln!(w, "    note:       {}", wrap(n, width, 16, 16))?;
        }
        if inc.commands.is_empty() {
            for (k, a) in inc.advice.iter().enumerate() {
                writeln!(
                    w,
                    "    {}{}",
                    if k == 0 {
                        "fix:        "
                    } else {
                        "            "
                    },
                    wrap(&esc(a), width, 16, 16)
                )?;
            }
        }
    }
    if incidents.len() > MAX_SHOWN {
        writeln!(
            w,
            "\n... and {} more incidents (the JSON report's `incidents` lists them all)",
            incidents.len() - MAX_SHOWN
        )?;
    }
    writeln!(w, "\nDETAILS")?;
    Ok(())
}

/// ` (broker N)` after a follow-on finding of another broker than the root's (the same
/// transaction in another copy, a coordinator's log), else nothing.
pub(crate) fn elsewhere(f: &Finding, root: &Finding) -> String {
    match f.source.broker_id {
        Some(b) if f.source.broker_id != root.source.broker_id => format!(" (broker {b})"),
        _ => String::new(),
    }
}

/// What the incident's clients saw, one phrase each (the kind's table, rule by rule).
fn clients_of(findings: &[Finding], g: &[usize]) -> Vec<String> {
    let mut clients: Vec<String> = Vec::new();
    // The first exception of each phrase: its line, and whether the producer ends fatal.
    let mut exceptions: HashMap<&str, (usize, bool)> = HashMap::new();
    // A copy no client reads (-delete, -stray, -future) gives no client line, nor does a
    // finding whose rule said no client sees an error for it (a marker's epoch check, field
    // values the leader accepts): the kind's table would say otherwise.
    let said_none = |f: &Finding| {
        f.client_error
            .as_deref()
            .is_some_and(|c| c.starts_with("none"))
    };
    for &i in g.iter().filter(|&&i| findings[i].source.copy.is_live()) {
        if let Some(c) = client::for_kind(findings[i].kind)
            .filter(|c| c.exception == "none" || !said_none(&findings[i]))
        {
            let first = c.exception.split('/').next().unwrap_or("").trim();
            let fatal = c.class == client::ErrorClass::ApplicationRecoverable;
            if c.exception != "none"
                && let Some(&(at, was_fatal)) = exceptions.get(first)
            {
                // The same refusal on the way to a fatal end (a zombie's epoch, then
                // PRODUCER_FENCED): the fatal phrase stands for both.
                if fatal && !was_fatal {
                    clients[at] = client::short_of(&findings[i], &c);
                    exceptions.insert(first, (at, true));
                }
                continue;
            }
            let mut s = client::short_of(&findings[i], &c);
            if c.consumers
                .is_some_and(|t| t.contains("last stable offset"))
                && let Some(o) = evidence::read::<OpenTxnJoint>(&findings[i])
                    .last_stable_offset
                    .or(findings[i].offset)
            {
                s = s.replace("at the last stable offset", &format!("at offset {o}"));
            }
            if !clients.contains(&s) {
                if c.exception != "none" {
                    exceptions.insert(first, (clients.len(), fatal));
                }
                clients.push(s);
            }
        }
    }
    clients
}

/// The abort of a hanging transaction for brokers before 3.0, which have no
/// DescribeProducers to find it by its start offset: producer id and epoch, and the
/// coordinator epoch the partition holds (-1 taken as 0, as the tool does).
fn abort_before_3_0(f: &Finding, topic: &str, part: &str) -> Option<String> {
    let (pid, epoch) = (f.producer_id?, f.producer_epoch?);
    let c = evidence::read::<OpenTxnJoint>(f)
        .coordinator_epoch
        .unwrap_or(-1);
    Some(format!(
        "kafka-transactions.sh --bootstrap-server <broker> abort {topic} --partition {part} --producer-id {pid} --producer-epoch {epoch} --coordinator-epoch {}   # the same, on brokers before 3.0",
        c.max(0)
    ))
}

/// One row of `kafka-transactions.sh find-hanging`'s output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HangingRow {
    pub topic: String,
    pub partition: i32,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub coordinator_epoch: i32,
    pub start_offset: i64,
    pub last_timestamp: i64,
    /// Minutes idle at the reference time, as the tool's `Duration(min)`.
    pub duration_min: i64,
}

/// The hanging transactions of the live copies, as `find-hanging` lists them: not one the
/// coordinator still owns (`FindHangingTransactionsCommand.filterHangingTransactions` drops
/// a candidate whose transactional id's description lists the partition, whatever its age:
/// `TransactionsCommandTest.testFindHangingFilterByTransactionInProgressWithSamePartition`).
/// One row per cluster, partition and transaction, however many brokers' copies show it: the
/// tool asks one replica per partition (the leader, or the `--broker-id` one:
/// `FindHangingTransactionsCommand.collectCandidateOpenTransactions`), and a second abort
/// of the same transaction fails; the first copy in report order gives the row.
pub fn hanging_rows(findings: &[Finding]) -> Vec<HangingRow> {
    let mut seen = std::collections::HashSet::new();
    findings
        .iter()
        .filter(|f| f.kind == Kind::HangingTransaction && f.source.copy.is_live())
        .filter(|f| !CoordinatorJoint::owned_by_coordinator(f))
        .filter(|f| {
            let key = (
                f.source.cluster_id.clone(),
                &f.topic,
                f.partition,
                f.producer_id,
                f.producer_epoch,
                f.offset,
            );
            seen.insert(key)
        })
        .filter_map(|f| {
            let e = evidence::read::<OpenTxnJoint>(f);
            Some(HangingRow {
                topic: f.topic.clone(),
                partition: f.partition,
                producer_id: f.producer_id?,
                producer_epoch: f.producer_epoch?,
                coordinator_epoch: e.coordinator_epoch.unwrap_or(-1),
                start_offset: f.offset?,
                last_timestamp: e.last_timestamp.unwrap_or(-1),
                // As the tool computes it: from LastTimestamp, whatever floor the idleness
                // took (`TransactionsCommand.printHangingTransactions`).
                duration_min: match (e.reference_time_ms, e.last_timestamp) {
                    (Some(r), Some(l)) => r.saturating_sub(l).max(0) / 60_000,
                    _ => e.idle_ms.unwrap_or(0) / 60_000,
                },
            })
        })
        .collect()
}

/// Header of `find-hanging`'s table.
pub(crate) const HANGING_HEADER: [&str; 8] = [
    "Topic",
    "Partition",
    "ProducerId",
    "ProducerEpoch",
    "CoordinatorEpoch",
    "StartOffset",
    "LastTimestamp",
    "Duration(min)",
];

/// Write the rows as the tool does: columns padded with spaces, a header line.
pub fn write_hanging(rows: &[HangingRow], w: &mut dyn Write) -> io::Result<()> {
    let cells: Vec<Vec<String>> = std::iter::once(HANGING_HEADER.map(String::from).to_vec())
        .chain(rows.iter().map(|r| {
            vec![
                esc(&r.topic),
                r.partition.to_string(),
                r.producer_id.to_string(),
                r.producer_epoch.to_string(),
                r.coordinator_epoch.to_string(),
                r.start_offset.to_string(),
                r.last_timestamp.to_string(),
                r.duration_min.to_string(),
            ]
        }))
        .collect();
    let widths: Vec<usize> = (0..HANGING_HEADER.len())
        .map(|c| {
            cells
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    // `ToolsUtils.prettyPrintTable` → `printRow`: each value padded with spaces to its
    // column's width, then a tab — after the last column too.
    for row in &cells {
        let mut line = String::new();
        for (c, v) in row.iter().enumerate() {
            line.push_str(&format!("{v:<width$}\t", width = widths[c]));
        }
        writeln!(w, "{line}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
