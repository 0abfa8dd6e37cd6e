//! The end of the active segment after a crash: preallocated zeros, a batch cut short.
