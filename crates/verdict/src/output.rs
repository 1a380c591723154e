//! Standard output, the one way the binary prints what a command produces
//! (`out!`, `outln!`, `writer()`): a write that finds the reader gone (a
//! closed pipe, `verdict export | head -1`) is dropped quietly and
//! remembered (`closed`), so the command goes on to end with its usual
//! exit status instead of a panic (Rust ignores SIGPIPE, so `print!`
//! panics on EPIPE), and long outputs stop early when `closed` says so.
//! Restoring SIGPIPE's default would end verdict on the first write to
//! any closed pipe, an ssh client's or a child's included, where verdict
//! must notice the end and reconnect or record it instead. Another
//! failure to write (a full disk) is kept and reported by `main` (exit 2).
//! A test keeps `print!` and `println!` out of the binary's sources. Must
//! not write anywhere but stdout.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);
static FAILED: Mutex<Option<String>> = Mutex::new(None);

/// Prints to stdout like `print!`, quietly nothing once the reader is
/// gone.
macro_rules! out {
    ($($argument:tt)*) => {
        $crate::output::write_fmt(format_args!($($argument)*))
    };
}

/// Prints a line to stdout like `println!`, quietly nothing once the
/// reader is gone.
macro_rules! outln {
    () => {
        $crate::output::write_fmt(format_args!("\n"))
    };
    ($($argument:tt)*) => {
        $crate::output::write_fmt(format_args!("{}\n", format_args!($($argument)*)))
    };
}

/// Whether the reader of stdout has gone (a closed pipe): what is still
/// written is dropped.
pub(crate) fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// The failure to write stdout other than a closed pipe, if one happened.
pub(crate) fn failure() -> Option<String> {
    FAILED.lock().ok().and_then(|failure| failure.clone())
}

/// What a write's result means: a closed pipe closes the output quietly,
/// another error is kept for `main` and closes it too.
fn settle(result: std::io::Result<()>) {
    if let Err(error) = result {
        if error.kind() != std::io::ErrorKind::BrokenPipe
            && let Ok(mut failure) = FAILED.lock()
        {
            failure.get_or_insert_with(|| format!("write to standard output: {error}"));
        }
        CLOSED.store(true, Ordering::Relaxed);
    }
}

/// `out!`'s and `outln!`'s write: formatted, flushed (as `print!` to a
/// terminal would be line by line).
pub(crate) fn write_fmt(arguments: std::fmt::Arguments<'_>) {
    if closed() {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    settle(stdout.write_fmt(arguments).and_then(|()| stdout.flush()));
}

/// Writes `text` to stdout as it is.
pub(crate) fn write_str(text: &str) {
    write_fmt(format_args!("{text}"));
}

/// A buffered writer to stdout for long outputs, with the same rules:
/// writing to it never fails; check `closed` to stop producing.
pub(crate) fn writer() -> std::io::BufWriter<Quiet> {
    std::io::BufWriter::with_capacity(64 * 1024, Quiet)
}

/// Stdout that swallows the errors `settle` records.
#[derive(Debug)]
pub(crate) struct Quiet;

impl Write for Quiet {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        if !closed() {
            settle(std::io::stdout().lock().write_all(buffer));
        }
        Ok(buffer.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !closed() {
            settle(std::io::stdout().lock().flush());
        }
        Ok(())
    }
}
