//! The scenario writer: builds Kafka partition directories from scenario descriptions,
//! for tests, benches and examples (feature `testkit`).
//!
//! OWNER: testkit helper.
