//! Store credentials kept away from other processes, once, after the
//! arguments are parsed and before any command runs (`protect`): the
//! store's variables (`VERDICT_DB`, `PGPASSWORD`, `PGPASSFILE`) are kept
//! for the store's own connections and removed from verdict's environment,
//! so no workload, hook, build or ssh client started later inherits them;
//! and a password in verdict's own arguments (`--db
//! postgres://user:secret@…`, `--db 'host=… password=…'`) is overwritten
//! in place, so `ps` and /proc/PID/cmdline show `***` from then on (before
//! that it was visible: docs/store.md says to keep it in PGPASSFILE or
//! PGPASSWORD). Must not print or keep a secret anywhere else.

/// See the module comment. Call while verdict has one thread.
pub(crate) fn protect() {
    verdict_store::location::keep_store_variables();
    for name in verdict_store::location::STORE_VARIABLES {
        // SAFETY: called from `main` right after parsing the arguments,
        // before any thread is started (the Ctrl-C handler, the heartbeat,
        // rayon's pool all start later), so nothing reads the environment
        // concurrently.
        unsafe { std::env::remove_var(name) };
    }
    let rewritten = verdict_exec::own_process::rewrite_command_line(&|argument| {
        let redacted = verdict_store::location::redact(argument);
        (redacted != argument).then_some(redacted)
    });
    if let Ok(count @ 1..) = rewritten {
        eprintln!(
            "verdict: note: {count} argument(s) held a password, readable by other users of \
             this machine until verdict hid it; keep it in PGPASSFILE (~/.pgpass) or \
             PGPASSWORD instead (see docs/store.md)"
        );
    }
}
