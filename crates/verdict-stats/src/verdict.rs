//! verdict (owned by the stats-core engineer; being written).
