//! The transaction tests whose bodies changed between apache/kafka trunk of 2024-10 and the
//! 2026-08 trunk (confluentinc/kafka, Apache trunk with Confluent's merges) under the same
//! method names — newly parameterised over transaction version 2, given new epochs or new
//! assertions — and whose new behaviour no test cited: `ProducerStateManagerTest`'s marker
//! methods under TV2 (KIP-1228), `TransactionsTest.testFailureToFenceEpoch` under TV2,
//! `TransactionMetadataTest.testFenceProducerNotAllowedIfItWouldOverflow` (KAFKA-20090),
//! `TransactionStateManagerTest.testValidateTransactionTimeout` (KIP-939); and the added
//! `TransactionsTest.testRecoveryFromEpochOverflow`, which the earlier audit left open.
//!
//! Each case writes what the coordinator and the partition leaders leave on disk with the
//! testkit, runs `scan`, `verify` and (where a cluster verdict is involved) the merge of the
//! brokers' bundles, and asserts what the 2026-08 Kafka does, with a near miss that flips
//! the answer.
#![cfg(feature = "testkit")]

mod fence;
mod overflow;
mod psm;
mod two_phase;

use crate::kafka_deltaaudit_cases::{tv2, verdicts};
use crate::kafka_quiet_cluster_cases::T0;
use crate::kafka_txnstate_cases::{SEC, opts, reports};
use klogscan::finding::{Kind, Severity};
