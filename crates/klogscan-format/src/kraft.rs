//! The KRaft control records of the metadata log (`ControlRecordType`, `ControlRecordUtils`): `LEADER_CHANGE`
//! (`LeaderChangeMessage`), `KRAFT_VERSION` (`KRaftVersionRecord`) and `KRAFT_VOTERS`
//! (`VotersRecord`), typed. Their values are flexible messages after an int16 version;
//! nullable arrays stay `None` when null.

use super::bytes::Cursor;
use super::error::FormatError;
use serde::{Deserialize, Serialize};

/// A voter of a `LeaderChangeMessage`: its id, and (schema version 1+, which Kafka neither
/// writes nor reads) its directory id: always `None` as read here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Voter {
    pub voter_id: i32,
    pub directory_id: Option<[u8; 16]>,
}

/// `LeaderChangeMessage` (versions 0–1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaderChange {
    pub version: i16,
    pub leader_id: i32,
    pub voters: Option<Vec<Voter>>,
    pub granting_voters: Option<Vec<Voter>>,
}

/// `KRaftVersionRecord`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KraftVersion {
    pub version: i16,
    pub kraft_version: i16,
}

/// One endpoint of a voter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    pub name: Option<String>,
    pub host: Option<String>,
    pub port: u16,
}

/// A voter of a `VotersRecord`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoterEntry {
    pub voter_id: i32,
    pub directory_id: [u8; 16],
    pub endpoints: Option<Vec<Endpoint>>,
    /// `kRaftVersionFeature`: `(minSupportedVersion, maxSupportedVersion)`.
    pub kraft_version_feature: (i16, i16),
}

/// `VotersRecord`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Voters {
    pub version: i16,
    pub voters: Option<Vec<VoterEntry>>,
}

fn uuid(cur: &mut Cursor<'_>, field: &'static str) -> Result<[u8; 16], FormatError> {
    let b = cur.take(16, field)?;
    let mut u = [0u8; 16];
    u.copy_from_slice(b);
    Ok(u)
}

fn string(cur: &mut Cursor<'_>, field: &'static str) -> Result<Option<String>, FormatError> {
    Ok(cur
        .schema_string(true, field)?
        .map(|s| String::from_utf8_lossy(s).into_owned()))
}

/// Read a `LeaderChangeMessage` value as Kafka reads it: always at schema version 0
/// (`ControlRecordUtils.deserializeLeaderChangeMessage` reads every value at
/// `LEADER_CHANGE_CURRENT_VERSION`, 0, whatever its `Version` field says, and Kafka's
/// writers write that version), so no voter's directory id is read: a value laid out at
/// version 1 does not read as Kafka reads it either.
pub fn leader_change(value: &[u8]) -> Result<LeaderChange, FormatError> {
    let mut cur = Cursor::new(value, 0, "LeaderChangeMessage");
    let version = cur.i16("version")?;
    // The schema version read, not the `Version` field.
    const READ_AT: i16 = 0;
    let leader_id = cur.i32("leaderId")?;
    let mut lists = [None, None];
    for list in &mut lists {
        if let Some(n) = cur.schema_array_len(true, "voters")? {
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                let voter_id = cur.i32("voterId")?;
                let directory_id = if READ_AT >= 1 {
                    Some(uuid(&mut cur, "voterDirectoryId")?)
                } else {
                    None
                };
                cur.tagged_fields(|_, _| {})?;
                v.push(Voter {
                    voter_id,
                    directory_id,
                });
            }
            *list = Some(v);
        }
    }
    cur.tagged_fields(|_, _| {})?;
    let [voters, granting_voters] = lists;
    Ok(LeaderChange {
        version,
        leader_id,
        voters,
        granting_voters,
    })
}

/// Read a `KRaftVersionRecord` value.
pub fn kraft_version(value: &[u8]) -> Result<KraftVersion, FormatError> {
    let mut cur = Cursor::new(value, 0, "KRaftVersionRecord");
    let version = cur.i16("version")?;
    let kraft_version = cur.i16("kRaftVersion")?;
    cur.tagged_fields(|_, _| {})?;
    Ok(KraftVersion {
        version,
        kraft_version,
    })
}

/// Read a `VotersRecord` value.
pub fn voters(value: &[u8]) -> Result<Voters, FormatError> {
    let mut cur = Cursor::new(value, 0, "VotersRecord");
    let version = cur.i16("version")?;
    let voters = match cur.schema_array_len(true, "voters")? {
        None => None,
        Some(n) => {
            let mut out = Vec::with_capacity(n);
            for _ in 0..n {
                let voter_id = cur.i32("voterId")?;
                let directory_id = uuid(&mut cur, "voterDirectoryId")?;
                let endpoints = match cur.schema_array_len(true, "endpoints")? {
                    None => None,
                    Some(m) => {
                        let mut e = Vec::with_capacity(m);
                        for _ in 0..m {
                            let name = string(&mut cur, "name")?;
                            let host = string(&mut cur, "host")?;
                            let b = cur.take(2, "port")?;
                            cur.tagged_fields(|_, _| {})?;
                            e.push(Endpoint {
                                name,
                                host,
                                port: u16::from_be_bytes([b[0], b[1]]),
                            });
                        }
                        Some(e)
                    }
                };
                let min = cur.i16("minSupportedVersion")?;
                let max = cur.i16("maxSupportedVersion")?;
                cur.tagged_fields(|_, _| {})?;
                cur.tagged_fields(|_, _| {})?;
                out.push(VoterEntry {
                    voter_id,
                    directory_id,
                    endpoints,
                    kraft_version_feature: (min, max),
                });
            }
            Some(out)
        }
    };
    cur.tagged_fields(|_, _| {})?;
    Ok(Voters { version, voters })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ControlRecordUtilsTest.testCurrentVersions`: every KRaft control record is read
    /// at schema version 0. A LeaderChange whose `Version` field says 1 but laid out at
    /// version 0 reads (its voter ids); one laid out at version 1 (directory ids) does not
    /// read as version 0 (its directory id is taken for tagged fields).
    #[test]
    fn leader_change_is_read_at_version_0_whatever_its_version_field() {
        // Version field 1, v0 layout: leader 3, voters [1, 3], granting voters [3].
        let mut v = vec![0, 1, 0, 0, 0, 3, 3];
        v.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 3, 0]);
        v.extend_from_slice(&[2, 0, 0, 0, 3, 0, 0]);
        let lc = leader_change(&v).unwrap();
        assert_eq!((lc.version, lc.leader_id), (1, 3));
        let ids = |l: &Option<Vec<Voter>>| {
            l.as_ref().map(|v| {
                v.iter()
                    .map(|x| (x.voter_id, x.directory_id))
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(ids(&lc.voters), Some(vec![(1, None), (3, None)]));
        assert_eq!(ids(&lc.granting_voters), Some(vec![(3, None)]));
        // A v1 layout: one voter followed by a directory id of 16 × 0x07 — the first 0x07
        // is read as 7 tagged fields, which the value does not hold.
        let mut v = vec![0, 1, 0, 0, 0, 2, 2, 0, 0, 0, 2];
        v.extend_from_slice(&[7; 16]);
        v.extend_from_slice(&[0, 1, 0]);
        assert!(leader_change(&v).is_err(), "{:?}", leader_change(&v));
    }

    /// `ControlRecordUtilsTest.testDeserializeByteData`: a `VotersRecord` of one voter,
    /// id 0, every other field at its default (zero directory id, no endpoint,
    /// kraft.version feature 0–0).
    #[test]
    fn a_voters_record_of_voter_0_reads() {
        let mut v = vec![0, 0, 2, 0, 0, 0, 0];
        v.extend_from_slice(&[0; 16]);
        v.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
        let vs = voters(&v).unwrap();
        assert_eq!(
            vs,
            Voters {
                version: 0,
                voters: Some(vec![VoterEntry {
                    voter_id: 0,
                    directory_id: [0; 16],
                    endpoints: Some(vec![]),
                    kraft_version_feature: (0, 0),
                }]),
            }
        );
        for n in 0..v.len() {
            assert!(voters(&v[..n]).is_err(), "cut at {n}");
        }
    }

    #[test]
    fn leader_change_v0() {
        // v0: leader 3, voters [1, 3], granting voters null.
        let mut v = vec![0, 0, 0, 0, 0, 3, 3];
        v.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 3, 0]);
        v.extend_from_slice(&[0, 0]);
        let lc = leader_change(&v).unwrap();
        assert_eq!(lc.leader_id, 3);
        assert_eq!(
            lc.voters
                .as_ref()
                .map(|v| v.iter().map(|x| x.voter_id).collect::<Vec<_>>()),
            Some(vec![1, 3])
        );
        assert_eq!(lc.granting_voters, None);
        for n in 0..v.len() {
            assert!(leader_change(&v[..n]).is_err());
        }
    }

    #[test]
    fn kraft_version_and_voters() {
        assert_eq!(
            kraft_version(&[0, 0, 0, 1, 0]).unwrap(),
            KraftVersion {
                version: 0,
                kraft_version: 1
            }
        );
        let mut v = vec![0, 0, 2, 0, 0, 0, 1];
        v.extend_from_slice(&[5; 16]);
        v.extend_from_slice(&[2, 3, b'C', b'C', 2, b'h', 0x23, 0x8c, 0]);
        v.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0]);
        let vs = voters(&v).unwrap();
        let e = &vs.voters.unwrap()[0];
        assert_eq!((e.voter_id, e.kraft_version_feature), (1, (0, 1)));
        assert_eq!(
            e.endpoints.as_ref().unwrap()[0],
            Endpoint {
                name: Some("CC".into()),
                host: Some("h".into()),
                port: 9100
            }
        );
        for n in 0..v.len() {
            assert!(voters(&v[..n]).is_err());
        }
    }
}
