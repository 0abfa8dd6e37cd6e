//! The high watermark and log start cases.
