//! verdict-kconfig: (placeholder; filled in by its owner).
