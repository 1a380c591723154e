//! A run's identity across stores: a random UUID (version 4) given to a
//! run when it is created and copied with it by `verdict push`/`pull`, so a
//! copy is recognised in any store. Reads 16 bytes of `/dev/urandom`; must
//! not read clocks or derive the identity from a run's contents (two runs
//! of one experiment are distinct).

use std::io::Read;

/// A new random UUID, lowercase hex with dashes.
pub(crate) fn new_run_uuid() -> String {
    let mut bytes = [0_u8; 16];
    let filled = std::fs::File::open("/dev/urandom")
        .and_then(|mut file| file.read_exact(&mut bytes))
        .is_ok();
    if !filled {
        // No urandom (a chroot without /dev): hash what distinguishes this
        // moment in this process instead; still unique per call.
        use std::hash::{BuildHasher, Hasher};
        for chunk in bytes.chunks_mut(8) {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u32(std::process::id());
            chunk.copy_from_slice(&hasher.finish().to_le_bytes()[..chunk.len()]);
        }
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn identities_are_distinct_version_4_uuids() {
        let first = super::new_run_uuid();
        let second = super::new_run_uuid();
        assert_ne!(first, second);
        assert_eq!(first.len(), 36);
        assert_eq!(&first[14..15], "4");
    }
}
