//! verdict-bisect: (placeholder; filled in by its owner).
