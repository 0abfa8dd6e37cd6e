//! Kafka test audit: what `RemoteIndexCache.init` makes of a name in a tiered broker's
//! `remote-log-index-cache` it cannot parse, and what `dump` says of a transaction index
//! entry whose version the releases read differently (storage module, 2026-08 trunk of
//! apache/kafka and its 3.6 to 4.4 branches: storage/src/main/java/org/apache/kafka/storage/
//! internals/log/RemoteIndexCache.java, TransactionIndex.java; the tests in storage/src/test/
//! java/org/apache/kafka/storage/internals/log/RemoteIndexCacheTest.java and
//! TransactionIndexTest.java).
//!
//! `init` lists the cache twice, each time in the order the file system lists it (unknown
//! to klogscan): the first listing deletes the leftovers (every name ending `.deleted` or
//! `.tmp` since 4.1, KAFKA-18787; before it only a name that is exactly `.deleted` or
//! `.tmp`), the second cuts a segment id from every name and, the first time it meets an id,
//! loads the entry of that name's prefix when its three files exist. Any exception leaves
//! the `RemoteLogManager` constructor and `BrokerServer.startup` stops. So a name it cannot
//! parse stops the start whatever the order (only which exception comes first depends on
//! it); an entry of a shared segment id throws only when it is listed before a sound one.
//!
//! Each case writes the cache of `kafka_ricaudit_cases::cache` beside the tiered
//! `orders-0`, changes names in it, and runs `verify` with the releases whose readings
//! differ, with a near miss that flips the answer.
#![cfg(feature = "testkit")]

mod dump;
mod names;
