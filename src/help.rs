//! Examples shown at the end of each subcommand's `--help` (and in the man page).

pub const SCAN: &str = "\
Examples:
  klogscan scan /var/lib/kafka/data                  # a broker's log dir: triage summary, tables
  klogscan scan broker1.tgz broker2.tar.zst          # archives, read in place (paths shown as broker1.tgz!/...)
  klogscan scan data --topic payments-3 --findings-only
  klogscan scan data --producer-id 4001 --since 2019-11-05T10:00:00Z --offsets 0..100
  klogscan scan data --transactional-id orders-tx-1  # needs __transaction_state-N among the inputs
  klogscan scan data --format find-hanging           # the columns of kafka-transactions.sh find-hanging
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

pub const GROUPS: &str = "\
Examples:
  klogscan groups /var/lib/kafka/data
  klogscan groups data --group orders-app --members
  klogscan groups data --type consumer --deleted --format json";

pub const COLLECT: &str = "\
Writes one evidence bundle for `klogscan merge`: the broker's identity (cluster id, node id,
log dirs), every partition's results, a fingerprint of every batch (offsets, size, CRC) for
the replica comparison, the file inventory, the tool version and these options.
zstd-compressed and checksummed; user topics' keys and values are not in it. Collect every
broker of one merge with the same options. See docs/cluster.md.

Examples:
  klogscan collect /var/lib/kafka/data --out /tmp/broker-1.klb
  klogscan collect /data/d1 /data/d2 --out broker-2.klb --now 2026-03-01T12:00:00Z";

pub const MERGE: &str = "\
Runs the cluster stage (coordinator confirmation, transactions across partitions, replica
comparison, groups) over bundles from `klogscan collect` and prints what `klogscan scan`
prints over all their directories on one machine. A directory argument stands for its
*.klb files. Per-partition options (--no-crc, --deep, --now, ...) belong to collect.
A file that is not a bundle, truncated, corrupt or of another version is an input error
(exit 2).

Examples:
  klogscan merge broker-1.klb broker-2.klb broker-3.klb
  klogscan merge bundles/ --format html > report.html
  klogscan merge bundles/ --format find-hanging";
