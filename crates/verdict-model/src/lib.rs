//! verdict-model: (placeholder; filled in by its owner).
