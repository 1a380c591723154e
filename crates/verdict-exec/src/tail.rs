//! A byte buffer that keeps only the last `limit` bytes written to it.
//!
//! Memory stays below about twice the limit however much is written; it must
//! not do I/O.

/// The bounded tail of one output stream.
#[derive(Debug)]
pub(crate) struct TailBuffer {
    bytes: Vec<u8>,
    limit: usize,
    total: u64,
}

impl TailBuffer {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            bytes: Vec::new(),
            limit,
            total: 0,
        }
    }

    pub(crate) fn push(&mut self, chunk: &[u8]) {
        self.total += chunk.len() as u64;
        if chunk.len() >= self.limit {
            self.bytes.clear();
            self.bytes
                .extend_from_slice(&chunk[chunk.len() - self.limit..]);
            return;
        }
        self.bytes.extend_from_slice(chunk);
        // Trim only when the slack reaches the limit, so trimming costs O(1)
        // amortised per byte written.
        if self.bytes.len() >= 2 * self.limit {
            let excess = self.bytes.len() - self.limit;
            self.bytes.drain(..excess);
        }
    }

    /// The kept tail and whether anything before it was dropped.
    pub(crate) fn finish(mut self) -> (Vec<u8>, bool) {
        if self.bytes.len() > self.limit {
            let excess = self.bytes.len() - self.limit;
            self.bytes.drain(..excess);
        }
        (self.bytes, self.total > self.limit as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_everything_under_the_limit() {
        let mut tail = TailBuffer::new(10);
        tail.push(b"abc");
        tail.push(b"def");
        assert_eq!(tail.finish(), (b"abcdef".to_vec(), false));
    }

    #[test]
    fn exactly_the_limit_is_not_truncated() {
        let mut tail = TailBuffer::new(4);
        tail.push(b"ab");
        tail.push(b"cd");
        assert_eq!(tail.finish(), (b"abcd".to_vec(), false));
    }

    #[test]
    fn keeps_the_last_bytes_across_many_small_writes() {
        let mut tail = TailBuffer::new(5);
        for byte in b"0123456789abcdefghij" {
            tail.push(&[*byte]);
            assert!(tail.bytes.len() < 10);
        }
        assert_eq!(tail.finish(), (b"fghij".to_vec(), true));
    }

    #[test]
    fn a_chunk_larger_than_the_limit_keeps_its_end() {
        let mut tail = TailBuffer::new(3);
        tail.push(b"xy");
        tail.push(b"0123456");
        assert_eq!(tail.finish(), (b"456".to_vec(), true));
    }

    #[test]
    fn zero_limit_keeps_nothing_but_reports_truncation() {
        let mut tail = TailBuffer::new(0);
        tail.push(b"");
        assert_eq!(TailBuffer::new(0).finish(), (Vec::new(), false));
        tail.push(b"a");
        assert_eq!(tail.finish(), (Vec::new(), true));
    }
}
