//! Broker versions, for the load behaviour that changed between them (`--broker-version`).

use serde::Serialize;

/// A broker version (`major.minor.patch`), for version-dependent load behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct BrokerVersion(pub u32, pub u32, pub u32);

impl std::str::FromStr for BrokerVersion {
    type Err = String;
    /// Parse `2.4.0`, `2.4`, `3` (missing parts are 0) with an optional `-suffix` or
    /// `+suffix` that starts with a letter (`3.7.0-SNAPSHOT`, `2.4.0-rc1`), ignored. A
    /// Confluent Platform build's version (`-ccs` or `-ce`: `5.4.0-ccs`, what its brokers
    /// log and its jars are named) is read as the Apache Kafka version it ships
    /// (`confluent_to_kafka`), so `--broker-version 5.4.0-ccs` means Kafka 2.4.0.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "invalid broker version {s:?} (expected e.g. 2.4.0, or a Confluent Platform version such as 5.4.0-ccs)"
            )
        };
        let (core, suffix) = match s.find(['-', '+']) {
            Some(i) => (&s[..i], Some(&s[i + 1..])),
            None => (s, None),
        };
        if suffix.is_some_and(|x| !x.starts_with(|c: char| c.is_ascii_alphabetic())) {
            return Err(bad());
        }
        let parts: Vec<&str> = core.split('.').collect();
        if parts.len() > 3 {
            return Err(bad());
        }
        let mut n = [0u32; 3];
        for (slot, p) in n.iter_mut().zip(&parts) {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            *slot = p.parse().map_err(|_| bad())?;
        }
        let v = BrokerVersion(n[0], n[1], n[2]);
        let confluent = suffix.is_some_and(|x| {
            let x = x.to_ascii_lowercase();
            x == "ccs" || x == "ce" || x.starts_with("ccs.") || x.starts_with("ce.")
        });
        match confluent {
            true => confluent_to_kafka(v).ok_or_else(bad),
            false => Ok(v),
        }
    }
}

/// The Apache Kafka version a Confluent Platform release ships, by its major and minor
/// (Confluent's interoperability table): 3.0–3.2 → 0.10.0–0.10.2, 3.3 → 0.11.0, 4.0–4.1 →
/// 1.0–1.1, 5.0–5.5 → 2.0–2.5, 6.0–6.2 → 2.6–2.8, 7.0–7.9 → 3.0–3.9, 8.x → 4.x. The patch
/// number is kept (`5.4.1-ccs` reads as 2.4.1: the line's fixes up to there); `None` for a
/// release outside the table.
fn confluent_to_kafka(v: BrokerVersion) -> Option<BrokerVersion> {
    let BrokerVersion(major, minor, patch) = v;
    let (k_major, k_minor) = match (major, minor) {
        (3, 0..=2) => (0, 10),
        (3, 3) => (0, 11),
        (4, 0..=1) => (1, minor),
        (5, 0..=5) => (2, minor),
        (6, 0..=2) => (2, minor + 6),
        (7, 0..=9) => (3, minor),
        (8, _) => (4, minor),
        _ => return None,
    };
    // 0.10.x's and 0.11.0's own minor is the third number here (0.10.2 is CP 3.2).
    Some(match (major, minor) {
        (3, 0..=2) => BrokerVersion(k_major, k_minor, minor),
        (3, 3) => BrokerVersion(k_major, k_minor, 0),
        _ => BrokerVersion(k_major, k_minor, patch),
    })
}

/// How long a broker of `version` keeps a producer's state after its last write (ms), at
/// the defaults: `producer.id.expiration.ms`, 1 day, since 3.4.0 (KIP-854:
/// `LogManager` builds its `ProducerStateManagerConfig` from it); before,
/// `transactional.id.expiration.ms`, 7 days (`LogManager`'s `maxPidExpirationMs`, which
/// `ProducerStateManager.isProducerExpired` compares with). `None`: a current broker.
pub fn producer_expiration_ms(version: Option<BrokerVersion>) -> i64 {
    match version {
        Some(v) if v < BrokerVersion(3, 4, 0) => 7 * 86_400_000,
        _ => crate::partition::state::PRODUCER_ID_EXPIRATION_MS,
    }
}

/// Whether a broker of `version` reads a `.txnindex` entry's version as the whole int16 and
/// loads only 0 (since 4.4, KAFKA-19562: `TransactionIndex` iterates the generated
/// `AbortedTxn`), where earlier releases read its first byte alone (`AbortedTxn.version()`).
/// `None` (not stated): the earlier reading, which accepts what every release before 4.4
/// loads.
pub fn reads_whole_txn_index_version(version: Option<BrokerVersion>) -> bool {
    version.is_some_and(|v| v >= BrokerVersion(4, 4, 0))
}

impl std::fmt::Display for BrokerVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

#[cfg(test)]
mod version_tests {
    use super::BrokerVersion as V;

    #[test]
    fn broker_versions_parse_strictly_and_confluent_ones_map_to_kafka() {
        for (text, want) in [
            ("2.4.0", V(2, 4, 0)),
            ("2.4", V(2, 4, 0)),
            ("3", V(3, 0, 0)),
            ("3.7.0-SNAPSHOT", V(3, 7, 0)),
            ("2.4.1+build7", V(2, 4, 1)),
            ("5.4.0-ccs", V(2, 4, 0)),
            ("5.4.1-CCS", V(2, 4, 1)),
            ("6.2.4-ce", V(2, 8, 4)),
            ("7.6.0-ccs", V(3, 6, 0)),
            ("8.0.0-ccs", V(4, 0, 0)),
            ("4.1.2-ccs", V(1, 1, 2)),
            ("3.2.1-ccs", V(0, 10, 2)),
            ("3.3.0-ccs", V(0, 11, 0)),
        ] {
            assert_eq!(text.parse::<V>(), Ok(want), "{text}");
        }
        for bad in [
            "",
            "abc",
            "2019-11-05",
            "1.2.3.4",
            "2..4",
            "2.4.x",
            "+5",
            "-1",
            "2.4.0-",
            "9.0.0-ccs",
            "99999999999.0",
        ] {
            assert!(bad.parse::<V>().is_err(), "{bad}");
        }
    }
}
