//! OWNER: see module docs (pending).
