//! verdict-parse: (placeholder; filled in by its owner).
