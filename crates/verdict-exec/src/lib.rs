//! verdict-exec: (placeholder; filled in by its owner).
