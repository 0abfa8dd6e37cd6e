//! Examples shown at the end of each subcommand's `--help` (and in the man page).

pub const SCAN: &str = "\
Examples:
  klogscan scan /var/lib/kafka/data                  # a broker's log dir: triage summary, tables
  klogscan scan broker1.tgz broker2.tar.zst          # archives, read in place (paths shown as broker1.tgz!/...)
  klogscan scan data --topic payments-3 --findings-only
  klogscan scan data --producer-id 4001 --since 2019-11-05T10:00:00Z --offsets 0..100
  klogscan scan data --transactional-id orders-tx-1  # needs __transaction_state-N among the inputs
  klogscan scan data --format find-hanging           # the columns of kafka-transactions.sh find-hanging
  klogscan scan data --format html --timeline payments-3,orders-0 > report.html  # timelines of clean partitions too
  klogscan scan data --format html --producer-id 4001 > p4001.html  # producer 4001 in every partition it wrote to
  klogscan scan data --format jsonl | jq -c 'select(.type == \"finding\")'
  klogscan scan data --format json --fail-on warning > report.json";

pub const PRODUCERS: &str = "\
Examples:
  klogscan producers /var/lib/kafka/data --topic payments
  klogscan producers data --topic payments-3 --producer-id 4001 --format json";

pub const TXNS: &str = "\
Examples:
  klogscan txns /var/lib/kafka/data
  klogscan txns data --topic 'orders*' --format json --fail-on warning
  klogscan txns data --cluster --transactional-id billing --from 2019-11-05T10:00:00Z";

pub const DUMP: &str = "\
Examples:
  klogscan dump data/payments-3/00000000000000000000.log --deep-iteration
  klogscan dump data/__transaction_state-7/00000000000000000000.log --transaction-log-decoder
  klogscan dump data/payments-3/00000000000000000000.index --verify-index-only
  klogscan dump data/payments-3/*.snapshot --format json
  klogscan dump 'broker1.tgz!/data/payments-3/00000000000000000000.log'
  klogscan dump broker1.tgz --format json";

pub const VERIFY: &str = "\
Examples:
  klogscan verify /var/lib/kafka/data
  klogscan verify data --broker-version 2.4.0 --topic payments-3
  klogscan verify broker1.tgz --format json";

pub const COMPLETIONS: &str = "\
Examples:
  klogscan completions bash > ~/.local/share/bash-completion/completions/klogscan
  klogscan completions zsh > ~/.zfunc/_klogscan
  klogscan completions fish > ~/.config/fish/completions/klogscan.fish";

pub const MAN: &str = "\
Examples:
  klogscan man > klogscan.1 && man ./klogscan.1
  sudo sh -c 'klogscan man > /usr/local/share/man/man1/klogscan.1'";

pub const CONSUMERS: &str = "\
Examples:
  klogscan consumers /var/lib/kafka/data
  klogscan consumers broker-*/data --group billing --topic payments
  klogscan consumers data --format json --now 2026-03-01T12:00:00Z

One row per group and committed partition: the committed offset and leader epoch, the
partition's log start, last stable offset (LSO), checkpointed high watermark (HW, a lower
bound) and log end (shown when it differs from the HW), the lag to the HW and to the LSO, and
the first hanging transaction. Commits of partitions not in the inputs (or of another
cluster) are counted below the table. The consumer findings follow the rows.";

pub const HISTORY: &str = "\
Examples:
  klogscan history /var/lib/kafka/data
  klogscan history broker1 broker2 --topic orders --partition 0
  klogscan history data --since 2024-05-01T00:00:00Z --format json";

pub const GROUPS: &str = "\
Examples:
  klogscan groups /var/lib/kafka/data
  klogscan groups data --group orders-app --members
  klogscan groups data --type consumer --deleted --format json";

/// The man page's EXIT STATUS section (roff).
const EXIT_STATUS: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
No finding at or above \fB\-\-fail\-on\fR (default error) among those shown; also when the filters match nothing ("nothing matches the filters": the partitions were found and analysed).
.TP
\fB1\fR
A finding at or above \fB\-\-fail\-on\fR among those shown (\fBdump\fR: anything dumped is invalid).
.TP
\fB2\fR
No partition found under the given paths, bad arguments, or an input failed (a path that does not exist, is not Kafka data, or a file that could not be read); the reasons are printed on stderr first.
"#;

/// The suggested commands' quoting (roff).
const COMMANDS_NOTE: &str = r#".SH "SUGGESTED COMMANDS"
Values from the data (transactional ids, topics, paths) in the commands klogscan suggests are quoted for POSIX shells (sh, dash, bash, zsh, ksh). A value that cannot be pasted safely (empty, control or invisible characters) is replaced by a placeholder such as <transactional\-id>, with a note.
"#;

/// Write the complete man page, klogscan(1): the global options, then every command with
/// its synopsis, description, every flag and its examples, then the exit status — one page,
/// so no reference points to a page that is not installed.
pub fn write_man(mut cmd: clap::Command, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    cmd.build();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(w)?;
    man.render_name_section(w)?;
    man.render_synopsis_section(w)?;
    man.render_description_section(w)?;
    man.render_options_section(w)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("klogscan {}", sub.get_name());
        writeln!(w, ".SH \"{}\"", name.to_uppercase())?;
        let m = clap_mangen::Man::new(sub.clone());
        let mut buf = Vec::new();
        m.render_synopsis_section(&mut buf)?;
        m.render_description_section(&mut buf)?;
        m.render_options_section(&mut buf)?;
        if sub.get_after_help().is_some() || sub.get_after_long_help().is_some() {
            m.render_extra_section(&mut buf)?;
        }
        // The command's own sections become subsections of its section.
        for line in String::from_utf8_lossy(&buf).lines() {
            match line.strip_prefix(".SH ") {
                Some(h) => writeln!(w, ".SS {}", h.replace("EXTRA", "EXAMPLES"))?,
                None => writeln!(w, "{line}")?,
            }
        }
    }
    w.write_all(EXIT_STATUS.as_bytes())?;
    w.write_all(COMMANDS_NOTE.as_bytes())?;
    w.flush()
}

pub const COLLECT: &str = "\
Writes one evidence bundle for `klogscan merge`: the broker's identity (cluster id, node id,
log dirs), every partition's results, a fingerprint of every batch (offsets, size, CRC) for
the replica comparison, the file inventory, the tool version and these options.
zstd-compressed and checksummed; user topics' keys and values are not in it. Collect every
broker of one merge with the same options. With tiered storage, --remote-storage replays the
remote segments here, and the merge is given the same storage; when this broker holds no copy
of the __remote_log_metadata partition naming its remote segments, --remote-log-metadata
names a log dir that does (another broker's, read-only). See docs/cluster.md.

Examples:
  klogscan collect /var/lib/kafka/data --out /tmp/broker-1.klb
  klogscan collect /data/d1 /data/d2 --out broker-2.klb --now 2026-03-01T12:00:00Z";

pub const MERGE: &str = "\
Runs the cluster stage (coordinator confirmation, transactions across partitions, replica
comparison, groups) over bundles from `klogscan collect` and prints what `klogscan scan`
prints over all their directories on one machine. A directory argument stands for its
*.klb files; `-` is standard input, and a pipe is read once (copied to an unlinked file
under TMPDIR). Per-partition options (--no-crc, --deep, --now, ...) belong to collect.
--remote-storage is given to both or neither: bundles collected without it are refused by a
merge given it (their remote history was not replayed), and the reverse.
A file that is not a bundle, truncated, corrupt or of another version is an input error
(exit 2).

Examples:
  klogscan merge broker-1.klb broker-2.klb broker-3.klb
  klogscan merge bundles/ --format html > report.html
  klogscan merge bundles/ --format find-hanging
  klogscan merge <(ssh broker-1 klogscan collect /var/lib/kafka/data --out -) b2.klb";
