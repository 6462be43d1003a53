//! Numbered schema migrations, recorded in `PRAGMA user_version`.
//!
//! A database's schema is the list of its steps applied in order: a new file
//! runs them all, an older one the steps after its version, each step and
//! the version it reaches in one transaction (all of a step or none). A file
//! whose version is newer than the last step is refused, never downgraded.
//!
//! Files written before versions were recorded (`user_version` 0) are
//! judged step by step by what they hold: each step lists what it adds; a
//! step whose additions are all there is skipped, one with none of them is
//! applied, and one half there is applied when its SQL allows it (a table
//! created if missing) and refused when not (a column cannot be added twice).
//! Builds before versions were recorded added what they lacked at every
//! open, but not always in step order (a column added without its own
//! migration), so such a file may hold a later step and lack an earlier one.

use super::{Connection, DbError, Value};

/// One step of a schema.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// The version a database is at once this step is applied (1, 2, …).
    pub version: u32,
    /// What the step does, for messages.
    pub name: &'static str,
    pub sql: &'static str,
    /// What the step adds, to place a database from before versions were
    /// recorded: `table`, `table.column` or `index:name`.
    pub adds: &'static [&'static str],
}

/// The version the last step reaches.
pub fn latest(steps: &[Migration]) -> u32 {
    steps.last().map_or(0, |s| s.version)
}

/// The version recorded in the file (0: none).
pub fn recorded_version(conn: &Connection) -> Result<u32, DbError> {
    let version = conn.query_row("PRAGMA user_version", &[], |r| Ok(r.get_i64(0)))?;
    Ok(version.map_or(0, |v| u32::try_from(v).unwrap_or(u32::MAX)))
}

/// The version a database stands at: the recorded one, or for a file from
/// before versions were recorded, the step before the first it lacks (0 for
/// an empty file; the last step when it lacks none).
pub fn version_of(conn: &Connection, steps: &[Migration]) -> Result<u32, DbError> {
    match recorded_version(conn)? {
        0 => Ok(match lacking(conn, steps)?.first() {
            Some((step, _)) => step.version - 1,
            None => latest(steps),
        }),
        recorded => Ok(recorded),
    }
}

/// Whether a file from before versions were recorded holds all, none or
/// part of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    All,
    None,
    Part,
}

fn held(conn: &Connection, step: &Migration) -> Result<Held, DbError> {
    let mut there = 0;
    for addition in step.adds {
        there += usize::from(holds(conn, addition)?);
    }
    Ok(match there {
        0 => Held::None,
        n if n == step.adds.len() => Held::All,
        _ => Held::Part,
    })
}

/// The steps a file from before versions were recorded lacks, in order,
/// with how much of each it holds.
fn lacking<'s>(
    conn: &Connection,
    steps: &'s [Migration],
) -> Result<Vec<(&'s Migration, Held)>, DbError> {
    let mut out = Vec::new();
    for step in steps {
        match held(conn, step)? {
            Held::All => {}
            other => out.push((step, other)),
        }
    }
    Ok(out)
}

/// Whether the database holds `addition` (`table`, `table.column`, `index:name`).
fn holds(conn: &Connection, addition: &str) -> Result<bool, DbError> {
    let (kind, name, column) = match addition.split_once(':') {
        Some(("index", name)) => ("index", name, None),
        _ => match addition.split_once('.') {
            Some((table, column)) => ("table", table, Some(column)),
            None => ("table", addition, None),
        },
    };
    match column {
        None => Ok(conn
            .query_row(
                "SELECT 1 FROM sqlite_master WHERE type = ?1 AND name = ?2",
                &[Value::Text(kind), Value::Text(name)],
                |_| Ok(()),
            )?
            .is_some()),
        Some(column) => Ok(conn
            .query_row(
                "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2",
                &[Value::Text(name), Value::Text(column)],
                |_| Ok(()),
            )?
            .is_some()),
    }
}

/// What a database written by a newer build says when refused.
pub fn newer_message(what: &str, found: u32, steps: &[Migration]) -> String {
    format!(
        "{what} was written by schema {found}, this build knows up to {}; it is left as it is: \
         use the newer build that wrote it",
        latest(steps)
    )
}

/// Brings the database to the last step and returns the version it was at.
/// `what` names it in the refusal of a newer file.
pub fn migrate(conn: &Connection, what: &str, steps: &[Migration]) -> Result<u32, DbError> {
    debug_assert!(steps
        .iter()
        .enumerate()
        .all(|(i, s)| s.version as usize == i + 1));
    let found = version_of(conn, steps)?;
    if found > latest(steps) {
        return Err(DbError {
            code: super::ffi::SQLITE_ERROR,
            message: newer_message(what, found, steps),
        });
    }
    let unrecorded = recorded_version(conn)? == 0;
    for step in steps.iter().filter(|s| s.version > found) {
        // A file from before versions were recorded may already hold a
        // later step: it is skipped, not run again.
        let held = match unrecorded {
            false => Held::None,
            true => held(conn, step)?,
        };
        let applied = conn.transaction(|| {
            if held != Held::All {
                conn.execute_batch(step.sql)?;
            }
            conn.execute_batch(&format!("PRAGMA user_version = {};", step.version))
        });
        match applied {
            // Part of a step there: its tables are created if missing, but a
            // column cannot be added twice; then the file is refused.
            Err(_) if held == Held::Part => {
                return Err(DbError {
                    code: super::ffi::SQLITE_ERROR,
                    message: half_there_message(what, conn, step)?,
                })
            }
            other => other?,
        }
    }
    // A file from before versions were recorded that holds every step.
    if found == latest(steps) && recorded_version(conn)? != found {
        conn.execute_batch(&format!("PRAGMA user_version = {found};"))?;
    }
    Ok(found)
}

/// The refusal of a file that holds part of a step (changed by hand, or by
/// no build of this project).
fn half_there_message(what: &str, conn: &Connection, step: &Migration) -> Result<String, DbError> {
    let mut missing = Vec::new();
    for addition in step.adds {
        if !holds(conn, addition)? {
            missing.push(*addition);
        }
    }
    Ok(format!(
        "{what} holds part of schema step {} ({}) but lacks {}: it was not written by a build \
         of this project and is left as it is",
        step.version,
        step.name,
        missing.join(", ")
    ))
}

fn versions_recorded(conn: &Connection) -> Result<bool, DbError> {
    Ok(recorded_version(conn)? != 0)
}

/// For a database opened read-only: `Err` says why it cannot be read as it
/// is (an older file lacks steps a writing command would apply; a newer one
/// is another build's).
pub fn check_current(conn: &Connection, what: &str, steps: &[Migration]) -> Result<(), String> {
    let found = version_of(conn, steps).map_err(|e| e.to_string())?;
    let latest = latest(steps);
    if found > latest {
        return Err(newer_message(what, found, steps));
    }
    if found < latest {
        let lacking: Vec<&str> = match versions_recorded(conn).map_err(|e| e.to_string())? {
            true => steps
                .iter()
                .filter(|s| s.version > found)
                .map(|s| s.name)
                .collect(),
            false => lacking(conn, steps)
                .map_err(|e| e.to_string())?
                .iter()
                .map(|(s, _)| s.name)
                .collect(),
        };
        return Err(format!(
            "{what} predates this version (schema {found} of {latest}; it lacks {}); \
             any command that writes (`index`) upgrades it",
            lacking.join(", ")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const STEPS: &[Migration] = &[
        Migration {
            version: 1,
            name: "notes",
            sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL);",
            adds: &["notes"],
        },
        Migration {
            version: 2,
            name: "note authors",
            sql: "ALTER TABLE notes ADD COLUMN author TEXT;",
            adds: &["notes.author"],
        },
        Migration {
            version: 3,
            name: "notes by author",
            sql: "CREATE INDEX notes_by_author ON notes (author);",
            adds: &["index:notes_by_author"],
        },
    ];

    fn columns(conn: &Connection) -> Vec<String> {
        conn.query("SELECT name FROM pragma_table_info('notes')", &[], |r| {
            Ok(r.get_text(0))
        })
        .unwrap()
    }

    #[test]
    fn a_new_file_runs_every_step_and_records_the_last() {
        let conn = Connection::open_in_memory().unwrap();
        assert_eq!(migrate(&conn, "the store", STEPS).unwrap(), 0);
        assert_eq!(recorded_version(&conn).unwrap(), 3);
        assert_eq!(columns(&conn), ["id", "text", "author"]);
        assert!(check_current(&conn, "the store", STEPS).is_ok());
        // Again: nothing to do.
        assert_eq!(migrate(&conn, "the store", STEPS).unwrap(), 3);
    }

    #[test]
    fn an_older_file_runs_only_the_later_steps_and_keeps_its_rows() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn, "the store", &STEPS[..1]).unwrap();
        conn.execute("INSERT INTO notes (text) VALUES ('kept')", &[])
            .unwrap();
        let err = check_current(&conn, "the store", STEPS).unwrap_err();
        assert!(err.contains("schema 1 of 3"), "{err}");
        assert!(err.contains("note authors, notes by author"), "{err}");
        assert_eq!(migrate(&conn, "the store", STEPS).unwrap(), 1);
        assert_eq!(recorded_version(&conn).unwrap(), 3);
        let text = conn
            .query_row("SELECT text FROM notes", &[], |r| Ok(r.get_text(0)))
            .unwrap();
        assert_eq!(text.as_deref(), Some("kept"));
    }

    #[test]
    fn a_file_from_before_versions_is_placed_by_what_it_holds() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT, author TEXT);")
            .unwrap();
        assert_eq!(version_of(&conn, STEPS).unwrap(), 2);
        assert_eq!(migrate(&conn, "the store", STEPS).unwrap(), 2);
        assert_eq!(recorded_version(&conn).unwrap(), 3);

        // Holding every step: only the version is recorded.
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT, author TEXT);
             CREATE INDEX notes_by_author ON notes (author);",
        )
        .unwrap();
        assert_eq!(migrate(&conn, "the store", STEPS).unwrap(), 3);
        assert_eq!(recorded_version(&conn).unwrap(), 3);
    }

    #[test]
    fn a_file_from_before_versions_holding_a_later_step_but_not_an_earlier_one() {
        // Step 3's index and step 1's table, but not step 2's column: what a
        // build that added a column without a migration could leave.
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);
             CREATE INDEX notes_by_author ON notes (text);
             INSERT INTO notes (text) VALUES ('kept');",
        )
        .unwrap();
        assert_eq!(version_of(&conn, STEPS).unwrap(), 1);
        let err = check_current(&conn, "the store", STEPS).unwrap_err();
        assert!(err.contains("it lacks note authors)"), "{err}");
        assert_eq!(migrate(&conn, "the store", STEPS).unwrap(), 1);
        assert_eq!(recorded_version(&conn).unwrap(), 3);
        assert_eq!(columns(&conn), ["id", "text", "author"]);
    }

    #[test]
    fn a_file_from_before_versions_holding_half_a_step_is_refused() {
        const TWO_COLUMNS: &[Migration] = &[
            STEPS[0],
            Migration {
                version: 2,
                name: "authors and dates",
                sql: "ALTER TABLE notes ADD COLUMN author TEXT; ALTER TABLE notes ADD COLUMN at INTEGER;",
                adds: &["notes.author", "notes.at"],
            },
        ];
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT, author TEXT);")
            .unwrap();
        let err = migrate(&conn, "the store", TWO_COLUMNS).unwrap_err();
        assert!(err.message.contains("lacks notes.at"), "{err}");
        assert_eq!(recorded_version(&conn).unwrap(), 0);
    }

    #[test]
    fn a_newer_file_is_refused_and_left_as_it_is() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn, "the store", STEPS).unwrap();
        conn.execute_batch("PRAGMA user_version = 9;").unwrap();
        let err = migrate(&conn, "the store", STEPS).unwrap_err();
        assert!(
            err.message.contains("schema 9, this build knows up to 3"),
            "{err}"
        );
        assert_eq!(recorded_version(&conn).unwrap(), 9);
        assert!(check_current(&conn, "the store", STEPS)
            .unwrap_err()
            .contains("newer build"));
    }

    #[test]
    fn a_failing_step_leaves_the_file_at_the_step_before() {
        const BROKEN: &[Migration] = &[
            STEPS[0],
            Migration {
                version: 2,
                name: "broken",
                sql: "ALTER TABLE notes ADD COLUMN author TEXT; ALTER TABLE nowhere ADD COLUMN x;",
                adds: &["notes.author"],
            },
        ];
        let conn = Connection::open_in_memory().unwrap();
        assert!(migrate(&conn, "the store", BROKEN).is_err());
        assert_eq!(recorded_version(&conn).unwrap(), 1);
        assert_eq!(columns(&conn), ["id", "text"]);
    }
}
