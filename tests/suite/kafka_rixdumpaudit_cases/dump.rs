//! `dump` of a `.txnindex` whose entries the releases read differently.
