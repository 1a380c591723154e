//! A stand-in kernel tree for the tests of kernels built from source: a
//! real git repository whose Makefile behaves as Kbuild does where
//! verdict's builder relies on it (`make -C TREE O=OBJ` with the config
//! targets `tinyconfig` and `extra.config`, `olddefconfig`, and a default
//! target that "compiles" each `kernel/*.c` newer than its object, listing
//! it in `OBJ/compiled`, and leaves a bzImage whose header names a
//! release); a file `broken` in the tree makes `make` fail with a
//! compiler-like error. Must not: build anything real or touch files
//! outside the directory it is given.

use std::path::{Path, PathBuf};

/// The Makefile of the stand-in tree. `O` is the object directory.
const MAKEFILE: &str = r#"
SRCS := $(wildcard $(CURDIR)/kernel/*.c)
OBJS := $(patsubst $(CURDIR)/%.c,$(O)/%.o,$(SRCS))

all: $(O)/arch/x86/boot/bzImage
	@test ! -e $(CURDIR)/broken || { echo "kernel/cpu.c:1: error: expected ';' before '}' token" >&2; exit 2; }

$(O)/%.o: $(CURDIR)/%.c
	@mkdir -p $(dir $@)
	@cp $< $@
	@echo $* >> $(O)/compiled
	@echo "  CC      $*.o"

$(O)/arch/x86/boot/bzImage: $(OBJS) $(CURDIR)/image.bin
	@mkdir -p $(dir $@)
	@cat $(CURDIR)/image.bin $(OBJS) > $@
	@echo kernel/drivers/net/virtio_net.ko > $(O)/modules.builtin
	@echo "Kernel: arch/x86/boot/bzImage is ready"

tinyconfig:
	@cp $(CURDIR)/base.config $(O)/.config

olddefconfig:
	@true

extra.config:
	@cat $(CURDIR)/kernel/configs/extra.config >> $(O)/.config

.PHONY: all tinyconfig olddefconfig extra.config
"#;

/// A one-file patch of the stand-in tree's `kernel/cpu.c` (`git apply`).
pub const ONE_FILE_PATCH: &str =
    "--- a/kernel/cpu.c\n+++ b/kernel/cpu.c\n@@ -1 +1,2 @@\n int cpu;\n+int expedited;\n";

/// The start of a bzImage naming `release` (the setup header's magic and
/// its pointer to `RELEASE (builder@host) VERSION`).
pub fn bzimage(release: &str) -> Vec<u8> {
    let mut bytes = vec![0u8; 0x600];
    bytes[0x202..0x206].copy_from_slice(b"HdrS");
    bytes[0x20E..0x210].copy_from_slice(&0x200u16.to_le_bytes());
    let version = format!("{release} (builder@host) #1 SMP Thu Jan  1 00:00:00 UTC 1970");
    bytes[0x400..0x400 + version.len()].copy_from_slice(version.as_bytes());
    bytes
}

/// Makes the stand-in tree in `directory/linux` (a git repository with
/// one commit) whose `tinyconfig` writes `base_config`; its path and
/// commit.
pub fn stand_in_kernel_tree(directory: &Path, base_config: &str) -> (PathBuf, String) {
    let repo = directory.join("linux");
    std::fs::create_dir_all(repo.join("kernel/configs")).expect("create the tree");
    let write = |path: &str, bytes: &[u8]| {
        std::fs::write(repo.join(path), bytes).expect("write the tree");
    };
    write("Makefile", MAKEFILE.as_bytes());
    write("image.bin", &bzimage("6.1.0-standin"));
    write("base.config", base_config.as_bytes());
    write("kernel/cpu.c", b"int cpu;\n");
    write("kernel/fork.c", b"int fork;\n");
    write("kernel/configs/extra.config", b"CONFIG_EXTRA=y\n");
    crate::git(&repo, &["init", "-q"]);
    crate::git(&repo, &["add", "-A"]);
    crate::git(&repo, &["commit", "-q", "-m", "base"]);
    let commit = crate::git(&repo, &["rev-parse", "HEAD"]);
    (repo, commit)
}
