//! plan (owned by the stats-core engineer; being written).
