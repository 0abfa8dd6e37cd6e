//! probe
#![cfg(feature = "testkit")]

mod fence;
mod overflow;
mod psm;

use crate::kafka_deltaaudit_cases::{tv2, verdicts};
use crate::kafka_quiet_cluster_cases::T0;
use crate::kafka_txnstate_cases::{SEC, opts, reports};
use klogscan::finding::{Kind, Severity};
