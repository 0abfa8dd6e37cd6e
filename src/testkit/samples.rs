//! Sample data (pending).
