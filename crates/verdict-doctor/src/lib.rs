//! verdict-doctor: (placeholder; filled in by its owner).
