//! verdict-engine: (placeholder; filled in by its owner).
