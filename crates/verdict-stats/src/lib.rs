//! verdict-stats: (placeholder; filled in by its owner).
