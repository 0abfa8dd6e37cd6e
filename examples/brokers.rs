//! Test data for the deployments' end-to-end runs: one of the testkit's multi-broker
//! scenarios written under a root, and for each broker a `server.properties` naming its
//! log dirs (`log.dirs`), as a broker host has it.
//!
//! ```text
//! cargo run --features testkit --example brokers -- OUT [SCENARIO]
//! ```
//!
//! Prints one line per broker: its name and its properties file. SCENARIO is one of
//! `klogscan::testkit::brokers::SCENARIOS` (default `cross_broker_txn`).

use klogscan::testkit::brokers::SCENARIOS;
use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let Some(out) = args.next().map(PathBuf::from) else {
        eprintln!("usage: brokers OUT [SCENARIO]");
        std::process::exit(2);
    };
    let name = args.next().unwrap_or_else(|| "cross_broker_txn".into());
    let Some((_, write)) = SCENARIOS.iter().find(|(n, _)| *n == name) else {
        eprintln!(
            "unknown scenario {name}: one of {:?}",
            SCENARIOS.iter().map(|s| s.0).collect::<Vec<_>>()
        );
        std::process::exit(2);
    };
    std::fs::create_dir_all(&out)?;
    let out = out.canonicalize()?;
    for (i, dirs) in write(&out)?.iter().enumerate() {
        let broker = format!("broker-{}", i + 1);
        let props = out.join(format!("{broker}.properties"));
        let list: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        std::fs::write(
            &props,
            format!(
                "# {broker}\nprocess.roles=broker\nlog.dir=/tmp/kafka-logs\nlog.dirs={}\n",
                list.join(",")
            ),
        )?;
        println!("{broker}\t{}", props.display());
    }
    Ok(())
}
