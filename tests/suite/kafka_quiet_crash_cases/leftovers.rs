//! Files an interrupted operation leaves beside the log.
