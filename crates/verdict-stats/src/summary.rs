//! summary (owned by the stats-core engineer; being written).
