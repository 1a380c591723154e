//! The SQL of one `factor=level` filter of a selection, shared by both
//! backends (`$N` placeholders numbered from the caller's next). A factor
//! of the sample's cell matches by its level; `host` and `kernel`, when the
//! cell has no factor of that name, match the run instead: its host, or
//! the kernel release its environment recorded (`kernel=6.12` matches
//! `6.12`, `6.12.0-1-amd64`, `6.12-rc1`, not `6.120`). The database does
//! the filtering. Must not splice a value into SQL text: values come back
//! as the parameters to bind, in order.

use crate::sql::Dialect;

/// `" AND …"` for `factor=level` on samples aliased `s`, its parameters
/// numbered from `$first`, and their values in that order.
pub(crate) fn level_filter(
    dialect: Dialect,
    factor: &str,
    level: &str,
    first: usize,
) -> (String, Vec<String>) {
    let (sql, values) = unnumbered_level_filter(dialect, factor, level);
    (number_placeholders(&sql, first), values)
}

fn unnumbered_level_filter(dialect: Dialect, factor: &str, level: &str) -> (String, Vec<String>) {
    let cell_has_level = "EXISTS (SELECT 1 FROM cell_levels l WHERE l.run_id = s.run_id \
                          AND l.cell = s.cell AND l.factor = ? AND l.level = ?)";
    let cell_has_factor = "EXISTS (SELECT 1 FROM cell_levels l WHERE l.run_id = s.run_id \
                           AND l.cell = s.cell AND l.factor = ?)";
    let kernel_release = dialect.kernel_release();
    let values = |count: usize| -> Vec<String> {
        let mut values = vec![factor.to_string(), level.to_string(), factor.to_string()];
        values.extend(std::iter::repeat_n(level.to_string(), count));
        values
    };
    match factor {
        "host" => (
            format!(
                " AND ({cell_has_level} OR (NOT {cell_has_factor} AND s.run_id IN \
                 (SELECT id FROM runs WHERE host = ?)))"
            ),
            values(1),
        ),
        "kernel" => (
            format!(
                " AND ({cell_has_level} OR (NOT {cell_has_factor} AND s.run_id IN \
                 (SELECT id FROM runs WHERE {kernel_release} = ? OR \
                    (substr({kernel_release}, 1, length(CAST(? AS TEXT))) = ? AND \
                     substr({kernel_release}, length(CAST(? AS TEXT)) + 1, 1) IN ('.', '-', '+')))))"
            ),
            values(4),
        ),
        _ => (
            format!(" AND {cell_has_level}"),
            vec![factor.to_string(), level.to_string()],
        ),
    }
}

/// `sql` with each `?` replaced by `$n`, numbering from `first`.
fn number_placeholders(sql: &str, first: usize) -> String {
    let mut numbered = String::with_capacity(sql.len() + 16);
    let mut next = first;
    for character in sql.chars() {
        if character == '?' {
            numbered.push_str(&format!("${next}"));
            next += 1;
        } else {
            numbered.push(character);
        }
    }
    numbered
}
