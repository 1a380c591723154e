//! sequential (owned by the sequential engineer; being written).
