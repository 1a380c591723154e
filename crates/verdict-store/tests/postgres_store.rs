//! What only the PostgreSQL store has, on a real throwaway cluster started
//! by each test: hostile text stored as text (every value is a bound
//! parameter), the password never shown in a message, a newer schema
//! refused untouched, processes migrating a fresh database at once, a
//! reader role that can read but not write, and shared work's claims and
//! fenced writes. Must not share a cluster between tests.

mod support;

use verdict_model::{Cell, Environment, Sample};
use verdict_store::{
    Claim, ClaimedWrite, Database, HistorySelection, HistoryStore, Location, NewRun, PostgresStore,
    Selection, Store, StoreError, Takeover, WorkBlock, WorkProgress, WorkStore,
};
use verdict_testkit::postgres::PostgresServer;

fn new_run(name: &str, host: &str) -> NewRun {
    NewRun {
        name: name.to_string(),
        kind: verdict_model::RunKind::Run,
        placement: verdict_model::Placement::Local,
        experiment_text: format!("name = \"{name}\"\n"),
        experiment_sha256: "cd".repeat(32),
        experiment_json: "{}".to_string(),
        tool_version: "0.1.0".to_string(),
        seed: 7,
        host: host.to_string(),
        planned: 2,
        started_at_ms: 1_764_500_000_000,
        environment_start: Environment::default(),
        command_line: vec!["verdict".into(), "run".into()],
        bisect: None,
    }
}

fn sample(sequence: u32, wall: f64) -> Sample {
    Sample {
        cell: 0,
        block: 0,
        sequence,
        warmup: false,
        started_at_ms: 1_764_500_000_000,
        wall_seconds: wall,
        user_seconds: 0.0,
        sys_seconds: 0.0,
        max_rss_kib: 1,
        exit_code: Some(0),
        signal: None,
        timed_out: false,
        metrics: [("wall".to_string(), wall)].into_iter().collect(),
        failure: None,
        missing: Default::default(),
        leftovers: Vec::new(),
    }
}

const HOSTILE: &str = "'; DROP TABLE samples; --";

on_both_backends! {
    /// A level, factor, host and experiment name that would end a quoted
    /// SQL string are stored and selected as text, and `samples` survives.
    fn hostile_names_round_trip_as_text(backend) {
        let store = backend.open();
        let hostile_cell = Cell {
            levels: vec![
                ("kernel".to_string(), HOSTILE.to_string()),
                (format!("factor{HOSTILE}"), "x\"y".to_string()),
            ],
        };
        let run = store.create_run(&new_run(HOSTILE, HOSTILE)).unwrap();
        store.append_sample(run, &sample(0, 1.5), &hostile_cell).unwrap();
        let selected = store
            .select_samples(&Selection {
                run: None,
                levels: hostile_cell.levels.clone(),
                metric: "wall".to_string(),
            })
            .unwrap();
        assert_eq!(selected.len(), 1);
        assert_eq!(selected[0].levels, hostile_cell.levels);
        let history = store
            .history_runs(&HistorySelection {
                experiment: Some(HOSTILE.to_string()),
                levels: vec![("kernel".to_string(), HOSTILE.to_string())],
                metric: "wall".to_string(),
            })
            .unwrap();
        assert_eq!(history.len(), 1);
        assert_eq!(history[0].host, HOSTILE);
        assert_eq!(store.run(run).unwrap().name, HOSTILE);
        assert_eq!(backend.raw_rows("SELECT COUNT(*) FROM samples"), vec!["1"]);
        assert_eq!(
            backend.raw_rows("SELECT level FROM cell_levels WHERE factor = 'kernel'"),
            vec![HOSTILE]
        );
    }
}

fn url_with_password(server: &PostgresServer, database: &str) -> String {
    format!(
        "postgresql://postgres:s3cret-pw@/{database}?host={}",
        server.socket_directory().display()
    )
}

/// A connection error names the database by its URL with the password
/// replaced by `***`; the password itself appears nowhere in the message.
#[test]
fn errors_show_the_url_without_its_password() {
    let Some(server) = PostgresServer::start() else {
        return;
    };
    let url = url_with_password(&server, "no_such_database");
    let error = Database::open(&Location::parse(&url)).unwrap_err();
    let message = error.to_string();
    assert!(message.contains("postgres:***@"), "{message}");
    assert!(message.contains("no_such_database"), "{message}");
    assert!(!message.contains("s3cret-pw"), "{message}");
    let debug = format!("{error:?}");
    assert!(!debug.contains("s3cret-pw"), "{debug}");

    // A store that opened with a password names itself without it too.
    server.create_database("lab");
    let store = Database::open(&Location::parse(&url_with_password(&server, "lab"))).unwrap();
    assert!(!store.path().display().to_string().contains("s3cret-pw"));
    let error = store.run(verdict_model::RunId(5)).unwrap_err().to_string();
    assert!(
        error.contains("postgres:***@") && !error.contains("s3cret-pw"),
        "{error}"
    );
    assert!(!format!("{store:?}").contains("s3cret-pw"));
}

#[test]
fn a_newer_schema_is_refused_untouched() {
    let Some(server) = PostgresServer::start() else {
        return;
    };
    let url = server.create_database("lab");
    drop(PostgresStore::open(&url).unwrap());
    server.psql("lab", "UPDATE verdict_schema SET version = 999");
    for error in [
        PostgresStore::open(&url).unwrap_err(),
        PostgresStore::open_read_only(&url).unwrap_err(),
    ] {
        assert!(
            matches!(error, StoreError::NewerSchema { found: 999, .. }),
            "{error:?}"
        );
    }
    assert_eq!(
        server
            .psql("lab", "SELECT version FROM verdict_schema")
            .trim(),
        "999"
    );
}

#[test]
fn processes_opening_a_fresh_database_at_once_migrate_it_once() {
    let Some(server) = PostgresServer::start() else {
        return;
    };
    let url = server.create_database("lab");
    let threads: Vec<_> = (0..6)
        .map(|index| {
            let url = url.clone();
            std::thread::spawn(move || {
                let store = PostgresStore::open(&url).unwrap();
                store
                    .create_run(&new_run(&format!("run{index}"), "h"))
                    .unwrap()
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(
        server
            .psql("lab", "SELECT COUNT(*), MAX(version) FROM verdict_schema")
            .trim(),
        format!("1|{}", Database::schema_version())
    );
    assert_eq!(server.psql("lab", "SELECT COUNT(*) FROM runs").trim(), "6");
}

/// The documented reader role (docs/store.md): it reads everything and
/// every write is refused by the server.
#[test]
fn a_reader_role_reads_but_cannot_write() {
    let Some(server) = PostgresServer::start() else {
        return;
    };
    let url = server.create_database("lab");
    let writer = PostgresStore::open(&url).unwrap();
    let run = writer.create_run(&new_run("kill", "h")).unwrap();
    writer
        .append_sample(run, &sample(0, 1.0), &Cell { levels: vec![] })
        .unwrap();
    server.psql(
        "lab",
        "CREATE ROLE verdict_reader LOGIN; \
         GRANT CONNECT ON DATABASE lab TO verdict_reader; \
         GRANT USAGE ON SCHEMA public TO verdict_reader; \
         GRANT SELECT ON ALL TABLES IN SCHEMA public TO verdict_reader; \
         ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO verdict_reader;",
    );
    let reader_url = server.url_as("verdict_reader", "lab");
    let reader = PostgresStore::open_read_only(&reader_url).unwrap();
    assert_eq!(reader.samples(run).unwrap().len(), 1);
    // Even a read-write open as the reader cannot change anything.
    let as_writer = PostgresStore::open(&reader_url).unwrap();
    let error = as_writer.create_run(&new_run("nope", "h")).unwrap_err();
    assert!(error.to_string().contains("permission denied"), "{error}");
    let error = as_writer
        .append_sample(run, &sample(1, 1.0), &Cell { levels: vec![] })
        .unwrap_err();
    assert!(error.to_string().contains("permission denied"), "{error}");
    // A read-only session refuses writes even as the owner.
    let read_only_owner = PostgresStore::open_read_only(&url).unwrap();
    let error = read_only_owner
        .create_run(&new_run("nope", "h"))
        .unwrap_err();
    assert!(error.to_string().contains("read-only"), "{error}");
    assert_eq!(server.psql("lab", "SELECT COUNT(*) FROM runs").trim(), "1");
}

/// Shared work's statements (docs/store.md): a claim takes a batch of
/// blocks in block order and resumes the claimant's own; a sample written
/// twice (an answer lost) is stored once; blocks claimed and not started
/// go back; a block whose claimant's lease expired is taken over from its
/// last stored sample, the takeover stored with both workers and hosts,
/// and the old claimant's next write is refused; every sample keeps the
/// host it ran on.
#[test]
fn claims_come_in_batches_resume_go_back_and_are_taken_over() {
    let Some(server) = PostgresServer::start() else {
        return;
    };
    let url = server.create_database("lab");
    let store = PostgresStore::open(&url).unwrap();
    let run = store.create_run(&new_run("shared", "lab")).unwrap();
    let blocks: Vec<WorkBlock> = (0..4)
        .map(|block| WorkBlock {
            block,
            first_sequence: 2 * block,
            slots: 2,
        })
        .collect();
    store.create_work(run, &blocks).unwrap();
    let cell = Cell {
        levels: vec![("mode".to_string(), "a".to_string())],
    };
    let lease_ms = 10_000;
    let now = 1_764_500_000_000;
    let write = |worker: &str, host: &str, block: u32, sequence: u32, now: i64| {
        let claim = Claim {
            run,
            block,
            worker: worker.to_string(),
            host: host.to_string(),
            last_sequence: 2 * block + 1,
        };
        let mut stored = sample(sequence, 1.0);
        stored.block = block;
        store.append_claimed_sample(&claim, &stored, &cell, &Default::default(), now, lease_ms)
    };
    let numbers = |batch: &verdict_store::ClaimedBatch| -> Vec<u32> {
        batch
            .blocks
            .iter()
            .map(|claimed| claimed.block.block)
            .collect()
    };

    assert!(store.acquire_lease("h0", "w0", now, lease_ms).unwrap());
    let batch = store.claim_blocks(run, "w0", "h0", now, 3).unwrap();
    assert_eq!(numbers(&batch), [0, 1, 2]);
    assert_eq!(batch.pending_after, 1);
    assert!(
        batch
            .blocks
            .iter()
            .all(|claimed| claimed.taken_from.is_none() && claimed.stored.is_empty())
    );
    // Claiming again (a restart, a lost answer) resumes the same blocks.
    let again = store.claim_blocks(run, "w0", "h0", now, 3).unwrap();
    assert_eq!(numbers(&again), [0, 1, 2]);
    assert!(
        again
            .blocks
            .iter()
            .all(|claimed| claimed.taken_from.is_none())
    );

    assert_eq!(write("w0", "h0", 0, 0, now).unwrap(), ClaimedWrite::Stored);
    assert_eq!(
        write("w0", "h0", 0, 0, now).unwrap(),
        ClaimedWrite::AlreadyStored
    );
    assert_eq!(write("w0", "h0", 0, 1, now).unwrap(), ClaimedWrite::Stored);
    assert_eq!(write("w0", "h0", 1, 2, now).unwrap(), ClaimedWrite::Stored);
    let progress = |pending, claimed, done| WorkProgress {
        pending,
        claimed,
        done,
    };
    assert_eq!(store.work_progress(run).unwrap(), progress(1, 2, 1));
    // Block 2 was not started: it goes back; block 1 was: it stays.
    assert_eq!(store.unclaim_blocks(run, "w0", "h0").unwrap(), 1);
    assert_eq!(store.work_progress(run).unwrap(), progress(2, 1, 1));

    // w0 stops renewing; once its lease has expired, w1 on h1 takes
    // block 1 over after its stored sample, then claims the next pending.
    let later = now + 2 * lease_ms;
    assert!(store.acquire_lease("h1", "w1", later, lease_ms).unwrap());
    let batch = store.claim_blocks(run, "w1", "h1", later, 2).unwrap();
    assert_eq!(numbers(&batch), [1, 2]);
    assert_eq!(
        batch.blocks[0].taken_from,
        Some(("w0".to_string(), "h0".to_string()))
    );
    assert_eq!(batch.blocks[0].stored, [2]);
    assert_eq!(batch.blocks[1].taken_from, None);
    assert_eq!(batch.pending_after, 1);
    // w0 comes back: its write is refused, nothing is stored.
    let error = write("w0", "h0", 1, 3, later).unwrap_err();
    assert!(
        matches!(&error, StoreError::LostClaim { block: 1, .. }),
        "{error:?}"
    );
    assert_eq!(
        write("w1", "h1", 1, 3, later).unwrap(),
        ClaimedWrite::Stored
    );

    let record = store.work_record(run).unwrap();
    assert_eq!(
        record.takeovers,
        [Takeover {
            block: 1,
            taken_at_ms: later,
            from_worker: "w0".to_string(),
            from_host: "h0".to_string(),
            to_worker: "w1".to_string(),
            to_host: "h1".to_string(),
            resumed_after: Some(2),
        }]
    );
    assert_eq!(record.hosts(), ["h0", "h1"]);
    assert_eq!(store.work_progress(run).unwrap(), progress(1, 1, 2));
    assert_eq!(
        server
            .psql(
                "lab",
                "SELECT sequence, host FROM samples ORDER BY sequence"
            )
            .trim(),
        "0|h0\n1|h0\n2|h0\n3|h1"
    );
}
