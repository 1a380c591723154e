//! verdict-store: (placeholder; filled in by its owner).
